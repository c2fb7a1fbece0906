"""The security tests run against the same kind of stack as tests/e2e (a rules replica of
every game type, the projector and the gateway as processes on the session's Kafka and Redis):
the e2e fixture `stack_services` is loaded from tests/e2e/conftest.py rather than written twice.
Every test here is marked `integration` and `security`.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
E2E = HERE.parent / "e2e"
sys.path.insert(0, str(E2E))  # e2e_helpers
sys.path.insert(0, str(HERE.parent / "integration"))  # harness

_spec = importlib.util.spec_from_file_location("e2e_conftest", E2E / "conftest.py")
_e2e = importlib.util.module_from_spec(_spec)
sys.modules["e2e_conftest"] = _e2e
_spec.loader.exec_module(_e2e)
stack_services = _e2e.stack_services


def pytest_collection_modifyitems(config, items):
    for item in items:
        if Path(str(item.fspath)).is_relative_to(HERE):
            item.add_marker(pytest.mark.integration)
            item.add_marker(pytest.mark.security)
