"""Bots that play through the gateway, like any client: a bot seat follows its own stream
(its view and legal actions), picks with the game's bot `bot_for(spec, name)(view, legal, rng)`
and submits with expected_version, so it never acts on a stale view. Used by `make run`'s
demo tables, `croupier play` (to fill the other seats) and the end-to-end tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import random
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog

from croupier.engine import registry
from croupier.engine.bots import bot_for
from croupier_gateway.client import GatewayError, GrpcGateway, HttpGateway, Update

log = structlog.get_logger("croupier.gateway.bots")

Client = HttpGateway | GrpcGateway


@dataclass
class SeatRecord:
    """What one seat (or a spectator) saw and did: for tests and reports."""

    seat: int | None
    versions: list[int] = field(default_factory=list)
    updates: list[Update] = field(default_factory=list)
    moves: int = 0
    conflicts: int = 0
    reconnects: int = 0
    final: Update | None = None
    keep_updates: bool = False


async def follow(client: Client, game_id: str, token: str | None, record: SeatRecord, *,
                 on_update: Callable[[Update], Any] | None = None, reconnect_every: int = 0,
                 max_reconnects: int = 50) -> SeatRecord:
    """Read a stream to the game's end, resuming after the last version on any drop.
    With reconnect_every=N it drops the connection itself every N messages (to test resuming)."""
    last = 0
    failures = 0
    while True:
        count = 0
        dropped = False
        try:
            async with contextlib.aclosing(client.updates(game_id, token, last)) as stream:
                async for update in stream:
                    if update.version <= last:
                        raise AssertionError(f"stream of seat {record.seat} went from {last} to {update.version}")
                    last = update.version
                    record.versions.append(update.version)
                    if record.keep_updates:
                        record.updates.append(update)
                    record.final = update
                    failures = 0
                    if on_update is not None:
                        result = on_update(update)
                        if asyncio.iscoroutine(result):
                            await result
                    count += 1
                    if update.over:
                        return record
                    if reconnect_every and count >= reconnect_every:
                        dropped = True  # drop it on purpose: the next loop resumes from `last`
                        break
            if not dropped:
                if record.final is not None and record.final.over:
                    return record
                if count == 0 and (await client.table(game_id))["status"] == "over":
                    # Closed at once: the game ended at or before `last` (seen by a view we lost).
                    view = await client.view(game_id, token)
                    record.final = Update(view["version"], view["view"], [])
                    return record
            record.reconnects += 1
        except (TimeoutError, ConnectionError, OSError) as exc:
            failures += 1
            record.reconnects += 1
            if failures > max_reconnects:
                raise
            log.debug("stream_reconnect", game_id=game_id, seat=record.seat, error=str(exc))
            await asyncio.sleep(min(0.05 * 2**failures, 1.0))
        except GatewayError as exc:
            if exc.status not in (429, 503) or failures > max_reconnects:
                raise
            failures += 1
            record.reconnects += 1
            await asyncio.sleep(min(0.05 * 2**failures, 1.0))


async def play_seat(client: Client, game_id: str, seat: int, token: str, bot_name: str, *, seed: int = 0,
                    reconnect_every: int = 0, keep_updates: bool = False,
                    pace_s: float | Callable[[], float] = 0.0) -> SeatRecord:
    """Play one seat with a bot to the end of the game (pausing pace_s before each move; a
    callable is asked for each pause, for think times that vary)."""
    game_type = game_id.split("-", 1)[0]
    if game_type not in registry.GAME_IDS:
        game_type = (await client.table(game_id))["game_type"]
    bot = bot_for(registry.get(game_type), bot_name)
    rng = random.Random(f"{seed}:{game_id}:{seat}")
    record = SeatRecord(seat, keep_updates=keep_updates)

    async def act(update: Update) -> None:
        if not update.actions or update.over:
            return
        pause = pace_s() if callable(pace_s) else pace_s
        if inspect.isawaitable(pause):
            pause = await pause
        if pause:
            await asyncio.sleep(pause)
        action = bot(update.view, update.actions, rng)
        if action is None:
            return  # the bot waits (its vote stands): the next update asks again
        command_id = uuid.uuid4().hex  # the same for every try: the move is made at most once
        tries = 20
        for attempt in range(tries):
            try:
                await client.submit(game_id, token, command_id, action, expected_version=update.version, wait=False)
                record.moves += 1
                return
            except GatewayError as exc:
                if exc.status == 409:  # another seat moved first: a newer view is on its way
                    record.conflicts += 1
                    return
                if exc.status in (429, 503):
                    if attempt == tries - 1:
                        # No newer view comes for a move that was never made: returning here would
                        # leave the seat (and its table) waiting for ever. Status 0: the client
                        # gave up, the gateway said nothing new (a 429 or 503 would be taken by
                        # `follow` for a stream to resume).
                        raise GatewayError(0, "gave_up", f"seat {seat} of {game_id}: the move was still answered "
                                                         f"{exc.status} {exc.code} after {tries} tries") from exc
                    await asyncio.sleep(min(0.05 * 2**attempt, 1.0))
                    continue
                if exc.status == 422 and exc.code in ("game_over", "not_your_turn"):
                    return
                raise

    return await follow(client, game_id, token, record, on_update=act, reconnect_every=reconnect_every)


@dataclass
class TableRun:
    game_id: str
    game_type: str
    seats: list[SeatRecord]
    spectators: list[SeatRecord]
    final: dict[str, Any] | None


async def create_and_seat(client: Client, game_type: str, bots: Sequence[str], *,
                          options: dict[str, Any] | None = None) -> tuple[str, list[str]]:
    """Create a table with len(bots) seats and join every seat; returns its id and the tokens."""
    created = await client.create_table(game_type, len(bots), options)
    game_id = created["game_id"]
    tokens = []
    for seat, name in enumerate(bots):
        joined = await client.join(game_id, seat, player=f"{name}-bot-{seat}", bot=name, entropy=uuid.uuid4().hex)
        tokens.append(joined["token"])
    return game_id, tokens


async def run_table(client: Client, game_type: str, bots: Sequence[str], *, spectators: int = 0, seed: int = 0,
                    options: dict[str, Any] | None = None, reconnect_every: int = 0,
                    keep_updates: bool = False, timeout_s: float = 300.0,
                    spectator_client: Client | None = None) -> TableRun:
    """A whole game played by bots through the gateway, with spectators watching."""
    game_id, tokens = await create_and_seat(client, game_type, bots, options=options)
    watchers = [SeatRecord(None, keep_updates=keep_updates) for _ in range(spectators)]
    tasks = [play_seat(client, game_id, seat, token, name, seed=seed, reconnect_every=reconnect_every,
                       keep_updates=keep_updates)
             for seat, (token, name) in enumerate(zip(tokens, bots))]
    tasks += [follow(spectator_client or client, game_id, None, w, reconnect_every=reconnect_every)
              for w in watchers]
    results = await asyncio.wait_for(asyncio.gather(*tasks), timeout_s)
    seat_records = list(results[:len(bots)])
    final = seat_records[0].final.view if seat_records and seat_records[0].final else None
    return TableRun(game_id, game_type, seat_records, watchers, final)


def default_bot(game_type: str) -> str:
    spec = registry.get(game_type)
    return "heuristic" if "heuristic" in spec.bots else next(iter(spec.bots), "random")
