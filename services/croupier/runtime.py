"""Process-wide settings of a long-running service: the garbage collector (tune_gc, called
once by `croupier serve ...` and by the load generator's worker processes, after the imports
and settings and before the event loop starts), the event loop it runs on (run), and the
queue options of its gRPC servers, and how they listen (listen, ListenError: a port
refused is one clear line, not gRPC's own).
"""

from __future__ import annotations

import asyncio
import errno
import gc
import os
import socket
import sys
import tempfile
from collections.abc import Coroutine, Mapping
from typing import Any, TypeVar

from croupier.config import ConfigError, GcSettings, event_loop

T = TypeVar("T")


def tune_gc(settings: GcSettings | None = None) -> GcSettings:
    """Apply the collector's thresholds, and freeze what is alive now (modules, settings,
    the game registry) into the permanent generation, so that no collection walks it again.
    Frozen objects are never collected; only what start-up made is frozen."""
    settings = settings or GcSettings.from_env()
    if settings.freeze:
        gc.collect()
        gc.freeze()
    if settings.threshold == (0, 0, 0):
        gc.disable()
    else:
        gc.enable()
        gc.set_threshold(*settings.threshold)
    return settings


# gRPC core sheds calls that a server has received but its application has not yet picked up
# once more than grpc.server.max_pending_requests (1,000 by default) wait, answering them
# CANCELLED before any handler runs. A grpc.aio server picks calls up as its event loop gets
# to them, so a burst on a busy loop (croupier loadtest's warm-up: ~0.3 % of its commands)
# was refused with a status that says "the caller cancelled". Croupier's servers let bursts
# queue instead (each call's deadline still bounds its wait), and shed only far beyond.
GRPC_SERVER_QUEUE_OPTIONS = [
    ("grpc.server.max_pending_requests", 20_000),
    ("grpc.server.max_pending_requests_hard_limit", 40_000),
]

# The options of every Croupier gRPC server (the rules service, the gateway): the queue above,
# and so_reuseport off, so that a port another process listens on fails the bind. With it
# (grpc's default) both would bind, and the kernel would share the port's connections between
# two processes: a rules replica once received another game type's commands that way.
GRPC_SERVER_OPTIONS = [("grpc.so_reuseport", 0), *GRPC_SERVER_QUEUE_OPTIONS]


def run(main: Coroutine[Any, Any, T], environ: Mapping[str, str] | None = None) -> T:
    """Run a process's main coroutine to its end on the event loop CROUPIER_EVENT_LOOP names
    (croupier.config.event_loop; a bad value raises ConfigError and `main` never starts)."""
    try:
        name = event_loop(environ)
    except ConfigError:
        main.close()
        raise
    if name == "uvloop":
        import uvloop

        return uvloop.run(main)
    return asyncio.run(main)


class ListenError(RuntimeError):
    """The service could not listen where it was told to."""


def listen(server: Any, address: str) -> int:
    """server.add_insecure_port(address): the port, or ListenError saying why not. grpc's core
    writes a line of its own to the process's stderr (from C, fd 2) before the Python error
    (`E1203 ... add_port.cc:83] Failed to add port to server: ...`), which `croupier serve
    rules` and `croupier serve gateway` printed before their own clear error. While the port
    is added, fd 2 goes to a temporary file: when the port is refused that line is read for
    the reason and dropped; otherwise whatever was written meanwhile is written out as it
    was."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no stderr to hold back
        saved = None
    held = tempfile.TemporaryFile() if saved is not None else None
    error: RuntimeError | None = None
    try:
        if held is not None:
            os.dup2(held.fileno(), 2)
        try:
            port = server.add_insecure_port(address)
        except RuntimeError as exc:  # grpc's "Failed to bind to address"
            error = exc
    finally:
        said = ""
        if held is not None:
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            said = held.read().decode("utf-8", "replace")
            held.close()
    if error is None:
        if said:
            sys.stderr.write(said)
            sys.stderr.flush()
        return port
    lower = said.lower()
    if "already in use" in lower:
        why = "another process holds the port"
    elif "assign requested address" in lower:
        why = "the address is not one of this machine's"
    else:
        why = "another process holds the port (or the address is not one of this machine's)"
    raise ListenError(f"cannot listen on {address}: {why}") from None


def bind_socket(host: str, port: int, what: str) -> socket.socket:
    """A TCP socket bound to host:port for a server to listen on (SO_REUSEADDR, as uvicorn's
    own), or ListenError naming `what` and why: uvicorn, left to bind it, logged the error and
    ended the process with SystemExit as a traceback."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ListenError(f"cannot listen on {host}:{port} ({what}): {exc.strerror or exc}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            why = "another process holds the port"
        elif exc.errno == errno.EADDRNOTAVAIL:
            why = "the address is not one of this machine's"
        else:
            why = exc.strerror or str(exc)
        raise ListenError(f"cannot listen on {host}:{port} ({what}): {why}") from None
    return sock
