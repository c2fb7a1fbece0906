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
def fault_stack(tmp_path_factory) -> FaultStack:
    stack = FaultStack(tmp_path_factory.mktemp("faults"))
    try:
        stack.up()
    except BaseException:
        print(stack.tails(40))
        stack.down()
        raise
    yield stack
    stack.down()


@pytest.fixture(scope="session")
def results_dir(tmp_path_factory) -> Path:
    """Where each fault's figures are written (CROUPIER_FAULTS_RESULTS, else a temp dir)."""
    import os

    configured = os.environ.get("CROUPIER_FAULTS_RESULTS")
    path = Path(configured) if configured else tmp_path_factory.mktemp("faults-results")
    path.mkdir(parents=True, exist_ok=True)
    return path
