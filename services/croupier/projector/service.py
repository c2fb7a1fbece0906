"""`croupier serve projector`: a consumer group over every game topic that folds the
events into Redis (see models.py), committing offsets only after the Redis writes.

It heals itself: a batch that does not continue a game's stored version (Redis lost data,
or a rebuild dropped the models) makes it re-read that partition from offset zero, which
is harmless because every write is guarded by seq. `croupier projector rebuild` drops the
read models and bumps an epoch that running projectors watch, so they re-read everything.

Where each partition's folded events end is also kept in Redis (`Keys.offsets`), written after
the read models it covers and before the offsets are committed to Kafka: Redis's append-only
file keeps its writes in order, so a Redis that comes back without its last second (a node
lost between two fsyncs) has lost that record's last writes too, and a partition is read from
there rather than from Kafka's committed offset, which is past the lost writes. A partition
the record has no entry for is read from its start (Redis lost the entry with what it covered,
or everything). A projector notices a Redis that restarted under it (redis-py reconnects by
itself) by its run_id, and once a second checks that the record still holds what it wrote for
its partitions (a loss with no restart seen, on a partition with no new events to commit).
"""

from __future__ import annotations

import signal
import threading
import time
from collections import defaultdict
from dataclasses import dataclass

import redis
import structlog
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Message, TopicPartition
from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server

from croupier.engine import registry
from croupier.engine.envelope import Envelope
from croupier.engine.table import OVER, TableHost, TableState
from croupier.projector.confluent import consumer_config
from croupier.projector.keys import Keys
from croupier.projector.models import UNVIEWABLE, Flush, ReadModels
from croupier.rules.settings import KafkaSettings, env_int, env_str, redis_url_from_env
from croupier.rules.store import clip_text as _clip
from croupier.rules.store import ensure_topic, kafka_client, partition_for, read_record, wait_for_partitions
from croupier.rules.store import why as _why

log = structlog.get_logger("croupier.projector")

GROUP = "croupier-projector"
NO_JOINS: dict[int, int] = {}  # a Flush's joins when the batch changed no seat (never written to)
FINISHED_TTL_S = 7 * 86_400  # how long a finished game's read models stay in Redis (0: for good)
SWEEP_EVERY_S = 60.0

# Redis's record of offsets (Keys.offsets), advanced only over what the writer knows it holds.
# KEYS: the record; ARGV: (field, expected value or "" for no entry, new value) per partition.
# Returns the first field whose value is not the expected one (and writes nothing), else nil.
RECORD_OFFSETS = """
for i = 1, #ARGV, 3 do
  local current = redis.call('HGET', KEYS[1], ARGV[i])
  if (current or '') ~= ARGV[i + 1] then return ARGV[i] end
end
for i = 1, #ARGV, 3 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 2])
end
return nil
"""  # how often the listings lose the finished games whose read models expired


@dataclass(frozen=True)
class ProjectorSettings:
    redis_url: str
    key_prefix: str
    finished_ttl_s: int
    metrics_port: int
    max_records: int
    kafka: KafkaSettings
    # Seconds an assigned partition may stand still while the log has records past it before
    # the consumer is made again (Projector._watch); 0: never.
    stall_s: int = 60

    @classmethod
    def from_env(cls) -> "ProjectorSettings":
        return cls(
            redis_url=redis_url_from_env(),
            key_prefix=env_str("CROUPIER_KEY_PREFIX", ""),
            finished_ttl_s=env_int("CROUPIER_PROJECTOR_FINISHED_TTL_S", FINISHED_TTL_S, 0),
            metrics_port=env_int("CROUPIER_PROJECTOR_METRICS_PORT", 0, 0),
            max_records=env_int("CROUPIER_PROJECTOR_MAX_RECORDS", 5000, 1),
            kafka=KafkaSettings.from_env(),
            stall_s=env_int("CROUPIER_PROJECTOR_STALL_S", 60, 0),
        )


class _Rewind:
    """The group's rebalance callbacks, called by librdkafka inside consume(). The assignment
    is eager: a rebalance revokes every partition, then assigns the new set."""

    def __init__(self, projector: "Projector"):
        self.p = projector

    def on_assign(self, consumer: Consumer, assigned: list[TopicPartition]) -> None:
        self.p.assigned(consumer, assigned)

    def on_revoke(self, consumer: Consumer, revoked: list[TopicPartition]) -> None:
        # Another projector may fold these games now: forget our cached states.
        self.p.forget(revoked)

    def on_lost(self, consumer: Consumer, lost: list[TopicPartition]) -> None:
        self.p.forget(lost)


class Projector:
    def __init__(self, settings: ProjectorSettings, games: list[str] | None = None):
        self.s = settings
        self.keys = Keys(settings.key_prefix)
        self.redis = redis.Redis.from_url(settings.redis_url, socket_timeout=10)
        self.models = ReadModels(self.redis, self.keys, settings.finished_ttl_s)
        self.game_ids = games or list(registry.GAME_IDS)
        self.hosts = {g: TableHost(registry.get(g)) for g in self.game_ids}
        self.topics = {settings.kafka.topic(g): g for g in self.game_ids}
        self.cache: dict[str, TableState] = {}
        self.partition_of: dict[str, TopicPartition] = {}
        # The events of a command whose last events a batch did not bring yet, per game: its
        # partition and the records (envelope, offset), folded again with the next batch.
        self.held: dict[str, tuple[TopicPartition, list[tuple[Envelope, int]]]] = {}
        # Games whose log holds a record this projector cannot fold (skip_record): game_id ->
        # where and why. Their read models stay as the last whole command before it left them,
        # and their later records are skipped, not held nor rewound for.
        self.stuck: dict[str, str] = {}
        # Where each stuck game's record is: (topic, partition, offset). A fold of that
        # partition again from at or before it (a rebuild, a Redis that lost what it held, a
        # new assignment) meets it again, so the game is no longer skipped (_unstick): else
        # its records before it were skipped too, and the game lost every read model.
        self._stuck_at: dict[str, tuple[str, int, int]] = {}
        # (topic, partition, game_id) -> the offset of the record after a gap in that game's
        # seqs, for which the partition was rewound to zero: met there again, the events
        # missing are not in the log, and the game is stuck rather than rewound for ever.
        self.gaps: dict[tuple[str, int, str], int] = {}
        self.partition_counts: dict[str, int] = {}  # per topic, as connect() found it
        self._partitions_asked: dict[str, float] = {}
        self._stop = threading.Event()
        self.metrics = CollectorRegistry()
        self.m_events = Counter("croupier_projector_events", "Events folded", ["game_type"], registry=self.metrics)
        self.m_rewinds = Counter("croupier_projector_rewinds", "Partitions re-read from zero", registry=self.metrics)
        self.m_skipped = Counter("croupier_projector_skipped_records",
                                 "Records not folded: not an envelope of the partition's games, or of a stuck game",
                                 ["topic", "reason"], registry=self.metrics)
        self.m_lag = Gauge("croupier_projector_lag", "Records behind the end", ["topic", "partition"], registry=self.metrics)
        self.m_restarts = Counter("croupier_projector_consumer_restarts",
                                  "Consumers made again because a partition stood still behind the log's end",
                                  registry=self.metrics)
        # Per assigned partition: (its position, since when it has not moved), for _watch.
        self._still: dict[tuple[str, int], tuple[int, float]] = {}
        # The partitions a rebuild's rewind could not seek in its last try (_check_epoch): one
        # that stands still so for stall_s is stalled, whatever the log holds past it.
        self._unsought: set[tuple[str, int]] = set()
        self.consumer: Consumer | None = None
        self.epoch = 0
        # The epoch whose rewind the last assignment already made (its partitions were
        # assigned at the beginning): _check_epoch then only commits and acknowledges it.
        self._assigned_from_zero: int | None = None
        self.rewound: set[TopicPartition] = set()
        self.redis_run_id: str | None = None  # the Redis process folded into (_check_redis)
        # Per assigned partition: the value of Redis's record of offsets as this projector last
        # read or wrote it (None: no entry), which its next write expects (RECORD_OFFSETS).
        self.recorded: dict[tuple[str, int], int | None] = {}
        self._record = self.redis.register_script(RECORD_OFFSETS)
        # A fold again (_fold_again) Redis did not answer: its seek is still to be made, and
        # nothing consumed meanwhile is folded (it would be committed past what was dropped).
        self._fold_again_due = False

    def forget(self, partitions, *, rewinding: bool = False) -> None:
        """Drop what is cached of the partitions' games: partitions given up, or (rewinding)
        partitions still held and read again from their start. A rewind keeps the gaps it
        reads again for, and Redis's record of offsets as known: that record has not moved,
        and the rewind's first commit expects it (forgotten, the commit took it for a record
        that moved, folded again from it, and so undid the rewind, for ever)."""
        gone = {TopicPartition(tp.topic, tp.partition) for tp in partitions}
        if not rewinding:
            for tp in gone:
                self.recorded.pop((tp.topic, tp.partition), None)
            names = {(tp.topic, tp.partition) for tp in gone}
            for key in [k for k in self.gaps if k[:2] in names]:
                del self.gaps[key]
        for gid in [g for g, tp in self.partition_of.items() if tp in gone]:
            self.cache.pop(gid, None)
            self.partition_of.pop(gid, None)
        for gid in [g for g, (tp, _) in self.held.items() if tp in gone]:
            del self.held[gid]

    def _forget_all(self) -> None:
        self.cache.clear()
        self.partition_of.clear()
        self.held.clear()
        self.gaps.clear()

    def assigned(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        """on_assign: take the partitions, from the beginning if a rebuild is not folded yet.

        librdkafka cannot seek a partition before its fetcher runs, so a rewind that is due
        when the partitions arrive is made here, by assigning them at the beginning."""
        self._assigned_from_zero = None
        self._unsought = set()
        try:
            epoch = int(self.redis.get(self.keys.epoch()) or 0)
        except redis.RedisError:
            epoch = self.epoch  # _check_epoch sees the rebuild once Redis answers, and seeks then
        if epoch != self.epoch and partitions:
            for tp in partitions:
                tp.offset = OFFSET_BEGINNING
            self._assigned_from_zero = epoch
        stored = self._stored_offsets() if partitions else None
        for tp in partitions:
            key = (tp.topic, tp.partition)
            self.recorded[key] = (stored or {}).get(key)
            # Where Redis's read models of the partition end: its entry in Redis's record, or
            # its start without one (Redis lost the entry with the writes it covered, or
            # everything, or no projector folded it yet). With Redis away, librdkafka starts
            # it from the group's committed offset.
            if self._assigned_from_zero is None and stored is not None:
                tp.offset = self.recorded[key] if self.recorded[key] is not None else OFFSET_BEGINNING
        if self._assigned_from_zero is None and stored is not None:
            self._record_start([tp for tp in partitions if self.recorded[(tp.topic, tp.partition)] is None])
        for tp in partitions:
            if tp.offset == OFFSET_BEGINNING or tp.offset >= 0:
                self._unstick(tp.topic, tp.partition, max(tp.offset, 0))
        consumer.assign(partitions)
        log.info("partitions_assigned", partitions=len(partitions), from_zero=self._assigned_from_zero is not None)

    def _unstick(self, topic: str, partition: int, start: int) -> None:
        """The partition is read again from `start`: its stuck games whose record is at or
        past it meet that record again (and are stuck again if it still cannot be folded)."""
        for gid in [g for g, at in self._stuck_at.items() if at[:2] == (topic, partition) and at[2] >= start]:
            del self._stuck_at[gid]
            self.stuck.pop(gid, None)

    def _record_start(self, partitions: list[TopicPartition]) -> None:
        """Give Redis's record an entry, before any write of ours, for partitions it has none
        for: 0, where they start. An entry made only with a batch's writes could be lost with
        them (a Redis back without its last second), and then be made again past them."""
        if not partitions:
            return
        args: list = []
        for tp in partitions:
            args.extend((f"{tp.topic}/{tp.partition}", "", 0))
        try:
            moved = self._record(keys=[self.keys.offsets()], args=args)
        except redis.RedisError:
            return
        if moved:
            return  # another projector wrote one meanwhile: the first commit finds out
        for tp in partitions:
            self.recorded[(tp.topic, tp.partition)] = 0

    def _stored_offsets(self) -> dict[tuple[str, int], int] | None:
        """Keys.offsets, read from Redis: where each partition's read models end. A partition
        without an entry (no projector of this version has folded it yet, or it is idle) goes
        by the group's committed offset. None when Redis does not answer."""
        try:
            try:
                raw = self.redis.hgetall(self.keys.offsets())
            except redis.ResponseError as exc:
                if "WRONGTYPE" not in str(exc):
                    raise
                # Not the hash this code writes (a hand, another program): as a record Redis
                # lost, dropped, and its partitions are folded again from their start.
                log.error("offsets_record_wrong_type", key=self.keys.offsets(), action="dropped")
                self.redis.unlink(self.keys.offsets())
                raw = {}
        except redis.RedisError:
            return None
        out = {}
        bad = []
        for field, value in raw.items():
            topic, _, partition = field.decode("utf-8", "replace").rpartition("/")
            try:
                out[(topic, int(partition))] = int(value)
            except ValueError:
                bad.append(field)
        if bad:
            # An entry that is no offset would be compared against for ever (RECORD_OFFSETS):
            # dropped, as an entry lost, so its partition is folded again from its start.
            log.error("offsets_record_entry_unreadable", fields=[_clip(repr(f)) for f in bad], action="dropped")
            try:
                self.redis.hdel(self.keys.offsets(), *bad)
            except redis.RedisError:
                return None
        return out

    def connect(self) -> Consumer:
        # Start from the last rebuild any projector acknowledged, read before joining: a
        # rebuild requested since then (even while this process was starting) is not yet
        # folded, so the first assignment re-reads from zero (see assigned and _check_epoch).
        self.epoch = int(self.redis.get(self.keys.epoch_ack()) or 0)
        self.redis_run_id = self._run_id()
        for topic in self.topics:
            ensure_topic(self.s.kafka, topic)
        consumer = Consumer(consumer_config(
            self.s.kafka,
            client_id="croupier-projector",
            group_id=GROUP if not self.s.key_prefix else f"{self.s.key_prefix}{GROUP}",
            error_cb=_kafka_error,
        ))
        try:
            # Know every topic's partitions before joining, or the group may assign nothing
            # until the next metadata refresh.
            for topic in self.topics:
                self.partition_counts[topic] = wait_for_partitions(consumer, topic)
            rewind = _Rewind(self)
            consumer.subscribe(list(self.topics), on_assign=rewind.on_assign, on_revoke=rewind.on_revoke,
                               on_lost=rewind.on_lost)
        except BaseException:
            # Handed to nobody: left open, the client kept its threads and broker connections,
            # one more for each of _consumer_again's tries (once a second).
            try:
                consumer.close()
            except Exception:  # noqa: BLE001 - the error that brought us here is the one to raise
                pass
            raise
        self.consumer = consumer
        return consumer

    def stop(self) -> None:
        self._stop.set()

    def run(self) -> None:
        consumer = self.consumer or self.connect()
        last_lag = last_sweep = 0.0
        try:
            while not self._stop.is_set():
                try:
                    batch = _records(next_batch(consumer, self.s.max_records))
                    if self._fold_again_due:
                        # The last fold again could not read Redis's record of offsets, so it
                        # did not seek, and the batches consumed since were dropped on Redis's
                        # errors: folding on from here would commit past them for good.
                        self._fold_again(consumer)
                        if self._fold_again_due:
                            self._still.clear()
                            self._stop.wait(1.0)
                            continue
                        batch = []  # read before the seek: given again from Redis's record
                    if self._check_epoch(consumer):
                        batch = []  # read before the rewind: every partition gives it again
                    if batch:
                        self.fold(consumer, batch)
                        self._commit(consumer, batch, self.rewound)
                    if time.monotonic() - last_lag > 1.0:
                        last_lag = time.monotonic()
                        if self._check_redis(consumer) or self._check_record(consumer):
                            continue
                        self._report_lag(consumer)
                        stalled = self._watch(consumer, last_lag)
                        if stalled:
                            consumer = self._consumer_again(consumer, stalled)
                            if consumer is None:
                                return  # stopped while making it again
                    if time.monotonic() - last_sweep > SWEEP_EVERY_S:
                        last_sweep = time.monotonic()
                        swept = self.models.sweep(self.game_ids, int(time.time() * 1000))
                        if swept:
                            log.info("finished_games_swept", games=swept)
                except redis.RedisError as exc:
                    # Redis is away (a restart, maybe without its data): wait, then fold
                    # again from the committed offsets; the writes are guarded by seq.
                    log.warning("redis_unavailable", error=str(exc))
                    self._still.clear()  # nothing moves meanwhile, and that is not the consumer's fault
                    self._stop.wait(1.0)
                    self._fold_again(consumer)
                except KafkaException as exc:
                    # The broker is away (a restart): librdkafka reconnects by itself; a
                    # batch folded but not committed is folded again harmlessly.
                    log.warning("kafka_unavailable", error=str(exc))
                    self._still.clear()
                    self._stop.wait(1.0)
        finally:
            try:
                if consumer is not None:
                    consumer.close()  # leaves the group (revoking our partitions) at once
            except Exception:
                pass

    def _watch(self, consumer: Consumer, now: float) -> list[str]:
        """The assigned partitions that have stood still for stall_s while the broker holds
        records past them. librdkafka has states in which an assigned partition is never
        fetched again, with no error to the application (after a broker restart: a request of
        its committed offset that met a stale coordinator, librdkafka issues #5586, #5153); its
        games are then never folded, which is what tests/faults once met. A partition with
        nothing new is only asked about once every stall_s."""
        if not self.s.stall_s:
            return []
        try:
            positions = consumer.position(consumer.assignment())
        except KafkaException:
            return []
        still: dict[tuple[str, int], tuple[int, float]] = {}
        suspects = []
        for tp in positions:
            key = (tp.topic, tp.partition)
            last = self._still.get(key)
            if last is None or last[0] != tp.offset:
                still[key] = (tp.offset, now)
            else:
                still[key] = last
                if now - last[1] >= self.s.stall_s:
                    suspects.append(tp)
        self._still = still
        for tp in suspects:
            if (tp.topic, tp.partition) in self._unsought:
                # A rebuild's rewind cannot seek it (librdkafka never started its fetcher), so
                # the rebuild is never taken up and every round's batch is dropped, even when
                # nothing in the log is past where it was assigned from.
                return [f"{tp.topic}/{tp.partition}"]
        # A few a round (each is a request to the broker, and the loop folds nothing meanwhile):
        # the others stay suspects and are asked about in the next rounds.
        for tp in suspects[:WATCH_ASKS]:
            key = (tp.topic, tp.partition)
            # Where it stands: its position, or (never fetched since the assignment) where the
            # assignment started it, Redis's record of offsets.
            at = tp.offset if tp.offset >= 0 else self.recorded.get(key)
            try:
                low, high = consumer.get_watermark_offsets(TopicPartition(tp.topic, tp.partition), timeout=2,
                                                           cached=False)
            except KafkaException:
                # The broker does not answer: no stall of the consumer's own; none is asked
                # about again before stall_s.
                for other in suspects:
                    self._still[(other.topic, other.partition)] = (other.offset, now)
                return []
            if high > max(at if at is not None else low, low):
                return [f"{tp.topic}/{tp.partition}"]
            self._still[key] = (tp.offset, now)  # nothing new there: asked about again after stall_s
        return []

    def _consumer_again(self, consumer: Consumer, stalled: list[str]) -> Consumer | None:
        """Leave the group and join it again with a new consumer: the new assignment starts
        each partition where Redis's record of offsets says, as after any rebalance. None if
        the projector was stopped meanwhile."""
        log.warning("partitions_stalled", partitions=stalled, seconds=self.s.stall_s,
                    action="the consumer is made again")
        self.m_restarts.inc()
        try:
            consumer.close()
        except Exception:  # noqa: BLE001 - a consumer in a bad state: the new one is what matters
            pass
        self.consumer = None
        self._forget_all()
        self.recorded.clear()
        self._still.clear()
        self._unsought = set()
        while not self._stop.is_set():
            try:
                return self.connect()
            except Exception as exc:  # noqa: BLE001 - Kafka or Redis away: try again
                log.warning("consumer_restart_failed", error=f"{type(exc).__name__}: {exc}"[:300])
                self._stop.wait(1.0)
        return None

    def commit_offsets(self, batch: list[Message]) -> dict[tuple[str, int], int]:
        """Where each partition of the batch may be committed to: past its last record (its
        writes are in Redis now), but never past the first record of a command held back
        (`held`), so that a projector that stops now reads that command again."""
        ends: dict[tuple[str, int], int] = {}
        for msg in batch:
            ends[(msg.topic(), msg.partition())] = msg.offset() + 1
        for tp, records in self.held.values():
            key = (tp.topic, tp.partition)
            if key in ends:
                ends[key] = min(ends[key], records[0][1])
        return ends

    def _commit(self, consumer: Consumer, batch: list[Message], rewound: set[TopicPartition]) -> None:
        """Commit each partition the batch folded to its commit_offsets; never a partition it
        rewound, nor one a rebalance took meanwhile."""
        usable = set(consumer.assignment()) - rewound
        offsets = [TopicPartition(topic, partition, end) for (topic, partition), end in self.commit_offsets(batch).items()
                   if TopicPartition(topic, partition) in usable]
        if offsets and self.redis.exists(self.keys.rebuilding()):
            # A rebuild is dropping the record and the read models: an entry written now would
            # cover writes the drop goes on to unlink, and outlive it (a partition handed, before
            # we take its epoch up, to a projector that took it up already would be read from
            # there, the games before it never folded again). Its epoch reads everything again:
            # nothing is recorded nor committed till then.
            return
        if offsets:
            # Redis's record first (after the writes it covers, on the same connection), and
            # only over the values this projector knows it holds: a record that moved under it
            # (a Redis that came back without its last writes, or another projector's) means
            # those writes may be lost, and nothing is committed before they are folded again.
            args: list = []
            for tp in offsets:
                known = self.recorded.get((tp.topic, tp.partition))
                args.extend((f"{tp.topic}/{tp.partition}", "" if known is None else known, tp.offset))
            try:
                moved = self._record(keys=[self.keys.offsets()], args=args)
            except redis.ResponseError as exc:
                if "WRONGTYPE" not in str(exc):
                    raise
                self._stored_offsets()  # drops it: then it is a record lost
                moved = "the record, which was not a hash"
            if moved:
                log.warning("offsets_record_moved", partition=_text(moved))
                self._fold_again(consumer)
                return
            for tp in offsets:
                self.recorded[(tp.topic, tp.partition)] = tp.offset
            for tp in consumer.commit(offsets=offsets, asynchronous=False) or []:
                if tp.error is not None:
                    raise KafkaException(tp.error)

    def _run_id(self) -> str | None:
        try:
            return str(self.redis.info("server").get("run_id"))
        except redis.RedisError:
            return None

    def _check_redis(self, consumer: Consumer) -> bool:
        """Whether Redis restarted since the last look (a new run_id): then what it lost (the
        last second before a crash) is folded again, from where its record of offsets ends
        (_fold_again; a Redis that lost everything, the record with it, from the start). True
        if it did."""
        run_id = self._run_id()
        if run_id is None or run_id == self.redis_run_id:
            return False
        known, self.redis_run_id = self.redis_run_id, run_id
        if known is None:
            return False
        log.warning("redis_restarted", folding_again_from="its record of offsets")
        self._fold_again(consumer)
        return True

    def _check_record(self, consumer: Consumer) -> bool:
        """Whether Redis's record of offsets moved under a partition we hold (an entry lost or
        changed, with no restart seen): then what it covered may be lost too, and is folded
        again (_fold_again). A partition's commit checks its entry too, but one with no new
        events never commits: without this its lost writes stayed lost. True if it moved."""
        stored = self._stored_offsets()
        if stored is None:
            return False  # Redis does not answer: the next round's error brings us back
        if self.redis.exists(self.keys.rebuilding()):
            return False  # a rebuild drops the record: its epoch rewinds everything next
        for tp in consumer.assignment():
            key = (tp.topic, tp.partition)
            known = self.recorded.get(key)
            if known is not None and stored.get(key) != known:
                log.warning("offsets_record_moved", partition=f"{tp.topic}/{tp.partition}", recorded=known,
                            found=stored.get(key))
                self._fold_again(consumer)
                return True
        return False

    def _fold_again(self, consumer: Consumer) -> None:
        """Forget what is cached and go back to where Redis's read models end: each partition
        from its entry in Redis's record of offsets, or from its start where the record has
        none (lost with the writes it covered, or with everything). What was folded since may
        not be in Redis (a Redis error, a restart); folding again what it still holds changes
        nothing, as every write is guarded by seq."""
        self._forget_all()
        self._assigned_from_zero = None  # seeking to the record's offsets undoes that rewind
        self._fold_again_due = True
        assigned = consumer.assignment()
        if not assigned:
            self._fold_again_due = False  # the next assignment starts from Redis's record
            return
        stored = self._stored_offsets()
        if stored is None:
            # Redis does not answer: the next round consumes a batch before it finds out, and
            # drops it; run() makes this seek before it folds anything again.
            return
        self._fold_again_due = False
        for tp in assigned:
            key = (tp.topic, tp.partition)
            self.recorded[key] = stored.get(key)
            self._unstick(tp.topic, tp.partition, stored.get(key, 0))
            try:
                consumer.seek(TopicPartition(tp.topic, tp.partition, stored.get(key, OFFSET_BEGINNING)))
            except KafkaException:
                pass  # not fetched yet: it starts from the committed offset anyway

    def _check_epoch(self, consumer: Consumer) -> bool:
        """Rewind every assigned partition to zero once a rebuild is requested; True if it did."""
        epoch = int(self.redis.get(self.keys.epoch()) or 0)
        if epoch == self.epoch:
            return False
        assigned = consumer.assignment()
        if not assigned:
            return False  # not in the group yet: rewind once partitions arrive
        from_zero = self._assigned_from_zero == epoch
        # Once only: should a step below fail (Redis, or the commit of offset 0), run() drops
        # this round's batch, which was read from zero; the next try must seek there again.
        self._assigned_from_zero = None
        if not from_zero:
            unsought = []
            for tp in assigned:
                try:
                    consumer.seek(TopicPartition(tp.topic, tp.partition, OFFSET_BEGINNING))
                except KafkaException:
                    unsought.append(f"{tp.topic}/{tp.partition}")
            if unsought:
                # A partition just assigned is not fetched yet (so has no record in this
                # batch) and cannot seek: try again on the next round; seeking the others
                # twice is harmless.
                log.info("rebuild_rewind_deferred", partitions=unsought)
                self._unsought = {(tp.topic, tp.partition) for tp in assigned
                                  if f"{tp.topic}/{tp.partition}" in unsought}
                self._forget_all()
                return True
        self._unsought = set()
        log.info("rebuild_requested", epoch=epoch, partitions=len(assigned))
        self._forget_all()
        for tp in assigned:
            self._unstick(tp.topic, tp.partition, 0)  # the rebuild dropped their read models too
        # Redis's record of offsets goes back with them (a restart reads from zero too).
        self.redis.hdel(self.keys.offsets(), *(f"{tp.topic}/{tp.partition}" for tp in assigned))
        for tp in assigned:
            self.recorded[(tp.topic, tp.partition)] = None
        # Make the rewind durable, so a partition that moves to another projector
        # before we re-fold it is re-read from zero there too.
        consumer.commit(offsets=[TopicPartition(tp.topic, tp.partition, 0) for tp in assigned], asynchronous=False)
        self.m_rewinds.inc(len(assigned))
        self.epoch = epoch
        self._assigned_from_zero = None
        self._report_lag(consumer)
        ack = self.keys.epoch_ack()
        # Never move the acknowledgement backwards (several projectors may ack).
        self.redis.eval("local c = tonumber(redis.call('GET', KEYS[1]) or '0') "
                        "if tonumber(ARGV[1]) > c then redis.call('SET', KEYS[1], ARGV[1]) end return 1",
                        1, ack, epoch)
        return not from_zero

    def envelope(self, msg: Message) -> tuple[Envelope | None, str, str]:
        """The record's envelope, and why it is not one of its partition's games' (reason, why;
        empty when it is). A game's log, as replay and audit read it (store.read_game), is the
        records of its partition keyed by its game_id: a record under another key (or none),
        or in another partition, or of another game type's, is in no game's log."""
        env, reason, detail = read_record(msg.value(), msg.key())
        if reason:
            return env, reason, detail
        game_type = self.topics.get(msg.topic())
        if env.game_type != game_type:
            return env, "wrong_game_type", f"a {_clip(env.game_type)} event in the topic of {game_type}"
        partitions = self.partition_counts.get(msg.topic())
        if partitions and partition_for(env.game_id, partitions) != msg.partition():
            partitions = self._partitions_now(msg.topic())  # the topic may have grown since
            if partition_for(env.game_id, partitions) != msg.partition():
                return env, "wrong_partition", f"its game's partition is {partition_for(env.game_id, partitions)}"
        return env, "", ""

    def _partitions_now(self, topic: str) -> int:
        """The topic's partition count as the broker has it now (asked at most every 10 s)."""
        known = self.partition_counts[topic]
        if self.consumer is None or time.monotonic() - self._partitions_asked.get(topic, 0.0) < 10.0:
            return known
        self._partitions_asked[topic] = time.monotonic()
        try:
            found = self.consumer.list_topics(topic, timeout=5).topics.get(topic)
        except KafkaException:
            return known
        if found is not None and found.error is None and found.partitions:
            self.partition_counts[topic] = len(found.partitions)
        return self.partition_counts[topic]

    def skip_record(self, topic: str, partition: int, offset: int, reason: str, why: str,
                    env: Envelope | None = None) -> None:
        """A record that is not folded: logged and counted; the partition goes on past it."""
        self.m_skipped.labels(topic, reason).inc()
        fields = {"game_id": env.game_id if isinstance(env.game_id, str) else None} if env is not None else {}
        if env is not None and reason != "not_an_envelope":
            fields["seq"] = env.seq
        logger = log.warning if reason == "game_stuck" else log.error
        logger("record_skipped", partition=f"{topic}/{partition}", offset=offset, reason=reason, why=why, **fields)

    def stick(self, gid: str, tp: TopicPartition, offset: int, reason: str, why: str, env: Envelope | None = None) -> None:
        """The game cannot be folded past this record: its read models stay as they are, its
        later records are skipped (until the projector starts again or the partition moves,
        when the record is met again: a newer projector may fold it)."""
        self.stuck[gid] = f"{tp.topic}/{tp.partition} offset {offset} ({reason}: {why})"
        self._stuck_at[gid] = (tp.topic, tp.partition, offset)
        self.cache.pop(gid, None)
        self.partition_of.pop(gid, None)
        self.held.pop(gid, None)
        self.gaps.pop((tp.topic, tp.partition, gid), None)
        self.m_skipped.labels(tp.topic, reason).inc()
        log.error("game_stuck", game_id=gid, partition=f"{tp.topic}/{tp.partition}", offset=offset, reason=reason,
                  why=why, seq=env.seq if env is not None else None)

    def fold(self, consumer: Consumer | None, batch: list[Message]) -> int:
        """Fold one batch of records (in partition order); returns how many events were
        applied. The partitions it had to rewind to zero (a gap, or a write Redis refused)
        are left in self.rewound: they must not be committed."""
        per_game: dict[str, list[tuple[Envelope, int]]] = defaultdict(list)
        where: dict[str, TopicPartition] = {}
        for msg in batch:
            env, reason, why = self.envelope(msg)
            if env is None or reason:
                self.skip_record(msg.topic(), msg.partition(), msg.offset(), reason, why, env)
                continue
            if env.game_id in self.stuck:
                self.skip_record(msg.topic(), msg.partition(), msg.offset(), "game_stuck",
                                 f"its game is stuck since {self.stuck[env.game_id]}", env)
                continue
            per_game[env.game_id].append((env, msg.offset()))
            where[env.game_id] = TopicPartition(msg.topic(), msg.partition())
        missing = [gid for gid in per_game if gid not in self.cache]
        loaded = self.models.load(self.hosts, missing)
        self.models.relist(loaded)  # listings a failure may have left behind their state
        self.cache.update(loaded)
        flushes: list[Flush] = []
        rewind: set[TopicPartition] = set()
        applied = 0
        at: dict[str, int] = {}  # per game flushed: the offset of its last record shown
        for gid, records in per_game.items():
            held = self.held.pop(gid, None)
            if held is not None:
                records = held[1] + records
            game_type = records[0][0].game_type
            host = self.hosts[game_type]
            state = self.cache.get(gid)
            version = state.version if state else 0
            # The read models show a game only as a whole command left it (`shown`): a batch
            # may end inside a command's events, and a view of the state halfway through
            # one is not a state the game was ever in (it may not even be viewable).
            shown, shown_at, shown_joins = state, version, NO_JOINS
            first = None
            end = 0  # the seq that ends the command under way
            rest = 0  # records[rest:] not shown yet are held for the next batch
            joins: dict[int, int] = {}
            tp = where[gid]
            for i, (env, offset) in enumerate(records):
                if env.seq <= version:
                    if env.seq == version and state is not None and env.hash != state.last_hash:
                        # Not a redelivery: another event at a seq already folded (a writer's bug,
                        # or a record from outside the rules). The first stays; this is told.
                        self.skip_record(tp.topic, tp.partition, offset, "seq_conflict",
                                         f"seq {env.seq} was folded already from another event", env)
                    continue  # redelivered
                if env.seq != version + 1:
                    rest = len(records)
                    if self.gaps.get((tp.topic, tp.partition, gid)) == offset:
                        # Read again from the partition's start, and the seqs still do not
                        # follow: the missing events are not in the log. Rewinding again
                        # would re-read the partition for ever, committing nothing.
                        self.stick(gid, tp, offset, "log_gap",
                                   f"seq {env.seq} follows seq {version}: the events between are not in the log", env)
                        break
                    self.gaps[(tp.topic, tp.partition, gid)] = offset
                    rewind.add(tp)
                    log.warning("gap", game_id=gid, seq=env.seq, version=version,
                                partition=f"{tp.topic}/{tp.partition}", offset=offset)
                    break
                if env.cause is not None:
                    if version < end:  # a new command before the last one's count ran out
                        shown, shown_at, shown_joins, rest = state, version, dict(joins) if joins else NO_JOINS, i
                    end = env.command_end
                try:
                    state = host.evolve(state, env)
                except Exception as exc:  # noqa: BLE001 - any record the engine cannot fold
                    # An event this code cannot fold (an unknown type, a newer version, a
                    # payload of the wrong shape, a first event that is no TableCreated): the
                    # game stays as its last whole command left it; the others go on.
                    rest = len(records)
                    self.stick(gid, tp, offset, "unfoldable", f"seq {env.seq} ({_clip(env.type)}): {_why(exc)}", env)
                    break
                version = env.seq
                first = first or env.seq
                if env.type == "SeatJoined":
                    joins[int(env.payload["seat"])] = env.seq
                elif env.type == "SeatLeft":
                    joins[int(env.payload["seat"])] = 0
                if version >= end:
                    shown, shown_at, shown_joins, rest = state, version, dict(joins) if joins else NO_JOINS, i + 1
            tail = [r for r in records[rest:] if r[0].seq > shown_at]
            if tail:
                self.held[gid] = (where[gid], tail)
            if first is not None and shown is not None and shown_at >= first:
                at[gid] = next(o for e, o in records if e.seq == shown_at)
                flushes.append(Flush(gid, game_type, first, shown, shown_joins))
                applied += shown_at - first + 1
                self.m_events.labels(game_type).inc(shown_at - first + 1)
        if flushes:
            results = self.models.apply(flushes, self.hosts)
            for f, result in zip(flushes, results):
                if result == UNVIEWABLE:
                    tp = where[f.game_id]
                    self.stick(f.game_id, tp, at[f.game_id], "unviewable",
                               f"its views at seq {f.state.version} cannot be made (see read_model_unviewable)")
                elif result < 0:
                    rewind.add(where[f.game_id])
                    self.cache.pop(f.game_id, None)
                elif result == 2 or f.state.status == OVER:
                    # Finished: nothing more will come. 2: Redis holds a later version (another
                    # projector's, in a handover): the next batch of the game starts from it.
                    self.cache.pop(f.game_id, None)
                    self.partition_of.pop(f.game_id, None)
                else:
                    self.cache[f.game_id] = f.state
                    self.partition_of[f.game_id] = where[f.game_id]
        self.rewound = rewind
        if rewind and consumer is not None:
            self.forget(rewind, rewinding=True)
            for tp in rewind:
                try:
                    # Being fetched (its records are in this batch), so librdkafka can seek it.
                    consumer.seek(TopicPartition(tp.topic, tp.partition, OFFSET_BEGINNING))
                except KafkaException as exc:
                    # Not committed either: the next batch finds the gap again and retries.
                    log.warning("rewind_failed", partition=f"{tp.topic}/{tp.partition}", error=str(exc))
            self.m_rewinds.inc(len(rewind))
            log.warning("rewound", partitions=sorted(f"{tp.topic}/{tp.partition}" for tp in rewind))
        return applied

    def _report_lag(self, consumer: Consumer) -> None:
        """Records between each assigned partition's position and its last stable offset,
        into the metrics and the projector:lag hash (`croupier status`, rebuild --wait)."""
        assigned = consumer.assignment()
        if not assigned:
            return
        try:
            positions = consumer.position(assigned)
            # No record returned since the assignment or a seek: the fetcher starts from the
            # committed offset (zero after a rebuild's rewind).
            unknown = [tp for tp in positions if tp.offset < 0]
            committed = {tp: tp.offset for tp in consumer.committed(unknown, timeout=5)} if unknown else {}
            lag = {}
            for tp in positions:
                # The end a read_committed fetch last saw (its last stable offset); asked of
                # the broker for a partition not fetched yet.
                low, high = consumer.get_watermark_offsets(tp, cached=True)
                if high < 0:
                    low, high = consumer.get_watermark_offsets(tp, timeout=5)
                pos = tp.offset if tp.offset >= 0 else committed.get(tp, -1)
                if pos < 0:
                    pos = max(low, 0)
                behind = max(0, high - pos)
                self.m_lag.labels(tp.topic, str(tp.partition)).set(behind)
                lag[f"{tp.topic}/{tp.partition}"] = behind
        except KafkaException:
            return
        if lag:
            # Each reading names the epoch this projector has rewound for, in the same
            # transaction: a rebuild's wait must not take a reading of the fold before it.
            pipe = self.redis.pipeline(transaction=True)
            pipe.hset(self.keys.lag(), mapping=lag)
            pipe.hset(self.keys.lag_epoch(), mapping={field: self.epoch for field in lag})
            pipe.expire(self.keys.lag(), LAG_TTL_S)
            pipe.expire(self.keys.lag_epoch(), LAG_TTL_S)
            pipe.execute()


WATCH_ASKS = 4  # partitions _watch asks the broker about in one round, at most
LAG_TTL_S = 30  # the lag readings of projectors that stopped reporting go away
IDLE_WAIT_S = 0.2  # the longest a consume blocks when nothing is waiting (the stop flag's latency)


def next_batch(consumer: Consumer, max_records: int) -> list[Message]:
    """What librdkafka has fetched already, up to max_records, at once; when that is nothing,
    the next record as soon as it comes (or nothing after IDLE_WAIT_S).

    consume(n, t) itself blocks until it has n records or t has passed, so a projector
    asking for a large batch with a wait held every quiet-time event for the whole wait
    (consume(5000, 0.2): ~150 ms between a command's commit and its seats' views)."""
    batch = consumer.consume(max_records, 0)
    if batch:
        return batch
    batch = consumer.consume(1, IDLE_WAIT_S)
    if batch and max_records > 1:
        batch += consumer.consume(max_records - 1, 0)
    return batch


def _records(messages: list[Message]) -> list[Message]:
    """The records of a consume() batch; librdkafka's per-partition errors are logged (it
    recovers from them itself), a fatal one raised."""
    if all(m.error() is None for m in messages):
        return messages
    out = []
    for m in messages:
        err = m.error()
        if err is None:
            out.append(m)
        elif err.fatal():
            raise KafkaException(err)
        elif err.code() != KafkaError._PARTITION_EOF:
            log.warning("kafka_consume_error", topic=m.topic(), partition=m.partition(), error=err.str())
    return out


def _kafka_error(err: KafkaError) -> None:
    """librdkafka's error_cb: a broker away or a connection lost, which it retries itself."""
    log.warning("kafka_unavailable", code=err.name(), error=err.str())


class _StopWhileConnecting(Exception):
    """SIGTERM or SIGINT came before the projector had joined its group."""


def serve(settings: ProjectorSettings) -> None:
    projector = Projector(settings)
    if settings.metrics_port:
        start_http_server(settings.metrics_port, addr="127.0.0.1", registry=projector.metrics)
    connecting = True

    def on_signal(*_) -> None:
        # Running, the loop sees the flag within IDLE_WAIT_S and leaves the group. Still
        # connecting (Kafka slow or away: topic creation and metadata wait up to their
        # timeouts), there is nothing to hand over yet, so stop waiting at once.
        projector.stop()
        if connecting:
            raise _StopWhileConnecting

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)
    try:
        projector.connect()
        connecting = False
    except _StopWhileConnecting:
        log.info("projector_stopped", before="joining its group")
        return
    print(f"croupier projector folding {len(projector.topics)} topics into {settings.redis_url}", flush=True)
    log.info("projector_serving", topics=sorted(projector.topics))
    projector.run()


def rebuild(settings: ProjectorSettings, *, wait_s: float = 0) -> dict:
    """Drop every read model and make the projectors fold the log again from offset zero."""
    from kafka.admin import KafkaAdminClient

    keys = Keys(settings.key_prefix)
    r = redis.Redis.from_url(settings.redis_url, socket_timeout=10)
    r.ping()
    # Both stores first: with either away, nothing is dropped (KafkaUnreachable, or Redis's
    # ConnectionError), rather than views dropped that no projector can fold again yet.
    admin = kafka_client(KafkaAdminClient, settings.kafka, client_id="croupier-rebuild")
    try:
        return _rebuild(settings, keys, r, admin, wait_s)
    finally:
        admin.close()


def drop_keys(r: redis.Redis, patterns: list[str]) -> int:
    """Unlink every key matching the patterns, one pattern after the other (the order matters:
    Keys.read_model_patterns); returns how many were dropped."""
    dropped = 0
    for pattern in patterns:
        batch = []
        for key in r.scan_iter(match=pattern, count=1000):
            batch.append(key)
            if len(batch) >= 500:
                dropped += r.unlink(*batch)
                batch = []
        if batch:
            dropped += r.unlink(*batch)
    return dropped


# How long the rebuild's mark (Keys.rebuilding) outlives a rebuild that died while dropping.
REBUILDING_MARK_S = 3600


def _rebuild(settings: ProjectorSettings, keys: Keys, r: redis.Redis, admin, wait_s: float) -> dict:
    # Marked first: the projectors would take the record of offsets, dropped first, for a
    # Redis that lost it, and fold from zero into keys being dropped, before the epoch's
    # rewind does so again.
    r.set(keys.rebuilding(), "1", ex=REBUILDING_MARK_S)
    dropped = drop_keys(r, keys.read_model_patterns())
    epoch = r.incr(keys.epoch())
    r.delete(keys.rebuilding())
    # Projectors not running now start from zero too: their committed offsets go back to 0.
    group = GROUP if not settings.key_prefix else f"{settings.key_prefix}{GROUP}"
    reset = _reset_offsets(admin, group)
    out = {"dropped_keys": dropped, "epoch": epoch, "offsets_reset": reset}
    if wait_s:
        out.update(_wait_caught_up(settings, keys, r, admin, epoch, wait_s))
    return out


def _wait_caught_up(settings: ProjectorSettings, keys: Keys, r: redis.Redis, admin, epoch: int,
                    wait_s: float) -> dict:
    """Until every partition of every events topic has a reading of zero lag from a projector
    that rewound for `epoch` (with two projectors, one caught up is not enough)."""
    deadline = time.monotonic() + wait_s
    waiting: list[str] = []
    while True:
        expected = _event_partitions(settings, admin)
        lag = {k.decode(): int(v) for k, v in r.hgetall(keys.lag()).items()}
        seen = {k.decode(): int(v) for k, v in r.hgetall(keys.lag_epoch()).items()}
        ack = int(r.get(keys.epoch_ack()) or 0)
        waiting = sorted(p for p in expected or () if seen.get(p, 0) < epoch or lag.get(p, 1) != 0)
        if expected is not None and ack >= epoch and not waiting:
            return {"caught_up": True}
        if time.monotonic() >= deadline:
            return {"caught_up": False, "waiting_on": waiting}
        time.sleep(0.5)


def _event_partitions(settings: ProjectorSettings, admin) -> set[str] | None:
    """"topic/partition" of every existing events topic of the game types (None if the broker
    did not answer: nothing can be called caught up then)."""
    topics = [settings.kafka.topic(g) for g in registry.GAME_IDS]
    try:
        described = admin.describe_topics(topics)
    except Exception as exc:
        log.warning("rebuild_wait_describe_failed", error=str(exc))
        return None
    return {f"{t['name']}/{p['partition_index']}" for t in described if t.get("error_code") == 0
            for p in t.get("partitions") or ()}


def _reset_offsets(admin, group: str) -> bool:
    """Commit offset 0 for the group when no member is active (else the epoch does it)."""
    try:
        described = admin.describe_groups([group]).get(group) or {}
    except Exception:
        described = {}
    if described.get("members"):
        return False
    try:
        result = admin.delete_groups([group])
    except Exception as exc:
        # No such group: nothing to reset. Anything else (a member joined meanwhile):
        # the epoch makes that member re-read from zero.
        return "GROUP_ID_NOT_FOUND" in str(exc) or "GroupIdNotFound" in type(exc).__name__
    return _deleted(result, group)


def _deleted(result, group: str) -> bool:
    """Whether kafka-python's delete_groups answer ({group: 'OK' | error name}) says it is gone."""
    outcome = dict(result or {}).get(group)
    return outcome in ("OK", "GroupIdNotFoundError")


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
