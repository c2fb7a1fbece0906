"""delve's hidden() names the cards of the floors the party has left that nobody saw."""

from __future__ import annotations

from croupier.engine import registry
from croupier.engine.local import LocalTable
from croupier.games.delve import views as delve_views
from croupier.games.delve.state import DESCEND


def test_delve_hides_the_face_down_cards_of_the_floors_the_party_has_left():
    """hidden() (what the selfplay and audit checks hold every view to) named the face-down
    cards of the floor being explored only: once the party went down, the cards it never saw
    on the floors above were no longer hidden from anyone, so a view that showed one would
    have passed the checks."""
    import json
    import random

    from croupier.engine.bots import bot_for
    from croupier.engine.codec import canonical_json

    spec = registry.get("delve")
    table = LocalTable(spec, "delve-floors", 1, {}, "09" * 32)  # a seed that leaves two cards unseen
    table.join_all(now=0)
    bot, rng, now = bot_for(spec, "heuristic"), random.Random(1), 0
    while table.state.status == "running" and table.state.game.dungeon.floor == 0:
        now += 1000
        state = table.state
        legal = table.host.legal_actions(state, 0)
        wire = [json.loads(canonical_json(table.host.encode_action(a))) for a in legal]
        stairs = [w for w in wire if w["type"] == "Vote" and w["slot"] == DESCEND]
        choice = stairs[0] if stairs else bot(table.host.view(state, 0), wire, rng)  # down when it may
        table.handle(legal[wire.index(choice)], now=now)
    game = table.state.game
    assert game.dungeon.floor == 1, "the party never went down"
    first = game.dungeon.floors[0]
    descended = next(e for e in table.envelopes if e.type == "FloorDescended")
    left = table.host.fold([e for e in table.envelopes if e.seq < descended.seq]).game
    still_down = {c for c, up in zip(first, left.dungeon.face_up) if not up}
    seen = set(first) - still_down
    assert still_down and seen, "no case to check: pick another seed"
    assert set(game.unseen_below) == still_down
    for seat in (None, 0):
        hidden = delve_views.hidden(game, seat)
        assert still_down <= hidden, sorted(still_down - hidden)
        assert not seen & hidden  # what the party saw is not hidden
