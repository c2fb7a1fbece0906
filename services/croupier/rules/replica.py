"""A replica of one game type's rules service: group membership and its partitions.

The replicas of a game type form one Kafka consumer group over the type's topic; the group
hands each partition to one replica (cooperative-sticky: a rebalance moves as few as it
can). The consumer (librdkafka's) is used for membership only: its partitions stay paused. On assignment a replica fences the partition's previous writer
(init_transactions), reads the partition's committed events, and then serves its games.
A partition
with a snapshot (snapshot.py) that matches the code and the log starts from its games and reads
only the events after it. On revocation it stops at once. A partition it held keeps its games in memory for
SUSPENDED_KEEP_S, so getting it back soon only reads what others appended meanwhile (from
the offset its memory reached).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import structlog
from confluent_kafka import Consumer, KafkaError, TopicPartition

from croupier.engine.envelope import Envelope
from croupier.engine.table import TableHost
from croupier.rules.pace import CommitPace
from croupier.rules.partition import LOST, READY, PartitionOwner
from croupier.rules.settings import RulesSettings
from croupier.rules.snapshot import Snapshot, SnapshotStore, decode, fingerprint
from croupier.rules.store import (
    FINISH_TIMEOUT_MS,
    RDKAFKA_LOG,
    PartitionWriter,
    rdkafka_detail,
    read_partition,
    wait_for_partitions,
)

log = structlog.get_logger("croupier.rules")

MEMBERSHIP_CHECK_S = 2.0
# How long a revoked partition's games are kept in case the group gives it back.
SUSPENDED_KEEP_S = 120.0
# How long a closing replica lets a snapshot under way finish (compress, store).
SNAPSHOT_FINISH_S = 10.0
# How long giving a partition up waits for a writer of it still being made (its
# init_transactions gives up after FINISH_TIMEOUT_MS): the group hands the partition on only
# after that, so the late writer cannot fence the next owner's.
WRITER_GATE_WAIT_S = FINISH_TIMEOUT_MS / 1000 + 5.0


class NotAssigned(RuntimeError):
    """A writer was asked for a partition the group no longer gives this replica."""


def _close_quietly(consumer) -> None:
    try:
        consumer.close()
    except Exception:
        pass

# A poll waits at most ~200 ms, or up to 5 s between tries after it raised.
MEMBERSHIP_STALL_S = 30.0


class _MembershipConsumer(Consumer):
    """librdkafka's consumer as a Python class (confluent-kafka's own type has no instance
    attributes): tests/integration/test_rules_membership.py replaces its poll to inject a
    stall."""


def _membership_error(err: KafkaError) -> None:
    """librdkafka's error_cb: a broker away or a connection lost, which it retries itself."""
    log.warning("membership_kafka_error", code=err.name(), error=err.str(), fatal=err.fatal())


class Membership(threading.Thread):
    """The replica's member of the group, on librdkafka (confluent-kafka). Only this thread
    touches the consumer: confluent-kafka serializes calls on a consumer, and a call from
    another thread can wait behind its polls for good.

    The assignment is cooperative-sticky: a rebalance revokes only the partitions that move
    (on_revoke), and a partition is handed to its new member only after its old member gave
    it up, so the partitions the consumer holds are always the replica's to serve.
    librdkafka heartbeats from its own thread: a slow poll does not lose the group."""

    def __init__(self, replica: "Replica", loop: asyncio.AbstractEventLoop):
        super().__init__(name="membership", daemon=True)
        self.replica = replica
        self.loop = loop
        s = replica.settings
        self.topic = replica.topic
        self._stopping = threading.Event()  # not _stop: Thread has its own
        # When the last poll returned (the replica's watchdog replaces a membership whose
        # poll has not returned for MEMBERSHIP_STALL_S), and whether it was replaced: an
        # abandoned membership that wakes up again changes nothing.
        self.progress = time.monotonic()
        self.abandoned = False
        # Between a revocation and the end of its rebalance (the next on_assign, which
        # librdkafka calls at the end of every cooperative rebalance, with no partition if
        # none is added) the group is not stable: no reconcile is scheduled then.
        self._rebalancing = False
        self._paused: set[tuple[str, int]] = set()
        self.consumer = _MembershipConsumer({
            "bootstrap.servers": s.kafka.bootstrap,
            "group.id": f"croupier-rules.{self.topic}",
            "client.id": f"croupier-rules-{s.game}",
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "isolation.level": "read_committed",
            # Never read: the partitions are paused as they are assigned; were one fetched
            # anyway, it would start at the end, not at the partition's history.
            "auto.offset.reset": "latest",
            "session.timeout.ms": s.kafka.session_timeout_ms,
            "heartbeat.interval.ms": s.kafka.heartbeat_interval_ms,
            "max.poll.interval.ms": 300000,
            "partition.assignment.strategy": "cooperative-sticky",
            "topic.metadata.refresh.interval.ms": 5000,
            "logger": RDKAFKA_LOG,
            "error_cb": _membership_error,
        })
        try:
            wait_for_partitions(self.consumer, self.topic)
            # Lost partitions are given up as revoked ones are: the group went on without us (a
            # session that expired while the broker was away), others may hold them already,
            # and librdkafka rejoins by itself.
            self.consumer.subscribe([self.topic], on_assign=self._on_assign, on_revoke=self._on_revoke,
                                    on_lost=self._on_revoke)
        except BaseException:
            _close_quietly(self.consumer)
            raise

    # The callbacks run in poll (or close), on this thread. They only stop commands at once
    # (revoked, lost) and pause what is assigned; what the replica serves follows the
    # consumer's assignment (see run).

    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        consumer.incremental_assign(partitions)
        if partitions:
            consumer.pause(partitions)  # membership only: never fetched
            self._paused.update((tp.topic, tp.partition) for tp in partitions)
        self._rebalancing = False

    def _on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._rebalancing = True
        self._give_up(partitions)
        consumer.incremental_unassign(partitions)

    def _give_up(self, partitions: list[TopicPartition]) -> None:
        self._paused.difference_update((tp.topic, tp.partition) for tp in partitions)
        if self.abandoned:
            return
        gone = {tp.partition for tp in partitions if tp.topic == self.topic}
        # A reconcile still queued for an older assignment must not take these any more.
        self.replica.assigned = self.replica.assigned - gone
        for p in gone:
            owner = self.replica.owners.get(p)
            if owner is not None:
                owner.status = LOST  # an append under way is fenced by the next owner anyway
        # Not handed on while a writer of ours is still being made: its init_transactions,
        # finishing after the next owner's, would fence that owner's writer.
        self.replica.wait_for_writers(gone)
        if gone:
            # The group may give the same partitions straight back (a rebalance after the
            # broker restarted does): the assignment then looks unchanged, and without this
            # the partitions marked lost here were never taken again (every command to them
            # was refused as unavailable for good).
            self.replica.dirty = True

    def run(self) -> None:
        last: frozenset[int] | None = None
        reconciled = 0.0
        failures = 0
        try:
            while not self._stopping.is_set():
                try:
                    msg = self.consumer.poll(0.2)
                    self.progress = time.monotonic()
                    failures = 0
                    if msg is not None and msg.error() is not None:
                        log.warning("membership_kafka_error", code=msg.error().name(), error=msg.error().str())
                    assignment = self.consumer.assignment()
                    unpaused = [tp for tp in assignment if (tp.topic, tp.partition) not in self._paused]
                    if unpaused:
                        self.consumer.pause(unpaused)
                        self._paused.update((tp.topic, tp.partition) for tp in unpaused)
                except Exception as exc:
                    # librdkafka reconnects by itself while the broker is away; whatever
                    # else fails here: keep trying. A thread that ended here would leave
                    # the replica serving partitions the group no longer gives it, and
                    # never taking any again.
                    failures += 1
                    self.progress = time.monotonic()
                    log.warning("membership_poll_failed", error=rdkafka_detail(exc), failures=failures)
                    self._stopping.wait(min(0.2 * 2 ** min(failures, 5), 5.0))
                    continue
                if self._rebalancing:
                    continue
                desired = frozenset(tp.partition for tp in assignment if tp.topic == self.topic)
                if self.abandoned:
                    break
                self.replica.assigned = desired
                lost = time.monotonic() - reconciled > 1.0 and self.replica.has_lost()
                if desired != last or self.replica.dirty or lost:
                    reconciled = time.monotonic()
                    last = desired
                    self.replica.dirty = False
                    asyncio.run_coroutine_threadsafe(self.replica.reconcile(desired), self.loop)
        except Exception as exc:
            log.error("membership_failed", error=str(exc))
        finally:
            # Leaving the group hands our partitions over at once (graceful shutdown); the
            # revocation runs our on_revoke from close(). Not if abandoned: the watchdog's
            # _leave_with closes the consumer once no writer of ours is being made (our
            # on_revoke does nothing then), and two threads must not close one consumer.
            if not self.abandoned:
                _close_quietly(self.consumer)

    def stop(self) -> None:
        self._stopping.set()


class Replica:
    def __init__(self, settings: RulesSettings, host: TableHost, topic: str, partitions: int,
                 publish: Callable[[int, str | None], None] | None = None, metrics=None,
                 snapshots: SnapshotStore | None = None):
        self.settings = settings
        self.host = host
        self.topic = topic
        self.partitions = partitions
        self.owners: dict[int, PartitionOwner] = {}
        # Partitions revoked from this replica, with their owner's games and when they left
        # (time.monotonic()): a partition given straight back (a rebalance that returns it, as
        # after a broker restart) reads only what is new. Kept SUSPENDED_KEEP_S, then forgotten:
        # a partition that moved to another replica for good must not keep its games here.
        self._suspended: dict[int, tuple[PartitionOwner, float]] = {}
        self._publish = publish
        self._metrics = metrics
        self.on_committed: Callable | None = None
        self._lock = asyncio.Lock()
        self.dirty = False
        # The group's newest assignment to this replica (set by the membership thread). A
        # reconcile works from it, not from the assignment it was scheduled with: reconciles
        # queue up behind each other, and taking a partition the group has since given to
        # another replica would fence that replica's writer.
        self.assigned: frozenset[int] = frozenset()
        self.membership: Membership | None = None
        # One lock a partition, held while a writer of it is made (its init_transactions
        # fences every earlier writer of the partition): see _new_writer and wait_for_writers.
        self._writer_gates: dict[int, threading.Lock] = {}
        self.last_rebuild: dict[str, float] = {}
        # By default (append_threads 0) each partition commits on its own thread: librdkafka
        # waits for the broker without the GIL, so the partitions' transactions overlap.
        # With N > 0 the partitions share N threads: at most N transactions at once, larger
        # batches, more waiting. Fencing stays per partition either way: each partition
        # keeps its own transactional producer.
        self._append_executor = (ThreadPoolExecutor(max_workers=settings.append_threads, thread_name_prefix="append")
                                 if settings.append_threads > 0 else None)
        self.pace = CommitPace(settings.commit_interval_ms / 1000)
        self.snapshots = snapshots
        self.fingerprint = fingerprint(host.spec.id, host.spec.rules_version)
        self._snapshot_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="snapshot")
        if metrics is not None:
            # Read when scraped (on the metrics server's thread), so always current.
            metrics.owned_games.set_function(lambda: self._count(lambda o: len(o.games)))
            metrics.retired_games.set_function(lambda: self._count(lambda o: len(o.retired)))
            metrics.forgotten_games.set_function(lambda: self._count(lambda o: o.forgotten.count))

    def _count(self, size: Callable[[PartitionOwner], int]) -> float:
        # tuple() copies the owners in one step under the GIL, so the loop's thread cannot
        # change the dict while it is walked here.
        return float(sum(size(o) for o in tuple(self.owners.values())))

    def start(self) -> None:
        self.pace.start()
        self.membership = Membership(self, asyncio.get_running_loop())
        self.membership.start()
        self._watchdog = asyncio.create_task(self._watch_membership(), name="membership-watchdog")

    async def _watch_membership(self) -> None:
        """Replace a membership whose consumer poll has stopped returning (its thread stuck
        in a callback, say): the replica would never follow the group again, while
        librdkafka's own thread kept heartbeating for it until max.poll.interval.ms. A new
        consumer joins the group afresh. (kafka-python 3.0, the membership's first client,
        did leave its poll waiting for good after a join under load.)"""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(MEMBERSHIP_CHECK_S)
            self.forget_suspended()
            old = self.membership
            if old is None or old._stopping.is_set():
                continue
            stalled = time.monotonic() - old.progress
            if stalled < MEMBERSHIP_STALL_S:
                continue
            log.warning("membership_stalled", seconds=round(stalled, 1))
            try:
                fresh = await loop.run_in_executor(None, Membership, self, loop)
            except Exception as exc:  # the broker is away: try again on the next check
                log.warning("membership_restart_failed", error=str(exc))
                continue
            old.abandoned = True
            old.stop()
            self.membership = fresh
            # The old consumer's partitions go back to the group as it closes (or when the
            # broker expires it), maybe to another replica: stop commands to them at once.
            # The new member's assignment takes them again (fencing, then reading the log).
            self.assigned = frozenset()
            for owner in self.owners.values():
                owner.status = LOST
            self.dirty = True
            # Leave the group if the old consumer still can (else the broker expires it), so
            # the group's next rebalance does not wait for a member that will never rejoin;
            # once no writer of ours is still being made (as on a revocation).
            threading.Thread(target=self._leave_with, args=(old.consumer,), name="close-stalled-membership",
                             daemon=True).start()
            fresh.start()
            log.info("membership_restarted")

    def _leave_with(self, consumer) -> None:
        self.wait_for_writers(list(self._writer_gates))
        _close_quietly(consumer)

    async def close(self) -> None:
        watchdog = getattr(self, "_watchdog", None)
        if watchdog is not None:
            watchdog.cancel()
        if self.membership:
            self.membership.stop()
            await asyncio.get_running_loop().run_in_executor(None, self.membership.join, 20)
        # A snapshot being saved is finished first (its last step runs on the snapshot
        # thread): the partitions' next owners start from it.
        saving = [task for owner in self.owners.values() if (task := owner.snapshot_task) is not None]
        await self.revoke(list(self.owners))
        self.pace.stop()
        if self._append_executor is not None:
            self._append_executor.shutdown(wait=False)
        if saving:
            await asyncio.wait(saving, timeout=SNAPSHOT_FINISH_S)
        self._snapshot_executor.shutdown(wait=False)

    def has_lost(self) -> bool:
        """Whether a partition we hold is marked lost (a reconcile takes it again, or lets it
        go). Read from the membership thread: a snapshot, as the loop may change the dict."""
        try:
            return any(o.status == LOST for o in tuple(self.owners.values()))
        except RuntimeError:  # changed while copied: look again on the next poll
            return False

    def owner_of(self, partition: int) -> PartitionOwner | None:
        return self.owners.get(partition)

    async def reconcile(self, desired: frozenset[int]) -> None:
        """Serve exactly the partitions the group assigns us: let go of the others, take the
        new ones (and again any we hold that was marked lost). Runs one at a time."""
        async with self._lock:
            if self.membership is not None:
                desired = self.assigned
            for p in [p for p, o in self.owners.items() if p not in desired or o.status == LOST]:
                await self.revoke([p])
            for p in sorted(desired):
                if self.membership is not None and p not in self.assigned:
                    continue  # revoked meanwhile
                if p not in self.owners:
                    await self._take(p)
                    if p not in self.owners:
                        self.dirty = True  # the take failed: try again on the next poll

    async def _take(self, p: int) -> None:
        s = self.settings
        previous = self._suspended.pop(p, (None, 0.0))[0]
        owner = PartitionOwner(
            self.host, p, lambda p=p: self._new_writer(p),
            max_batch=s.max_batch, dedupe_window=s.dedupe_window,
            on_committed=self.on_committed, metrics=self._metrics, on_fenced=self._fenced,
            still_assigned=lambda p=p: self.membership is None or p in self.assigned,
            append_executor=self._append_executor, pace=self.pace, linger_s=s.commit_linger_ms / 1000,
            retire_after_s=s.retire_after_s, forget_after_s=s.forget_after_s, idle_end_after_s=s.idle_end_after_s,
            snapshots=self.snapshots, snapshot_every=s.snapshot_every, snapshot_executor=self._snapshot_executor,
            topic=self.topic, fingerprint=self.fingerprint, max_record_bytes=s.kafka.max_message_bytes,
        )
        if previous is not None:
            owner.adopt(previous)
        self.owners[p] = owner
        started = time.perf_counter()
        counter = {"events": 0}

        def rebuild() -> Iterator[Envelope]:
            """The partition from where this replica's memory of it ends (0 the first time,
            or the partition's snapshot): the games hold every event before
            `owner.log_offset`, and the fold skips any event they already hold (their own
            appends since, read again). A snapshot's own last event is read first, to check
            that the log holds it there; if it does not, the snapshot's games are dropped and
            the partition is read from its start."""
            counter["events"] = 0
            expect = restored = None
            if owner.log_offset == 0 and not owner.games and not owner.retired and not owner.forgotten.count:
                snapshot = self.load_snapshot(p)
                if snapshot is not None:
                    owner.restore(snapshot)
                    expect = restored = snapshot.last
            reached: list[int] = []
            try:
                for env in read_partition(s.kafka, self.topic, p, start=owner.log_offset, reached=reached):
                    if expect is not None:
                        if (env.game_id, env.seq, env.hash) != expect:
                            break
                        expect = None
                        continue  # the snapshot's last event: its games hold it
                    counter["events"] += 1
                    yield env
            except Exception:
                if expect is not None:
                    # The read failed before the log was checked to hold the snapshot's last
                    # event. Its games must not stay: the next try (a recovery's, or a take
                    # that adopts them) would read on from its offset, with nothing left to
                    # check. Dropped, the next try loads the snapshot again and checks it.
                    owner.drop_all()
                raise
            if expect is None:
                owner.log_offset = reached[-1]  # read to the end, and every event folded
                if restored is not None and self._metrics:
                    self._metrics.snapshots.labels("used").inc()
                return
            # The log does not hold the snapshot's last event where it says (a topic made
            # again, say): forget its games and read the whole partition.
            log.warning("snapshot_ignored", partition=p, offset=owner.restored_from, reason="not in the log")
            if self._metrics:
                self._metrics.snapshots.labels("ignored").inc()
            owner.drop_all()
            reached = []
            for env in read_partition(s.kafka, self.topic, p, start=0, reached=reached):
                counter["events"] += 1
                yield env
            owner.log_offset = reached[-1]

        try:
            await owner.start(rebuild)
        except Exception as exc:
            if isinstance(exc, NotAssigned):  # revoked while it was taken: nothing failed
                log.info("partition_take_dropped", partition=p, reason=str(exc))
            else:
                log.error("partition_start_failed", partition=p, error=str(exc))
            self.owners.pop(p, None)
            # As a revoke: its writer (made before the read failed) and its thread are closed,
            # and what it holds (the games it adopted, and what it read since) is kept for
            # the next take, which then reads only what comes after it.
            await owner.stop("start failed")
            self._suspended[p] = (owner, time.monotonic())
            return
        elapsed = time.perf_counter() - started
        self.last_rebuild = {"partition": p, "events": counter["events"], "seconds": round(elapsed, 3),
                             "events_per_s": round(counter["events"] / elapsed, 1) if elapsed else 0.0,
                             "snapshot_offset": owner.restored_from}
        if self._publish:
            self._publish(p, "ready")
        if self._metrics:
            self._metrics.owned_partitions.set(len(self.owners))

    def _new_writer(self, p: int) -> PartitionWriter:
        """A writer of partition p (on the partition's thread), made only while the group gives
        us p. Giving p up marks it unassigned first and then waits for the writer being made,
        if any (wait_for_writers): a writer whose init_transactions finished after the next
        owner's would fence that owner's, and its first commands would fail."""
        gate = self._writer_gates.setdefault(p, threading.Lock())
        with gate:
            if self.membership is not None and p not in self.assigned:
                raise NotAssigned(f"partition {p} is no longer assigned to this replica")
            return PartitionWriter(self.settings.kafka, self.topic, p)

    def wait_for_writers(self, parts, timeout: float = WRITER_GATE_WAIT_S) -> None:
        """Wait (on the calling thread) until no writer of these partitions is being made;
        called after they were marked unassigned, so none is made after this returns."""
        deadline = time.monotonic() + timeout
        for p in parts:
            gate = self._writer_gates.get(p)
            if gate is None:
                continue
            if gate.acquire(timeout=max(0.0, deadline - time.monotonic())):
                gate.release()
            else:
                log.warning("writer_still_starting", partition=p, waited_all_s=timeout)

    def load_snapshot(self, p: int) -> Snapshot | None:
        """Partition p's stored snapshot if it is one this code can start from (the log check
        comes as the rebuild reads); None if there is none, or it is ignored (logged)."""
        if self.snapshots is None:
            return None
        try:
            stored = self.snapshots.load(self.topic, p)
            if stored is None:
                return None
            snapshot = decode(stored[1])
            reason = None
            if (snapshot.topic, snapshot.partition) != (self.topic, p):
                reason = f"it is of {snapshot.topic}/{snapshot.partition}"
            elif snapshot.fingerprint != self.fingerprint:
                reason = "written by other code (another game or engine version)"
        except Exception as exc:  # Redis away, or bytes this code cannot read: read the log
            reason = f"{type(exc).__name__}: {exc}"
        if reason is None:
            return snapshot
        log.warning("snapshot_ignored", partition=p, reason=reason)
        if self._metrics:
            self._metrics.snapshots.labels("ignored").inc()
        return None

    def _fenced(self, partition: int) -> None:
        """Another writer fenced ours. If the group still gives us the partition, the next
        reconcile takes it again (and fences that writer), so it is never left ownerless."""
        self.dirty = True

    async def revoke(self, parts: list[int]) -> None:
        for p in parts:
            owner = self.owners.pop(p, None)
            if owner is None:
                continue
            await owner.stop("revoked")
            # Keep the games: if the partition comes back, read only what is new.
            self._suspended[p] = (owner, time.monotonic())
            if self._publish:
                self._publish(p, None)
        if self._metrics:
            self._metrics.owned_partitions.set(len(self.owners))

    def forget_suspended(self, now: float | None = None) -> list[int]:
        """Drop the games of partitions revoked more than SUSPENDED_KEEP_S ago (taking one back
        later reads it from the start); the partitions forgotten."""
        now = time.monotonic() if now is None else now
        old = [p for p, (_, since) in self._suspended.items() if now - since > SUSPENDED_KEEP_S]
        for p in old:
            del self._suspended[p]
        return old

    def ready_partitions(self) -> list[int]:
        return sorted(p for p, o in self.owners.items() if o.status == READY)
