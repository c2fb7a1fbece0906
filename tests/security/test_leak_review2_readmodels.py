"""The projector's read models and feed messages, for every game type, on a real Redis (the
second leak review).

The projector writes, per game, a meta hash (the public facts GET /v1/tables/{id} serves to
anyone with the id), a views hash (the spectator's view, each seat's view and legal actions)
and publishes a feed message carrying every field it wrote (`views/1`). The gateway hands a
stream the field named after its seat, so a view written under the wrong name is a seat's
hand given to another; tests/integration/test_projector checks the message carries what the
hash holds, not whose each field is. Here, at every few steps of games played by the
games' bots and by random play (delve's floors left with cards face down, State.unseen_below,
included), and for forks made at those steps:

- each field of the views hash and of the feed message holds nothing hidden from the viewer
  it is named for ("spectator", "<seat>", "actions:<seat>"), and its view says it is that
  viewer's ("you");
- the meta hash holds nothing hidden from a spectator, and no seed before the end.
"""

from __future__ import annotations

import json
import uuid

import pytest
from test_leak_review2_engine import played

from croupier.engine import registry
from croupier.engine.audit import batches
from croupier.engine.selfplay import leaks
from croupier.engine.table import OVER, TableHost
from croupier.projector import feed
from croupier.projector.keys import Keys
from croupier.projector.models import Flush, ReadModels


@pytest.fixture
def prefix(redis):
    value = f"t{uuid.uuid4().hex[:10]}."
    yield value
    keys = list(redis.scan_iter(match=f"{value}*"))
    if keys:
        redis.delete(*keys)


def _fields_faults(spec, state, fields: dict[str, str], where: str) -> list[str]:
    faults = []
    if state.status == OVER:
        return faults  # the seed is out: nothing is hidden any more
    for name, text in fields.items():
        if name.startswith("joined:"):
            continue
        seat = None if name == "spectator" else int(name.split(":")[-1])
        value = json.loads(text)
        hidden = spec.hidden(state.game, seat) if state.game is not None else frozenset()
        found = leaks(value, hidden)
        if found:
            faults.append(f"{where}: field {name!r} shows {sorted(found)[:5]}")
        if not name.startswith("actions:") and value.get("you") != seat:
            faults.append(f"{where}: field {name!r} holds the view of {value.get('you')!r}")
    return faults


def _meta_faults(spec, state, meta: dict[bytes, bytes], where: str) -> list[str]:
    if state.status == OVER:
        return []
    text = {k.decode(): v.decode() for k, v in meta.items()}
    faults = []
    if state.seed and state.seed in json.dumps(text):
        faults.append(f"{where}: the meta holds the seed of a game not over")
    hidden = spec.hidden(state.game, None) if state.game is not None else frozenset()
    found = leaks(text, hidden) | {c for c in hidden if any(c in v for v in text.values())}
    if found:
        faults.append(f"{where}: the meta shows {sorted(found)[:5]}")
    return faults


def _write_and_read(redis, models: ReadModels, keys: Keys, host: TableHost, game_id: str, first_seq: int, state):
    """Apply one batch of the game's read models; the feed message published, the views hash
    and the meta hash."""
    pubsub = redis.pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(keys.feed(game_id))
    try:
        assert pubsub.get_message(timeout=5) is None  # the subscription is confirmed
        assert models.apply([Flush(game_id, state.game_type, first_seq, state)], {state.game_type: host}) == [1]
        message = pubsub.get_message(timeout=5)
    finally:
        pubsub.close()
    assert message is not None, "no feed message"
    got = feed.decode(message["data"])
    assert got is not None and got.version == state.version
    published = {k.decode(): v.decode() for k, v in got.fields.items()}
    stored = {k.decode(): v.decode() for k, v in redis.hgetall(keys.views(game_id)).items()}
    return published, stored, redis.hgetall(keys.meta(game_id))


@pytest.mark.parametrize("game_type", registry.GAME_IDS)
def test_each_field_of_the_read_models_and_the_feed_is_its_viewers_alone(redis, prefix, game_type):
    spec = registry.get(game_type)
    keys = Keys(prefix)
    models = ReadModels(redis, keys)
    faults: list[str] = []
    checked = 0
    for n, log in enumerate(played(game_type)):
        host = TableHost(spec)
        game_id = f"{game_type}-leak{n}"
        groups = batches(log)
        step = max(1, len(groups) // 12)
        state, first, applied = None, 1, 0
        forks = 0
        for i, batch in enumerate(groups):
            for env in batch:
                state = host.evolve(state, env)
            if i % step and i != len(groups) - 1:
                continue
            where = f"{game_id} v{state.version}"
            published, stored, meta = _write_and_read(redis, models, keys, host, game_id, first, state)
            first = state.version + 1
            assert published == stored, where
            faults += _fields_faults(spec, state, stored, where)
            faults += _meta_faults(spec, state, meta, where)
            checked += 1
            if state.game is not None and state.status != OVER and forks < 3:
                # A fork made here, an hour later (delve's vote restarted by forked()).
                fork_id = f"{game_id}-fork{i}"
                fork_log = host.fork(fork_id, [e for e in log if e.seq <= state.version], "33" * 32,
                                     now=state.last_time + 3_600_000)
                fork = host.fold(fork_log)
                published, stored, meta = _write_and_read(redis, models, keys, host, fork_id, 1, fork)
                assert published == stored
                faults += _fields_faults(spec, fork, stored, f"fork {fork_id}")
                faults += _meta_faults(spec, fork, meta, f"fork {fork_id}")
                forks += 1
            applied += 1
    assert checked >= 10, checked
    assert not faults, "\n".join(faults[:15])
