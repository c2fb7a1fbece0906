"""`croupier serve gateway` on a port another process holds says so in one line of its own.

It listens on three ports (HTTP, gRPC, and metrics when asked); each, taken, ended the
command in a traceback: grpc's RuntimeError after its core's own `add_port.cc` line, uvicorn's
SystemExit after its log line, prometheus_client's OSError. Nothing here needs Redis: the
ports are taken before the gateway first speaks to it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest


def _held() -> socket.socket:
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)  # as a grpc server's socket
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    return holder


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("door", ["http", "grpc", "metrics"])
def test_a_taken_port_is_one_clear_line_and_exit_1(door, tmp_path):
    holder = _held()
    port = holder.getsockname()[1]
    ports = {"http": _free_port(), "grpc": _free_port(), "metrics": 0}
    ports[door] = port
    env = {**os.environ, "CROUPIER_REDIS_URL": "redis://127.0.0.1:1", "CROUPIER_GATEWAY_HOST": "127.0.0.1",
           "CROUPIER_GATEWAY_METRICS_PORT": str(ports["metrics"]), "CROUPIER_LOG_FORMAT": "json"}
    try:
        done = subprocess.run([sys.executable, "-m", "croupier.cli.main", "serve", "gateway",
                               "--port", str(ports["http"]), "--grpc-port", str(ports["grpc"])],
                              env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    finally:
        holder.close()
    assert done.returncode == 1, done
    said = done.stderr.strip().splitlines()
    assert "Traceback" not in done.stderr and "add_port" not in done.stderr, done.stderr
    assert said[-1].startswith("croupier serve gateway: cannot "), done.stderr
    assert f"127.0.0.1:{port}" in said[-1], done.stderr
    if door == "metrics":
        assert "CROUPIER_GATEWAY_METRICS_PORT" in said[-1]
    else:
        assert said[-1].endswith("another process holds the port"), done.stderr
    assert len(said) == 1, f"more than the one line on stderr: {done.stderr}"
