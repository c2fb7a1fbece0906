"""`croupier demo`, what `make run` runs: it plays demo tables, and a stop never leaves its
services running without it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlparse

from croupier.stack.process import free_ports


def _processes_with(marker: str) -> list[int]:
    """The pids whose environment holds `marker` (the demo's services inherit its prefix)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if marker.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _wait_for_line(path: Path, text: str, proc: subprocess.Popen, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while text not in path.read_text(errors="replace"):
        assert proc.poll() is None, f"the demo exited:\n{path.read_text(errors='replace')[-3000:]}"
        assert time.monotonic() < deadline, f"no {text!r} after {timeout_s} s:\n{path.read_text(errors='replace')[-3000:]}"
        time.sleep(0.2)


def test_the_demo_plays_tables_and_a_stop_signalled_twice_stops_every_service(kafka, redis_url, tmp_path):
    """`kill` of `make run` sends the demo SIGTERM twice (once to the process group, once
    more from make); the second arrives while the demo stops its services. The demo must
    still stop every one of them and say so, never die and leave them running."""
    prefix = f"demo{uuid.uuid4().hex[:8]}."
    redis = urlparse(redis_url)
    http_port, grpc_port = free_ports(2)
    env = {
        **os.environ,
        "CROUPIER_STACK_HOST": "127.0.0.1",
        "CROUPIER_KAFKA_PORT": kafka.rsplit(":", 1)[1],
        "CROUPIER_REDIS_PORT": str(redis.port),
        "CROUPIER_STATE_DIR": str(tmp_path / "state"),
        "CROUPIER_TOPIC_PREFIX": prefix,
        "CROUPIER_KEY_PREFIX": prefix,
        "CROUPIER_GATEWAY_PORT": str(http_port),
        "CROUPIER_GATEWAY_GRPC_PORT": str(grpc_port),
        "PYTHONUNBUFFERED": "1",
    }
    out = tmp_path / "demo.out"
    with open(out, "wb") as sink:
        demo = subprocess.Popen([sys.executable, "-m", "croupier.cli.main", "demo"], env=env, stdout=sink,
                                stderr=subprocess.STDOUT, start_new_session=True)
    left: list[int] = []
    try:
        _wait_for_line(out, " over: ", demo, 240)  # a demo table played to its end
        services = _processes_with(prefix)
        assert len(services) >= 8, services  # the demo, a replica per game, the projector, the gateway
        demo.send_signal(signal.SIGTERM)
        _wait_for_line(out, "stopping...", demo, 30)
        demo.send_signal(signal.SIGTERM)  # the second, as make passes it on
        code = demo.wait(60)
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait(10)
        deadline = time.monotonic() + 10
        while (left := _processes_with(prefix)) and time.monotonic() < deadline:
            time.sleep(0.2)
        for pid in left:  # a failed run must not leave them running either
            os.kill(pid, signal.SIGKILL)
    printed = out.read_text(errors="replace")
    assert code == 0, printed[-3000:]
    assert "services stopped" in printed
    assert left == [], "services still running after the demo stopped"
