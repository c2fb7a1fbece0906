"""The projector while its Redis does not answer for a while, without restarting (a network
partition, a paused or overloaded node): what it consumed meanwhile is folded once Redis
answers again, though Redis's run_id and record of offsets never changed."""

from __future__ import annotations

import time

from confluent_kafka import Producer
from test_projector_poison import _game, _Running, _settings, _stop, _version, _wait

from croupier.engine import registry
from croupier.engine.table import TableHost
from croupier.projector.keys import Keys
from croupier.projector.service import Projector
from croupier.rules.store import encode_record, ensure_topic

GAME = "expeditions"


class _Unreachable:
    """Cuts the projector's Redis connections off (a port nobody listens on), then back."""

    def __init__(self, client):
        self.pool = client.connection_pool
        self.port = self.pool.connection_kwargs["port"]

    def _to(self, port: int) -> None:
        self.pool.connection_kwargs["port"] = port
        for conn in list(self.pool._available_connections) + list(self.pool._in_use_connections):
            conn.port = port  # each connection reconnects to its own address
        self.pool.disconnect(inuse_connections=True)

    def cut(self) -> None:
        self.is_cut = True
        self._to(1)

    def mend(self) -> None:
        self.is_cut = False
        self._to(self.port)


def test_events_consumed_while_redis_does_not_answer_are_folded_once_it_does(kafka, redis_url, redis, prefix):
    """A Redis error makes the projector fold again from Redis's record of offsets; with
    Redis still away that record cannot be read, and the seek was given up ("the next round's
    error brings us back"). But the next round consumed a batch first, and dropped it on the
    next error: once Redis answered, the projector went on from past every batch consumed
    meanwhile, and committed past them. A game whose last events came then stayed as it was
    before, for good (no later event of it to show a gap)."""
    settings = _settings(kafka, redis_url, prefix)
    topic = settings.kafka.topic(GAME)
    ensure_topic(settings.kafka, topic)
    keys = Keys(prefix)
    host = TableHost(registry.get(GAME))
    before, after, _ = _game(70, 6)
    producer = Producer({"bootstrap.servers": kafka})
    for e in before:
        producer.produce(topic, encode_record(e), e.game_id.encode(), 0)
    assert producer.flush(30) == 0
    gid = before[0].game_id

    running = _Running(Projector(settings, games=[GAME]))
    running.projector.connect()
    running.thread.start()
    away = _Unreachable(running.projector.redis)
    p = running.projector
    fold_again = p._fold_again
    end = len(before) + len(after)

    def fold_again_then_redis_answers(consumer):
        # Redis answers again right after a fold again that it did not answer, once every
        # event is consumed: the window between that and the next round's first Redis call
        # is that round's consume, so it is a matter of luck in production.
        fold_again(consumer)
        if away.is_cut and consumer.position(consumer.assignment())[0].offset >= end:
            away.mend()

    p._fold_again = fold_again_then_redis_answers
    try:
        assert _wait(lambda: _version(redis, keys, gid) == str(before[-1].seq), 60)
        away.cut()
        time.sleep(1.5)
        for e in after:
            producer.produce(topic, encode_record(e), e.game_id.encode(), 0)
        assert producer.flush(30) == 0
        assert _wait(lambda: not away.is_cut, 30)  # consumed while Redis did not answer
        whole = host.fold(before + after)
        assert _wait(lambda: _version(redis, keys, gid) == str(whole.version), 20), _version(redis, keys, gid)
        assert _wait(lambda: int(redis.hget(keys.offsets(), f"{topic}/0") or 0) == end, 10)
        assert running.error is None
    finally:
        away.mend()
        _stop(running)
