"""A gap in a game's seqs and a fold again (a Redis error, a restart seen) while the projector
reads the partition again from zero for it: with a real Redis and a stand-in consumer that
hands the projector the partition's records from wherever it was last sought."""

from __future__ import annotations

import dataclasses

from confluent_kafka import OFFSET_BEGINNING, TopicPartition
from test_projector_poison import _game, _skipped, _version

from croupier.projector.keys import Keys
from croupier.projector.service import Projector, ProjectorSettings
from croupier.rules.settings import KafkaSettings
from croupier.rules.store import encode_record

GAME = "expeditions"


class _Record:
    def __init__(self, topic: str, offset: int, env):
        self._topic, self._offset = topic, offset
        self._value, self._key = encode_record(env), env.game_id.encode()

    def topic(self):
        return self._topic

    def partition(self):
        return 0

    def offset(self):
        return self._offset

    def value(self):
        return self._value

    def key(self):
        return self._key

    def error(self):
        return None


class _Partition:
    """Partition 0 of the topic, read `batch` records at a time from where it was last sought."""

    def __init__(self, topic: str, envs, batch: int):
        self.topic, self.batch = topic, batch
        self.records = [_Record(topic, i, e) for i, e in enumerate(envs)]
        self.position = 0
        self.seeks: list[int] = []

    def assignment(self):
        return [TopicPartition(self.topic, 0)]

    def seek(self, tp):
        self.position = 0 if tp.offset == OFFSET_BEGINNING else tp.offset
        self.seeks.append(tp.offset)

    def commit(self, offsets=None, asynchronous=True):
        return offsets

    def next(self):
        out = self.records[self.position:self.position + self.batch]
        self.position += len(out)
        return out


def _fold(p: Projector, part: _Partition, rounds: int) -> None:
    """`rounds` rounds of the projector's loop: a batch folded, then committed."""
    for _ in range(rounds):
        batch = part.next()
        if not batch:
            return
        p.fold(part, batch)
        p._commit(part, batch, p.rewound)


def _projector(redis_url: str, prefix: str) -> Projector:
    settings = ProjectorSettings(redis_url=redis_url, key_prefix=prefix, finished_ttl_s=0, metrics_port=0,
                                 max_records=10, kafka=KafkaSettings(bootstrap="127.0.0.1:1", topic_prefix=prefix))
    p = Projector(settings, games=[GAME])
    p.recorded[(settings.kafka.topic(GAME), 0)] = None
    return p


def _rewinds(p: Projector) -> float:
    return next(s.value for m in p.metrics.collect() for s in m.samples if s.name == "croupier_projector_rewinds_total")


def test_a_fold_again_during_a_gaps_read_from_zero_goes_on_with_it(redis_url, redis, prefix):
    """A gap makes the projector read the partition again from zero, remembering where; met at
    the same record again, the events are not in the log and the game is stuck. A fold again
    in the middle of that read (a Redis error, a restart seen) forgot the gap, so the record
    made it read the partition from zero once more: a second whole read. It goes on from an
    entry it wrote during that read (Redis still holds what the read folded before it), so
    the gap is kept, and the game is stuck at the first meeting."""
    keys = Keys(prefix)
    p = _projector(redis_url, prefix)
    topic = p.s.kafka.topic(GAME)
    other, other_rest, host = _game(90, 8)
    victim, _, _ = _game(91, 4)
    ahead = dataclasses.replace(victim[-1], seq=victim[-1].seq + 5, hash="cd" * 32)  # not in the log before it
    part = _Partition(topic, other + victim + [ahead] + other_rest, batch=4)
    gap_at = len(other) + len(victim)
    try:
        _fold(p, part, (gap_at + 4) // 4)
        assert part.seeks == [OFFSET_BEGINNING] and _rewinds(p) == 1
        _fold(p, part, 2)  # the read from zero: two batches folded and recorded
        assert redis.hget(keys.offsets(), f"{topic}/0") == b"8"

        p._fold_again(part)  # as after a Redis error
        assert part.seeks[-1] == 8
        _fold(p, part, 10_000)
        assert _skipped(p, "log_gap") == 1, "the gap was not taken for one in the log"
        assert _rewinds(p) == 1, "the partition was read from zero twice"
        assert _version(redis, keys, victim[0].game_id) == str(host.fold(victim).version)
        assert _version(redis, keys, other[0].game_id) == str(host.fold(other + other_rest).version)
    finally:
        p.redis.close()


def test_a_fold_again_from_before_a_gaps_read_forgets_the_gap(redis_url, redis, prefix):
    """The other side: a game whose read models were deleted by hand makes a gap when its
    next records come; a fold again before the read from zero has recorded anything goes back
    to an entry from before that read, where Redis still lacks the game. Met from there, the
    gap is Redis's, not the log's: the game must be read from zero again and folded whole, not
    taken for one whose log has a gap."""
    keys = Keys(prefix)
    p = _projector(redis_url, prefix)
    topic = p.s.kafka.topic(GAME)
    first, rest, host = _game(92, 4)
    part = _Partition(topic, first + rest, batch=len(first))
    gid = first[0].game_id
    try:
        _fold(p, part, 1)
        assert _version(redis, keys, gid) == str(host.fold(first).version)
        redis.delete(keys.meta(gid), keys.state(gid), keys.views(gid))  # an operator's mistake
        p._forget_all()  # as a projector that starts again has nothing cached
        part.batch = 3
        _fold(p, part, 1)
        assert part.seeks == [OFFSET_BEGINNING]  # the gap: read from zero
        p._fold_again(part)  # before anything of that read is recorded
        assert part.seeks[-1] == len(first)
        _fold(p, part, 10_000)
        assert _skipped(p, "log_gap") == 0 and gid not in p.stuck
        assert _version(redis, keys, gid) == str(host.fold(first + rest).version)
    finally:
        p.redis.close()
