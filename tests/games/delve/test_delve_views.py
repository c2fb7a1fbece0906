"""Hidden information: own hand and deck contents visible, others' hands and decks never,
face-down encounters, the market stock and the loot deck hidden from everyone."""

from __future__ import annotations

from delve_helpers import F0, F1, F2, LOOT, STOCK, facing, new, run, started, state_of

from croupier.engine.selfplay import leaks
from croupier.games.delve import SPEC
from croupier.games.delve import commands as C
from croupier.games.delve import events as E
from croupier.games.delve.views import describe


def test_own_hand_is_visible_and_others_hands_only_as_counts():
    st = new(2)
    mine = SPEC.view(st, 0)["players"]
    assert mine[0]["hand"] == ["punch.s0.1", "punch.s0.2", "sidestep.s0.1", "sidestep.s0.2", "prayer.s0.1"]
    assert "hand" not in mine[1] and mine[1]["hand_count"] == 5
    assert "punch.s1.1" in SPEC.hidden(st, 0) and "punch.s0.1" not in SPEC.hidden(st, 0)
    assert not leaks(SPEC.view(st, 0), SPEC.hidden(st, 0))


def test_the_draw_pile_shows_its_contents_to_its_owner_in_sorted_order_never_its_order():
    cards = ("punch.s0.1", "punch.s0.2", "sidestep.s0.1", "sidestep.s0.2", "prayer.s0.1", "spark.s0.2",
             "spark.s0.1", "prayer.s0.2")
    st = state_of(1, [*started(1, decks=[cards]), E.VoteOpened(session=1, options=(0, 1, 2), deadline=None)])
    assert st.players[0].draw == ("spark.s0.2", "spark.s0.1", "prayer.s0.2")
    me = SPEC.view(st, 0)["players"][0]
    assert me["draw"] == ["prayer.s0.2", "spark.s0.1", "spark.s0.2"] and me["draw_count"] == 3


def test_a_spectator_sees_no_hand_and_no_draw_pile():
    st = new(2)
    view = SPEC.view(st, None)
    assert all("hand" not in p and "draw" not in p for p in view["players"])
    hidden = SPEC.hidden(st, None)
    assert {"punch.s0.1", "punch.s1.1", "spark.s0.2"} <= hidden
    assert not leaks(view, hidden)


def test_face_down_encounters_market_stock_and_loot_deck_are_hidden():
    st = new(1)
    view = SPEC.view(st, 0)
    assert view["floor"]["cards"] == [F0[0], F0[1], F0[2], None, F0[4], None, None]
    hidden = SPEC.hidden(st, 0)
    assert {F0[3], F0[5], F0[6], *F1, *F2, *STOCK, *LOOT, "diamond.1"} <= hidden
    assert not {F0[0], F0[1], F0[2], F0[4]} & hidden
    assert view["market_stock"] == len(STOCK) and view["loot_deck"] == len(LOOT)


def test_revealed_encounters_become_visible_to_everyone():
    st, _ = run(facing(seats=2), C.RollDice(seat=0, skill="finesse"), outcomes=[1])  # knowledge 1
    for seat in (None, 0, 1):
        assert SPEC.view(st, seat)["floor"]["cards"][3] == F0[3]
        assert F0[3] not in SPEC.hidden(st, seat)


def test_committed_and_supporting_cards_are_shown_to_the_table():
    st, _ = run(facing(seats=2), C.CommitCard(seat=0, card="punch.s0.1"))
    st, _ = run(st, C.OfferAttack(seat=0, skill="strength"))
    st, _ = run(st, C.SupportAttack(seat=1, card="punch.s1.2"))
    for seat in (None, 0, 1):
        view = SPEC.view(st, seat)
        assert view["facing"]["committed"] == ["punch.s0.1"]
        assert view["support"]["cards"] == [[1, "punch.s1.2"]]
        assert not leaks(view, SPEC.hidden(st, seat))
    assert "punch.s0.2" in SPEC.hidden(st, 1) and "punch.s1.1" in SPEC.hidden(st, 0)


def test_the_cards_being_chosen_are_shown_only_to_the_chooser():
    st, _ = run(new(2), C.Vote(seat=0, slot=0))
    st, _ = run(st, C.Vote(seat=1, slot=0))
    st, _ = run(st, C.PickCard(seat=0, card="punch.s0.1"))
    assert SPEC.view(st, 0)["choice"]["chosen"] == ["punch.s0.1"]
    other = SPEC.view(st, 1)["choice"]
    assert "chosen" not in other and other["chosen_count"] == 1
    assert not leaks(SPEC.view(st, 1), SPEC.hidden(st, 1))


def test_legal_actions_never_name_a_hidden_card():
    st = facing(seats=2)
    for seat in (0, 1):
        actions = [a.__dict__ for a in SPEC.legal_actions(st, seat)]
        assert not leaks(actions, SPEC.hidden(st, seat))


def test_votes_and_the_deadline_are_public():
    st, _ = run(new(3), C.Vote(seat=2, slot=1))
    vote = SPEC.view(st, None)["vote"]
    assert vote == {"session": 1, "options": [0, 1, 2], "votes": [-1, -1, 1], "deadline": 30000}


def test_every_event_has_words_for_the_replay():
    st = new(2)
    st, events = run(st, C.Vote(seat=0, slot=0))
    st, more = run(st, C.Vote(seat=1, slot=0))
    for event in events + more:
        text = describe(event)
        assert text and "\n" not in text and text != type(event).__name__
