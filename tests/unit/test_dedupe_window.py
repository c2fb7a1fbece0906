"""What a partition owner remembers of a game's recent command_ids (its dedupe window): a
retried command_id gets the first answer back, event types and all, live or after a rebuild
from the log, and the same command_id with another move is refused; the window keeps the newest `dedupe_window` results; and what it keeps is
plain data that the garbage collector stops walking (the replica's collections paused it for
up to ~100 ms when these were objects: docs/performance.md).

The owner is driven with the in-memory writer of test_commit_pace; the real broker's side of
retries is covered by tests/integration/test_rules_service.py.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc

import pytest
from test_commit_pace import SEED, MemoryWriter  # tests/unit is on sys.path (pytest, rootdir mode)

from croupier.engine import registry
from croupier.engine.contract import Rejection
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


def _two_moves(owner: PartitionOwner, game_id: str):
    """Two different legal actions of the seat to act."""
    host, state = owner.host, owner.games[game_id].state
    first, second, *_ = host.legal_actions(state, host.spec.to_act(state.game)[0])
    return first, second


async def _refused(owner: PartitionOwner, game_id: str, command, command_id: str) -> Rejection:
    with pytest.raises(Rejection) as caught:
        await _send(owner, game_id, command, command_id)
    return caught.value


def test_a_command_id_sent_again_with_another_move_is_refused_and_appends_nothing():
    """A client that reuses a command_id for a new move must hear so: answering the new move
    as a duplicate of the old would tell it that a move it never made was made."""
    async def main():
        owner = await _owner(_logged_game(_host(), "g"))
        try:
            first_move, other = _two_moves(owner, "g")
            first = await _send(owner, "g", first_move, "m1")
            appended = len(owner._writer.transactions)
            version = owner.games["g"].state.version
            # Another move of the seat to act now, under the used command_id.
            refused = await _refused(owner, "g", _a_legal_move(owner, "g"), "m1")
            # The same move again is still its retry.
            again = await _send(owner, "g", first_move, "m1")
            return (first, refused, again, appended, len(owner._writer.transactions), version,
                    owner.games["g"].state.version)
        finally:
            await owner.stop("test")

    first, refused, again, appended, after, version, still = asyncio.run(main())
    assert (refused.code, refused.kind) == ("command_id_reused", "conflict")
    assert "m1" in refused.message
    assert again.duplicate and again.first_seq == first.first_seq
    assert after == appended and still == version


def test_the_same_move_from_another_seat_under_a_used_command_id_is_refused():
    async def main():
        owner = await _owner(_logged_game(_host(), "g"))
        try:
            move = _a_legal_move(owner, "g")
            await _send(owner, "g", move, "m1")
            return await _refused(owner, "g", dataclasses.replace(move, seat=1 - move.seat), "m1")
        finally:
            await owner.stop("test")

    assert asyncio.run(main()).code == "command_id_reused"


def test_two_moves_under_one_command_id_in_one_batch_the_second_is_refused():
    async def main():
        owner = await _owner(_logged_game(_host(), "g"))
        try:
            first_move, other = _two_moves(owner, "g")
            loop = asyncio.get_running_loop()
            items = [Pending("g", m, "m1", None, loop.create_future()) for m in (first_move, other, first_move)]
            for item in items:  # queued before the loop runs: one batch
                owner.submit(item)
            return await asyncio.gather(*(i.future for i in items), return_exceptions=True), len(owner._writer.transactions)
        finally:
            await owner.stop("test")

    (made, refused, again), transactions = asyncio.run(main())
    assert not made.duplicate
    assert isinstance(refused, Rejection) and refused.code == "command_id_reused"
    assert again.duplicate and again.first_seq == made.first_seq


def test_after_a_rebuild_a_logged_command_id_still_refuses_another_move():
    """The check needs nothing but the log: a new owner reads each command from its first
    event's cause."""
    host = _host()
    envs = _logged_game(host, "g")
    state = host.fold(envs)
    seat = host.spec.to_act(state.game)[0]
    first_move, other, *_ = host.legal_actions(state, seat)
    envs += host.decide(state, first_move, command_id="m1", now=0)

    async def main():
        owner = await _owner(envs)
        try:
            again = await _send(owner, "g", first_move, "m1")
            return again, await _refused(owner, "g", other, "m1")
        finally:
            await owner.stop("test")

    again, refused = asyncio.run(main())
    assert again.duplicate and refused.code == "command_id_reused"
