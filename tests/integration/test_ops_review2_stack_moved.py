"""`croupier stack up|status` after a port setting changed while the stack runs: the running
node answers where it was started, not where the settings now look. `up` waited the whole
timeout (60 s by default) and then said "not ready" with log lines that did not say why, and
`status` said "not answering"; both now name where it runs and how to move it, and `up`
says so at once, starting nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from croupier.stack.process import free_ports

pytestmark = pytest.mark.timeout(120)


def _stack(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "croupier.cli.main", "stack", *args, "--only", "redis"], env=env,
                          capture_output=True, text=True, timeout=90)


def test_a_node_running_at_other_ports_is_named_at_once(tmp_path: Path) -> None:
    first, second, kafka, controller = free_ports(4)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CROUPIER_")}
    env.update({"CROUPIER_STATE_DIR": str(tmp_path / "stack"), "CROUPIER_REDIS_PERSIST": "false",
                "CROUPIER_KAFKA_PORT": str(kafka), "CROUPIER_KAFKA_CONTROLLER_PORT": str(controller)})
    was = {**env, "CROUPIER_REDIS_PORT": str(first)}
    now = {**env, "CROUPIER_REDIS_PORT": str(second)}
    r = _stack(was, "up", "--quiet")
    assert r.returncode == 0, r.stderr
    try:
        began = time.monotonic()
        r = _stack(now, "up", "--timeout", "30")
        assert r.returncode == 1 and time.monotonic() - began < 15, r.stdout + r.stderr
        assert f"at redis://127.0.0.1:{first}/0, where it was started" in r.stderr and "croupier stack down" in r.stderr
        assert "Traceback" not in r.stderr
        r = _stack(now, "status")
        assert r.returncode == 3 and f"it was started at redis://127.0.0.1:{first}/0" in r.stdout, r.stdout
        assert _stack(was, "status").returncode == 0  # where it was started, it answers
    finally:
        assert _stack(now, "down").returncode == 0  # down needs no ports: the pid file names it
    r = _stack(now, "up", "--quiet")
    try:
        assert r.returncode == 0 and f"redis://127.0.0.1:{second}/0" in _stack(now, "status").stdout, r.stderr
    finally:
        _stack(now, "down")
