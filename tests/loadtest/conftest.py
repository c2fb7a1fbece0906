"""The load test's tests run `croupier loadtest` against the same real stack the end-to-end
tests use (a rules replica per game, the projector and the gateway as processes on the
session's Kafka and Redis): its `stack_services` fixture is taken from tests/e2e/conftest.py
rather than written twice."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path

import pytest

E2E = Path(__file__).resolve().parents[1] / "e2e"
if str(E2E) not in sys.path:
    sys.path.insert(0, str(E2E))  # tests/e2e/conftest.py imports e2e_helpers

_spec = importlib.util.spec_from_file_location("croupier_e2e_conftest", E2E / "conftest.py")
_e2e = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _e2e  # dataclasses look their module up while it loads
_spec.loader.exec_module(_e2e)

stack_services = _e2e.stack_services


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here) and "stack_services" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.integration)


@pytest.fixture
def quick_backoff(monkeypatch):
    """play_seat backs off 0.05 s .. 1 s between a move's tries (~16 s for 20): none here."""
    real_sleep = asyncio.sleep

    async def no_sleep(delay, result=None):
        return await real_sleep(0, result)

    class Asyncio:  # asyncio, but for its sleep
        sleep = staticmethod(no_sleep)

        def __getattr__(self, name):
            return getattr(asyncio, name)

    from croupier_gateway import bots

    monkeypatch.setattr(bots, "asyncio", Asyncio())
