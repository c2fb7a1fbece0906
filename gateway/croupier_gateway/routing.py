"""Routing a write to the rules replica that owns its game.

The replicas of a game type publish who owns which partition of its topic in the Redis hash
`croupier:owners:<type>` and the partition count in `croupier:partitions:<type>`. A game's
partition is `partition_for(game_id, n)`, the same hash Kafka's partitioner uses, so a game
can be routed before it exists. The owners are cached briefly; a NOT_OWNER answer that names
the owner is followed at once, and any other retryable answer (a replica starting, a
partition moving, a dead address) re-reads the owners and tries again with the same
command_id, until the deadline. The command_id makes every retry safe.

Moves (HandleCommand) go over one open HandleCommands stream per replica (`CommandStream`):
a message on a stream costs both processes far less CPU than a unary call. A replica that
does not know the stream (an older version) gets unary calls; `command_streams=False` sends
every move as a unary call.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import grpc
import structlog

from croupier.engine.contract import Rejection
from croupier.projector.keys import Keys
from croupier.rules.client import CommandStream, RulesClient
from croupier.rules.errors import BUSY, RETRYABLE, Refusal, from_rpc_error
from croupier.rules.store import partition_for

log = structlog.get_logger("croupier.gateway")

MAX_REDIRECTS = 8


@dataclass
class _Owners:
    partitions: int
    owners: dict[int, str]
    at: float


class Router:
    def __init__(self, redis: Any, keys: Keys, *, deadline_s: float = 5.0, owners_ttl_s: float = 1.0,
                 metrics: Any = None, command_streams: bool = True):
        self.redis = redis  # redis.asyncio.Redis
        self.keys = keys
        self.deadline_s = deadline_s
        self.ttl = owners_ttl_s
        self.metrics = metrics
        self.client = RulesClient("", deadline_s=deadline_s)  # its channels, one per replica
        self._owners: dict[str, _Owners] = {}
        self._stubs: dict[str, Any] = {}  # address -> stub over the client's channel to it
        self.command_streams = command_streams
        self._streams: dict[str, CommandStream] = {}  # address -> its moves' stream
        self._reading: dict[str, asyncio.Future] = {}  # game type -> its owners being read

    async def owners(self, game_type: str, *, refresh: bool = False) -> _Owners:
        cached = self._owners.get(game_type)
        if cached is not None and not refresh and time.monotonic() - cached.at < self.ttl:
            return cached
        if not refresh:
            # The cache has just expired under many calls: one read for all of them.
            reading = self._reading.get(game_type)
            if reading is None or reading.done():
                reading = self._reading[game_type] = asyncio.ensure_future(self._read_owners(game_type))
                reading.add_done_callback(lambda f: f.cancelled() or f.exception())  # seen, even if no one waits
            return await asyncio.shield(reading)
        return await self._read_owners(game_type)

    async def _read_owners(self, game_type: str) -> _Owners:
        pipe = self.redis.pipeline(transaction=False)
        pipe.get(self.keys.partitions(game_type))
        pipe.hgetall(self.keys.owners(game_type))
        count, owners = await pipe.execute()
        parsed = {}
        for k, v in (owners or {}).items():
            try:
                parsed[int(k)] = v.decode() if isinstance(v, bytes) else str(v)
            except ValueError:
                continue
        entry = _Owners(int(count) if count else 0, parsed, time.monotonic())
        self._owners[game_type] = entry
        return entry

    async def owner_of(self, game_type: str, game_id: str, *, refresh: bool = False) -> str:
        entry = self._owners.get(game_type)
        if entry is None or refresh or time.monotonic() - entry.at >= self.ttl:
            entry = await self.owners(game_type, refresh=refresh)
        if not entry.partitions:
            return ""
        return entry.owners.get(partition_for(game_id, entry.partitions), "")

    async def call(self, game_type: str, game_id: str, method: str, request: Any) -> Any:
        """Call `method` on the owner of the game; raise Rejection for a final answer."""
        deadline = time.monotonic() + self.deadline_s
        refresh = False
        target = ""
        redirects = 0
        delay = 0.02
        last: Rejection | None = None
        while True:
            if not target:
                target = await self.owner_of(game_type, game_id, refresh=refresh)
            remaining = deadline - time.monotonic()
            if target and remaining > 0:
                stream = None
                try:
                    stub = self._stubs.get(target)
                    if stub is None:
                        stub = self._stubs[target] = self.client.stub(target)
                    stream = self._stream(target, stub) if method == "HandleCommand" else None
                    if stream is not None:
                        response = await stream.handle(request, max(0.2, remaining))
                    else:
                        response = await getattr(stub, method)(request, timeout=max(0.2, remaining))
                    self._count(method, "ok")
                    return response
                except (grpc.aio.AioRpcError, Refusal) as error:
                    if stream is not None and stream.unsupported:
                        continue  # a replica without HandleCommands: the same move, unary, at once
                    rejection, owner = (error.rejection, error.owner) if isinstance(error, Refusal) else from_rpc_error(error)
                    if rejection.kind not in RETRYABLE or rejection.code in BUSY:
                        # Final, or the owner shedding load: tried again at once (and with
                        # the owners read again) it would only add to what it sheds; the
                        # caller is told to retry later (errors.ApiError: Retry-After).
                        self._count(method, rejection.code if rejection.code in BUSY else rejection.kind)
                        raise rejection from None
                    last = rejection
                    if owner and owner != target and redirects < MAX_REDIRECTS:
                        log.debug("redirected", game_id=game_id, to=owner)
                        target, redirects = owner, redirects + 1
                        continue
            elif not target:
                last = Rejection("no_replica", f"no replica of the {game_type} rules service owns this game now",
                                 "unavailable")
            remaining = deadline - time.monotonic()
            if remaining <= 0.01:
                self._count(method, "unavailable")
                raise last or Rejection("unavailable", "the rules service did not answer in time", "unavailable")
            await asyncio.sleep(min(delay, remaining))
            delay = min(delay * 2, 0.5)
            target, refresh = "", True

    def _stream(self, target: str, stub: Any) -> CommandStream | None:
        if not self.command_streams:
            return None
        stream = self._streams.get(target)
        if stream is None:
            stream = self._streams[target] = CommandStream(stub)
        return None if stream.unsupported else stream

    def _count(self, method: str, outcome: str) -> None:
        if self.metrics is not None:
            self.metrics.rules_calls.labels(method, outcome).inc()

    async def close(self) -> None:
        streams, self._streams = list(self._streams.values()), {}
        for stream in streams:
            await stream.close()
        self._stubs.clear()
        await self.client.close()
