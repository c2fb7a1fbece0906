"""Commits while `croupier projector rebuild` drops the read models (Keys.rebuilding is set):
with a real Redis and a stand-in consumer."""

from __future__ import annotations

from confluent_kafka import TopicPartition

from croupier.projector.keys import Keys
from croupier.projector.service import Projector, ProjectorSettings, drop_keys
from croupier.rules.settings import KafkaSettings

GAME = "expeditions"


class _Message:
    def __init__(self, topic: str, offset: int):
        self._topic, self._offset = topic, offset

    def topic(self):
        return self._topic

    def partition(self):
        return 0

    def offset(self):
        return self._offset


class _Consumer:
    def __init__(self, topic: str):
        self.topic = topic
        self.seeks: list[int] = []
        self.commits: list[list[TopicPartition]] = []

    def assignment(self):
        return [TopicPartition(self.topic, 0)]

    def seek(self, tp):
        self.seeks.append(tp.offset)

    def commit(self, offsets=None, asynchronous=True):
        self.commits.append(offsets)
        return offsets


def test_nothing_is_recorded_nor_committed_while_a_rebuild_drops_the_read_models(redis_url, redis, prefix):
    """A rebuild drops the record of offsets first, then the read models (minutes, on a large
    Redis), then bumps its epoch. A projector committing meanwhile found its record gone (it
    moved), folded again from the start, and its next commits wrote new entries over writes
    the drop went on to unlink. Such an entry outlives the rebuild: a partition that moves,
    before its projector takes the epoch up, to one that took it up already is read from it,
    and the games before it are never folded again. While the rebuild is marked, a projector
    now folds but records and commits nothing; the epoch reads everything again."""
    settings = ProjectorSettings(redis_url=redis_url, key_prefix=prefix, finished_ttl_s=0, metrics_port=0,
                                 max_records=10, kafka=KafkaSettings(bootstrap="127.0.0.1:1", topic_prefix=prefix))
    keys = Keys(prefix)
    topic = settings.kafka.topic(GAME)
    field = f"{topic}/0"
    p = Projector(settings, games=[GAME])
    consumer = _Consumer(topic)
    try:
        redis.hset(keys.offsets(), field, 40)
        p.recorded[(topic, 0)] = 40
        p._commit(consumer, [_Message(topic, o) for o in range(40, 50)], set())
        assert redis.hget(keys.offsets(), field) == b"50" and len(consumer.commits) == 1

        # The rebuild, as far as its drop: marked, the record and the read models dropping.
        redis.set(keys.rebuilding(), "1")
        drop_keys(redis, [keys.offsets()])
        for start in (50, 0, 10):
            p._commit(consumer, [_Message(topic, o) for o in range(start, start + 10)], set())
            assert not redis.hexists(keys.offsets(), field), redis.hget(keys.offsets(), field)
        assert len(consumer.commits) == 1
    finally:
        p.redis.close()
