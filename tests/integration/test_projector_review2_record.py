"""Redis's record of offsets, the rebuild's mark and the projection epoch, as the second review
of the projector found them: with a real Redis and stand-in consumers."""

from __future__ import annotations

from confluent_kafka import OFFSET_BEGINNING, TopicPartition

from croupier.projector.keys import Keys
from croupier.projector.service import Projector, ProjectorSettings, _rebuild, _wait_caught_up, drop_keys
from croupier.rules.settings import KafkaSettings

GAME = "expeditions"


class _Message:
    def __init__(self, topic: str, partition: int, offset: int):
        self._topic, self._partition, self._offset = topic, partition, offset

    def topic(self):
        return self._topic

    def partition(self):
        return self._partition

    def offset(self):
        return self._offset


class _Consumer:
    """Assigned `partitions` of one topic; every seek and commit is kept."""

    def __init__(self, topic: str, partitions=(0,)):
        self.topic = topic
        self.partitions = list(partitions)
        self.seeks: list[tuple[int, int]] = []
        self.commits: list[list[tuple[int, int]]] = []
        self.assigned: list[TopicPartition] | None = None

    def assignment(self):
        return [TopicPartition(self.topic, p) for p in self.partitions]

    def assign(self, partitions):
        self.assigned = [TopicPartition(tp.topic, tp.partition, tp.offset) for tp in partitions]

    def seek(self, tp):
        self.seeks.append((tp.partition, tp.offset))

    def commit(self, offsets=None, asynchronous=True):
        self.commits.append([(tp.partition, tp.offset) for tp in offsets])
        return offsets


def _settings(redis_url: str, prefix: str) -> ProjectorSettings:
    return ProjectorSettings(redis_url=redis_url, key_prefix=prefix, finished_ttl_s=0, metrics_port=0,
                             max_records=10, kafka=KafkaSettings(bootstrap="127.0.0.1:1", topic_prefix=prefix))


def _projector(redis_url: str, prefix: str) -> Projector:
    p = Projector(_settings(redis_url, prefix), games=[GAME])
    p._report_lag = lambda consumer: None  # no broker to ask
    return p


def _a_whole_rebuild(redis, keys: Keys) -> None:
    """What `croupier projector rebuild` does to Redis: marked, the read models dropped, the
    epoch bumped, unmarked."""
    redis.set(keys.rebuilding(), "1")
    drop_keys(redis, keys.read_model_patterns())
    redis.incr(keys.epoch())
    redis.delete(keys.rebuilding())


def test_no_entry_is_recorded_by_a_projector_that_has_not_taken_a_rebuild_up(redis_url, redis, prefix):
    """The rebuild's mark was looked at, then the record was written: a rebuild that marked
    itself and dropped the record between the two had its record written again by a projector
    with no entry known there (its first commit after a take-up or a fold again from a record
    that had none), an entry over writes the drop went on to unlink. And once the rebuild had
    bumped its epoch and taken its mark away, such a projector, not having taken the epoch up
    yet, wrote one too. A partition handed to a projector that had taken the epoch up was then
    read from that entry: the games before it were never folded again. The mark and the epoch
    are now checked in the step that writes the record."""
    keys = Keys(prefix)
    p = _projector(redis_url, prefix)
    topic = p.s.kafka.topic(GAME)
    field = f"{topic}/0"
    consumer = _Consumer(topic)
    rebuilt = []
    real = p.redis.execute_command

    def a_rebuild_just_after_the_first_command(*args, **options):
        answer = real(*args, **options)
        if not rebuilt:
            rebuilt.append(args[0])
            _a_whole_rebuild(redis, keys)
        return answer

    try:
        # A rebuild comes right after the commit's first command to Redis.
        p.recorded[(topic, 0)] = None
        p.redis.execute_command = a_rebuild_just_after_the_first_command
        p._commit(consumer, [_Message(topic, 0, o) for o in range(0, 10)], set())
        p.redis.execute_command = real
        assert rebuilt and redis.get(keys.epoch()) == b"1"
        assert not redis.hexists(keys.offsets(), field), redis.hget(keys.offsets(), field)

        # The rebuild done, its epoch not taken up yet: nothing recorded, nothing committed.
        commits = len(consumer.commits)
        p.recorded[(topic, 0)] = None
        p._commit(consumer, [_Message(topic, 0, o) for o in range(10, 20)], set())
        assert not redis.hexists(keys.offsets(), field), redis.hget(keys.offsets(), field)
        assert len(consumer.commits) == commits

        # Taken up, it records and commits again.
        assert p._check_epoch(consumer) is True and p.epoch == 1
        p._commit(consumer, [_Message(topic, 0, o) for o in range(0, 10)], set())
        assert redis.hget(keys.offsets(), field) == b"10" and consumer.commits[-1] == [(0, 10)]
    finally:
        p.redis.execute_command = real
        p.redis.close()


def test_a_projector_that_takes_a_rebuild_up_late_goes_on_from_the_record(redis_url, redis, prefix):
    """A projector that was idle through a rebuild (no partitions, or stopped), or whose
    acknowledgement of it failed (a restart starts from the last acknowledged epoch), took the
    rebuild up on its next assignment by reading every partition from zero, though another
    projector had folded them again since: a whole log read again. The record's entries were
    all written, after the rebuild's drop, by projectors that had taken it up, so it goes on
    from them; a partition without one is read from its start, and gets an entry 0 at once."""
    keys = Keys(prefix)
    p = _projector(redis_url, prefix)
    topic = p.s.kafka.topic(GAME)
    try:
        _a_whole_rebuild(redis, keys)
        # Another projector took epoch 1 up and folded partition 0 to 40, partition 1 to 7.
        redis.hset(keys.offsets(), mapping={f"{topic}/0": 40, f"{topic}/1": 7})
        redis.set(keys.epoch_ack(), 1)

        # Idle through it (epoch 0), it is handed partitions 0, 1 and 2.
        consumer = _Consumer(topic, (0, 1, 2))
        p.assigned(consumer, consumer.assignment())
        assert [(tp.partition, tp.offset) for tp in consumer.assigned] == [(0, 40), (1, 7), (2, OFFSET_BEGINNING)]
        assert redis.hget(keys.offsets(), f"{topic}/2") == b"0"
        assert p._check_epoch(consumer) is False  # assigned at their starts: no seek, the batch is kept
        assert consumer.seeks == [] and consumer.commits == [[(0, 40), (1, 7), (2, 0)]] and p.epoch == 1

        # A running projector takes the next rebuild up: partition 0 was folded again by
        # another projector meanwhile, the others not.
        _a_whole_rebuild(redis, keys)
        redis.hset(keys.offsets(), f"{topic}/0", 12)
        assert p._check_epoch(consumer) is True and p.epoch == 2
        assert consumer.seeks == [(0, 12), (1, OFFSET_BEGINNING), (2, OFFSET_BEGINNING)]
        assert consumer.commits[-1] == [(0, 12), (1, 0), (2, 0)]
        assert redis.get(keys.epoch_ack()) == b"2"
        p._commit(consumer, [_Message(topic, 1, o) for o in range(0, 5)], set())
        assert redis.hget(keys.offsets(), f"{topic}/1") == b"5"
    finally:
        p.redis.close()


def test_an_epoch_that_holds_junk_is_replaced_and_taken_up_never_a_crash(redis_url, redis, prefix):
    """projector:epoch holding something that is no epoch (a hand, another program): int() of
    it raised ValueError out of the loop (which only waits on Kafka's and Redis's errors), so
    the projector ended, and ended again at every start; the acknowledgement's script failed
    on junk in projector:epoch_ack, and `croupier projector rebuild` failed at its INCR with
    every read model dropped and its mark left for an hour. The epoch is now set past every
    epoch taken up (every projector takes it up, from Redis's record), junk in the
    acknowledgement is written over, and a rebuild's bump goes past either."""
    keys = Keys(prefix)
    p = _projector(redis_url, prefix)
    topic = p.s.kafka.topic(GAME)
    consumer = _Consumer(topic)
    try:
        redis.set(keys.epoch(), 3)
        redis.set(keys.epoch_ack(), 3)
        p.epoch = 3
        p.recorded[(topic, 0)] = None
        p._commit(consumer, [_Message(topic, 0, o) for o in range(0, 10)], set())
        assert redis.hget(keys.offsets(), f"{topic}/0") == b"10"

        redis.set(keys.epoch(), "not an epoch")
        p._commit(consumer, [_Message(topic, 0, o) for o in range(10, 20)], set())
        assert redis.hget(keys.offsets(), f"{topic}/0") == b"10"  # not while the epoch is unknown
        assert p._check_epoch(consumer) is True
        assert redis.get(keys.epoch()) == b"4" and p.epoch == 4
        assert consumer.seeks == [(0, 10)]  # from the record: nothing was dropped
        assert p._check_epoch(consumer) is False

        # Another type altogether, and junk in the acknowledgement.
        redis.delete(keys.epoch())
        redis.hset(keys.epoch(), "x", "y")
        redis.set(keys.epoch_ack(), "junk")
        assert p._check_epoch(consumer) is True and p.epoch == 5
        assert redis.get(keys.epoch()) == b"5" and redis.get(keys.epoch_ack()) == b"5"

        # A rebuild's bump over junk: past both, and the mark taken away.
        redis.set(keys.epoch(), "07")
        out = _rebuild(p.s, keys, redis, _NoKafka(), 0)
        assert out["epoch"] == 6 and redis.get(keys.epoch()) == b"6" and not redis.exists(keys.rebuilding())
        redis.set(keys.epoch_ack(), "junk")
        redis.hset(keys.lag(), mapping={f"{topic}/0": "x"})
        assert _wait_caught_up(p.s, keys, redis, _NoKafka(), 6, 0.1) == {"caught_up": False, "waiting_on": []}
    finally:
        p.redis.close()


class _NoKafka:
    """The rebuild's admin client with the broker away."""

    def describe_groups(self, groups):
        raise OSError("no broker")

    def delete_groups(self, groups):
        raise OSError("no broker")

    def describe_topics(self, topics):
        raise OSError("no broker")


def test_a_rebuild_stopped_in_the_middle_of_its_drop_bumps_its_epoch_and_takes_its_mark_away(
        redis_url, redis, prefix, monkeypatch):
    """A rebuild stopped halfway through its drop (Ctrl-C on a long one, an error) left its
    mark for an hour and the epoch as it was: the projectors recorded and committed nothing for
    that hour, and the read models it had dropped came back only after it. It now bumps the
    epoch and takes the mark away whatever stopped it, so the projectors fold again from the
    record it dropped first."""
    from croupier.projector import service

    keys = Keys(prefix)
    settings = _settings(redis_url, prefix)
    redis.hset(keys.offsets(), "t/0", 40)
    redis.hset(keys.meta("g1"), "version", 3)

    def drop_the_record_then_stop(r, patterns):
        r.unlink(patterns[0])
        raise KeyboardInterrupt

    monkeypatch.setattr(service, "drop_keys", drop_the_record_then_stop)
    try:
        _rebuild(settings, keys, redis, _NoKafka(), 0)
        raise AssertionError("the drop was to be stopped")
    except KeyboardInterrupt:
        pass
    assert not redis.exists(keys.rebuilding()) and redis.get(keys.epoch()) == b"1"
    assert not redis.exists(keys.offsets()) and redis.exists(keys.meta("g1"))
