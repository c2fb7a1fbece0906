"""The fault suite: a Croupier of real processes on its own Kafka and Redis (fault_stack.py),
played by load through the gateway (load.py) while a test breaks one thing on purpose; the
checks (checks.py) then hold the Kafka log and the read models to what the clients were told.

Every test here is marked `faults` (and `integration`): `pytest -m faults` runs only these.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "integration"))  # harness.py, rules_driver.py

from fault_stack import FaultStack  # noqa: E402


def pytest_collection_modifyitems(config, items):
    for item in items:
        if Path(str(item.fspath)).is_relative_to(HERE):
            item.add_marker(pytest.mark.faults)
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="module")
def _stacks() -> dict:
    held: dict = {"stack": None}
    yield held
    if held["stack"] is not None:
        held["stack"].down()


@pytest.fixture
def fault_stack(_stacks, tmp_path_factory) -> FaultStack:
    """The module's stack, shared by its tests; after a scenario that failed (`broken`), a new
    one: a stack a fault left broken would fail every test after it, each after its timeouts."""
    old = _stacks["stack"]
    if old is not None and not old.broken:
        return old
    if old is not None:
        print(f"the stack of {old.log_dir} broke in a failed scenario: starting a new one")
        old.down()
        _stacks["stack"] = None
    stack = FaultStack(tmp_path_factory.mktemp("faults"))
    if old is not None:
        stack.log_dirs = old.log_dirs + stack.log_dirs
    try:
        stack.up()
    except BaseException:
        print(stack.tails(40))
        stack.down()
        raise
    _stacks["stack"] = stack
    return stack


@pytest.fixture(scope="session")
def results_dir(tmp_path_factory) -> Path:
    """Where each fault's figures are written (CROUPIER_FAULTS_RESULTS, else a temp dir)."""
    import os

    configured = os.environ.get("CROUPIER_FAULTS_RESULTS")
    path = Path(configured) if configured else tmp_path_factory.mktemp("faults-results")
    path.mkdir(parents=True, exist_ok=True)
    return path
