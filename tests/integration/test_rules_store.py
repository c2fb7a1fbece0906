"""The rules service's event store against the real broker: a partition's writer and fencing.

The rules service is correct only if whoever wrote last after reading the log is the one
writer of a partition: a replica that decided commands from an older memory must never get
an append in after a newer owner has read the partition.
"""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import KafkaException
from kafka import KafkaConsumer, TopicPartition

from croupier.engine import registry
from croupier.engine.table import TableHost
from croupier.rules.settings import KafkaSettings
from croupier.rules.store import PartitionWriter, WriterFenced, _error, encode_record, read_partition

pytestmark = pytest.mark.timeout(120)


def _envelopes(command_id: str):
    host = TableHost(registry.get("expeditions"))
    return host.create(f"expeditions-{uuid.uuid4().hex[:16]}", 2, {}, "ab" * 32, now=1, command_id=command_id)


def _log_end(kafka: str, topic: str) -> int:
    """The partition's end offset as read_uncommitted sees it: records and markers."""
    tp = TopicPartition(topic, 0)
    consumer = KafkaConsumer(bootstrap_servers=kafka, client_id="test-log-end")
    try:
        return consumer.end_offsets([tp])[tp]
    finally:
        consumer.close()


def test_a_fenced_writer_in_mid_transaction_never_takes_the_partition_back(kafka: str, create_topic) -> None:
    """The old owner's transaction already holds the partition when the new owner fences it
    (an append under way while the group moves the partition, or across a broker restart).
    Its commit must fail as fenced, it must refuse every later append, and the new owner
    must stay the owner. (kafka-python 3.0, our first writer's client, answered the fencing
    by asking for a fresh producer id for the same transactional.id: a new init_transactions
    that fenced the new owner and let the old one commit what it decided from a memory that
    had not read the new owner's appends. CI saw one command appended twice, seqs 27-28
    twice, after a broker restart.)"""
    topic = create_topic()
    settings = KafkaSettings(bootstrap=kafka)
    old = PartitionWriter(settings, topic, 0)
    producer = old._producer  # the test drives the old writer's transaction step by step
    stale = _envelopes("stale")
    producer.begin_transaction()
    producer.produce(topic, encode_record(stale[0]), b"k", 0)
    assert producer.flush(10) == 0  # the record is in the partition, in the open transaction

    new = PartitionWriter(settings, topic, 0)  # a new owner: fences `old`, aborts its transaction
    try:
        with pytest.raises(KafkaException) as refused:
            producer.produce(topic, encode_record(stale[-1]), b"k", 0)
            producer.commit_transaction(10)
        assert isinstance(_error(refused.value, "commit"), WriterFenced), refused.value
        old.failed = True  # as append() marks it when its commit raises
        time.sleep(3)  # whatever the old producer would do on its own, it has done by now
        with pytest.raises(Exception, match="failed before"):
            old.append(_envelopes("stale-once-more"))

        fresh = _envelopes("fresh")
        new.append(fresh)  # still the owner: not fenced by the old writer
        more = _envelopes("more")
        new.append(more)
    finally:
        old.close()
        new.close()
    ids = [env.command_id for env in read_partition(settings, topic, 0)]
    assert ids == [e.command_id for e in fresh + more]


def test_a_transaction_the_broker_aborted_fails_the_append_and_the_writer_stays_failed(kafka: str, create_topic) -> None:
    """The broker aborts a transaction that outlives transaction.timeout.ms (and a restarted
    broker may lose an open one). The commit that follows must fail, never report success
    for records the log does not keep, and the writer must not carry on by itself (no epoch
    of its own making): the owner makes a new writer and reads the log first."""
    topic = create_topic()
    settings = KafkaSettings(bootstrap=kafka)
    writer = PartitionWriter(settings, topic, 0, transaction_timeout_ms=1000)
    first = _envelopes("first")
    writer.append(first)
    producer = writer._producer
    doomed = _envelopes("doomed")
    producer.begin_transaction()
    for env in doomed:
        producer.produce(topic, encode_record(env), b"k", 0)
    assert producer.flush(10) == 0
    written = _log_end(kafka, topic)
    deadline = time.monotonic() + 60
    while _log_end(kafka, topic) == written:  # until the broker's abort marker is in the log
        assert time.monotonic() < deadline, "the broker never aborted the timed-out transaction"
        time.sleep(0.5)
    try:
        with pytest.raises(KafkaException):
            producer.commit_transaction(10)
        writer.failed = True  # as append() marks it when its commit raises
        with pytest.raises(Exception, match="failed before"):
            writer.append(_envelopes("refused"))
    finally:
        writer.close()
    again = PartitionWriter(settings, topic, 0)  # what the owner does next: a new writer, then a read
    try:
        last = _envelopes("after")
        again.append(last)
    finally:
        again.close()
    ids = [env.command_id for env in read_partition(settings, topic, 0)]
    assert ids == [e.command_id for e in first + last]


def test_an_append_whose_commit_fails_marks_the_writer_failed(kafka: str, create_topic) -> None:
    """append() itself: a commit the broker refuses raises, and the writer refuses the next
    append without sending anything."""
    topic = create_topic()
    settings = KafkaSettings(bootstrap=kafka)
    old = PartitionWriter(settings, topic, 0)
    old.append(_envelopes("kept"))
    new = PartitionWriter(settings, topic, 0)
    try:
        with pytest.raises(WriterFenced):
            old.append(_envelopes("fenced"))
        assert old.failed
        new.append(_envelopes("owner"))
    finally:
        old.close()
        new.close()
    ids = [env.command_id for env in read_partition(settings, topic, 0)]
    assert ids == ["kept", "owner"]


def test_a_read_gives_every_committed_record_once_in_order_and_says_where_it_ended(kafka: str, create_topic) -> None:
    """read_partition is what a rebuild folds: every committed record in order, nothing of an
    aborted transaction, one game's alone by key, and from the offset a read reached, only
    what came after it."""
    topic = create_topic()
    settings = KafkaSettings(bootstrap=kafka)
    writer = PartitionWriter(settings, topic, 0)
    first, second, third = _envelopes("a"), _envelopes("b"), _envelopes("c")
    try:
        writer.append(first)
        producer = writer._producer  # an aborted transaction between two commits
        producer.begin_transaction()
        producer.produce(topic, encode_record(_envelopes("aborted")[0]), b"k", 0)
        producer.flush(10)
        producer.abort_transaction(10)
        writer.append(second)
        reached: list[int] = []
        everything = [env.command_id for env in read_partition(settings, topic, 0, reached=reached)]
        end = _log_end(kafka, topic)
        one_game = [env.game_id for env in read_partition(settings, topic, 0, key=second[0].game_id.encode())]
        writer.append(third)  # acknowledged: a read that settles first must see it
        since = [env.command_id for env in read_partition(settings, topic, 0, start=reached[0], settle_s=30)]
        at_end: list[int] = []
        nothing = list(read_partition(settings, topic, 0, start=_log_end(kafka, topic), reached=at_end))
    finally:
        writer.close()
    assert everything == [e.command_id for e in first + second]
    assert reached == [end]  # records and markers, the aborted transaction's included
    assert one_game == [second[0].game_id] * len(second)
    assert since == [e.command_id for e in third]
    assert nothing == [] and at_end == [_log_end(kafka, topic)]


def test_a_read_during_an_open_transaction_ends_before_it_and_a_later_read_gets_it(kafka: str, create_topic) -> None:
    """A read while a writer's transaction is open (a replica reading a finished game while
    the partition's owner appends) gives what was committed when it began, never part of the
    open transaction, and does not wait for it; a read from where it ended gets the
    transaction's records once committed."""
    topic = create_topic()
    settings = KafkaSettings(bootstrap=kafka)
    writer = PartitionWriter(settings, topic, 0)
    done = _envelopes("done")
    pending = _envelopes("pending") + _envelopes("pending-too")
    try:
        writer.append(done)
        producer = writer._producer
        producer.begin_transaction()
        producer.produce(topic, encode_record(pending[0]), pending[0].game_id.encode(), 0)
        producer.flush(10)
        reached: list[int] = []
        during = [e.command_id for e in read_partition(settings, topic, 0, reached=reached)]
        for env in pending[1:]:
            producer.produce(topic, encode_record(env), env.game_id.encode(), 0)
        settling: list[int] = []  # a read that would settle gives up on an open transaction
        waited = [e.command_id for e in read_partition(settings, topic, 0, reached=settling, settle_s=0.5)]
        producer.commit_transaction(10)
        after = [e.command_id for e in read_partition(settings, topic, 0, start=reached[0], settle_s=30)]
    finally:
        writer.close()
    assert during == [e.command_id for e in done]
    assert waited == during and settling == reached
    assert after == [e.command_id for e in pending]


class _NoWriter:
    """A partition owner's writer for a test that only rebuilds."""

    def close(self) -> None:
        pass


def test_records_in_no_games_log_are_skipped_by_every_read_and_a_rebuild_serves_the_games(kafka: str, create_topic) -> None:
    """A game's log is its partition's records keyed by its id. Records that are no envelope
    (bytes, JSON of another shape, an empty or null value) or an envelope under another key
    belong to no game: a read skips them, logged with where they are, and goes on. Before, one
    of them raised out of the read, so a new owner's rebuild failed at it again on every try
    and every game of the partition stayed unavailable for good."""
    import asyncio

    from confluent_kafka import Producer
    from structlog.testing import capture_logs

    from croupier.rules.partition import PartitionOwner

    topic = create_topic()
    settings = KafkaSettings(bootstrap=kafka)
    writer = PartitionWriter(settings, topic, 0)
    raw = Producer({"bootstrap.servers": kafka})
    first, second = _envelopes("a"), _envelopes("b")
    a = first[0].game_id.encode()
    poison = [(b"not json at all", a), (b"", a), (None, a), (b'{"game_id": 5}', b"x"), (b"[1, 2]", None),
              (encode_record(second[0]), a)]  # the last: b's start under a's key, in no game's log
    try:
        writer.append(first)
        for value, key in poison:
            raw.produce(topic, value, key, 0)
        raw.flush(10)
        writer.append(second)
        with capture_logs() as logs:
            everything = list(read_partition(settings, topic, 0))
            game_a = [env.game_id for env in read_partition(settings, topic, 0, key=a)]

            async def rebuild():
                host = TableHost(registry.get("expeditions"))
                owner = PartitionOwner(host, 0, _NoWriter, max_batch=16, dedupe_window=16)
                await owner.start(lambda: read_partition(settings, topic, 0))
                try:
                    return owner.status, {gid: slot.state.version for gid, slot in owner.games.items()}
                finally:
                    await owner.stop("test")

            status, versions = asyncio.run(rebuild())
    finally:
        writer.close()
    assert [e.hash for e in everything] == [e.hash for e in first + second]
    assert game_a == [first[0].game_id] * len(first)
    assert status == "ready" and versions == {first[0].game_id: len(first), second[0].game_id: len(second)}
    skipped = [e for e in logs if e["event"] == "record_skipped"]
    reasons = [e["reason"] for e in skipped]
    # Every poison record, by each of the three reads (the keyed read sees only a's four).
    assert reasons.count("not_an_envelope") == 5 + 3 + 5 and reasons.count("key_mismatch") == 3
    assert all(e["partition"] == f"{topic}/0" and isinstance(e["offset"], int) for e in skipped)
    assert any(e.get("game_id") == second[0].game_id for e in skipped if e["reason"] == "key_mismatch")
