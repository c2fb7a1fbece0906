"""Hidden information: the own hand is visible, other hands, the supply, the removed cards
and the cards under a discard pile's top never are; victory point chips lie face down."""

from __future__ import annotations

import json
import random

from expeditions_helpers import on_path, position

from croupier.engine.contract import Context, Start
from croupier.engine.selfplay import leaks
from croupier.engine.testing import fair_rng, scenario
from croupier.games.expeditions import SPEC
from croupier.games.expeditions.events import CardDiscarded, PointsFound
from croupier.games.expeditions.views import describe, hidden, view

H0 = ["red-3-a", "red-5-a", "red-5-b", "red-8-a", "blue-2-a", "blue-6-a", "green-1-a", "white-9-a"]
H1 = ["yellow-0-a", "yellow-4-a", "yellow-7-a", "blue-3-a", "blue-4-b", "green-2-a", "green-10-a", "white-1-a"]


def _strings(value):
    return set(json.dumps(value).replace("[", " ").replace("]", " ").replace(",", " ").replace('"', " ").split())


def test_own_hand_is_visible_and_sorted_other_hands_only_counted():
    state = position(2, [list(reversed(H0)), H1], supply=("white-0-a", "white-1-b")).state
    v0 = view(state, 0)
    assert v0["players"][0]["hand"] == sorted(H0, key=lambda c: (("yellow", "blue", "white", "green", "red").index(
        c.split("-")[0]), int(c.split("-")[1])))
    assert v0["players"][1]["hand"] is None and v0["players"][1]["hand_count"] == 8
    assert not _strings(v0) & set(H1)
    assert set(H1) <= hidden(state, 0) and not set(H0) & hidden(state, 0)


def test_spectator_sees_no_hand_and_no_supply():
    state = position(2, [H0, H1], supply=("white-0-a", "white-1-b"), removed=("green-4-a",)).state
    v = view(state, None)
    assert [p["hand"] for p in v["players"]] == [None, None]
    assert v["supply_count"] == 2 and v["removed_count"] == 1
    assert not _strings(v) & (set(H0) | set(H1) | {"white-0-a", "white-1-b", "green-4-a"})
    assert {"white-0-a", "white-1-b", "green-4-a"} | set(H0) | set(H1) <= hidden(state, None)


def test_played_cards_and_the_top_discard_are_public_cards_under_it_are_not():
    sc = position(2, [H0, H1], *on_path(0, "red-3-a", 1), CardDiscarded(seat=1, card="blue-3-a"),
                  CardDiscarded(seat=0, card="blue-6-a"))
    for seat in (None, 0, 1):
        v = view(sc.state, seat)
        assert v["players"][0]["paths"]["red"]["cards"] == ["red-3-a"]
        assert v["discards"]["blue"] == {"top": "blue-6-a", "count": 2}
        assert "blue-3-a" not in _strings(v) and "blue-3-a" in hidden(sc.state, seat)
        assert "red-3-a" not in hidden(sc.state, seat)


def test_victory_point_chips_lie_face_down():
    sc = position(2, [H0, H1], PointsFound(seat=0, color="red", step=4, tile="points-10-a", points=10))
    assert view(sc.state, 0)["players"][0]["chips"] == 10
    assert view(sc.state, 1)["players"][0]["chips"] is None
    assert view(sc.state, None)["players"][0]["chips"] is None


def test_no_view_or_legal_action_leaks_a_hidden_card_during_random_play():
    for seats in (2, 3, 4):
        state = SPEC.initial_state(SPEC.parse_options({}), seats)
        rng = fair_rng(f"{seats:064x}")
        for e in SPEC.decide(Start(), state, Context(rng=rng)):
            state = SPEC.evolve(state, e)
        pick = random.Random(seats)
        for _ in range(300):
            if SPEC.is_over(state):
                break
            for seat in (None, *range(seats)):
                secret = hidden(state, seat)
                assert not leaks(view(state, seat), secret)
                if seat is not None:
                    actions = [{"type": a.TYPE, **a.__dict__} for a in SPEC.legal_actions(state, seat)]
                    assert not leaks(actions, secret)
            seat = SPEC.to_act(state)[0]
            legal = SPEC.legal_actions(state, seat)
            for e in SPEC.decide(legal[pick.randrange(len(legal))], state, Context(rng=rng)):
                state = SPEC.evolve(state, e)
        # the deck order is never part of any view
        assert all(c not in _strings(view(state, s)) for s in (None, *range(seats)) for c in state.supply)


def test_describe_never_names_a_card_drawn_from_the_supply():
    sc = scenario(SPEC, 2)
    deal = sc.when(Start(), rng=fair_rng()).events[0]
    text = describe(deal)
    assert not any(c in text for h in deal.hands for c in h)
    from croupier.games.expeditions.events import CardDrawn
    assert "white-0-a" not in describe(CardDrawn(seat=0, card="white-0-a", source="supply"))
    assert "white-0-a" in describe(CardDrawn(seat=0, card="white-0-a", source="white"))
