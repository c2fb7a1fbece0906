"""A table's own timers (its turn clock, its game's deadline) go before its idle end.

The idle end (idle_end_after_s) is for tables that would otherwise wait forever; a table with a
turn clock moves by itself, and its clock ends it once its seats stopped playing. Before, the
owner ended a table as abandoned whenever its idle end was due when its timer fired, even when
that timer was the clock's: at the defaults (a day's idle limit, and a turn clock of up to
MAX_TURN_CLOCK_MS, a day) a table of a day's clock was ended `abandoned: no move for 86400 s`
at the very moment its clock ran out, and the seat that let it run out never forfeited (the
other seats lost their win); a clock longer than the idle limit never ran out at all. The idle
end still comes when the clock's Tick is refused.

Driven with short times: a 1 s idle limit and clocks of 1 s and 2 s."""

from __future__ import annotations

import asyncio
import time

from test_commit_pace import SEED, MemoryWriter  # tests/unit is on sys.path
from test_dedupe_window import _host

from croupier.engine.contract import Rejection, Tick
from croupier.engine.table import MAX_TURN_CLOCK_MS, JoinSeat
from croupier.rules.partition import PartitionOwner
from croupier.rules.settings import RulesSettings


def _clocked(host, game_id: str, clock_ms: int, at: int) -> list:
    """A clocked table (forfeit) both seats joined at `at` (ms): its clock runs out at at + clock_ms."""
    options = {"turn_clock_ms": clock_ms, "turn_clock_action": "forfeit"}
    log = host.create(game_id, 2, options, SEED, now=at, command_id=f"{game_id}-c")
    state = host.fold(log)
    for seat in range(2):
        more = host.decide(state, JoinSeat(seat=seat, player=f"p{seat}", entropy="e"), now=at,
                           command_id=f"{game_id}-j{seat}")
        log, state = log + more, host.fold(more, state)
    assert state.status == "running"
    return log


async def _until_over(owner: PartitionOwner, game_ids, seconds: float = 8.0) -> dict:
    for _ in range(int(seconds / 0.02)):
        if all(owner.games[g].state.status == "over" for g in game_ids):
            break
        await asyncio.sleep(0.02)
    return {g: owner.games[g].state for g in game_ids}


def test_the_clock_runs_out_before_an_idle_end_due_at_the_same_time_or_before_it():
    host = _host()
    now = int(time.time() * 1000)
    # "same": clock and idle end both due in ~0.4 s; "longer": a 2 s clock, the idle end due
    # at 1 s (its seat is still within its clock then).
    log = _clocked(host, "same", 1000, now - 600) + _clocked(host, "longer", 2000, now - 600)

    async def main():
        owner = PartitionOwner(host, 0, lambda: MemoryWriter(), max_batch=256, dedupe_window=16,
                               idle_end_after_s=1)
        await owner.start(lambda: list(log))
        try:
            return await _until_over(owner, ("same", "longer"))
        finally:
            await owner.stop("test")

    states = asyncio.run(main())
    for game_id, state in states.items():
        assert state.status == "over", game_id
        assert state.end_reason == "forfeit", (game_id, state.end_reason, state.result)
        assert "let the turn clock run out" in state.result["why"]
    # The defaults that made it the rule for a day's clock: the idle limit is the longest clock.
    assert RulesSettings(game="expeditions").idle_end_after_s * 1000 == MAX_TURN_CLOCK_MS


def test_the_idle_end_still_comes_when_the_clocks_tick_is_refused():
    host = _host()
    decide = host.decide
    refused = []

    def refusing(state, command, **kw):
        if isinstance(command, Tick):
            refused.append(state.version)
            raise Rejection("not_due", "refused for the test", "illegal")
        return decide(state, command, **kw)

    host.decide = refusing
    now = int(time.time() * 1000)
    log = _clocked(host, "stuck", 1000, now - 600)

    async def main():
        owner = PartitionOwner(host, 0, lambda: MemoryWriter(), max_batch=256, dedupe_window=16,
                               idle_end_after_s=1)
        await owner.start(lambda: list(log))
        try:
            return (await _until_over(owner, ("stuck",)))["stuck"]
        finally:
            await owner.stop("test")

    state = asyncio.run(main())
    assert refused  # the clock's move was tried first
    assert state.status == "over" and state.end_reason == "forced"
    assert state.result["why"] == "abandoned: no move for 1 s"
