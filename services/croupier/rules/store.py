"""The Kafka event store: one topic per game type, key = game_id, one writer per partition.

A game's partition is murmur2(game_id) mod partitions, as Kafka's default partitioner
computes it, so the gateway can route a command before the game exists. Each partition has
its own transactional.id: whoever calls init_transactions with it last is the only one
whose commits the broker accepts, so a stale owner is fenced by the broker, not by timing.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Iterator

import structlog
from confluent_kafka import Consumer as ConfluentConsumer
from confluent_kafka import KafkaError as ConfluentError
from confluent_kafka import KafkaException as ConfluentException
from confluent_kafka import Producer as ConfluentProducer
from confluent_kafka import TopicPartition as ConfluentTopicPartition
from kafka import KafkaConsumer
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import KafkaConnectionError, KafkaError, KafkaTimeoutError, TopicAlreadyExistsError
from kafka.partitioner.default import murmur2

from croupier.engine.codec import canonical_bytes, loads
from croupier.engine.envelope import Envelope
from croupier.projector.confluent import consumer_config  # the read_committed consumer the projector uses
from croupier.rules.settings import KafkaSettings

# How long a transaction's commit (or abort) may take before the append counts as failed.
FINISH_TIMEOUT_MS = 15000

# librdkafka's own log lines (broker down, reconnects) of the rules service's clients (the
# writers and the group membership) go to Python logging, not stderr.
RDKAFKA_LOG = logging.getLogger("croupier.rdkafka")
log = structlog.get_logger("croupier.store")


# Ids at most this long are remembered by partition_for (a game id is at most 128
# characters: the services refuse longer ones before they ask).
CACHED_ID_CHARS = 128


def partition_for(game_id: str, partitions: int) -> int:
    if len(game_id) <= CACHED_ID_CHARS:
        return _cached_partition(game_id, partitions)
    return _partition(game_id, partitions)


def _partition(game_id: str, partitions: int) -> int:
    return (murmur2(game_id.encode("utf-8")) & 0x7FFFFFFF) % partitions


# Cached: kafka-python's murmur2 is pure Python and every command asks. Only ids of a game's
# length: 65,536 of them are a few MB at most, where ids of any length (a 900 KB one hashed
# for 0.2 s) grew a replica by their size for good.
_cached_partition = functools.lru_cache(maxsize=1 << 16)(_partition)


class KafkaUnreachable(ConnectionError):
    """No broker of the bootstrap list answered in time: the store is away, not the request
    wrong. Callers say so (the CLI exits 75, the gateway answers 503) and may retry."""

    def __init__(self, bootstrap: str, timeout_s: float, cause: BaseException):
        super().__init__(f"cannot reach Kafka at {bootstrap} (CROUPIER_KAFKA_BOOTSTRAP): "
                         f"no broker answered within {timeout_s:g} s ({type(cause).__name__})")


class LogReadStalled(TimeoutError):
    """A read of the log made no progress for its stall_s: the broker went away midway."""


class NoSuchTopic(TimeoutError):
    """The broker answers but knows no such topic (its metadata named no partitions within
    the wait): a CROUPIER_TOPIC_PREFIX other than the services', or a game type never served
    on this Kafka. Not LOG_UNREADABLE: asking again will not help. A TimeoutError, as it was
    before it had a name, for the callers that wait for a topic being created."""

    def __init__(self, topic: str, timeout_s: float):
        super().__init__(f"topic {topic} has no partitions after {timeout_s} s")
        self.topic = topic


# Every way a read of the log fails because Kafka is away, not because the request was
# wrong: no broker at the start, a client error, or a read stalled midway. The CLI exits 75
# on them and the gateway answers 503; the same request may work later.
LOG_UNREADABLE: tuple[type[BaseException], ...] = (KafkaUnreachable, KafkaError, LogReadStalled)


def kafka_client(cls, settings: KafkaSettings, **config):
    """A kafka-python client that has reached a broker, or KafkaUnreachable once the settings'
    connect_timeout_s has passed without one."""
    try:
        return cls(bootstrap_servers=settings.bootstrap, bootstrap_timeout_ms=settings.connect_timeout_s * 1000,
                   **config)
    except (KafkaTimeoutError, KafkaConnectionError) as exc:
        raise KafkaUnreachable(settings.bootstrap, settings.connect_timeout_s, exc) from exc


def transactional_id(topic: str, partition: int) -> str:
    return f"croupier-writer.{topic}.{partition}"


def ensure_topic(settings: KafkaSettings, topic: str, timeout_s: float = 30.0) -> int:
    """Create the topic if missing (retention unlimited: the log is the truth).
    Returns its partition count."""
    admin = kafka_client(KafkaAdminClient, settings, client_id="croupier-admin")
    try:
        try:
            admin.create_topics(
                [
                    NewTopic(
                        topic,
                        num_partitions=settings.partitions,
                        replication_factor=settings.replication_factor,
                        topic_configs={"retention.ms": "-1", "retention.bytes": "-1", "cleanup.policy": "delete"},
                    )
                ],
                timeout_ms=int(timeout_s * 1000),
            )
        except TopicAlreadyExistsError:
            pass
    finally:
        admin.close()
    return topic_partitions(settings, topic, timeout_s)


def topic_partitions(settings: KafkaSettings, topic: str, timeout_s: float = 30.0) -> int:
    # No group and nothing to commit: metadata only (and no warning about auto-commit).
    consumer = kafka_client(KafkaConsumer, settings, client_id="croupier-meta", enable_auto_commit=False)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            parts = consumer.partitions_for_topic(topic)
            if parts:
                return len(parts)
            if time.monotonic() > deadline:
                raise NoSuchTopic(topic, timeout_s)
            time.sleep(0.2)
    finally:
        consumer.close()


def wait_for_partitions(consumer: ConfluentConsumer, topic: str, timeout_s: float = 30.0) -> int:
    """Until this (librdkafka) client's metadata knows the topic's partitions: a consumer that
    joins its group before that may be assigned nothing until its next metadata refresh."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            meta = consumer.list_topics(topic, timeout=max(0.5, min(5.0, deadline - time.monotonic())))
            found = meta.topics.get(topic)
            if found is not None and found.error is None and found.partitions:
                return len(found.partitions)
        except Exception:  # noqa: BLE001 - the broker is not answering yet: ask again
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"no metadata for topic {topic} after {timeout_s} s")
        time.sleep(0.2)


def encode_record(env: Envelope) -> bytes:
    return canonical_bytes(env.to_dict())


def decode_record(value: bytes) -> Envelope:
    return Envelope.from_dict(loads(value))


CLIP = 200  # characters of a record's own text a log line carries


def clip_text(text: str) -> str:
    return text if len(text) <= CLIP else text[:CLIP] + "..."


def why(exc: BaseException) -> str:
    return clip_text(f"{type(exc).__name__}: {exc}")


def _is_int(value) -> bool:
    return type(value) is int


def malformed(env: Envelope) -> str:
    """What makes a decoded record no envelope a fold can even order (empty if nothing):
    the fields it compares and groups by, and a command's count of events."""
    if not isinstance(env.game_id, str) or not env.game_id:
        return "its game_id is not a string"
    if not isinstance(env.game_type, str):
        return "its game_type is not a string"
    if not _is_int(env.seq) or env.seq < 1:
        return f"its seq {clip_text(repr(env.seq))} is not a positive integer"
    if not isinstance(env.type, str) or not _is_int(env.version) or not isinstance(env.payload, dict):
        return "its type, version or payload is not of its kind"
    if env.cause is not None:
        if not isinstance(env.cause, dict) or not _is_int(env.cause.get("events")) or env.cause["events"] < 1:
            return "its cause has no count of events"
    return ""


def read_record(value: bytes | None, key: bytes | None) -> tuple[Envelope | None, str, str]:
    """A record's envelope, and why it is in no game's log (reason, why; empty when it is).
    A game's log is the records keyed by its game_id (the writers key every record so, and
    read_game reads by key): bytes that are no envelope, or an envelope under another key
    (or none), belong to no game; every reader of a log (a rebuild, the projector, the
    operators' reads) skips them alike, so none of them sees a game another does not."""
    if not value:
        return None, "not_an_envelope", "an empty value" if value is not None else "a null value"
    try:
        env = decode_record(value)
    except Exception as exc:  # noqa: BLE001 - bytes, JSON of any shape
        return None, "not_an_envelope", f"{len(value)} bytes that are not an envelope: {why(exc)}"
    problem = malformed(env)
    if problem:
        return None, "not_an_envelope", problem
    if key != env.game_id.encode():
        return env, "key_mismatch", f"its key {clip_text(repr(key))} is not its game_id"
    return env, "", ""


def skipped_record(topic: str, partition: int, offset: int, reason: str, detail: str, env: Envelope | None) -> None:
    """A record a read of the log leaves out, logged where an operator looks."""
    fields = {"game_id": env.game_id, "seq": env.seq} if env is not None else {}
    log.error("record_skipped", partition=f"{topic}/{partition}", offset=offset, reason=reason, why=detail, **fields)


class WriterFenced(Exception):
    """A newer writer of the partition took its transactional.id: this one may never append again."""


class RecordTooLarge(KafkaError):
    """A record of the append was refused as larger than a message may be (librdkafka's own
    check against message.max.bytes, or the broker's against the topic's max.message.bytes).
    Nothing of the transaction was committed (a failed record fails it), but the writer is
    done, as after any error: the owner makes a new one."""


# Bytes a record takes beyond its value and key (record and batch framing, ~80 bytes):
# a record is refused before the append unless value + key + this fits max_message_bytes.
RECORD_OVERHEAD = 128


def record_fits(value: bytes, key: bytes, max_message_bytes: int) -> bool:
    return len(value) + len(key) + RECORD_OVERHEAD <= max_message_bytes


# librdkafka's codes for a writer that lost its transactional.id to a newer one.
_FENCED_CODES = {ConfluentError._FENCED, ConfluentError.PRODUCER_FENCED, ConfluentError.INVALID_PRODUCER_EPOCH}


class PartitionWriter:
    """The transactional producer of one partition. Blocking: call from one thread.

    It is librdkafka's (confluent-kafka), not kafka-python's: a transaction's encoding,
    checksums, network I/O and waits run in C without the GIL, so the replica's partitions
    can each commit in their own thread while the event loop keeps serving. With
    kafka-python the same work ran in Python threads that fought the event loop for the GIL
    (bench/rules: see docs/performance.md)."""

    def __init__(self, settings: KafkaSettings, topic: str, partition: int, *,
                 transaction_timeout_ms: int = 30000):
        self.topic = topic
        self.partition = partition
        self.failed = False
        self._producer = ConfluentProducer({
            "bootstrap.servers": settings.bootstrap,
            "client.id": f"croupier-writer-{partition}",
            "transactional.id": transactional_id(topic, partition),
            "enable.idempotence": True,
            "acks": "all",
            "linger.ms": 0,
            "socket.nagle.disable": True,
            "transaction.timeout.ms": transaction_timeout_ms,
            "message.timeout.ms": min(transaction_timeout_ms, FINISH_TIMEOUT_MS),
            # After each commit the broker answers CONCURRENT_TRANSACTIONS to the next
            # transaction's first produce until the markers are written; a long back-off
            # puts that on every commit's latency.
            "retry.backoff.ms": 2,
            "retry.backoff.max.ms": 100,
            "socket.timeout.ms": min(10000, transaction_timeout_ms),
            # The largest record it sends, as the owner checks each command's records
            # against before the append (PartitionOwner's max_record_bytes).
            "message.max.bytes": settings.max_message_bytes,
            "logger": RDKAFKA_LOG,
        })
        # Fences every earlier producer of this partition and aborts its open transaction.
        try:
            self._producer.init_transactions(FINISH_TIMEOUT_MS / 1000)
        except ConfluentException as exc:
            self.failed = True
            # Destroyed here, on the caller's thread (the replica makes writers under a lock
            # that a revocation waits for): librdkafka goes on with a timed-out init in the
            # background for as long as the handle lives, and one finishing after the next
            # owner's would fence that owner. The exception's traceback would keep it alive.
            self.close()
            raise _error(exc, "init_transactions") from None

    def append(self, envelopes: list[Envelope], values: list[bytes] | None = None) -> int | None:
        """All the envelopes in one transaction, or an exception; the offset of the last
        envelope in the partition (None if its delivery report did not say). `values`: the
        envelopes already encoded (encode_record), when the caller has them. After an
        exception the writer is done: the owner makes a new one (init_transactions) and reads
        the log; RecordTooLarge says that a record was refused for its size.

        The writer never recovers by itself: librdkafka would have the application abort
        and go on with a bumped epoch after an abortable error, but our owner's rule is
        that a writer's epoch comes only from its own init_transactions, followed by a read
        of the partition (a stale owner that bumped its way back in would append from a
        memory that never read its successor's appends)."""
        if self.failed:
            raise KafkaError("this writer failed before: a new writer and a read of the log come first")
        producer = self._producer
        topic, partition = self.topic, self.partition
        last: list[int] = []
        try:
            if values is None:
                values = [encode_record(env) for env in envelopes]
            producer.begin_transaction()
            for env, value in zip(envelopes[:-1], values, strict=False):
                producer.produce(topic, value, env.game_id.encode("utf-8"), partition)
            env = envelopes[-1]
            producer.produce(topic, values[-1], env.game_id.encode("utf-8"), partition,
                             on_delivery=lambda err, msg: last.append(-1 if err else msg.offset()))
            # Flushes every record and commits; raises if any record was refused (the
            # transaction is then not committed) or the commit's outcome is unknown.
            producer.commit_transaction(FINISH_TIMEOUT_MS / 1000)
            if not last:
                producer.poll(0)  # every record is delivered by now: serve its report
        except (ConfluentException, BufferError, RuntimeError) as exc:
            self.failed = True
            raise _error(exc, "append") from None
        except BaseException:
            self.failed = True
            raise
        return last[0] if last and last[0] >= 0 else None

    def close(self) -> None:
        # A failed writer sends nothing more: whatever it still holds is purged. Its open
        # transaction (if any) is aborted by the next writer's init_transactions, or by the
        # broker after transaction.timeout.ms.
        producer, self._producer = self._producer, None
        if producer is None:
            return
        try:
            if self.failed:
                producer.purge(in_queue=True, in_flight=True)
            producer.flush(0 if self.failed else 2)
        except Exception:
            pass
        del producer  # librdkafka's handle is destroyed with the last reference


def _error(exc: BaseException, what: str) -> Exception:
    """Our exception for librdkafka's: WriterFenced when a newer writer took the
    transactional.id, else a KafkaError naming what failed."""
    err = exc.args[0] if exc.args and isinstance(exc.args[0], ConfluentError) else None
    if err is not None and err.code() in _FENCED_CODES:
        return WriterFenced(f"{what}: {err.str()}")
    if err is not None and err.code() == ConfluentError.MSG_SIZE_TOO_LARGE:
        return RecordTooLarge(f"{what} failed: {err.str()}")
    return KafkaError(f"{what} failed: {rdkafka_detail(exc)}")


def rdkafka_detail(exc: BaseException) -> str:
    """What a librdkafka exception says (its KafkaError's text), or the exception's own text."""
    err = exc.args[0] if exc.args and isinstance(exc.args[0], ConfluentError) else None
    return err.str() if err is not None else str(exc)


# How long a read of one game or one game type (replay, audit, a sample check) waits for a
# transaction already in the log to get its commit marker (see read_partition's settle_s).
SETTLE_S = 5.0


def _written_end(settings: KafkaSettings, topic: str, partition: int) -> int:
    """The partition's end as read_uncommitted sees it: every record and marker written."""
    probe = ConfluentConsumer(consumer_config(settings, client_id=f"croupier-probe-{partition}",
                                              **{"isolation.level": "read_uncommitted", "logger": RDKAFKA_LOG}))
    try:
        return probe.get_watermark_offsets(ConfluentTopicPartition(topic, partition), timeout=10, cached=False)[1]
    finally:
        probe.close()


def _stable_end(consumer: ConfluentConsumer, topic: str, partition: int, written: int | None, settle_s: float) -> int:
    """The last stable offset; with `written`, waited for (up to settle_s) to reach it."""
    deadline = time.monotonic() + settle_s
    while True:
        _low, end = consumer.get_watermark_offsets(ConfluentTopicPartition(topic, partition), timeout=10, cached=False)
        if written is None or end >= written or time.monotonic() >= deadline:
            return end
        time.sleep(0.02)


def read_partition(settings: KafkaSettings, topic: str, partition: int, *, start: int = 0,
                   poll_ms: int = 200, stall_s: float = 60.0, key: bytes | None = None,
                   reached: list[int] | None = None, settle_s: float = 0.0) -> Iterator[Envelope]:
    """Every committed envelope of a partition from offset `start` up to its current end, in
    order. read_committed: the end is the last stable offset, so a transaction still open
    when the read begins is left out whole (not waited for), and an aborted one's records
    never appear. With `key`, only that game's (the record key is the game_id, so the others
    are skipped without being decoded). `reached`, if given, gets the offset read up to
    appended once the end is reached: where a later read can start to get only what is new.

    A writer's commit returns once the broker's coordinator has decided it; the commit
    marker reaches the partition a moment later, and only then do the records count as
    stable. So a read that must see what was just acknowledged (a replay or audit of a game
    that has just ended, a check after a run) passes `settle_s`: it first waits, up to that
    long, for every transaction already in the log when it began to be settled, then reads.
    A rebuild needs no wait (a new owner's init_transactions completes its partition's
    pending commit first), and must not wait for the owner's open transactions.

    With librdkafka (confluent-kafka): its fetcher parses the record batches in C, where
    kafka-python, this function's first client, parsed them in Python at about a fifth of
    the speed (bench/projector measured both, and a rebuild is mostly this read)."""
    consumer = ConfluentConsumer(consumer_config(settings, client_id=f"croupier-reader-{partition}",
                                                 **{"enable.partition.eof": True, "logger": RDKAFKA_LOG}))
    try:
        try:  # asked with the consumer's isolation level: the last stable offset
            written = _written_end(settings, topic, partition) if settle_s > 0 else None
            end = _stable_end(consumer, topic, partition, written, settle_s)
        except ConfluentException as exc:
            raise _error(exc, "read") from None
        if end <= start:
            if reached is not None:
                reached.append(max(end, start))
            return
        consumer.assign([ConfluentTopicPartition(topic, partition, start)])
        progress = time.monotonic()
        done = False
        while not done:
            for message in consumer.consume(5000, poll_ms / 1000):
                error = message.error()
                if error is None or error.code() == ConfluentError._PARTITION_EOF:
                    progress = time.monotonic()  # records or the end, not a client error
                if error is not None:
                    if error.code() == ConfluentError._PARTITION_EOF:
                        done = message.offset() >= end
                        if done:
                            break
                        continue
                    if error.fatal():
                        raise _error(ConfluentException(error), "read")
                    # Transient (a broker away): librdkafka reconnects by itself; no progress
                    # for stall_s fails the read below.
                    RDKAFKA_LOG.warning("read %s/%s: %s", topic, partition, error.str())
                    continue
                if message.offset() >= end:
                    done = True
                    break
                record_key = message.key()
                if key is not None and record_key != key:
                    continue
                env, reason, detail = read_record(message.value(), record_key)
                if reason:
                    skipped_record(topic, partition, message.offset(), reason, detail, env)
                    continue
                yield env
            if not done:
                # The end may be a commit marker, which is never delivered: past it, we are done.
                position = consumer.position([ConfluentTopicPartition(topic, partition)])[0].offset
                done = position >= end
            if not done and time.monotonic() - progress > stall_s:
                # The broker went away mid-read: fail (the caller retries) rather than wait for good.
                raise LogReadStalled(f"reading {topic}/{partition} made no progress for {stall_s:.0f} s")
        if reached is not None:
            reached.append(end)
    finally:
        consumer.close()


def read_game(settings: KafkaSettings, game_id: str, game_types: list[str], settle_s: float = SETTLE_S) -> list[Envelope]:
    """One game's envelopes, complete and in order, from the partition its id hashes to
    (tried in each candidate game type's topic), every acknowledged move included (settle_s:
    see read_partition)."""
    for game_type in game_types:
        topic = settings.topic(game_type)
        try:
            partitions = topic_partitions(settings, topic, timeout_s=3.0)
        except TimeoutError:
            continue
        found = [env for env in read_partition(settings, topic, partition_for(game_id, partitions), key=game_id.encode(),
                                               settle_s=settle_s)
                 if env.game_id == game_id]
        if found:
            return found
    return []


def read_topic_games(settings: KafkaSettings, game_type: str, since_ms: int = 0,
                     settle_s: float = SETTLE_S) -> dict[str, list[Envelope]]:
    """Every game of a type created at or after since_ms, each complete and in order (every
    acknowledged move included; settle_s: see read_partition). NoSuchTopic when the broker
    has no topic of that type (after a wait as short as read_game's: the topic of a game
    that was logged exists already)."""
    topic = settings.topic(game_type)
    games: dict[str, list[Envelope]] = {}
    skip: set[str] = set()
    for partition in range(topic_partitions(settings, topic, timeout_s=3.0)):
        for env in read_partition(settings, topic, partition, settle_s=settle_s):
            if env.game_id in skip:
                continue
            if env.seq == 1 and env.time < since_ms:
                skip.add(env.game_id)
                continue
            games.setdefault(env.game_id, []).append(env)
    return games
