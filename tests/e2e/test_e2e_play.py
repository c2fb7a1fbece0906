"""Complete games of every game through the gateway, with bots, over HTTP (+WebSocket) and
gRPC, watched by spectators, one of whom keeps dropping its stream and resuming."""

from __future__ import annotations

import httpx
import pytest

from croupier.engine import registry
from croupier.engine.codec import canonical_json
from croupier.engine.table import TableHost
from e2e_helpers import states_by_version

CASES = [(g, t) for g in registry.GAME_IDS for t in ("http", "grpc")]


@pytest.mark.parametrize("game_type,transport", CASES)
def test_bots_play_a_complete_game(played, stack_services, game_type, transport):
    run = played[(game_type, transport)]
    finals = {r.final.version for r in run.seats} | {run.spectator.final.version, run.reconnecting.final.version}
    assert len(finals) == 1, f"followers ended at different versions: {finals}"
    final = run.spectator.final.view
    assert final["status"] == "over" and final["end_reason"] == "finished"
    assert final["result"] is not None
    assert final["seed"], "the seed is revealed once the game is over"
    assert sum(r.moves for r in run.seats) > 0
    table = httpx.get(f"{stack_services.http_url}/v1/tables/{run.game_id}").json()
    assert table["status"] == "over" and table["version"] == run.spectator.final.version
    assert table["result"] == final["result"]


@pytest.mark.parametrize("game_type,transport", CASES)
def test_every_message_is_the_engines_view_for_that_viewer(played, stack_services, game_type, transport):
    """Each stream message equals the engine's view (and legal actions) of that seat or of a
    spectator at that version, recomputed from the Kafka log: right viewer, right version."""
    run = played[(game_type, transport)]
    host = TableHost(registry.get(game_type))
    states = states_by_version(stack_services.kafka, stack_services.prefix, game_type, run.game_id)
    for record in [*run.seats, run.spectator, run.reconnecting]:
        for update in record.updates:
            state = states[update.version]
            assert canonical_json(update.view) == canonical_json(host.view(state, record.seat)), \
                f"seat {record.seat} v{update.version}"
            expected = [] if record.seat is None else [host.encode_action(a)
                                                       for a in host.legal_actions(state, record.seat)]
            assert canonical_json(update.actions) == canonical_json(expected)


@pytest.mark.parametrize("game_type,transport", CASES)
def test_a_reconnecting_client_misses_nothing_and_gets_nothing_twice(played, game_type, transport):
    run = played[(game_type, transport)]
    dropping, steady = run.reconnecting, run.spectator
    assert dropping.reconnects >= 2
    for record in (dropping, steady, run.seats[0]):
        assert record.versions == sorted(set(record.versions)), "versions only grow, none twice"
    # It ends at the same final view as a client that never dropped...
    assert dropping.final.view == steady.final.view
    # ...and resuming never skipped a version that was there to see: every version the steady
    # spectator was sent after the first drop, the dropping one was sent too, or a later
    # one before the next (the projector may fold several events into one update).
    seen = set(dropping.versions)
    for v in steady.versions:
        if v not in seen:
            later = [d for d in dropping.versions if d > v]
            assert later, f"v{v} was never followed"
