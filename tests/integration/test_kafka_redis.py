"""The real broker and the real Redis, through the clients the services use."""

from __future__ import annotations

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaError

pytestmark = pytest.mark.timeout(120)


def _read_all(kafka: str, topic: str, partitions: int, isolation: str, expect: int) -> list[tuple[bytes, bytes]]:
    """Read a topic from the start until ``expect`` records arrived or it stays quiet."""
    consumer = KafkaConsumer(
        bootstrap_servers=kafka, isolation_level=isolation, auto_offset_reset="earliest",
        enable_auto_commit=False, consumer_timeout_ms=3000,
    )
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
        got = []
        for record in consumer:
            got.append((record.key, record.value))
            if len(got) >= expect:
                break
        # Drain whatever else is there, briefly, so extra records would show.
        extra = consumer.poll(timeout_ms=500)
        for records in extra.values():
            got.extend((r.key, r.value) for r in records)
        return got
    finally:
        consumer.close()


def test_transactional_producer_and_read_committed_consumer(kafka: str, create_topic) -> None:
    topic = create_topic(partitions=3)
    producer = KafkaProducer(bootstrap_servers=kafka, transactional_id=f"{topic}-tx", enable_idempotence=True)
    try:
        producer.init_transactions()
        producer.begin_transaction()
        for i in range(10):
            producer.send(topic, key=f"game-{i % 4}".encode(), value=f"committed-{i}".encode())
        producer.commit_transaction()

        producer.begin_transaction()
        for i in range(3):
            producer.send(topic, key=b"game-0", value=f"aborted-{i}".encode())
        producer.flush()
        producer.abort_transaction()
    finally:
        producer.close()

    committed = _read_all(kafka, topic, 3, "read_committed", expect=10)
    assert sorted(v for _, v in committed) == sorted(f"committed-{i}".encode() for i in range(10))

    # The aborted records are in the log; only read_committed hides them.
    uncommitted = _read_all(kafka, topic, 3, "read_uncommitted", expect=13)
    assert sorted(v for _, v in uncommitted if v.startswith(b"aborted")) == [b"aborted-0", b"aborted-1", b"aborted-2"]


def test_a_new_producer_with_the_same_transactional_id_fences_the_old_one(kafka: str, create_topic) -> None:
    topic = create_topic()
    old = KafkaProducer(bootstrap_servers=kafka, transactional_id=f"{topic}-owner")
    new = KafkaProducer(bootstrap_servers=kafka, transactional_id=f"{topic}-owner")
    try:
        old.init_transactions()
        old.begin_transaction()
        old.send(topic, value=b"from the stale owner")
        old.flush()
        new.init_transactions()  # bumps the epoch: the broker now refuses the old producer
        with pytest.raises(KafkaError) as fenced:
            old.send(topic, value=b"again").get(timeout=10)
            old.commit_transaction()
        assert "Fenced" in type(fenced.value).__name__ or "Epoch" in type(fenced.value).__name__, fenced.value
        new.begin_transaction()
        new.send(topic, value=b"from the new owner")
        new.commit_transaction()
    finally:
        old.close(timeout=5)
        new.close()
    assert [v for _, v in _read_all(kafka, topic, 1, "read_committed", expect=1)] == [b"from the new owner"]


def test_consumer_group_commits_offsets(kafka: str, create_topic, topic_name: str) -> None:
    topic = create_topic(partitions=2)
    producer = KafkaProducer(bootstrap_servers=kafka)
    for i in range(6):
        producer.send(topic, key=str(i).encode(), value=str(i).encode())
    producer.flush()
    producer.close()

    group = f"{topic_name}-group"
    first = KafkaConsumer(topic, bootstrap_servers=kafka, group_id=group, auto_offset_reset="earliest",
                          enable_auto_commit=False, consumer_timeout_ms=10000)
    seen = []
    for record in first:
        seen.append(record.value)
        if len(seen) == 6:
            break
    first.commit()
    first.close()
    assert sorted(seen) == [str(i).encode() for i in range(6)]

    again = KafkaConsumer(topic, bootstrap_servers=kafka, group_id=group, auto_offset_reset="earliest",
                          enable_auto_commit=False, consumer_timeout_ms=2000)
    assert list(again) == []  # the group resumes after its committed offsets
    again.close()


def test_redis_write_read_and_lua(redis, redis_prefix: str) -> None:
    key = redis_prefix + "game:1"
    redis.hset(key, mapping={"version": 0, "view": "{}"})
    assert redis.hget(key, "version") == b"0"

    # The projector's pattern: apply an event only if its seq is the next one.
    apply_next = redis.register_script(
        """
        local version = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
        if tonumber(ARGV[1]) ~= version + 1 then return 0 end
        redis.call('HSET', KEYS[1], 'version', ARGV[1], 'view', ARGV[2])
        return 1
        """
    )
    assert apply_next(keys=[key], args=[1, '{"turn":1}']) == 1
    assert apply_next(keys=[key], args=[1, '{"turn":1}']) == 0  # redelivery is harmless
    assert apply_next(keys=[key], args=[3, '{"turn":3}']) == 0  # a gap is refused
    assert redis.hgetall(key) == {b"version": b"1", b"view": b'{"turn":1}'}

    redis.set(redis_prefix + "plain", "value", ex=60)
    assert redis.get(redis_prefix + "plain") == b"value"
