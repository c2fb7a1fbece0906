"""Browser tests of the web client against the real stack (rules, projector, gateway as
processes, on the session's Kafka and Redis): the `stack_services` fixture of tests/e2e,
reused as is. Chromium is Debian's (/usr/bin/chromium, or CROUPIER_CHROMIUM), driven by
Playwright for Python; no browser is ever downloaded.

Screenshots go to tests/artifacts/web/ (or CROUPIER_WEB_ARTIFACTS); the session's summary
prints where.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
E2E = HERE.parent / "e2e"
sys.path.insert(0, str(E2E))
sys.path.insert(0, str(HERE))

_spec = importlib.util.spec_from_file_location("croupier_e2e_conftest", E2E / "conftest.py")
_e2e = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = _e2e
_spec.loader.exec_module(_e2e)
stack_services = _e2e.stack_services  # the same fixture as tests/e2e: one stack for this directory

ARTIFACTS = Path(os.environ.get("CROUPIER_WEB_ARTIFACTS") or HERE.parent / "artifacts" / "web")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if Path(str(item.fspath)).is_relative_to(HERE):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


def pytest_terminal_summary(terminalreporter):
    shots = sorted(ARTIFACTS.glob("*.png")) if ARTIFACTS.exists() else []
    if shots:
        terminalreporter.write_line(f"web client screenshots ({len(shots)}): {ARTIFACTS}")
