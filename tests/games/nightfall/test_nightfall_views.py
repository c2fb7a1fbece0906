"""Hidden information: own hand visible, the other hand and every deck never; face-down
cards stay hidden from the opponent and spectators."""

from __future__ import annotations

import dataclasses
import random

from nightfall_setup import LIGHT, MOOR, deal, enter, game, turn

from croupier.engine.local import LocalTable
from croupier.engine.selfplay import leaks, leaves, table_seed
from croupier.games.nightfall import SPEC
from croupier.games.nightfall import events as E
from croupier.games.nightfall.views import describe, hidden, view

WOLF, KNIGHT = "s0-werewolf-1", "s1-knight-1"
GAS = ("s0-poison-gas-1", "s0-poison-gas-2", "s0-poison-gas-3")
DECK0 = ("s0-torch-1", "s0-medkit-1")
DECK1 = ("s1-crossbow-1",)


def state_of(*events):
    return game(*events).state


def test_own_hand_is_visible_and_the_other_hand_only_as_a_count():
    state = state_of(*deal(hand0=(WOLF, "s0-rally-1"), hand1=(KNIGHT,), deck0=DECK0, deck1=DECK1))
    mine = view(state, 0)["players"]
    assert mine[0]["hand"] == [WOLF, "s0-rally-1"]
    assert mine[1]["hand"] is None and mine[1]["hand_count"] == 1
    theirs = view(state, 1)["players"]
    assert theirs[0]["hand"] is None and theirs[0]["hand_count"] == 2 and theirs[1]["hand"] == [KNIGHT]
    assert WOLF in hidden(state, 1) and KNIGHT in hidden(state, 0)


def test_decks_are_only_counts_for_everyone():
    state = state_of(*deal(hand0=(WOLF,), hand1=(KNIGHT,), deck0=DECK0, deck1=DECK1))
    for seat in (0, 1, None):
        v = view(state, seat)
        strings = set(leaves(v))
        assert not strings & set(DECK0 + DECK1)
        assert [p["deck_count"] for p in v["players"]] == [2, 1]
        assert set(DECK0 + DECK1) <= hidden(state, seat)


def test_spectator_sees_no_hand():
    state = state_of(*deal(hand0=(WOLF,), hand1=(KNIGHT,)))
    v = view(state, None)
    assert all(p["hand"] is None for p in v["players"])
    assert {WOLF, KNIGHT} <= hidden(state, None)
    assert not leaks(v, hidden(state, None))


def test_face_down_first_location_is_hidden_until_both_are_turned_up():
    state = state_of(*deal()[:5], E.OpeningLocationChosen(seat=0, card=MOOR))
    other = view(state, 1)["players"][0]
    assert other["opening_chosen"] is True and other["opening"] is None
    assert MOOR in hidden(state, 1) and MOOR in hidden(state, None) and MOOR not in hidden(state, 0)
    assert view(state, 0)["players"][0]["opening"] == MOOR
    assert not leaks(view(state, 1), hidden(state, 1))
    revealed = state_of(*deal())
    assert MOOR not in hidden(revealed, 1) and MOOR in leaves(view(revealed, 1))


def test_face_down_trap_shows_only_its_owner_location_and_size_to_others():
    state = state_of(*deal(hand0=(WOLF, *GAS), hand1=(KNIGHT,)), enter(0, WOLF, MOOR, 50),
                     E.TrapWindowOpened(seat=0), E.TrapSet(seat=0, trap="poison-gas", cards=GAS, location=LIGHT))
    theirs = view(state, 1)["traps"]
    assert theirs == [{"owner": 0, "location": LIGHT, "count": 3, "trap": None, "cards": None}]
    assert view(state, 0)["traps"][0]["cards"] == list(GAS)
    assert set(GAS) <= hidden(state, 1) and not set(GAS) & hidden(state, 0)
    assert not leaks(view(state, 1), hidden(state, 1)) and not leaks(view(state, None), hidden(state, None))


def test_pending_new_location_card_is_hidden_from_the_opponent():
    crypt = "s0-old-crypt-1"
    state = state_of(*deal(hand0=("s0-ghoul-1", crypt)), turn(1, 2), turn(0, 3),
                     E.PlacementPending(seat=0, kind="character", character="s0-ghoul-1", location=crypt))
    assert view(state, 0)["pending"] == {"kind": "character", "character": "s0-ghoul-1", "location": crypt}
    assert view(state, 1)["pending"] == {"kind": "character", "character": None, "location": None}
    assert not leaks(view(state, 1), hidden(state, 1))


def test_withdrawn_characters_graveyards_and_discards_are_public():
    state = state_of(*deal(hand0=(WOLF, "s0-torch-1"), hand1=(KNIGHT,)), enter(0, WOLF, MOOR, 50),
                     E.ItemAttached(seat=0, item="s0-torch-1", character=WOLF, uses=5), turn(0, 3),
                     E.ItemDiscarded(character=WOLF, item="s0-torch-1", reason="withdrawn"),
                     E.CharacterWithdrawn(character=WOLF, hp=50, cost=3))
    v = view(state, 1)["players"][0]
    assert v["withdrawn"] == [{"card": WOLF, "hp": 50}] and v["discard"] == ["s0-torch-1"]
    assert WOLF not in hidden(state, 1)


def test_no_view_or_legal_action_ever_shows_a_hidden_card_during_play():
    table = LocalTable(SPEC, "views", 2, {}, table_seed(3, 0, SPEC.id))
    table.join_all()
    rng = random.Random(3)
    steps = 0
    while table.state.status != "over" and steps < 400:
        steps += 1
        game_state = table.state.game
        for seat in (0, 1, None):
            assert not leaks(view(game_state, seat), hidden(game_state, seat))
            if seat is not None:
                actions = [table.host.encode_action(a) for a in SPEC.legal_actions(game_state, seat)]
                assert not leaks(actions, hidden(game_state, seat))
        seat = SPEC.to_act(game_state)[0]
        legal = SPEC.legal_actions(game_state, seat)
        table.handle(legal[rng.randrange(len(legal))])
    assert steps > 50


def test_describe_gives_one_line_for_every_event_type():
    samples = {
        E.OpeningLocationChosen: E.OpeningLocationChosen(seat=0, card=MOOR),
        E.TrapSet: E.TrapSet(seat=0, trap="poison-gas", cards=GAS, location=LIGHT),
        E.HandRedrawn: E.HandRedrawn(seat=0, order=DECK0),
        E.DeckShuffled: E.DeckShuffled(seat=0, order=DECK0),
    }
    for line in samples.values():
        text = describe(line)
        assert "\n" not in text and text
        # Lines about face-down or hidden cards do not name them.
        assert not any(card in text for card in (MOOR, *GAS, *DECK0))
    values = {"int": 1, "str": "s0-torch-1", "str | None": "s0-torch-1", "bool": True,
              "tuple[str, ...]": ("s0-torch-1",), "tuple[int, ...]": (0,)}
    for cls in SPEC.events:
        event = cls(**{f.name: values[f.type] for f in dataclasses.fields(cls)})
        text = describe(event)
        assert text != cls.TYPE and "\n" not in text, cls.TYPE
