"""Group commit's pace (croupier.rules.pace): batches wait to fill only when the replica is
busy, and a waiting partition puts the commands that arrive meanwhile in one transaction;
and its linger (PartitionOwner.linger_for): a batch's first command waits for company only
when commands come to its partition often.

The partition owner is driven here with an in-memory writer that records each transaction's
records, which is all the pace changes; the real broker's side of group commit is covered by
tests/integration/test_rules_service.py.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from croupier.engine import registry
from croupier.engine.contract import Rejection
from croupier.engine.table import TableHost
from croupier.rules.pace import IDLE_SHARE, CommitPace
from croupier.rules.partition import PROBE_EVERY, PartitionOwner, Pending

SEED = "ab" * 32


def settle(pace: CommitPace, share: float, rounds: int = 40) -> None:
    for _ in range(rounds):
        pace.update(share)


def test_no_wait_while_the_loop_has_time_to_spare():
    pace = CommitPace(0.02)
    settle(pace, IDLE_SHARE)
    assert pace.pause_s == 0
    settle(pace, 0.1)
    assert pace.pause_s == 0


def test_the_wait_rises_with_the_load_to_the_full_interval():
    pace = CommitPace(0.02)
    settle(pace, 0.75)
    assert pace.pause_s == pytest.approx(0.01, rel=0.01)
    settle(pace, 1.0)
    assert pace.pause_s == pytest.approx(0.02, rel=0.01)
    settle(pace, 1.7)  # a share above 1 (a late sample) never waits longer than the interval
    assert pace.pause_s == pytest.approx(0.02)


def test_one_busy_sample_does_not_make_batches_wait_at_once():
    pace = CommitPace(0.02)
    settle(pace, 0.2)
    pace.update(1.0)
    assert pace.pause_s == 0  # smoothed: a blip is not a load


def test_an_interval_of_zero_turns_it_off():
    pace = CommitPace(0.0)
    settle(pace, 1.0)
    assert pace.pause_s == 0
    pace.start()  # no sampling task without an interval
    assert pace._task is None


class MemoryWriter:
    """Stands in for a partition's transactional producer: each append is one transaction."""

    def __init__(self):
        self.transactions: list[int] = []
        self.lock = threading.Lock()

    def append(self, envelopes) -> None:
        with self.lock:
            self.transactions.append(len(envelopes))

    def close(self) -> None:
        pass


def _create(loop: asyncio.AbstractEventLoop, game_id: str) -> Pending:
    return Pending(game_id, None, f"c-{game_id}", None, loop.create_future(),
                   create={"seats": 2, "options": {}, "seed": SEED})


async def _owner_after_one_commit(pause_s: float) -> tuple[PartitionOwner, MemoryWriter]:
    """A started owner whose pace pauses `pause_s` (as the sampler would set it under load),
    just after committing one game: its next batch waits out the pause."""
    writer = MemoryWriter()
    pace = CommitPace(0.05)
    pace.pause_s = pause_s
    owner = PartitionOwner(TableHost(registry.get("expeditions")), 0, lambda: writer, max_batch=256,
                           dedupe_window=16, pace=pace)
    await owner.start(lambda: [])
    first = _create(asyncio.get_running_loop(), "g-first")
    owner.submit(first)
    await first.future
    return owner, writer


async def _creates(pause_s: float, count: int, gap_s: float) -> list[int]:
    """Create `count` games `gap_s` apart, one at a time; the records of each transaction."""
    owner, writer = await _owner_after_one_commit(pause_s)
    loop = asyncio.get_running_loop()
    try:
        futures = []
        for i in range(count):
            item = _create(loop, f"g{i}")
            owner.submit(item)
            futures.append(item.future)
            await asyncio.sleep(gap_s)
        outcomes = await asyncio.gather(*futures)
        assert [o.game_id for o in outcomes] == [f"g{i}" for i in range(count)]
        assert all(f"g{i}" in owner.games for i in range(count))
        return writer.transactions[1:]
    finally:
        await owner.stop("test")


def test_without_a_pause_each_command_commits_on_its_own():
    transactions = asyncio.run(_creates(0.0, 8, 0.05))
    # Each is appended as it comes (an in-memory append takes well under the 50 ms gap; a
    # very slow machine may still let two meet, which is group commit working as meant).
    assert len(transactions) >= 6, transactions


def test_a_busy_partition_puts_what_arrives_meanwhile_in_one_transaction():
    transactions = asyncio.run(_creates(0.2, 8, 0.01))
    # The first waits out the pause after the game before it; the seven sent 10 ms apart
    # behind it arrive within that pause and ride in the same transaction.
    assert len(transactions) == 1, transactions
    assert sum(transactions) == 8 * len(TableHost(registry.get("expeditions")).create(
        "x", 2, {}, SEED, now=0, command_id="x"))


def test_a_command_held_in_a_pause_is_answered_when_the_partition_is_given_up():
    async def main():
        owner, _ = await _owner_after_one_commit(30.0)
        held = _create(asyncio.get_running_loop(), "g-held")
        owner.submit(held)
        await asyncio.sleep(0.05)  # taken from the queue, waiting out the 30 s pause
        await owner.stop("revoked")
        return await asyncio.wait_for(asyncio.gather(held.future, return_exceptions=True), 5)

    (outcome,) = asyncio.run(main())
    assert isinstance(outcome, Rejection) and outcome.kind == "not_owner", outcome


# -- group commit's linger: a batch's first command waits for company when it is expected ---


async def _started_owner(linger_s: float) -> tuple[PartitionOwner, MemoryWriter]:
    writer = MemoryWriter()
    owner = PartitionOwner(TableHost(registry.get("expeditions")), 0, lambda: writer, max_batch=256,
                           dedupe_window=16, linger_s=linger_s)
    await owner.start(lambda: [])
    return owner, writer


def test_commands_that_come_often_wait_for_each_other_and_share_a_transaction():
    async def main():
        owner, writer = await _started_owner(0.3)
        loop = asyncio.get_running_loop()
        try:
            items = []
            for i in range(8):
                items.append(_create(loop, f"g{i}"))
                owner.submit(items[-1])
                await asyncio.sleep(0.005)
            outcomes = await asyncio.gather(*(item.future for item in items))
            assert [o.game_id for o in outcomes] == [f"g{i}" for i in range(8)]
            return writer.transactions
        finally:
            await owner.stop("test")

    transactions = asyncio.run(main())
    # The first had no arrivals before it to go by and committed alone; the second came 5 ms
    # later, so it waited its 300 ms and the six behind it rode along.
    per_game = len(TableHost(registry.get("expeditions")).create("x", 2, {}, SEED, now=0, command_id="x"))
    assert transactions == [per_game, 7 * per_game], transactions


def test_a_partition_that_hears_from_a_table_now_and_then_never_waits():
    async def main():
        owner, _ = await _started_owner(1.0)
        loop = asyncio.get_running_loop()
        try:
            at = time.perf_counter() - 100.0
            for i in range(5):  # arrivals 10 s apart: about 0.1 a linger, short of COMPANY
                item = _create(loop, f"rare{i}")
                item.enqueued = at + 10.0 * i
                owner.submit(item)
                await item.future
            rare = owner.linger_for(_create(loop, "next"))
            for i in range(40):  # then a run of them 1 ms apart (the average of gaps follows)
                item = _create(loop, f"busy{i}")
                item.enqueued = at + 60.0 + 0.001 * i
                owner.submit(item)
                await item.future
            return rare, owner.linger_for(_create(loop, "next"))
        finally:
            await owner.stop("test")

    rare, busy = asyncio.run(main())
    assert rare == 0.0
    assert 0.9 < busy <= 1.0  # the whole linger, counted from the new command's arrival


def test_no_linger_means_no_wait():
    async def main():
        owner, _ = await _started_owner(0.0)
        loop = asyncio.get_running_loop()
        try:
            for i in range(3):
                item = _create(loop, f"g{i}")
                owner.submit(item)
                await item.future
            return owner.linger_for(_create(loop, "next"))
        finally:
            await owner.stop("test")

    assert asyncio.run(main()) == 0.0


def test_a_table_played_as_fast_as_it_answers_stops_lingering_and_many_tables_bring_it_back():
    async def main():
        owner, writer = await _started_owner(0.05)
        loop = asyncio.get_running_loop()
        try:
            for i in range(64):  # one table, each command sent when the one before is answered
                item = _create(loop, f"solo{i}")
                owner.submit(item)
                await item.future
            solo = owner.lingers
            before = len(writer.transactions)
            items = []
            for i in range(60):  # then many tables: a command every 5 ms, none waiting for another
                items.append(_create(loop, f"many{i}"))
                owner.submit(items[-1])
                await asyncio.sleep(0.005)
            await asyncio.gather(*(item.future for item in items))
            return solo, owner.lingers - solo, writer.transactions[before:]
        finally:
            await owner.stop("test")

    solo, many, transactions = asyncio.run(main())
    # Alone, the commands come 50 ms apart (often enough to expect company) but never meet:
    # after 7 lingers without company (0.8**7 < COMPANY) only a probe every PROBE_EVERY batches
    # lingers. Without that rule all 63 after the first would linger.
    assert 7 < solo <= 7 + 64 // PROBE_EVERY + 1, solo
    # With many tables a probe finds company and lingering resumes: the 60 commands share far
    # fewer transactions than the 60 they would take one by one.
    assert many >= 2, many
    assert len(transactions) <= 30, transactions
