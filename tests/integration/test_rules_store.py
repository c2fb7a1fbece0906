"""The rules service's event store against the real broker: a partition's writer and fencing.

The rules service is correct only if whoever wrote last after reading the log is the one
writer of a partition: a replica that decided commands from an older memory must never get
an append in after a newer owner has read the partition.
"""

from __future__ import annotations

import time
import uuid

import pytest

from croupier.engine import registry
from croupier.engine.table import TableHost
from croupier.rules.settings import KafkaSettings
from croupier.rules.store import PartitionWriter, encode_record, read_partition

pytestmark = pytest.mark.timeout(120)


def _envelopes(command_id: str):
    host = TableHost(registry.get("expeditions"))
    return host.create(f"expeditions-{uuid.uuid4().hex[:16]}", 2, {}, "ab" * 32, now=1, command_id=command_id)


def test_a_fenced_writer_in_mid_transaction_never_takes_the_partition_back(kafka: str, create_topic) -> None:
    """The old owner's transaction already holds the partition when the new owner fences it
    (an append under way while the group moves the partition, or across a broker restart).
    Its next produce is refused with INVALID_PRODUCER_EPOCH. kafka-python 3.0 answers that
    by "bumping the epoch", and when the broker refuses the bump, by asking for a fresh
    producer id for the same transactional.id: a new init_transactions that fenced the new
    owner and let the old one commit what it decided from a memory that had not read the
    new owner's appends (CI saw one command appended twice, seqs 27-28 twice, after a broker
    restart). The writer must fail instead, and the new owner must stay the owner."""
    topic = create_topic()
    settings = KafkaSettings(bootstrap=kafka)
    old = PartitionWriter(settings, topic, 0)
    producer = old._producer  # the test drives the old writer's transaction step by step
    stale = _envelopes("stale")
    producer.begin_transaction()
    producer.send(topic, key=b"k", value=encode_record(stale[0]), partition=0).get(timeout=10)

    new = PartitionWriter(settings, topic, 0)  # a new owner: fences `old`, aborts its transaction
    try:
        with pytest.raises(Exception):
            producer.send(topic, key=b"k", value=encode_record(stale[-1]), partition=0).get(timeout=10)
            old._finish("commit")
        time.sleep(3)  # whatever the old producer would do on its own, it has done by now
        with pytest.raises(Exception):
            old.append(_envelopes("stale-again"))

        fresh = _envelopes("fresh")
        new.append(fresh)  # still the owner: not fenced by the old writer
        more = _envelopes("more")
        new.append(more)
    finally:
        old.close()
        new.close()
    ids = [env.command_id for env in read_partition(settings, topic, 0)]
    assert ids == [e.command_id for e in fresh + more]


def test_a_writer_refused_mid_transaction_fails_the_append_and_never_reinitialises_itself(kafka: str, create_topic) -> None:
    """A produce refused for its producer state (OUT_OF_ORDER_SEQUENCE_NUMBER or
    UNKNOWN_PRODUCER_ID, as a broker restart can cause) must fail the append. kafka-python
    3.0 instead bumps the producer's epoch on its own (KIP-360), which aborts the open
    transaction, and can then commit whatever it sends next: the caller is told "appended"
    for records that were dropped, or another owner's epoch is taken without the log having
    been read. Our writers take an epoch only from init_transactions, right before a read."""
    topic = create_topic()
    settings = KafkaSettings(bootstrap=kafka)
    writer = PartitionWriter(settings, topic, 0)
    first = _envelopes("first")
    writer.append(first)
    producer = writer._producer
    manager = producer._transaction_manager
    epoch = manager.producer_id_and_epoch
    tp = next(iter(manager._sequence_numbers))
    manager._sequence_numbers[tp] += 7  # the broker now sees a gap in this producer's sequence
    try:
        with pytest.raises(Exception):
            writer.append(_envelopes("refused"))
        time.sleep(2)
        assert manager.producer_id_and_epoch == epoch or manager.producer_id_and_epoch.epoch < 0, \
            f"the writer took a new epoch on its own: {epoch} -> {manager.producer_id_and_epoch}"
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
