"""The watch (Projector._watch) and a rebuild's rewind (_check_epoch) that cannot seek a
partition: librdkafka seeks only a partition whose fetcher runs, and the state the watch is
for (a partition whose committed offset was asked of a stale coordinator and never answered,
librdkafka #5586) is one whose fetcher never starts."""

from __future__ import annotations

from confluent_kafka import KafkaError, KafkaException, TopicPartition

from croupier.projector.service import Projector, ProjectorSettings
from croupier.rules.settings import KafkaSettings


class _Consumer:
    """Partition 0 fetched and idle at 5; partition 1 never fetched since its assignment (its
    position unknown), idle too: Redis's record, where it was assigned from, is its end."""

    def __init__(self):
        self.ends = {0: 5, 1: 7}
        self.positions = {0: 5, 1: -1001}

    def assignment(self):
        return [TopicPartition("t", 0), TopicPartition("t", 1)]

    def seek(self, tp):
        if tp.partition == 1:
            raise KafkaException(KafkaError(KafkaError._STATE))

    def position(self, partitions):
        return [TopicPartition(tp.topic, tp.partition, self.positions[tp.partition]) for tp in partitions]

    def get_watermark_offsets(self, tp, timeout=None, cached=False):
        return 0, self.ends[tp.partition]


class _Redis:
    def get(self, key):
        return b"1" if key.endswith("projector:epoch") else None


def test_a_rebuild_whose_rewind_cannot_seek_a_partition_for_stall_s_makes_the_consumer_again():
    """A partition librdkafka never fetches cannot be sought, so _check_epoch deferred the
    rebuild's rewind round after round, and each round dropped its batch, of every partition.
    The watch took that partition for idle (nothing in the log past where it was assigned
    from), so nothing ever made the consumer again: the projector folded nothing at all, after
    a rebuild that had dropped every read model, until someone restarted it. A partition the
    rewind could not seek for stall_s is now taken for stalled."""
    settings = ProjectorSettings(redis_url="redis://127.0.0.1:1/0", key_prefix="w.", finished_ttl_s=0, metrics_port=0,
                                 max_records=10, kafka=KafkaSettings(bootstrap="127.0.0.1:1", topic_prefix="w."),
                                 stall_s=30)
    p = Projector(settings, games=["journey"])
    p.redis = _Redis()
    # The epoch and the record read in one step (a script): partitions 0 and 1 at their entries.
    p._take_partitions = lambda partitions: (1, {("t", 0): 5, ("t", 1): 7})
    p.recorded[("t", 0)], p.recorded[("t", 1)] = 5, 7
    consumer = _Consumer()
    stalled = []
    for now in range(0, 61):
        assert p._check_epoch(consumer) is True  # deferred: this round's batch is dropped
        stalled = p._watch(consumer, float(now))
        if stalled:
            break
    assert stalled == ["t/1"]
    assert p.epoch == 0
