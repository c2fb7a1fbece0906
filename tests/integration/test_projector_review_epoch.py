"""A rebuild's epoch taken up by a projector whose partitions were assigned from the beginning
(the rebuild was pending when they arrived), when a step of that taking up fails: with a real
Redis and a stand-in consumer."""

from __future__ import annotations

from confluent_kafka import OFFSET_BEGINNING, KafkaError, KafkaException, TopicPartition

from croupier.projector.keys import Keys
from croupier.projector.service import Projector, ProjectorSettings
from croupier.rules.settings import KafkaSettings

GAME = "expeditions"


class _Consumer:
    """Assigned one partition; its first commit fails (a coordinator away, a broker restart)."""

    def __init__(self, topic: str):
        self.topic = topic
        self.seeks: list[tuple[int, int]] = []
        self.commits_to_fail = 1

    def assignment(self):
        return [TopicPartition(self.topic, 0)]

    def seek(self, tp):
        self.seeks.append((tp.partition, tp.offset))

    def commit(self, offsets=None, asynchronous=True):
        if self.commits_to_fail:
            self.commits_to_fail -= 1
            raise KafkaException(KafkaError(KafkaError._TRANSPORT))
        return offsets


def test_a_failed_take_up_of_a_rebuild_assigned_from_zero_reads_from_zero_again(redis_url, redis, prefix):
    """Partitions assigned at the beginning for a pending rebuild: the first round's batch is
    their first records, and _check_epoch keeps it (no seek). When a step of it failed (its
    commit of offset 0, a Kafka error), run() dropped that batch; the next round still took
    the partitions for assigned from zero and did not seek: those records were never folded,
    and the games that had all their events there (every finished game, after a rebuild that
    dropped their read models) were gone for good."""
    settings = ProjectorSettings(redis_url=redis_url, key_prefix=prefix, finished_ttl_s=0, metrics_port=0,
                                 max_records=10, kafka=KafkaSettings(bootstrap="127.0.0.1:1", topic_prefix=prefix))
    p = Projector(settings, games=[GAME])
    p._report_lag = lambda consumer: None
    consumer = _Consumer(settings.kafka.topic(GAME))
    redis.set(Keys(prefix).epoch(), 1)
    # As assigned() leaves them for the pending rebuild: partition 0 assigned at its start.
    p.epoch, p._assigned_for, p._assigned_starts = 0, 1, {(consumer.topic, 0): 0}
    try:
        try:
            p._check_epoch(consumer)
            raise AssertionError("the commit was to fail")
        except KafkaException:
            pass  # run() logs it, drops the round's batch and tries again
        assert consumer.seeks == []
        assert p._check_epoch(consumer) is True  # the batch of this round is dropped too
        assert consumer.seeks == [(0, OFFSET_BEGINNING)]
        assert p.epoch == 1
        assert p._check_epoch(consumer) is False
    finally:
        p.redis.close()
