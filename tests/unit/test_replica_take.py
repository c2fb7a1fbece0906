"""A replica's take of a partition (Replica._take and its rebuild) when the read of the log
fails part way: a snapshot whose check against the log was not reached yet is not kept, and
a take that fails closes its writer and keeps the games it adopted for the next take.

The partition is an in-memory list standing in for the log: its writer (PartitionWriter)
appends to it and the read (read_partition) reads it, failing when the test says. The real
broker's side of takes and snapshots is tests/integration/test_rules_service.py's and
test_rules_membership.py's."""

from __future__ import annotations

import asyncio
import threading
import types

import pytest
from confluent_kafka import TopicPartition
from test_dedupe_window import _a_legal_move, _logged_game  # tests/unit is on sys.path

import croupier.rules.replica as replica_mod
from croupier.engine import registry
from croupier.engine.contract import Rejection
from croupier.engine.table import TableHost
from croupier.rules.forgotten import IdFilter
from croupier.rules.partition import READY, Pending
from croupier.rules.replica import Replica
from croupier.rules.settings import RulesSettings
from croupier.rules.snapshot import Snapshot, encode

GAME, TOPIC = "expeditions", "events"


class Partition:
    """The log of partition 0 as a list (an event's index is its offset), its writers, and
    the reads of it: `failing` reads raise before they yield anything."""

    def __init__(self, log: list):
        self.log, self.lock = log, threading.Lock()
        self.writers: list[Writer] = []
        self.starts: list[int] = []  # where each read began
        self.failing = 0

    def writer(self, kafka, topic, partition) -> Writer:
        self.writers.append(Writer(self))
        return self.writers[-1]

    def read(self, kafka, topic, partition, *, start=0, reached=None, **kwargs):
        self.starts.append(start)
        if self.failing:
            self.failing -= 1
            raise RuntimeError("the read stalled")  # as read_partition's stall check raises
        with self.lock:
            events = self.log[start:]
        yield from events
        if reached is not None:
            reached.append(start + len(events))


class Writer:
    def __init__(self, partition: Partition):
        self.partition, self.closed = partition, threading.Event()

    def append(self, envelopes, values=None) -> int:
        with self.partition.lock:
            self.partition.log.extend(envelopes)
            return len(self.partition.log) - 1

    def close(self) -> None:
        self.closed.set()


class Snapshots:
    """Stands in for SnapshotStore (Redis): one stored snapshot a partition."""

    def __init__(self):
        self.stored: dict[tuple[str, int], tuple[int, bytes]] = {}

    def load(self, topic: str, partition: int):
        return self.stored.get((topic, partition))

    def save(self, topic: str, partition: int, offset: int, blob: bytes, taken_ms: int = 0) -> bool:
        self.stored[(topic, partition)] = (offset, blob)
        return True


@pytest.fixture
def partition(monkeypatch) -> Partition:
    host = TableHost(registry.get(GAME))
    part = Partition(_logged_game(host, "a") + _logged_game(host, "b"))
    monkeypatch.setattr(replica_mod, "PartitionWriter", part.writer)
    monkeypatch.setattr(replica_mod, "read_partition", part.read)
    return part


def _replica(snapshots: Snapshots | None = None) -> Replica:
    # No idle end: the logged games' events are of time 0, and would be ended at once.
    settings = RulesSettings(game=GAME, idle_end_after_s=0, snapshot_every=0 if snapshots is None else 20000)
    return Replica(settings, TableHost(registry.get(GAME)), TOPIC, 1, snapshots=snapshots)


async def _until(check, what: str) -> None:
    for _ in range(200):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting until {what}")


def test_a_snapshot_whose_read_failed_before_its_check_is_checked_on_the_next_try(partition):
    # A fault of the owner's own drops its games and reads the partition again, from its
    # snapshot: here one the log does not hold (it names an event the log has not got there,
    # and a game the log never had). The read after its restore fails before the first
    # event. Before, the next try read on from the snapshot's offset with nothing left to
    # check, and served the snapshot's games.
    log = partition.log
    above = max(e.seq for e in log if e.game_id == "a")
    failed = []

    def committed(game_id, state):
        if game_id == "a" and state.version > above and not failed:
            failed.append(game_id)
            raise RuntimeError("a listener failed")

    async def main():
        snapshots = Snapshots()
        replica = _replica(snapshots)
        replica.on_committed = committed
        try:
            await replica._take(0)
            owner = replica.owner_of(0)
            assert owner is not None and owner.status == READY
            host = replica.host
            middle = len(log) // 2
            ghost = host.fold(_logged_game(host, "ghost"))
            snapshots.save(TOPIC, 0, middle, encode(Snapshot(
                TOPIC, 0, replica.fingerprint, middle, (log[middle].game_id, log[middle].seq, "0" * 64),
                games=[("ghost", ghost, ())], forgotten=IdFilter())))
            partition.failing = 1
            future = asyncio.get_running_loop().create_future()
            owner.submit(Pending("a", _a_legal_move(owner, "a"), "m1", None, future))
            with pytest.raises(Rejection):
                await asyncio.wait_for(future, 10)  # the fault: answered "retry"
            await _until(lambda: owner.status == READY and partition.failing == 0, "the partition is read again")
            return owner.restored_from, {gid: slot.state for gid, slot in owner.games.items()}, replica.host
        finally:
            await replica.close()

    restored_from, held, host = asyncio.run(main())
    assert restored_from is None  # the snapshot was checked, and ignored
    assert set(held) == {"a", "b"}
    for gid in held:
        assert held[gid] == host.fold([e for e in log if e.game_id == gid])


def test_a_take_whose_read_fails_closes_its_writer_and_keeps_the_games_it_adopted(partition):
    # The partition was revoked and comes back: its games are adopted, and the read of what
    # came after them fails (a stall). Before, the take's writer (made before the read) was
    # never closed, nor its thread, and the adopted games were thrown away: the next take
    # read the whole partition again.
    log = partition.log

    async def main():
        replica = _replica()
        try:
            await replica._take(0)
            first = replica.owner_of(0)
            assert first is not None and first.status == READY
            held = {gid: slot.state for gid, slot in first.games.items()}
            await replica.revoke([0])
            partition.failing = 1
            await replica._take(0)
            failed_owner = replica._suspended.get(0, (None, 0.0))[0]
            failed_writer = partition.writers[-1]
            closed = await asyncio.get_running_loop().run_in_executor(None, failed_writer.closed.wait, 5)
            failed = (replica.owner_of(0), failed_owner, closed,
                      failed_owner is not None and failed_owner._executor._shutdown)
            await replica._take(0)  # the read works again
            again = replica.owner_of(0)
            return held, failed, again.status, {gid: slot.state for gid, slot in again.games.items()}
        finally:
            await replica.close()

    held, (serving, suspended, closed, shut_down), status, after = asyncio.run(main())
    assert serving is None and closed and shut_down
    assert suspended is not None and {gid: slot.state for gid, slot in suspended.games.items()} == held
    # The next take adopted them: it read only what came after them (nothing), not from 0.
    assert status == READY and after == held
    assert partition.starts == [0, len(log), len(log)]


def test_a_partition_is_handed_on_only_once_the_writer_being_made_for_it_is_made(partition, monkeypatch):
    # The group revokes a partition while this replica's writer of it is still being made
    # (init_transactions, which fences every earlier writer of the partition). Before, the
    # revocation returned at once, the next owner made its writer, and ours, finished later,
    # fenced it: the next owner's first commands failed. Now the revocation (run by the
    # membership's thread) waits for the writer being made, and no writer is made after it.
    made, release = threading.Event(), threading.Event()
    plain = partition.writer

    def slow_writer(kafka, topic, p):
        made.set()
        release.wait(10)
        return plain(kafka, topic, p)

    monkeypatch.setattr(replica_mod, "PartitionWriter", slow_writer)
    member = types.SimpleNamespace(topic=TOPIC, abandoned=False, _paused=set(), stop=lambda: None,
                                   join=lambda timeout=None: None)

    async def main():
        loop = asyncio.get_running_loop()
        replica = _replica()
        member.replica = replica
        replica.membership = member  # writers are made only for partitions the group assigns
        replica.assigned = frozenset({0})
        try:
            take = asyncio.create_task(replica._take(0))
            assert await loop.run_in_executor(None, made.wait, 5)
            given_up = threading.Event()

            def revoke():  # the membership's on_revoke, on its own thread
                replica_mod.Membership._give_up(member, [TopicPartition(TOPIC, 0)])
                given_up.set()

            threading.Thread(target=revoke, daemon=True).start()
            waited = not await loop.run_in_executor(None, given_up.wait, 0.5)
            release.set()
            await take
            handed_on = await loop.run_in_executor(None, given_up.wait, 5)
            writers = len(partition.writers)
            # A take queued before the revocation (a reconcile's) makes no writer any more.
            await replica._take(0)
            return waited, handed_on, writers, len(partition.writers), replica.owner_of(0)
        finally:
            release.set()
            await replica.close()

    waited, handed_on, writers_then, writers_after, serving = asyncio.run(main())
    assert waited, "the revocation returned while the partition's writer was still being made"
    assert handed_on and writers_then == 1
    assert writers_after == writers_then and serving is None
