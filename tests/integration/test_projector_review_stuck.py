"""A stuck game (a record of its log the projector cannot fold) and a fold of its partition
again from before that record: a rebuild, or a Redis that lost what it held."""

from __future__ import annotations

import dataclasses

from confluent_kafka import Producer
from test_projector_poison import _game, _Running, _settings, _skipped, _stop, _version, _wait

from croupier.engine import registry
from croupier.engine.table import TableHost
from croupier.projector.keys import Keys
from croupier.projector.service import Projector, rebuild
from croupier.rules.store import encode_record, ensure_topic

GAME = "expeditions"


def test_a_stuck_game_is_folded_again_to_its_last_whole_command_by_a_rebuild(kafka, redis_url, redis, prefix):
    """A game the projector cannot fold past a record stays as its last whole command before
    that record left it. A rebuild drops every read model and folds the log again from the
    start, but the projector kept the game among its stuck ones and skipped every record of
    it (game_stuck): the rebuild left it with no read models at all, a 404 for every reader,
    until the projector restarted. Read again from before the record, the game is folded up to
    it again (and stuck there again)."""
    settings = _settings(kafka, redis_url, prefix)
    topic = settings.kafka.topic(GAME)
    ensure_topic(settings.kafka, topic)
    keys = Keys(prefix)
    host = TableHost(registry.get(GAME))
    victim, _, _ = _game(80, 6)
    other, other_rest, _ = _game(81, 6)
    ahead = dataclasses.replace(victim[-1], seq=victim[-1].seq + 5, hash="cd" * 32)  # a gap in its log
    producer = Producer({"bootstrap.servers": kafka})
    for e in victim + [ahead] + other + other_rest:
        producer.produce(topic, encode_record(e), e.game_id.encode(), 0)
    assert producer.flush(30) == 0
    shown = host.fold(victim).version
    whole = host.fold(other + other_rest).version

    running = _Running(Projector(settings, games=[GAME]))
    running.projector.connect()
    running.thread.start()
    p = running.projector
    try:
        assert _wait(lambda: _skipped(p, "log_gap") == 1, 60)
        assert _wait(lambda: _version(redis, keys, other[0].game_id) == str(whole), 30)
        assert _version(redis, keys, victim[0].game_id) == str(shown)

        out = rebuild(settings)
        assert out["epoch"] >= 1 and not redis.exists(keys.meta(victim[0].game_id))
        assert _wait(lambda: _version(redis, keys, other[0].game_id) == str(whole), 60)
        assert _wait(lambda: _version(redis, keys, victim[0].game_id) == str(shown), 30), \
            "the stuck game's read models were not made again"
        assert _wait(lambda: _skipped(p, "log_gap") == 2, 30)  # met again, stuck again
        assert running.error is None
    finally:
        _stop(running)
