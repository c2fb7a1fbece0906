"""`croupier serve projector`: a consumer group over every game topic that folds the
events into Redis (see models.py), committing offsets only after the Redis writes.

It heals itself: a batch that does not continue a game's stored version (Redis lost data,
or a rebuild dropped the models) makes it re-read that partition from offset zero, which
is harmless because every write is guarded by seq. `croupier projector rebuild` drops the
read models (the record of offsets below first) and bumps an epoch that running projectors
watch, so they read every partition again from the record, which holds only what was folded
since the drop by projectors that took that epoch up (RECORD_OFFSETS).

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

import re
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
SWEEP_EVERY_S = 60.0  # how often the listings lose the finished games whose read models expired

# Redis's record of offsets (Keys.offsets), advanced only over what the writer knows it holds,
# and only while no rebuild is marked (Keys.rebuilding) and the projection epoch (Keys.epoch)
# is the one the writer has taken up: checked in the same step as the write, so no entry is
# written by a projector that has not yet seen the rebuild that dropped the read models it
# covers. Every entry of the record is so written after the last rebuild's drop, by a projector
# that had taken its epoch up: it covers read models Redis holds (a take-up resumes from it).
# KEYS: the record, the rebuild's mark, the epoch. ARGV: the writer's epoch, then (field,
# expected value or "" for no entry, new value) per partition. Returns nil when written, else
# {"rebuilding"}, {"epoch", what the epoch holds} or {"moved", the first field whose value is
# not the expected one}, and writes nothing.
RECORD_OFFSETS = """
if redis.call('EXISTS', KEYS[2]) == 1 then return {'rebuilding'} end
local epoch = redis.pcall('GET', KEYS[3])
if type(epoch) == 'table' then return {'epoch', '?'} end
if (epoch or '0') ~= ARGV[1] then return {'epoch', epoch or '0'} end
for i = 2, #ARGV, 3 do
  local current = redis.call('HGET', KEYS[1], ARGV[i])
  if (current or '') ~= ARGV[i + 1] then return {'moved', ARGV[i]} end
end
for i = 2, #ARGV, 3 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 2])
end
return nil
"""

# Taking partitions (an assignment, or a rebuild's epoch taken up): the epoch and each
# partition's entry in the record, read in one step (so no rebuild's drop comes between them),
# and, with no rebuild marked, an entry of 0 for each partition that has none (or one that is
# no offset), before any write of the taker's: an entry made only with a batch's writes could
# be lost with them (a Redis back without its last second), and then be made again past them.
# KEYS: the record, the rebuild's mark, the epoch. ARGV: the fields. Returns {epoch (or "?"
# when it is not a string), marked (0/1), entry or "" per field}.
TAKE_PARTITIONS = """
local epoch = redis.pcall('GET', KEYS[3])
if type(epoch) == 'table' then epoch = '?' end
local marked = redis.call('EXISTS', KEYS[2])
local out = {epoch or '0', marked}
for i = 1, #ARGV do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  if not (v and string.match(v, '^%d+$')) then
    v = ''
    if marked == 0 then redis.call('HSET', KEYS[1], ARGV[i], '0'); v = '0' end
  end
  out[#out + 1] = v
end
return out
"""

# The epoch holding something that is no epoch (a hand, another program): set to ARGV[2] if it
# still holds what was read (ARGV[1]; "?" for a key of another type). Returns what it holds.
REPAIR_EPOCH = """
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'none' then return '0' end
if kind == 'string' then
  local v = redis.call('GET', KEYS[1])
  if v ~= ARGV[1] then return v end
end
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[1], ARGV[2])
return ARGV[2]
"""

# The acknowledgement of an epoch taken up: never moved backwards (several projectors ack), and
# anything there that is no epoch is written over.
ACK_EPOCH = """
local c = redis.pcall('GET', KEYS[1])
if type(c) == 'table' then redis.call('DEL', KEYS[1]); c = false end
if c and string.match(c, '^%d+$') and tonumber(c) >= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
return 1
"""

# A rebuild's new epoch: past both the epoch and the last acknowledged one, whatever either
# holds (INCR failed on a value that is no integer, after the read models were dropped).
BUMP_EPOCH = """
local function epoch(key)
  local v = redis.pcall('GET', key)
  if type(v) == 'string' and #v <= 15 and (v == '0' or string.match(v, '^[1-9]%d*$')) then return tonumber(v) end
  return 0
end
local new = string.format('%d', math.max(epoch(KEYS[1]), epoch(KEYS[2])) + 1)
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[1], new)
return new
"""

_EPOCH = re.compile(r"(0|[1-9][0-9]{0,14})")


def epoch_value(raw) -> int | None:
    """A projection epoch as Redis holds it (None: no key, 0), or None for a value that is no
    epoch (a hand or another program wrote it): a canonical non-negative integer, as INCR and
    BUMP_EPOCH write it."""
    if raw is None:
        return 0
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    return int(text) if _EPOCH.fullmatch(text) else None


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
        # Games whose cached state is a fold from their first event that Redis has not taken
        # yet (APPLY answered 3: a later version stored without its state): every join since
        # that first event, written with the fold once it reaches the stored version.
        self.whole_joins: dict[str, dict[int, int]] = {}
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
        # Dropped once that record folds (the gap was Redis's, not the log's).
        self.gaps: dict[tuple[str, int, str], int] = {}
        # The partitions whose entry in Redis's record this projector has written since their
        # last rewind to zero: a fold again from such an entry goes on with that read from
        # zero, so it keeps the partition's gaps (_fold_again).
        self._recorded_since_rewind: set[tuple[str, int]] = set()
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
        # The epoch the last assignment already took the partitions up for (assigned where
        # Redis's record said, in the step that read the epoch): _check_epoch then only commits
        # their starts (_assigned_starts) and acknowledges it.
        self._assigned_for: int | None = None
        self._assigned_starts: dict[tuple[str, int], int | None] = {}
        self.rewound: set[TopicPartition] = set()
        self.redis_run_id: str | None = None  # the Redis process folded into (_check_redis)
        # Per assigned partition: the value of Redis's record of offsets as this projector last
        # read or wrote it (None: no entry), which its next write expects (RECORD_OFFSETS).
        self.recorded: dict[tuple[str, int], int | None] = {}
        self._record = self.redis.register_script(RECORD_OFFSETS)
        self._take = self.redis.register_script(TAKE_PARTITIONS)
        self._repair_epoch = self.redis.register_script(REPAIR_EPOCH)
        self._ack_epoch = self.redis.register_script(ACK_EPOCH)
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
                self._recorded_since_rewind.discard((tp.topic, tp.partition))
            names = {(tp.topic, tp.partition) for tp in gone}
            for key in [k for k in self.gaps if k[:2] in names]:
                del self.gaps[key]
        for gid in [g for g, tp in self.partition_of.items() if tp in gone]:
            self.cache.pop(gid, None)
            self.partition_of.pop(gid, None)
            self.whole_joins.pop(gid, None)
        for gid in [g for g, (tp, _) in self.held.items() if tp in gone]:
            del self.held[gid]

    def _forget_all(self, *, gaps: bool = True) -> None:
        self.cache.clear()
        self.whole_joins.clear()
        self.partition_of.clear()
        self.held.clear()
        if gaps:
            self.gaps.clear()
            self._recorded_since_rewind.clear()

    def assigned(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        """on_assign: take the partitions where Redis's record of offsets says (their start
        where it has no entry), and take up a rebuild's epoch from there if it is new.

        The epoch and the record are read in one step (TAKE_PARTITIONS): every entry the record
        holds was written, after the last rebuild's drop, by a projector that had taken that
        rebuild's epoch up (RECORD_OFFSETS), so it covers read models Redis holds, and a take-up
        goes on from it rather than reading the partition from zero again. librdkafka cannot
        seek a partition before its fetcher runs, so a take-up due when the partitions arrive
        is made here, by assigning them at their starts."""
        self._assigned_for = None
        self._assigned_starts = {}
        self._unsought = set()
        taken = None
        if partitions:
            try:
                taken = self._take_partitions(partitions)
            except redis.RedisError:
                # With Redis away, librdkafka starts each partition from the group's committed
                # offset; _check_epoch sees a rebuild once Redis answers, and seeks then.
                taken = None
        if taken is not None:
            epoch, starts = taken
            for tp in partitions:
                key = (tp.topic, tp.partition)
                self.recorded[key] = starts[key]
                tp.offset = starts[key] if starts[key] else OFFSET_BEGINNING
            if epoch != self.epoch:
                self._assigned_for = epoch
                self._assigned_starts = dict(starts)
        for tp in partitions:
            if tp.offset == OFFSET_BEGINNING or tp.offset >= 0:
                self._unstick(tp.topic, tp.partition, max(tp.offset, 0))
        consumer.assign(partitions)
        log.info("partitions_assigned", partitions=len(partitions), epoch_taken_up=self._assigned_for,
                 from_record=sum(1 for tp in partitions if tp.offset > 0))

    def _unstick(self, topic: str, partition: int, start: int) -> None:
        """The partition is read again from `start`: its stuck games whose record is at or
        past it meet that record again (and are stuck again if it still cannot be folded)."""
        for gid in [g for g, at in self._stuck_at.items() if at[:2] == (topic, partition) and at[2] >= start]:
            del self._stuck_at[gid]
            self.stuck.pop(gid, None)

    def _take_partitions(self, partitions) -> tuple[int, dict[tuple[str, int], int | None]]:
        """The epoch and where each partition's read models end (TAKE_PARTITIONS: its entry in
        Redis's record, else 0, entered; None while a rebuild is marked and there is none),
        read in one step. Raises RedisError when Redis does not answer."""
        fields = [f"{tp.topic}/{tp.partition}" for tp in partitions]
        for attempt in range(2):
            try:
                answer = self._take(keys=[self.keys.offsets(), self.keys.rebuilding(), self.keys.epoch()],
                                    args=fields)
                break
            except redis.ResponseError as exc:
                if "WRONGTYPE" not in str(exc) or attempt:
                    raise
                self._stored_offsets()  # not a hash: dropped, as a record lost
        raw_epoch, values = answer[0], answer[2:]
        epoch = epoch_value(raw_epoch)
        if epoch is None:
            epoch = self._junk_epoch(raw_epoch)
        starts: dict[tuple[str, int], int | None] = {}
        for tp, value in zip(partitions, values):
            text = _text(value)
            starts[(tp.topic, tp.partition)] = int(text) if text else None
        return epoch, starts

    def _epoch_now(self) -> int:
        """The projection epoch Redis holds (0 without one); a value that is no epoch is
        replaced first (_junk_epoch)."""
        try:
            raw = self.redis.get(self.keys.epoch())
        except redis.ResponseError as exc:
            if "WRONGTYPE" not in str(exc):
                raise
            raw = "?"  # a key of another type
        epoch = epoch_value(raw)
        return epoch if epoch is not None else self._junk_epoch(raw)

    def _junk_epoch(self, raw) -> int:
        """The epoch holds something that is no epoch (a hand, another program): neither a
        crash nor a guess. It is set past every epoch taken up (this projector's, the last
        acknowledged), as a rebuild's bump would: every projector takes it up, going on from
        Redis's record of offsets, which no rebuild dropped meanwhile (a rebuild drops before it
        bumps, and its bump writes over any value). Nothing is recorded or committed while the
        epoch is not the one taken up (RECORD_OFFSETS), so no entry was written meanwhile."""
        for _ in range(3):
            try:
                ack = epoch_value(self.redis.get(self.keys.epoch_ack())) or 0
            except redis.ResponseError:
                ack = 0
            new = max(self.epoch, ack) + 1
            found = _text(raw) if raw is not None else ""
            held = self._repair_epoch(keys=[self.keys.epoch()], args=[found, new])
            epoch = epoch_value(held)
            log.error("epoch_unreadable", key=self.keys.epoch(), found=_clip(repr(found)),
                      action=f"set to {new}: every projector takes it up from Redis's record of offsets"
                      if epoch == new else "written meanwhile", now=_clip(_text(held)))
            if epoch is not None:
                return epoch
            raw = held
        raise redis.RedisError("the projection epoch keeps holding values that are no epoch")

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
        try:
            self.epoch = epoch_value(self.redis.get(self.keys.epoch_ack())) or 0
        except redis.ResponseError:
            self.epoch = 0  # not a string: the first take-up writes over it (ACK_EPOCH)
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
                        self._restore_missing(consumer)
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

    def _restore_missing(self, consumer: Consumer) -> list[str]:
        """The games this projector holds folded (not finished) whose read-model keys are gone
        while nothing refolds them (deleted by hand: an operator's mistake): their partitions
        are read again from zero, and each such game is written whole from its first event
        (its state is dropped, so a fold that does not reach the stored version goes on,
        APPLY's 3). Without this, an idle game (a table waiting for its players) stayed
        missing until its next event or a rebuild. Returns the games found so."""
        gids = [g for g in self.cache if g not in self.whole_joins]
        if not gids or self.redis.exists(self.keys.rebuilding()) or self._epoch_now() != self.epoch:
            return []  # a rebuild drops them: its epoch folds everything again
        pipe = self.redis.pipeline(transaction=False)
        for gid in gids:
            pipe.exists(self.keys.meta(gid), self.keys.views(gid), self.keys.state(gid))
        gone = [gid for gid, n in zip(gids, pipe.execute()) if n != 3]
        held = set(consumer.assignment())
        rewind = set()
        for gid in gone:
            tp = self.partition_of.get(gid)
            if tp is None or tp not in held:
                continue
            log.error("read_model_missing", game_id=gid, partition=f"{tp.topic}/{tp.partition}",
                      action="its partition is folded again from its start")
            self.redis.unlink(self.keys.state(gid))
            rewind.add(tp)
        if rewind:
            self.forget(rewind, rewinding=True)
            self._recorded_since_rewind.difference_update((tp.topic, tp.partition) for tp in rewind)
            for tp in rewind:  # its stuck games stay stuck, as for a gap's rewind
                try:
                    consumer.seek(TopicPartition(tp.topic, tp.partition, OFFSET_BEGINNING))
                except KafkaException as exc:
                    log.warning("rewind_failed", partition=f"{tp.topic}/{tp.partition}", error=str(exc))
            self.m_rewinds.inc(len(rewind))
        return gone

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
        if offsets:
            # Redis's record first (after the writes it covers, on the same connection), and
            # only over the values this projector knows it holds: a record that moved under it
            # (a Redis that came back without its last writes, or another projector's) means
            # those writes may be lost, and nothing is committed before they are folded again.
            # In the same step (RECORD_OFFSETS): nothing while a rebuild is marked (it is
            # dropping the record and the read models: an entry written now would cover writes
            # the drop goes on to unlink, and outlive it), nor before this projector has taken
            # the rebuild's epoch up (its writes since may have gone with the drop). The
            # epoch, taken up next round, reads again what the entry was to cover.
            args: list = [str(self.epoch)]
            for tp in offsets:
                known = self.recorded.get((tp.topic, tp.partition))
                args.extend((f"{tp.topic}/{tp.partition}", "" if known is None else known, tp.offset))
            try:
                refused = self._record(keys=[self.keys.offsets(), self.keys.rebuilding(), self.keys.epoch()],
                                       args=args)
            except redis.ResponseError as exc:
                if "WRONGTYPE" not in str(exc):
                    raise
                self._stored_offsets()  # drops it: then it is a record lost
                refused = [b"moved", "the record, which was not a hash"]
            if refused:
                if _text(refused[0]) != "moved":
                    return  # a rebuild marked, or an epoch not taken up yet: nothing committed
                log.warning("offsets_record_moved", partition=_text(refused[1]))
                self._fold_again(consumer)
                return
            for tp in offsets:
                self.recorded[(tp.topic, tp.partition)] = tp.offset
                self._recorded_since_rewind.add((tp.topic, tp.partition))
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
        nothing, as every write is guarded by seq.

        A partition read again from zero for a gap (self.gaps) keeps its gaps when it goes
        back to its start, or to an entry this projector wrote since that rewind and Redis
        still holds as written (so Redis holds what that read from zero folded before it):
        it goes on with that read, and a gap met again is in the log. Else they are dropped:
        read from an older entry, a game whose read models Redis lacked (the gap) would be
        taken for a gap in the log."""
        self._forget_all(gaps=False)
        self._assigned_for = None  # seeking to the record's offsets undoes that take-up
        self._fold_again_due = True
        assigned = consumer.assignment()
        if not assigned:
            self._fold_again_due = False  # the next assignment starts from Redis's record
            self.gaps.clear()
            self._recorded_since_rewind.clear()
            return
        stored = self._stored_offsets()
        if stored is None:
            # Redis does not answer: the next round consumes a batch before it finds out, and
            # drops it; run() makes this seek before it folds anything again.
            return
        self._fold_again_due = False
        held = {(tp.topic, tp.partition) for tp in assigned}
        for key in [k for k in self.gaps if k[:2] not in held]:
            del self.gaps[key]
        for tp in assigned:
            key = (tp.topic, tp.partition)
            start = stored.get(key)
            goes_on = not start or (key in self._recorded_since_rewind and start == self.recorded.get(key))
            if not goes_on:
                for gap in [k for k in self.gaps if k[:2] == key]:
                    del self.gaps[gap]
            self._recorded_since_rewind.discard(key)
            if goes_on and start:
                self._recorded_since_rewind.add(key)
            self.recorded[key] = start
            self._unstick(tp.topic, tp.partition, start or 0)
            try:
                consumer.seek(TopicPartition(tp.topic, tp.partition, start if start else OFFSET_BEGINNING))
            except KafkaException:
                pass  # not fetched yet: it starts from the committed offset anyway

    def _check_epoch(self, consumer: Consumer) -> bool:
        """Take a new projection epoch (a rebuild's) up: every assigned partition is read again
        from where Redis's record of offsets says, read in one step with the epoch (its start
        where the record has no entry: a rebuild dropped the record, so after one, from zero
        every partition no projector has folded again yet). True if it sought (the round's
        batch, read before, is dropped)."""
        epoch = self._epoch_now()
        if epoch == self.epoch:
            return False
        assigned = consumer.assignment()
        if not assigned:
            return False  # not in the group yet: taken up once partitions arrive
        taken_up = self._assigned_for == epoch
        starts = self._assigned_starts
        # Once only: should a step below fail (Redis, or the commit), run() drops this round's
        # batch, which was read from the starts; the next try must seek there again.
        self._assigned_for = None
        self._assigned_starts = {}
        if not taken_up:
            epoch, starts = self._take_partitions(assigned)
            if epoch == self.epoch:
                return False  # moved back meanwhile (a hand): nothing to take up
            unsought = []
            for tp in assigned:
                start = starts.get((tp.topic, tp.partition))
                try:
                    consumer.seek(TopicPartition(tp.topic, tp.partition, start if start else OFFSET_BEGINNING))
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
        from_zero = [tp for tp in assigned if not starts.get((tp.topic, tp.partition))]
        log.info("rebuild_requested", epoch=epoch, partitions=len(assigned), from_zero=len(from_zero),
                 from_record=len(assigned) - len(from_zero))
        self._forget_all()
        for tp in assigned:
            key = (tp.topic, tp.partition)
            self.recorded[key] = starts.get(key)
            self._unstick(tp.topic, tp.partition, starts.get(key) or 0)
        # Make the starts durable, so a partition that moves to another projector while Redis
        # is away is read from there too (librdkafka starts it from the committed offset).
        consumer.commit(offsets=[TopicPartition(tp.topic, tp.partition, starts.get((tp.topic, tp.partition)) or 0)
                                 for tp in assigned], asynchronous=False)
        self.m_rewinds.inc(len(from_zero))
        self.epoch = epoch
        self._report_lag(consumer)
        # Never moved backwards (several projectors ack).
        self._ack_epoch(keys=[self.keys.epoch_ack()], args=[epoch])
        return not taken_up

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
        self.whole_joins.pop(gid, None)
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
            # A fold from the game's first event going on (whole): every join since then.
            whole = self.whole_joins.get(gid) if state is not None else None
            joins: dict[int, int] = dict(whole) if whole else {}
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
                if self.gaps and self.gaps.get((tp.topic, tp.partition, gid)) == offset:
                    # The record a gap was met at follows now: the gap was in Redis's read
                    # models (a game's keys gone), not in the log.
                    del self.gaps[(tp.topic, tp.partition, gid)]
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
                flushes.append(Flush(gid, game_type, first, shown, shown_joins, whole=whole is not None))
                applied += shown_at - first + 1
                self.m_events.labels(game_type).inc(shown_at - first + 1)
        if flushes:
            results = self.models.apply(flushes, self.hosts)
            for f, result in zip(flushes, results):
                if result == UNVIEWABLE:
                    self.whole_joins.pop(f.game_id, None)
                    tp = where[f.game_id]
                    self.stick(f.game_id, tp, at[f.game_id], "unviewable",
                               f"its views at seq {f.state.version} cannot be made (see read_model_unviewable)")
                elif result == 3:
                    # Redis holds a later version of the game without its state (an eviction,
                    # a hand, a state unreadable and dropped): this fold from its first event
                    # goes on in the next batch, and is written whole once it reaches it.
                    # Dropped, the next batch started from the stored version, had no state to
                    # start from, and took it for a gap in the log: stuck for good.
                    self.cache[f.game_id] = f.state
                    self.partition_of[f.game_id] = where[f.game_id]
                    self.whole_joins[f.game_id] = dict(f.joins)
                    continue
                self.whole_joins.pop(f.game_id, None)
                if result < 0:
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
            self._recorded_since_rewind.difference_update((tp.topic, tp.partition) for tp in rewind)
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
            for attempt in range(2):
                pipe = self.redis.pipeline(transaction=True)
                pipe.hset(self.keys.lag(), mapping=lag)
                pipe.hset(self.keys.lag_epoch(), mapping={field: self.epoch for field in lag})
                pipe.expire(self.keys.lag(), LAG_TTL_S)
                pipe.expire(self.keys.lag_epoch(), LAG_TTL_S)
                try:
                    pipe.execute()
                    return
                except redis.ResponseError as exc:
                    if "WRONGTYPE" not in str(exc) or attempt:
                        raise
                    # Not the hashes this code writes (a hand, another program): taken for Redis
                    # away, every round folded again for good. Dropped: readings come each second.
                    log.error("lag_wrong_type", keys=[self.keys.lag(), self.keys.lag_epoch()], action="dropped")
                    self.redis.unlink(self.keys.lag(), self.keys.lag_epoch())


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
    try:
        dropped = drop_keys(r, keys.read_model_patterns())
    finally:
        # Bumped and unmarked even when the drop stops halfway (Ctrl-C, an error): left
        # marked, the projectors recorded and committed nothing for the mark's hour, and the
        # read models dropped so far came back only after it. The epoch makes them read again
        # from the record, which goes first (from zero, then), so a drop in part is folded
        # again as a whole one is.
        # Past the epoch and the last acknowledged one, whatever either holds: an INCR of a
        # value that is no integer failed here, with every read model dropped and the mark set.
        epoch = int(r.eval(BUMP_EPOCH, 2, keys.epoch(), keys.epoch_ack()))
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
        # A reading that is no number (a hand, another program) is no reading: the projectors
        # write over it within a second.
        lag = _numbers(r, keys.lag())
        seen = _numbers(r, keys.lag_epoch())
        try:
            ack = epoch_value(r.get(keys.epoch_ack())) or 0
        except redis.ResponseError:
            ack = 0
        waiting = sorted(p for p in expected or () if seen.get(p, 0) < epoch or lag.get(p, 1) != 0)
        if expected is not None and ack >= epoch and not waiting:
            return {"caught_up": True}
        if time.monotonic() >= deadline:
            return {"caught_up": False, "waiting_on": waiting}
        time.sleep(0.5)


def _numbers(r: redis.Redis, key: str) -> dict[str, int]:
    """A hash of readings per "topic/partition" (lag, lag_epoch), without those that are no
    number."""
    try:
        raw = r.hgetall(key)
    except redis.ResponseError:
        return {}
    out = {}
    for field, value in raw.items():
        try:
            out[_text(field)] = int(value)
        except ValueError:
            continue
    return out


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
