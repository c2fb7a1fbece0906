"""`croupier stack up|status|down` as a person runs it, on its own ports and state directory."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from croupier.stack.process import free_ports, port_free

pytestmark = pytest.mark.timeout(180)


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "croupier.cli.main", "stack", *args],
        env=env, capture_output=True, text=True, timeout=150,
    )


def _adopt_orphans() -> None:
    """Make this test process the reaper of the stack processes that the CLI leaves behind.

    `croupier stack up` exits after starting Kafka and Redis, so they are orphans; when `down`
    stops them, their exit status goes to whoever adopted them. That is PID 1 normally, but
    some container PID 1s never collect it, which would leave <defunct> entries. As a child
    subreaper, pytest adopts them instead and `_reap` collects them, so the check below can
    demand that nothing at all is left.
    """
    if sys.platform.startswith("linux"):
        pr_set_child_subreaper = 36
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_child_subreaper, 1, 0, 0, 0)


def _reap(pids: set[int]) -> None:
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass


def _stack_processes(state_dir: Path, pids: set[int]) -> list[psutil.Process]:
    """Processes that belong to this stack: the recorded pids, or anything naming its state dir."""
    found = []
    for process in psutil.process_iter(["pid", "cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if process.info["pid"] in pids or str(state_dir) in cmdline:
            if process.info["pid"] != os.getpid():
                found.append(process)
    return found


def _own_stack(state_dir: Path) -> tuple[dict[str, str], tuple[int, int, int]]:
    ports = kafka_port, controller_port, redis_port = tuple(free_ports(3))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CROUPIER_")}
    env.update({
        "CROUPIER_STATE_DIR": str(state_dir),
        "CROUPIER_KAFKA_PORT": str(kafka_port),
        "CROUPIER_KAFKA_CONTROLLER_PORT": str(controller_port),
        "CROUPIER_REDIS_PORT": str(redis_port),
        "CROUPIER_REDIS_PERSIST": "false",
    })
    return env, ports


def test_up_status_down_on_own_ports(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    env, (kafka_port, controller_port, redis_port) = _own_stack(state_dir)
    pids: set[int] = set()
    _adopt_orphans()
    try:
        up = _run(env, "up")
        assert up.returncode == 0, up.stdout + up.stderr
        assert "stack ready in" in up.stdout
        print(up.stdout)
        pids = {int((state_dir / c / f"{c}.pid").read_text().split()[0]) for c in ("kafka", "redis")}

        status = _run(env, "status")
        assert status.returncode == 0, status.stdout + status.stderr
        assert status.stdout.count("ready") == 2

        again = _run(env, "up")
        assert again.returncode == 0, again.stdout + again.stderr
        assert "already running" in again.stdout
        assert {int((state_dir / c / f"{c}.pid").read_text().split()[0]) for c in ("kafka", "redis")} == pids

        # Independent clients: Debian's kcat and redis-cli (installed by `make setup`).
        kcat, redis_cli = shutil.which("kcat"), shutil.which("redis-cli")
        assert kcat and redis_cli, "kcat and redis-cli are installed by `make setup`"
        listing = subprocess.run([kcat, "-L", "-b", f"127.0.0.1:{kafka_port}", "-m", "10"],
                                 capture_output=True, text=True, timeout=30)
        assert listing.returncode == 0, listing.stderr
        assert f"broker 1 at 127.0.0.1:{kafka_port}" in listing.stdout
        pong = subprocess.run([redis_cli, "-p", str(redis_port), "ping"], capture_output=True, text=True, timeout=10)
        assert pong.stdout.strip() == "PONG"
    finally:
        down = _run(env, "down")
    assert down.returncode == 0, down.stdout + down.stderr
    _reap(pids)
    assert _stack_processes(state_dir, pids) == []
    for port in (kafka_port, controller_port, redis_port):
        assert port_free("127.0.0.1", port)
    after = _run(env, "status")
    assert after.returncode == 3
    assert "stopped" in after.stdout
    assert not (state_dir / "kafka" / "kafka.pid").exists()


def test_up_refuses_a_taken_port_and_starts_nothing(tmp_path: Path) -> None:
    import socket

    env, (_, _, redis_port) = _own_stack(tmp_path / "state")
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", redis_port))
        squatter.listen()
        up = _run(env, "up")
    assert up.returncode == 1
    assert f"127.0.0.1:{redis_port} (for redis) is taken by pid {os.getpid()}" in up.stderr
    assert _stack_processes(tmp_path / "state", set()) == []


def test_up_waits_for_a_port_that_is_let_go_of_within_seconds(tmp_path: Path) -> None:
    """A port held a moment longer (a node just stopped, a client's connection that took it as
    its local port) does not fail `up`: it waits a few seconds for the port first."""
    import socket
    import threading

    _adopt_orphans()
    env, (_, _, redis_port) = _own_stack(tmp_path / "state")
    squatter = socket.socket()
    squatter.bind(("127.0.0.1", redis_port))
    squatter.listen()
    threading.Timer(2.0, squatter.close).start()
    pids: set[int] = set()
    try:
        up = _run(env, "up", "--only", "redis")
        assert up.returncode == 0, up.stdout + up.stderr
        pids = {int((tmp_path / "state" / "redis" / "redis.pid").read_text().split()[0])}
        pong = subprocess.run([shutil.which("redis-cli") or "redis-cli", "-p", str(redis_port), "ping"],
                              capture_output=True, text=True, timeout=10)
        assert pong.stdout.strip() == "PONG"
    finally:
        squatter.close()
        down = _run(env, "down")
    assert down.returncode == 0, down.stdout + down.stderr
    _reap(pids)
    assert _stack_processes(tmp_path / "state", pids) == []


def test_up_that_times_out_shows_the_log_and_leaves_nothing_running(tmp_path: Path) -> None:
    state_dir = tmp_path / "state"
    env, _ = _own_stack(state_dir)
    _adopt_orphans()
    up = _run(env, "up", "--only", "kafka", "--timeout", "0.5")
    assert up.returncode == 1
    assert "kafka not ready after" in up.stderr
    assert "--- last lines of" in up.stderr
    assert not (state_dir / "kafka" / "kafka.pid").exists()
    for child in psutil.Process().children():
        _reap({child.pid})
    assert _stack_processes(state_dir, set()) == []
