"""A game's read-model keys gone (deleted by hand, evicted, a state unreadable and dropped):
what brings them back. With a real Redis and the stand-in partition of
test_projector_review2_gaps."""

from __future__ import annotations

import pytest
from confluent_kafka import OFFSET_BEGINNING
from harness import read_model_views
from test_projector_poison import _game, _skipped
from test_projector_review2_gaps import _fold, _Partition, _projector

from croupier.projector.keys import Keys

GAME = "expeditions"


def _read_models(redis, keys: Keys, gid: str) -> tuple[dict, dict]:
    meta = {k.decode(): v.decode() for k, v in redis.hgetall(keys.meta(gid)).items()}
    views = {k.decode(): v.decode() for k, v in redis.hgetall(keys.views(gid)).items()}
    return meta, views


def test_a_game_without_its_state_read_again_in_several_batches_is_written_whole(redis_url, redis, prefix):
    """A game whose state key is gone (a hand, an eviction, a state this code could not read,
    dropped) while its meta stays is folded from its first event, and that fold is written
    only once it reaches the stored version. When the game's records came in more than one
    batch, the first batch's fold was dropped (Redis held a later version), the next started
    from the stored version with no state to start from, took that for a gap in the log, and
    after one read from zero the game was stuck for good (log_gap: "seq 51 follows seq 0"),
    its state never written again. The fold from the first event now goes on across batches,
    joins and all, and is written whole."""
    keys = Keys(prefix)
    p = _projector(redis_url, prefix)
    topic = p.s.kafka.topic(GAME)
    first, rest, host = _game(93, 4)
    envs = first + rest
    gid = envs[0].game_id
    part = _Partition(topic, envs, batch=1000)
    try:
        _fold(p, part, 10)
        whole = _read_models(redis, keys, gid)
        assert whole[0]["version"] == str(host.fold(envs).version)
        assert any(k.startswith("joined:") for k in whole[0])

        redis.delete(keys.state(gid))
        p._forget_all()  # a projector that starts again, or folds again from zero
        part.position, part.batch = 0, 50
        _fold(p, part, 10_000)
        assert _skipped(p, "log_gap") == 0 and gid not in p.stuck, p.stuck
        assert redis.exists(keys.state(gid))
        assert _read_models(redis, keys, gid) == whole
        assert whole[1] == read_model_views(host, host.fold(envs))
    finally:
        p.redis.close()


@pytest.mark.parametrize("restarted", [False, True], ids=["cached", "restarted"])
@pytest.mark.parametrize("deleted", ["all", "meta", "views", "state"])
def test_an_idle_game_whose_keys_were_deleted_by_hand_is_restored_by_its_next_event(
        redis_url, redis, prefix, deleted, restarted):
    """An operator's mistake: an idle game's read-model keys deleted (all, or one of them).
    Its next command's events bring the game back whole (meta with its joins, every view, its
    state), whether the projector still had the game cached or started again since."""
    keys = Keys(prefix)
    p = _projector(redis_url, prefix)
    topic = p.s.kafka.topic(GAME)
    first, rest, host = _game(94, 6)
    nxt = [rest[0]] + [e for e in rest[1:rest[0].cause["events"]]]
    gid = first[0].game_id
    part = _Partition(topic, first + nxt, batch=1000)
    part.records = part.records[:len(first)]
    try:
        _fold(p, part, 10)
        assert redis.hget(keys.meta(gid), "version") == str(host.fold(first).version).encode()
        gone = {"all": [keys.meta(gid), keys.state(gid), keys.views(gid)], "meta": [keys.meta(gid)],
                "views": [keys.views(gid)], "state": [keys.state(gid)]}[deleted]
        redis.delete(*gone)
        if restarted:
            p._forget_all()
        part.records = _Partition(topic, first + nxt, batch=1000).records  # the next command comes
        _fold(p, part, 10)
        state = host.fold(first + nxt)
        meta, views = _read_models(redis, keys, gid)
        assert meta["version"] == str(state.version) and views == read_model_views(host, state)
        joined = {k for k in meta if k.startswith("joined:")}
        assert joined and joined == {f"joined:{e.payload['seat']}" for e in first if e.type == "SeatJoined"}
        assert redis.exists(keys.state(gid)) and gid not in p.stuck
    finally:
        p.redis.close()


@pytest.mark.parametrize("deleted", ["all", "meta", "views", "state"])
def test_an_idle_game_the_projector_holds_is_restored_without_a_next_event(redis_url, redis, prefix, deleted):
    """An idle game (a table waiting for its next move) whose keys were deleted by hand stayed
    missing until its next event or a rebuild. The projector looks at the games it holds
    folded once a minute (with the sweep): one whose keys are gone has its partition read
    again from zero, and is written whole, joins and all."""
    keys = Keys(prefix)
    p = _projector(redis_url, prefix)
    topic = p.s.kafka.topic(GAME)
    first, _, host = _game(96, 6)
    gid = first[0].game_id
    part = _Partition(topic, first, batch=4)
    try:
        _fold(p, part, 100)
        assert gid in p.cache
        whole = _read_models(redis, keys, gid)
        assert whole[0]["version"] == str(host.fold(first).version)
        assert p._restore_missing(part) == []  # nothing missing: nothing read again

        gone = {"all": [keys.meta(gid), keys.state(gid), keys.views(gid)], "meta": [keys.meta(gid)],
                "views": [keys.views(gid)], "state": [keys.state(gid)]}[deleted]
        redis.delete(*gone)
        assert p._restore_missing(part) == [gid]
        assert part.seeks[-1] == OFFSET_BEGINNING
        _fold(p, part, 100)
        assert _read_models(redis, keys, gid) == whole and redis.exists(keys.state(gid))
        assert gid not in p.stuck and _skipped(p, "log_gap") == 0
    finally:
        p.redis.close()
