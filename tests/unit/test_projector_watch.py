"""The projector's watch over its partitions (Projector._watch): a partition is taken for a
fetcher librdkafka stopped only when it stood still for stall_s and the broker holds records
past it; an idle partition, or a broker that does not answer, is never one."""

from __future__ import annotations

from confluent_kafka import KafkaError, KafkaException, TopicPartition

from croupier.projector.service import WATCH_ASKS, Projector, ProjectorSettings
from croupier.rules.settings import KafkaSettings


class FakeConsumer:
    def __init__(self, positions: dict[int, int], ends: dict[int, int], *, broker_away: bool = False):
        self.positions = positions
        self.ends = ends
        self.broker_away = broker_away
        self.asked: list[int] = []

    def assignment(self):
        return [TopicPartition("t", p) for p in self.positions]

    def position(self, partitions):
        return [TopicPartition(tp.topic, tp.partition, self.positions[tp.partition]) for tp in partitions]

    def get_watermark_offsets(self, tp, timeout=None, cached=False):
        assert not cached  # the broker's answer, not what the fetcher last saw
        self.asked.append(tp.partition)
        if self.broker_away:
            raise KafkaException(KafkaError(KafkaError._TRANSPORT))
        return 0, self.ends[tp.partition]


def _projector(stall_s: int = 30) -> Projector:
    settings = ProjectorSettings(redis_url="redis://127.0.0.1:1/0", key_prefix="w.", finished_ttl_s=0, metrics_port=0,
                                 max_records=10, kafka=KafkaSettings(bootstrap="127.0.0.1:1", topic_prefix="w."),
                                 stall_s=stall_s)
    return Projector(settings, games=["journey"])


def test_a_partition_behind_the_end_that_does_not_move_is_stalled_after_stall_s():
    p = _projector()
    consumer = FakeConsumer({0: 10, 1: 20}, {0: 10, 1: 25})
    assert p._watch(consumer, 0.0) == []
    assert p._watch(consumer, 29.0) == [] and consumer.asked == []  # not yet: nobody asked
    assert p._watch(consumer, 30.0) == ["t/1"] and consumer.asked == [0, 1]  # 0 is at its end: idle
    consumer.positions[1] = 21  # it moved: the clock starts again
    assert p._watch(consumer, 32.0) == [] and p._watch(consumer, 61.0) == []


def test_idle_partitions_are_asked_about_once_every_stall_s_a_few_a_round():
    p = _projector()
    consumer = FakeConsumer({i: 5 for i in range(10)}, {i: 5 for i in range(10)})
    p._watch(consumer, 0.0)
    assert p._watch(consumer, 30.0) == [] and len(consumer.asked) == WATCH_ASKS
    for t in range(31, 40):
        assert p._watch(consumer, float(t)) == []
    assert sorted(consumer.asked) == list(range(10))  # each once, then left alone for stall_s
    assert p._watch(consumer, 59.0) == [] and len(consumer.asked) == 10


def test_a_broker_that_does_not_answer_is_no_stall_and_is_not_asked_again_at_once():
    p = _projector()
    consumer = FakeConsumer({0: 1, 1: 1}, {0: 9, 1: 9}, broker_away=True)
    p._watch(consumer, 0.0)
    assert p._watch(consumer, 30.0) == [] and len(consumer.asked) == 1
    assert p._watch(consumer, 31.0) == [] and len(consumer.asked) == 1
    consumer.broker_away = False
    assert p._watch(consumer, 60.0) == ["t/0"]


def test_a_partition_never_fetched_since_its_assignment_is_measured_from_where_it_started():
    # position() is unknown (-1001) until a record is consumed: where the assignment started
    # it (Redis's record of offsets) is where it stands.
    p = _projector()
    p.recorded[("t", 0)] = 7
    consumer = FakeConsumer({0: -1001}, {0: 7})
    p._watch(consumer, 0.0)
    assert p._watch(consumer, 30.0) == []  # nothing past 7
    consumer.ends[0] = 12
    assert p._watch(consumer, 60.0) == ["t/0"]


def test_stall_s_zero_turns_the_watch_off():
    p = _projector(stall_s=0)
    consumer = FakeConsumer({0: 1}, {0: 9})
    assert all(p._watch(consumer, float(t)) == [] for t in range(0, 200, 10)) and consumer.asked == []
