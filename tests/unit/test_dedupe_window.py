"""What a partition owner remembers of a game's recent command_ids (its dedupe window): a
retried command_id gets the first answer back, event types and all, live or after a rebuild
from the log; the window keeps the newest `dedupe_window` results; and what it keeps is
plain data that the garbage collector stops walking (the replica's collections paused it for
up to ~100 ms when these were objects: docs/performance.md).

The owner is driven with the in-memory writer of test_commit_pace; the real broker's side of
retries is covered by tests/integration/test_rules_service.py.
"""

from __future__ import annotations

import asyncio
import gc

from test_commit_pace import SEED, MemoryWriter  # tests/unit is on sys.path (pytest, rootdir mode)

from croupier.engine import registry
from croupier.engine.table import JoinSeat, TableHost
from croupier.rules.partition import PartitionOwner, Pending

GAME = "expeditions"


def _host() -> TableHost:
    return TableHost(registry.get(GAME))


def _logged_game(host: TableHost, game_id: str) -> list:
    """A game's log as the store would hold it: created, then both seats joined (the second
    join deals: one command, several events)."""
    envs = host.create(game_id, 2, {}, SEED, now=0, command_id="create")
    state = host.fold(envs)
    for seat in range(2):
        batch = host.decide(state, JoinSeat(seat=seat, player=f"p{seat}", entropy=f"e{seat}"),
                            command_id=f"join{seat}", now=0)
        envs += batch
        state = host.fold(batch, state)
    return envs


async def _owner(envelopes: list, window: int = 16) -> PartitionOwner:
    writer = MemoryWriter()
    owner = PartitionOwner(_host(), 0, lambda: writer, max_batch=256, dedupe_window=window)
    await owner.start(lambda: envelopes)
    return owner


def _a_legal_move(owner: PartitionOwner, game_id: str):
    """The first legal action of the seat to act in the owner's game."""
    host, state = owner.host, owner.games[game_id].state
    return host.legal_actions(state, host.spec.to_act(state.game)[0])[0]


async def _send(owner: PartitionOwner, game_id: str, command, command_id: str):
    item = Pending(game_id, command, command_id, None, asyncio.get_running_loop().create_future())
    owner.submit(item)
    return await item.future


def test_a_retry_after_a_rebuild_gets_every_event_type_of_the_first_answer():
    host = _host()
    envs = _logged_game(host, "g")
    dealt = [e for e in envs if e.command_id == "join1"]
    assert len(dealt) > 1  # the case that matters: one command, several events

    async def main():
        owner = await _owner(envs)
        try:
            return await _send(owner, "g", JoinSeat(seat=1, player="p1", entropy="e1"), "join1")
        finally:
            await owner.stop("test")

    again = asyncio.run(main())
    assert again.duplicate
    assert (again.first_seq, again.last_seq, again.version) == (dealt[0].seq, dealt[-1].seq, dealt[-1].seq)
    assert again.event_types == tuple(e.type for e in dealt)


def test_a_live_retry_answers_as_the_first_time_and_appends_nothing():
    async def main():
        owner = await _owner(_logged_game(_host(), "g"))
        try:
            move = _a_legal_move(owner, "g")
            first = await _send(owner, "g", move, "m1")
            appended = len(owner._writer.transactions)
            again = await _send(owner, "g", move, "m1")
            return first, again, appended, len(owner._writer.transactions)
        finally:
            await owner.stop("test")

    first, again, appended, after = asyncio.run(main())
    assert not first.duplicate and again.duplicate
    assert (again.first_seq, again.last_seq, again.event_types) == (first.first_seq, first.last_seq, first.event_types)
    assert after == appended


def test_the_window_keeps_the_newest_results_and_forgets_the_oldest():
    async def main():
        owner = await _owner(_logged_game(_host(), "g"), window=3)
        try:
            sent = []
            for i in range(5):
                await _send(owner, "g", _a_legal_move(owner, "g"), f"m{i}")
                sent.append(f"m{i}")
            return list(owner.games["g"].seen), sent
        finally:
            await owner.stop("test")

    kept, sent = asyncio.run(main())
    assert kept == sent[-3:]


def test_remembered_results_are_not_walked_by_the_garbage_collector():
    async def main():
        owner = await _owner(_logged_game(_host(), "g"))
        try:
            await _send(owner, "g", _a_legal_move(owner, "g"), "m1")
            return list(owner.games["g"].seen.values())
        finally:
            await owner.stop("test")

    remembered = asyncio.run(main())
    # A collection stops tracking a tuple whose items are all untracked: the shared tuple of
    # event types in the first, then the result that holds it (the replica's collections
    # get there the same way, as these age through the generations).
    gc.collect()
    gc.collect()
    assert remembered and not any(gc.is_tracked(r) for r in remembered)
