"""`croupier stack up` ended by SIGTERM before the stack is ready (`timeout 20 croupier stack
up`, a supervisor, `kill`) stops what it started, as Ctrl-C does, and exits 143. It was
killed outright: Kafka left running and not answering, Redis running, the stack half
started, with nothing said."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from croupier.stack.process import PidFile, free_ports, port_free

pytestmark = pytest.mark.timeout(180)


def test_sigterm_while_up_waits_for_kafka_stops_what_it_started(tmp_path: Path) -> None:
    state = tmp_path / "stack"
    kafka_port, controller_port, redis_port = free_ports(3)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CROUPIER_")}
    env.update({"CROUPIER_STATE_DIR": str(state), "CROUPIER_KAFKA_PORT": str(kafka_port),
                "CROUPIER_KAFKA_CONTROLLER_PORT": str(controller_port), "CROUPIER_REDIS_PORT": str(redis_port),
                "CROUPIER_REDIS_PERSIST": "false"})
    up = subprocess.Popen([sys.executable, "-m", "croupier.cli.main", "stack", "up"], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    kafka_pid = PidFile(state / "kafka" / "kafka.pid")
    redis_pid = PidFile(state / "redis" / "redis.pid")
    try:
        deadline = time.monotonic() + 60
        while kafka_pid.read() is None:  # Kafka started, and (a JVM takes seconds) not ready yet
            assert up.poll() is None and time.monotonic() < deadline, up.communicate()
            time.sleep(0.02)
        pids = {kafka_pid.read()[0], redis_pid.read()[0]}
        up.send_signal(signal.SIGTERM)
        out, err = up.communicate(timeout=90)
    finally:
        if up.poll() is None:
            up.kill()
    assert up.returncode == 143, out + err
    assert "ready" not in out and "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "stopped by SIGTERM" in lines[0], err
    for pid in pids:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE, pid
    assert not kafka_pid.exists() and not redis_pid.exists()
    assert all(port_free("127.0.0.1", p) for p in (kafka_port, controller_port, redis_port))
