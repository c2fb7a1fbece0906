"""`croupier serve projector`: a consumer group over every game topic that folds the
events into Redis (see models.py), committing offsets only after the Redis writes.

It heals itself: a batch that does not continue a game's stored version (Redis lost data,
or a rebuild dropped the models) makes it re-read that partition from offset zero, which
is harmless because every write is guarded by seq. `croupier projector rebuild` drops the
read models and bumps an epoch that running projectors watch, so they re-read everything.
"""

from __future__ import annotations

import signal
import threading
import time
from collections import defaultdict
from dataclasses import dataclass

import redis
import structlog
from kafka import KafkaConsumer, OffsetAndMetadata, TopicPartition
from kafka.consumer.subscription_state import ConsumerRebalanceListener
from kafka.errors import KafkaError
from prometheus_client import CollectorRegistry, Counter, Gauge, start_http_server

from croupier.engine import registry
from croupier.engine.envelope import Envelope
from croupier.engine.table import OVER, TableHost, TableState
from croupier.projector.keys import Keys
from croupier.projector.models import Flush, ReadModels
from croupier.rules.settings import KafkaSettings, env_int, env_str, redis_url_from_env
from croupier.rules.store import decode_record, ensure_topic, wait_for_partitions

log = structlog.get_logger("croupier.projector")

GROUP = "croupier-projector"


@dataclass(frozen=True)
class ProjectorSettings:
    redis_url: str
    key_prefix: str
    finished_ttl_s: int
    metrics_port: int
    max_records: int
    kafka: KafkaSettings

    @classmethod
    def from_env(cls) -> "ProjectorSettings":
        return cls(
            redis_url=redis_url_from_env(),
            key_prefix=env_str("CROUPIER_KEY_PREFIX", ""),
            finished_ttl_s=env_int("CROUPIER_PROJECTOR_FINISHED_TTL_S", 0, 0),
            metrics_port=env_int("CROUPIER_PROJECTOR_METRICS_PORT", 0, 0),
            max_records=env_int("CROUPIER_PROJECTOR_MAX_RECORDS", 5000, 1),
            kafka=KafkaSettings.from_env(),
        )


class _Rewind(ConsumerRebalanceListener):
    def __init__(self, projector: "Projector"):
        self.p = projector

    def on_partitions_revoked(self, revoked):
        # Another projector may fold these games now: forget our cached states.
        self.p.forget(revoked)

    def on_partitions_assigned(self, assigned):
        pass


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
        self._stop = threading.Event()
        self.metrics = CollectorRegistry()
        self.m_events = Counter("croupier_projector_events", "Events folded", ["game_type"], registry=self.metrics)
        self.m_rewinds = Counter("croupier_projector_rewinds", "Partitions re-read from zero", registry=self.metrics)
        self.m_lag = Gauge("croupier_projector_lag", "Records behind the end", ["topic", "partition"], registry=self.metrics)
        self.consumer: KafkaConsumer | None = None
        self.epoch = 0

    def forget(self, partitions) -> None:
        gone = set(partitions)
        for gid in [g for g, tp in self.partition_of.items() if tp in gone]:
            self.cache.pop(gid, None)
            self.partition_of.pop(gid, None)

    def connect(self) -> KafkaConsumer:
        # Start from the last rebuild any projector acknowledged, read before joining: a
        # rebuild requested since then (even while this process was starting) is not yet
        # folded, so the first assignment re-reads from zero (see _check_epoch).
        self.epoch = int(self.redis.get(self.keys.epoch_ack()) or 0)
        for topic in self.topics:
            ensure_topic(self.s.kafka, topic)
        consumer = KafkaConsumer(
            bootstrap_servers=self.s.kafka.bootstrap,
            group_id=GROUP if not self.s.key_prefix else f"{self.s.key_prefix}{GROUP}",
            client_id="croupier-projector",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            isolation_level="read_committed",
            session_timeout_ms=self.s.kafka.session_timeout_ms,
            heartbeat_interval_ms=self.s.kafka.heartbeat_interval_ms,
            max_partition_fetch_bytes=8 * 1024 * 1024,
            fetch_max_bytes=64 * 1024 * 1024,
            metadata_max_age_ms=5000,
        )
        # Know every topic's partitions before joining, or the group may assign nothing
        # until the next metadata refresh.
        for topic in self.topics:
            wait_for_partitions(consumer, topic)
        consumer.subscribe(list(self.topics), listener=_Rewind(self))
        self.consumer = consumer
        return consumer

    def stop(self) -> None:
        self._stop.set()

    def run(self) -> None:
        consumer = self.consumer or self.connect()
        last_lag = 0.0
        try:
            while not self._stop.is_set():
                try:
                    batch = consumer.poll(timeout_ms=200, max_records=self.s.max_records)
                    self._check_epoch(consumer)
                    if batch:
                        self.fold(consumer, batch)
                        consumer.commit()
                    if time.monotonic() - last_lag > 1.0:
                        self._report_lag(consumer)
                        last_lag = time.monotonic()
                except redis.RedisError as exc:
                    # Redis is away (a restart, maybe without its data): wait, then fold
                    # again from the committed offsets; the writes are guarded by seq.
                    log.warning("redis_unavailable", error=str(exc))
                    self._stop.wait(1.0)
                    self._from_committed(consumer)
                except KafkaError as exc:
                    # The broker is away (a restart): the client reconnects on the next poll;
                    # a batch folded but not committed is folded again harmlessly.
                    log.warning("kafka_unavailable", error=str(exc))
                    self._stop.wait(1.0)
        finally:
            try:
                consumer.close()
            except Exception:
                pass

    def _from_committed(self, consumer: KafkaConsumer) -> None:
        """Forget what is cached and go back to the last committed offsets: what was polled
        since then may not have reached Redis."""
        self.cache.clear()
        self.partition_of.clear()
        for tp in consumer.assignment():
            try:
                committed = consumer.committed(tp)
            except Exception:
                committed = None
            if committed is None:
                consumer.seek_to_beginning(tp)
            else:
                consumer.seek(tp, committed)

    def _check_epoch(self, consumer: KafkaConsumer) -> None:
        epoch = int(self.redis.get(self.keys.epoch()) or 0)
        if epoch == self.epoch:
            return
        assigned = list(consumer.assignment())
        if not assigned:
            return  # not in the group yet: rewind once partitions arrive
        log.info("rebuild_requested", epoch=epoch, partitions=len(assigned))
        self.cache.clear()
        self.partition_of.clear()
        consumer.seek_to_beginning(*assigned)
        # Make the rewind durable, so a partition that moves to another projector
        # before we re-fold it is re-read from zero there too.
        consumer.commit({tp: OffsetAndMetadata(0, "", -1) for tp in assigned})
        self.m_rewinds.inc(len(assigned))
        self.epoch = epoch
        self._report_lag(consumer)
        ack = self.keys.epoch_ack()
        # Never move the acknowledgement backwards (several projectors may ack).
        self.redis.eval("local c = tonumber(redis.call('GET', KEYS[1]) or '0') "
                        "if tonumber(ARGV[1]) > c then redis.call('SET', KEYS[1], ARGV[1]) end return 1",
                        1, ack, epoch)

    def fold(self, consumer: KafkaConsumer | None, batch: dict) -> int:
        """Fold one poll's records; returns how many events were applied."""
        per_game: dict[str, list[Envelope]] = defaultdict(list)
        where: dict[str, TopicPartition] = {}
        for tp, records in batch.items():
            for record in records:
                env = decode_record(record.value)
                per_game[env.game_id].append(env)
                where[env.game_id] = tp
        missing = [gid for gid in per_game if gid not in self.cache]
        self.cache.update(self.models.load(self.hosts, missing))
        flushes: list[Flush] = []
        rewind: set[TopicPartition] = set()
        applied = 0
        for gid, envs in per_game.items():
            host = self.hosts[envs[0].game_type]
            state = self.cache.get(gid)
            version = state.version if state else 0
            first = None
            joins: dict[int, int] = {}
            for env in envs:
                if env.seq <= version:
                    continue  # redelivered
                if env.seq != version + 1:
                    rewind.add(where[gid])
                    log.warning("gap", game_id=gid, seq=env.seq, version=version)
                    break
                state = host.evolve(state, env)
                version = env.seq
                first = first or env.seq
                applied += 1
                if env.type == "SeatJoined":
                    joins[int(env.payload["seat"])] = env.seq
                elif env.type == "SeatLeft":
                    joins[int(env.payload["seat"])] = 0
            if first is not None and state is not None:
                flushes.append(Flush(gid, envs[0].game_type, first, state, joins))
                self.m_events.labels(envs[0].game_type).inc(version - first + 1)
        if flushes:
            results = self.models.apply(flushes, self.hosts)
            for f, result in zip(flushes, results):
                if result < 0:
                    rewind.add(where[f.game_id])
                    self.cache.pop(f.game_id, None)
                elif f.state.status == OVER:
                    self.cache.pop(f.game_id, None)  # finished: nothing more will come
                    self.partition_of.pop(f.game_id, None)
                else:
                    self.cache[f.game_id] = f.state
                    self.partition_of[f.game_id] = where[f.game_id]
        if rewind and consumer is not None:
            self.forget(rewind)
            consumer.seek_to_beginning(*rewind)
            self.m_rewinds.inc(len(rewind))
            log.warning("rewound", partitions=sorted(f"{tp.topic}/{tp.partition}" for tp in rewind))
        return applied

    def _report_lag(self, consumer: KafkaConsumer) -> None:
        assigned = list(consumer.assignment())
        if not assigned:
            return
        try:
            ends = consumer.end_offsets(assigned)
        except Exception:
            return
        lag = {}
        for tp in assigned:
            behind = max(0, ends[tp] - consumer.position(tp))
            self.m_lag.labels(tp.topic, str(tp.partition)).set(behind)
            lag[f"{tp.topic}/{tp.partition}"] = behind
        if lag:
            self.redis.hset(self.keys.lag(), mapping=lag)
            self.redis.expire(self.keys.lag(), 30)


def serve(settings: ProjectorSettings) -> None:
    projector = Projector(settings)
    if settings.metrics_port:
        start_http_server(settings.metrics_port, addr="127.0.0.1", registry=projector.metrics)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: projector.stop())
    projector.connect()
    print(f"croupier projector folding {len(projector.topics)} topics into {settings.redis_url}", flush=True)
    log.info("projector_serving", topics=sorted(projector.topics))
    projector.run()


def rebuild(settings: ProjectorSettings, *, wait_s: float = 0) -> dict:
    """Drop every read model and make the projectors fold the log again from offset zero."""
    keys = Keys(settings.key_prefix)
    r = redis.Redis.from_url(settings.redis_url, socket_timeout=10)
    dropped = 0
    for pattern in keys.read_model_patterns():
        batch = []
        for key in r.scan_iter(match=pattern, count=1000):
            batch.append(key)
            if len(batch) >= 500:
                dropped += r.unlink(*batch)
                batch = []
        if batch:
            dropped += r.unlink(*batch)
    epoch = r.incr(keys.epoch())
    # Projectors not running now start from zero too: their committed offsets go back to 0.
    group = GROUP if not settings.key_prefix else f"{settings.key_prefix}{GROUP}"
    reset = _reset_offsets(settings, group, [settings.kafka.topic(g) for g in registry.GAME_IDS])
    out = {"dropped_keys": dropped, "epoch": epoch, "offsets_reset": reset}
    if wait_s:
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            ack = int(r.get(keys.epoch_ack()) or 0)
            lag = {k.decode(): int(v) for k, v in r.hgetall(keys.lag()).items()}
            if (ack >= epoch or reset) and lag and sum(lag.values()) == 0:
                out["caught_up"] = True
                break
            time.sleep(0.5)
        else:
            out["caught_up"] = False
    return out


def _reset_offsets(settings: ProjectorSettings, group: str, topics: list[str]) -> bool:
    """Commit offset 0 for the group when no member is active (else the epoch does it)."""
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=settings.kafka.bootstrap, client_id="croupier-rebuild")
    try:
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
    finally:
        admin.close()


def _deleted(result, group: str) -> bool:
    """Whether kafka-python's delete_groups answer ({group: 'OK' | error name}) says it is gone."""
    outcome = dict(result or {}).get(group)
    return outcome in ("OK", "GroupIdNotFoundError")
