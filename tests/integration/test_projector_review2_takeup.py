"""A rebuild taken up late (a projector whose acknowledgement failed, or that was idle through
it), against a real Kafka and Redis: it goes on from Redis's record of offsets, which holds
only what projectors that took the rebuild up folded since its drop."""

from __future__ import annotations

from confluent_kafka import Producer
from harness import read_model_views
from test_projector_poison import _game, _settings, _start, _stop, _version, _wait
from test_projector_review2_gaps import _rewinds

from croupier.engine import registry
from croupier.engine.table import TableHost
from croupier.projector.keys import Keys
from croupier.projector.service import rebuild
from croupier.rules.store import encode_record, ensure_topic

GAME = "expeditions"


def test_a_projector_that_takes_a_rebuild_up_late_reads_nothing_again_from_zero(kafka, redis_url, redis, prefix):
    """A projector takes a rebuild up and folds every game again, then stops before its
    acknowledgement is written (here: the acknowledgement set back). The next one starts from
    the last acknowledged epoch, so it takes the rebuild up once more: it read every partition
    from zero again, a whole log on a big one. It goes on from the record now, and what comes
    next is folded as ever."""
    settings = _settings(kafka, redis_url, prefix)
    topic = settings.kafka.topic(GAME)
    ensure_topic(settings.kafka, topic)
    keys = Keys(prefix)
    host = TableHost(registry.get(GAME))
    first, rest, _ = _game(95, 6)
    gid = first[0].game_id
    producer = Producer({"bootstrap.servers": kafka})
    for e in first:
        producer.produce(topic, encode_record(e), e.game_id.encode(), 0)
    assert producer.flush(30) == 0
    shown = str(host.fold(first).version)

    running = _start(kafka, redis_url, prefix)
    try:
        assert _wait(lambda: _version(redis, keys, gid) == shown, 60)
        out = rebuild(settings)
        assert _wait(lambda: running.projector.epoch == out["epoch"], 30)
        assert _wait(lambda: _version(redis, keys, gid) == shown, 60)
        assert _wait(lambda: redis.hget(keys.offsets(), f"{topic}/0") == str(len(first)).encode(), 30)
    finally:
        _stop(running)
    redis.set(keys.epoch_ack(), out["epoch"] - 1)  # its acknowledgement lost

    running = _start(kafka, redis_url, prefix)
    try:
        p = running.projector
        assert p.epoch == out["epoch"] - 1
        assert _wait(lambda: p.epoch == out["epoch"], 60), "the rebuild was not taken up"
        assert _rewinds(p) == 0, "a partition was read from zero again"
        for e in rest:
            producer.produce(topic, encode_record(e), e.game_id.encode(), 0)
        assert producer.flush(30) == 0
        whole = host.fold(first + rest)
        assert _wait(lambda: _version(redis, keys, gid) == str(whole.version), 60)
        views = {k.decode(): v.decode() for k, v in redis.hgetall(keys.views(gid)).items()}
        assert views == read_model_views(host, whole)
        assert _rewinds(p) == 0 and running.error is None
    finally:
        _stop(running)
