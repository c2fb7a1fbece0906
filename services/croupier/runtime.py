"""Process-wide settings of a long-running service: the garbage collector (tune_gc, called
once by `croupier serve ...` and by the load generator's worker processes, after the imports
and settings and before the event loop starts), the event loop it runs on (run), and the
queue options of its gRPC servers.
"""

from __future__ import annotations

import asyncio
import gc
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
