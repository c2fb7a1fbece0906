"""The Kafka event store: one topic per game type, key = game_id, one writer per partition.

A game's partition is murmur2(game_id) mod partitions, as Kafka's default partitioner
computes it, so the gateway can route a command before the game exists. Each partition has
its own transactional.id: whoever calls init_transactions with it last is the only one
whose commits the broker accepts, so a stale owner is fenced by the broker, not by timing.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import KafkaError, KafkaTimeoutError, TopicAlreadyExistsError
from kafka.partitioner.default import murmur2

from croupier.engine.codec import canonical_bytes, loads
from croupier.engine.envelope import Envelope
from croupier.rules.settings import KafkaSettings

# How long a transaction's commit (or abort) may take before the append counts as failed.
FINISH_TIMEOUT_MS = 15000


def partition_for(game_id: str, partitions: int) -> int:
    return (murmur2(game_id.encode("utf-8")) & 0x7FFFFFFF) % partitions


def transactional_id(topic: str, partition: int) -> str:
    return f"croupier-writer.{topic}.{partition}"


def ensure_topic(settings: KafkaSettings, topic: str, timeout_s: float = 30.0) -> int:
    """Create the topic if missing (retention unlimited: the log is the truth).
    Returns its partition count."""
    admin = KafkaAdminClient(bootstrap_servers=settings.bootstrap, client_id="croupier-admin")
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
    consumer = KafkaConsumer(bootstrap_servers=settings.bootstrap, client_id="croupier-meta")
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            parts = consumer.partitions_for_topic(topic)
            if parts:
                return len(parts)
            if time.monotonic() > deadline:
                raise TimeoutError(f"topic {topic} has no partitions after {timeout_s} s")
            time.sleep(0.2)
    finally:
        consumer.close()


def wait_for_partitions(consumer: KafkaConsumer, topic: str, timeout_s: float = 30.0) -> int:
    """Until this client's metadata knows the topic's partitions."""
    deadline = time.monotonic() + timeout_s
    while True:
        parts = consumer.partitions_for_topic(topic)
        if parts:
            return len(parts)
        if time.monotonic() > deadline:
            raise TimeoutError(f"no metadata for topic {topic} after {timeout_s} s")
        time.sleep(0.2)


def encode_record(env: Envelope) -> bytes:
    return canonical_bytes(env.to_dict())


def decode_record(value: bytes) -> Envelope:
    return Envelope.from_dict(loads(value))


class PartitionWriter:
    """The transactional producer of one partition. Blocking: call from one thread."""

    def __init__(self, settings: KafkaSettings, topic: str, partition: int):
        self.topic = topic
        self.partition = partition
        self._producer = KafkaProducer(
            bootstrap_servers=settings.bootstrap,
            client_id=f"croupier-writer-{partition}",
            transactional_id=transactional_id(topic, partition),
            enable_idempotence=True,
            acks="all",
            linger_ms=0,
            max_in_flight_requests_per_connection=5,
            transaction_timeout_ms=30000,
            # After each commit the broker answers CONCURRENT_TRANSACTIONS until the markers
            # are written; the default 100 ms back-off puts that on every commit's latency.
            retry_backoff_ms=2,
            request_timeout_ms=10000,
            max_block_ms=10000,
        )
        _no_epoch_bump(self._producer)
        # Fences every earlier producer of this partition and aborts its open transaction.
        self._producer.init_transactions()
        self.failed = False

    def append(self, envelopes: list[Envelope]) -> None:
        """All the envelopes in one transaction, or an exception. After an exception the
        writer is done: the owner makes a new one (init_transactions) and reads the log."""
        if self.failed:
            raise KafkaError("this writer failed before: a new writer and a read of the log come first")
        producer = self._producer
        producer.begin_transaction()
        try:
            futures = [producer.send(self.topic, key=env.game_id.encode("utf-8"), value=encode_record(env),
                                     partition=self.partition) for env in envelopes]
            self._finish("commit")
            for future in futures:
                # A record the broker refused is never part of a commit that succeeds (the
                # transaction is aborted); this only makes sure, at no cost.
                if future.failed():
                    raise future.exception
        except Exception:
            self.failed = True
            try:
                self._finish("abort")
            except Exception:
                pass
            raise

    def _finish(self, how: str) -> None:
        """Commit or abort the open transaction, waiting at most FINISH_TIMEOUT_MS.

        kafka-python's commit_transaction() waits for the broker's answer without a bound: a
        broker restarted at the wrong moment left it waiting for good, and with it the
        partition (every command timed out). A timeout raises, so the owner answers the
        batch with a retryable error and starts again with a new writer, whose
        init_transactions settles the old transaction."""
        producer = self._producer
        manager = getattr(producer, "_transaction_manager", None)
        sender = getattr(producer, "_sender", None)
        if manager is None or sender is None:  # another kafka-python: its own (unbounded) wait
            producer.commit_transaction() if how == "commit" else producer.abort_transaction()
            return
        result = manager.begin_commit() if how == "commit" else manager.begin_abort()
        sender.wakeup()
        if not result.wait(timeout_ms=FINISH_TIMEOUT_MS):
            raise KafkaTimeoutError(f"the broker did not {how} the transaction within {FINISH_TIMEOUT_MS} ms")

    def close(self) -> None:
        # A failed writer sends nothing more: no flush of what it still holds.
        try:
            self._producer.close(timeout=0 if self.failed else 2)
        except Exception:
            pass


def _no_epoch_bump(producer: KafkaProducer) -> None:
    """Turn off kafka-python 3.0's own recovery from producer-state errors (KIP-360).

    On OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID or INVALID_PRODUCER_EPOCH from a
    produce, it bumps the producer's epoch by itself: that aborts the open transaction, and
    the commit that follows can succeed with the refused records not in it (the owner was
    told "appended" for events the log does not have). When the broker refuses the bump as
    stale, it asks for a fresh epoch for the same transactional.id, which fences the
    partition's current owner and lets this one, whose memory never read that owner's
    appends, write again. CI saw a command appended twice (the same seqs twice) after a
    broker restart. The owner's rule is that a writer's epoch comes only from its own
    init_transactions, followed by a read of the partition; so these errors are fatal to the
    writer (as for transactional producers before KIP-360) and the owner starts again."""
    manager = getattr(producer, "_transaction_manager", None)
    if manager is not None and hasattr(manager, "_supports_epoch_bump"):
        manager._supports_epoch_bump = lambda: False


def read_partition(settings: KafkaSettings, topic: str, partition: int, *, start: int = 0,
                   poll_ms: int = 200, stall_s: float = 60.0) -> Iterator[Envelope]:
    """Every committed envelope of a partition from `start` up to its current end
    (read_committed: the last stable offset), in order."""
    tp = TopicPartition(topic, partition)
    consumer = KafkaConsumer(
        bootstrap_servers=settings.bootstrap,
        client_id=f"croupier-reader-{partition}",
        isolation_level="read_committed",
        enable_auto_commit=False,
        group_id=None,
        max_partition_fetch_bytes=8 * 1024 * 1024,
        fetch_max_bytes=32 * 1024 * 1024,
    )
    try:
        consumer.assign([tp])
        end = consumer.end_offsets([tp])[tp]
        if end <= start:
            return
        consumer.seek(tp, start)
        progress, where = time.monotonic(), start
        while (position := consumer.position(tp)) < end:
            if position != where:
                progress, where = time.monotonic(), position
            batch = consumer.poll(timeout_ms=poll_ms, max_records=5000)
            records = batch.get(tp, ())
            if records:
                progress = time.monotonic()
            elif time.monotonic() - progress > stall_s:
                # The broker went away mid-read: fail (the caller retries) rather than wait for good.
                raise TimeoutError(f"reading {topic}/{partition} made no progress for {stall_s:.0f} s")
            for record in records:
                if record.offset >= end:
                    break
                yield decode_record(record.value)
    finally:
        consumer.close()


def read_game(settings: KafkaSettings, game_id: str, game_types: list[str]) -> list[Envelope]:
    """One game's envelopes, complete and in order, from the partition its id hashes to
    (tried in each candidate game type's topic)."""
    for game_type in game_types:
        topic = settings.topic(game_type)
        try:
            partitions = topic_partitions(settings, topic, timeout_s=3.0)
        except TimeoutError:
            continue
        found = [env for env in read_partition(settings, topic, partition_for(game_id, partitions)) if env.game_id == game_id]
        if found:
            return found
    return []


def read_topic_games(settings: KafkaSettings, game_type: str, since_ms: int = 0) -> dict[str, list[Envelope]]:
    """Every game of a type created at or after since_ms, each complete and in order."""
    topic = settings.topic(game_type)
    games: dict[str, list[Envelope]] = {}
    skip: set[str] = set()
    for partition in range(topic_partitions(settings, topic)):
        for env in read_partition(settings, topic, partition):
            if env.game_id in skip:
                continue
            if env.seq == 1 and env.time < since_ms:
                skip.add(env.game_id)
                continue
            games.setdefault(env.game_id, []).append(env)
    return games
