"""`croupier serve rules` on a port already taken prints only its own clear error.

grpc's core writes a line of its own to the process's stderr (from C, not through Python's
sys.stderr) before add_insecure_port raises: `E1203 ... add_port.cc:83] Failed to add port
to server: No address added out of total 1 resolved for '127.0.0.1:PORT' (Error in bind ...)`,
which came out before the command's own error. The rules service adds its port through
`listen`, which holds that line back. Run in a child process: the line goes to its fd 2."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent("""
    import sys
    import grpc
    from croupier.rules.service import ListenError, listen
    from croupier.runtime import GRPC_SERVER_OPTIONS

    server = grpc.aio.server(options=GRPC_SERVER_OPTIONS)
    try:
        listen(server, sys.argv[1])
    except ListenError as exc:
        print(f"croupier serve rules: {exc}", file=sys.stderr)
        sys.exit(1)
    print("listening", flush=True)
""")


def _child(address: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", CHILD, address], capture_output=True, text=True, timeout=60)


def test_a_port_another_process_holds_is_told_in_one_line_of_our_own():
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)  # as a grpc server's socket
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        done = _child(f"127.0.0.1:{port}")
    finally:
        holder.close()
    assert done.returncode == 1, done
    assert done.stderr.strip().splitlines() == [
        f"croupier serve rules: cannot listen on 127.0.0.1:{port}: another process holds the port"], done.stderr


def test_an_address_not_of_this_machine_is_told_so():
    done = _child("192.0.2.1:0")  # TEST-NET-1: never an address of this machine
    assert done.returncode == 1, done
    assert done.stderr.strip().splitlines() == [
        "croupier serve rules: cannot listen on 192.0.2.1:0: the address is not one of this machine's"], done.stderr


def test_a_free_port_is_taken_and_nothing_is_held_back():
    done = _child("127.0.0.1:0")
    assert done.returncode == 0 and done.stdout.strip() == "listening", done


def test_a_metrics_port_another_process_holds_is_a_listen_error_not_a_traceback(monkeypatch):
    """CROUPIER_RULES_METRICS_PORT taken: start_http_server's OSError went up through
    `croupier serve rules` as a traceback; it is now the ListenError the command prints in
    one line (exit 1), as for the gRPC port."""
    import asyncio

    import pytest

    from croupier.rules import service
    from croupier.rules.settings import RulesSettings

    monkeypatch.setattr(service, "ensure_topic", lambda kafka, topic: 1)  # no broker needed to get there
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        with pytest.raises(service.ListenError) as refused:
            asyncio.run(service.serve(RulesSettings(game="expeditions", metrics_port=port)))
    finally:
        holder.close()
    assert str(refused.value).startswith(f"cannot serve metrics on 127.0.0.1:{port} (CROUPIER_RULES_METRICS_PORT): ")
