"""Hidden information: hands, decks, the Seer's and the Survey's look, completion piles."""

from __future__ import annotations

import random

from virtues_support import (
    ACTION_DECK,
    ARRAY0,
    BANNOCKBURN,
    HAND0,
    HAND1,
    LOCATION_DECK,
    SEER,
    SURVEY,
    completed,
    cover,
    game,
)

from croupier.engine.bots import bot_for
from croupier.engine.local import LocalTable
from croupier.engine.selfplay import leaks, leaves
from croupier.games.virtues import SPEC
from croupier.games.virtues.events import (
    CardDrawn,
    LocationCompleted,
    PeekedCardTaken,
    SpecialPlayed,
)
from croupier.games.virtues.views import describe


def strings(view) -> set[str]:
    return set(leaves(view))


def test_own_hand_is_visible_and_other_hands_only_as_counts():
    state = game().state
    mine, theirs = SPEC.view(state, 0), strings(SPEC.view(state, 0))
    assert [c["id"] for c in mine["hand"]] == list(HAND0)
    assert mine["hand"][0]["symbols"] == ["valour", "strength"]
    assert not set(HAND1) & theirs
    assert mine["players"][1]["hand_count"] == 3
    assert set(HAND1) <= SPEC.hidden(state, 0) and not set(HAND0) & SPEC.hidden(state, 0)


def test_spectator_sees_no_hand_and_no_deck():
    state = game().state
    view = SPEC.view(state, None)
    assert view["hand"] is None
    assert not (set(HAND0) | set(HAND1) | set(ACTION_DECK) | set(LOCATION_DECK)) & strings(view)
    assert set(HAND0) | set(HAND1) <= SPEC.hidden(state, None)


def test_decks_are_never_in_a_view_only_their_sizes():
    state = game().state
    for seat in (None, 0, 1):
        view = SPEC.view(state, seat)
        assert not (set(ACTION_DECK) | set(LOCATION_DECK)) & strings(view)
        assert view["action_deck_count"] == len(ACTION_DECK) and view["location_deck_count"] == len(LOCATION_DECK)
        assert set(ACTION_DECK) | set(LOCATION_DECK) <= SPEC.hidden(state, seat)


def test_arrays_display_and_discard_are_public():
    state = game(cover(1, "loc-arthurs-seat", "valour", "act-va-co-2")).state
    view = SPEC.view(state, None)
    assert [loc["id"] for loc in view["players"][0]["array"]] == list(ARRAY0)
    assert view["players"][1]["array"][0]["covers"] == ["act-va-co-2", None, None]
    assert view["discard"] == ["act-st-co-1"]
    assert len(view["display"]) == 3


def test_a_drawn_card_is_seen_by_its_drawer_only():
    state = game().given(CardDrawn(seat=0, card=ACTION_DECK[0])).state
    assert ACTION_DECK[0] in strings(SPEC.view(state, 0))
    assert ACTION_DECK[0] not in strings(SPEC.view(state, 1)) | strings(SPEC.view(state, None))
    assert "drew an Action card" in describe(CardDrawn(seat=0, card=ACTION_DECK[0]))
    assert ACTION_DECK[0] not in describe(CardDrawn(seat=0, card=ACTION_DECK[0]))


def test_seer_shows_the_top_cards_to_the_acting_seat_only_while_it_looks():
    scn = game(hands=((SEER,) + HAND0[:2], HAND1)).given(CardDrawn(seat=0, card=ACTION_DECK[0]),
                                                          SpecialPlayed(seat=0, card=SEER, kind="scout"))
    state = scn.state
    top = set(ACTION_DECK[1:4])
    looking = SPEC.view(state, 0)["looking_at"]
    assert {c["id"] for c in looking} == top
    assert not top & SPEC.hidden(state, 0)
    for other in (1, None):
        assert SPEC.view(state, other)["looking_at"] is None
        assert top <= SPEC.hidden(state, other)
        assert not leaks(SPEC.view(state, other), SPEC.hidden(state, other))
    after = scn.given(PeekedCardTaken(seat=0, card=ACTION_DECK[2])).state
    assert SPEC.view(after, 0)["looking_at"] is None
    assert {ACTION_DECK[1], ACTION_DECK[3]} <= SPEC.hidden(after, 0)
    assert not leaks(SPEC.view(after, 0), SPEC.hidden(after, 0))


def test_survey_shows_the_top_locations_to_the_acting_seat_only():
    state = game(hands=((SURVEY,) + HAND0[:2], HAND1)).given(
        CardDrawn(seat=0, card=ACTION_DECK[0]), SpecialPlayed(seat=0, card=SURVEY, kind="survey")).state
    assert [loc["id"] for loc in SPEC.view(state, 0)["looking_at"]] == list(LOCATION_DECK)
    assert not set(LOCATION_DECK) & SPEC.hidden(state, 0)
    assert set(LOCATION_DECK) <= SPEC.hidden(state, 1)
    assert not set(LOCATION_DECK) & strings(SPEC.view(state, 1))
    legal = SPEC.legal_actions(state, 0)
    assert not leaks([a.take for a in legal if a.TYPE == "ExchangeLocation"], SPEC.hidden(state, 0))


def test_completion_piles_are_face_down_counts_for_others():
    state = game(completed(0, "loc-ben-nevis")).state
    assert SPEC.view(state, 0)["players"][0]["completed"] == ["loc-ben-nevis"]
    for other in (1, None):
        view = SPEC.view(state, other)
        assert view["players"][0]["completed_count"] == 1
        assert "loc-ben-nevis" not in strings(view)
        assert "loc-ben-nevis" in SPEC.hidden(state, other)


def test_no_view_leaks_a_hidden_card_during_a_completion():
    state = game(cover(0, BANNOCKBURN, "valour", "act-va-st-3")).given(
        CardDrawn(seat=0, card=ACTION_DECK[0]), LocationCompleted(seat=0, location=BANNOCKBURN, cards=())).state
    for seat in (None, 0, 1):
        assert not leaks(SPEC.view(state, seat), SPEC.hidden(state, seat))
    assert SPEC.view(state, 0)["step"] == "claim"


def test_describe_gives_one_line_of_words_for_every_event_of_a_game():
    table = LocalTable(SPEC, "describe", 2, {}, "11" * 32)
    table.join_all()
    rng, bot = random.Random(3), bot_for(SPEC, "heuristic")
    while table.state.status != "over":
        seat = SPEC.to_act(table.state.game)[0]
        legal = table.host.legal_actions(table.state, seat)
        wire = [table.host.encode_action(a) for a in legal]
        table.handle(legal[wire.index(bot(table.host.view(table.state, seat), wire, rng))])
    seen = set()
    for env in table.envelopes:
        if env.type in {cls.TYPE for cls in SPEC.events}:
            line = describe(table.host.decode_event(env))
            assert line and "\n" not in line and line != env.type
            seen.add(env.type)
    assert {"GameSetUp", "TurnBegan", "ActionPlayed", "LocationCompleted", "GameEnded"} <= seen
    assert describe(LocationCompleted(seat=0, location=BANNOCKBURN, cards=())) == "Seat 0 completed Bannockburn."
