"""A fork of nightfall deals its hidden cards again (rules.redeal, ForkDealt): each seat's
hand, deck, face-down first Location, face-down Traps and pending placement, from that
seat's own cards; everything public stays. See docs/games/nightfall.md, "Forks: the hidden
cards dealt again"."""

from __future__ import annotations

import dataclasses
from collections import Counter

from nightfall_setup import LIGHT, MOOR, deal, enter, game, turn

from croupier.engine.contract import Context
from croupier.engine.local import LocalTable
from croupier.engine.rng import FairRng
from croupier.games.nightfall import SPEC
from croupier.games.nightfall import commands as C
from croupier.games.nightfall import events as E
from croupier.games.nightfall.cards import CONTENT, category_of, deck_cards, design_of
from croupier.games.nightfall.rules import legal_actions
from croupier.games.nightfall.state import MAIN, OPENING, PLACE, TRAPS
from croupier.games.nightfall.views import describe

SEED = "4e" * 32
SEEDS = [f"{n:02x}" * 32 for n in range(30)]

WOLF = "s0-werewolf-1"  # 50 HP
GHOUL = "s0-ghoul-1"  # 30 HP
TROLL = "s0-swamp-troll-1"  # 60 HP
GARGOYLE = "s0-gargoyle-1"  # 40 HP
BANSHEE = "s0-banshee-1"  # 20 HP
KNIGHT = "s1-knight-1"  # 50 HP
RANGER = "s1-ranger-1"  # 30 HP
CRYPT = "s0-old-crypt-1"  # capacity 50
MINE = "s0-abandoned-mine-1"  # capacity 40
MANOR = "s0-haunted-manor-1"  # capacity 60


def dealt(state, seed: str = SEED):
    events = SPEC.redeal(state, Context(rng=FairRng(seed, "", 0)))
    for event in events:
        state = SPEC.evolve(state, event)
    return events, state


def seat_cards(state, seat: int) -> Counter:
    """Every card of the seat that some seat may not see."""
    p = state.players[seat]
    opening = [state.opening[seat]] if state.opening[seat] is not None else []
    traps = [c for t in state.traps if t.owner == seat for c in t.cards]
    return Counter([*p.hand, *p.deck, *opening, *traps])


def played(steps: int, seed: str = "07" * 32):
    """A game of first legal actions after `steps` commands."""
    table = LocalTable(SPEC, "played", 2, None, seed)
    table.join_all()
    for _ in range(steps):
        state = table.state.game
        seat = SPEC.to_act(state)[0]
        table.handle(legal_actions(state, seat)[-1])
    return table.state.game


def test_each_seat_is_dealt_again_from_its_own_cards_at_the_same_sizes():
    state = played(30)
    assert state.phase == MAIN
    events, fork = dealt(state)
    assert [(type(e), e.seat) for e in events] == [(E.ForkDealt, 0), (E.ForkDealt, 1)]
    for seat in (0, 1):
        before, after = state.players[seat], fork.players[seat]
        assert (len(after.hand), len(after.deck)) == (len(before.hand), len(before.deck))
        assert seat_cards(fork, seat) == seat_cards(state, seat)
        assert all(card.startswith(f"s{seat}-") for card in after.hand + after.deck)
        # What every seat sees of it stays.
        assert (after.withdrawn, after.discard, after.graveyard, after.grave_hp, after.redraws) == \
            (before.withdrawn, before.discard, before.graveyard, before.grave_hp, before.redraws)
    assert (fork.places, fork.fighters, fork.turn, fork.active) == (state.places, state.fighters, state.turn, state.active)
    assert SPEC.view(fork, None) == SPEC.view(state, None)
    # The cards did move: the decks are laid out anew.
    assert [p.deck for p in fork.players] != [p.deck for p in state.players]


def test_the_deal_is_the_seeds_alone_and_blind_to_where_the_origin_had_its_cards():
    state = played(30)
    events, fork = dealt(state)
    assert dealt(state)[0] == events  # the same seed deals the same
    assert dealt(state, "99" * 32)[1] != fork  # another seed deals otherwise
    # The origin with its hidden cards laid out otherwise is dealt into the same game.
    _, elsewhere = dealt(state, "12" * 32)
    assert dealt(elsewhere)[1] == fork


def test_an_opening_hand_still_to_lay_its_first_location_holds_one():
    order0 = deck_cards(0, "monsters")
    order1 = deck_cards(1, "defenders")
    first0 = next(c for c in order0[:6] if category_of(c) == "location")
    g = game(E.DeckShuffled(seat=0, order=order0), E.CardsDrawn(seat=0, count=6, reason="deal"),
             E.DeckShuffled(seat=1, order=order1), E.CardsDrawn(seat=1, count=6, reason="deal"),
             E.HandsDealt(), E.OpeningLocationChosen(seat=0, card=first0))
    state = g.state
    assert state.phase == OPENING and state.opening == (first0, None)
    openings = set()
    for seed in SEEDS:
        _, fork = dealt(state, seed)
        # Seat 1 has its first Location to lay: its hand always holds a Location (a third of
        # the hands six cards of its deck make hold none).
        assert any(category_of(c) == "location" for c in fork.players[1].hand)
        assert SPEC.to_act(fork) == (1,) and legal_actions(fork, 1)
        # Seat 0's face-down first Location is a Location of its own deck, no longer in its
        # hand or deck; its hand keeps five cards.
        assert category_of(fork.opening[0]) == "location" and fork.opening[0].startswith("s0-")
        assert fork.opening[0] not in fork.players[0].hand + fork.players[0].deck
        assert len(fork.players[0].hand) == 5 and fork.opening[1] is None
        assert seat_cards(fork, 0) == seat_cards(state, 0)
        openings.add(fork.opening[0])
    assert len(openings) > 1  # the face-down card is dealt again too


def test_a_face_down_trap_is_dealt_again_as_copies_of_a_trap_of_its_size():
    gas = ("s0-poison-gas-1", "s0-poison-gas-2", "s0-poison-gas-3")
    g = game(*deal(hand0=(WOLF, *gas, GHOUL), deck0=(TROLL, "s0-spike-pit-1", "s0-spike-pit-2", "s0-bear-trap-1"),
                   hand1=(KNIGHT,)),
             E.TrapWindowOpened(seat=0),
             E.TrapSet(seat=0, trap="poison-gas", cards=gas, location=MOOR))
    state = g.state
    assert state.phase == TRAPS and len(state.traps) == 1
    for seed in SEEDS[:10]:
        _, fork = dealt(state, seed)
        (trap,) = fork.traps
        assert (trap.owner, trap.location, len(trap.cards)) == (0, MOOR, 3)
        # Three identical copies of a 1/3 Trap: as SetTrap lays them (here only the Gas is one).
        assert {design_of(c) for c in trap.cards} == {trap.design}
        assert CONTENT.traps[trap.design].components == 3
        assert seat_cards(fork, 0) == seat_cards(state, 0)
        assert SPEC.view(fork, None) == SPEC.view(state, None)
        assert SPEC.view(fork, 1)["traps"] == SPEC.view(state, 1)["traps"]


def test_a_pending_new_character_and_location_are_dealt_as_a_pair_the_rules_let_enter():
    # In play 180 HP on 180 capacity: a new Character fits only with its new Location's
    # capacity. The Troll (60) fits only on the Manor (60); the Gargoyle (40) anywhere.
    g = game(*deal(hand0=(WOLF, BANSHEE, GHOUL, TROLL, GARGOYLE, CRYPT, MINE), deck0=(MANOR, "s0-torch-1"),
                   hand1=(KNIGHT, RANGER)),
             enter(0, WOLF, MOOR, 50), turn(1, 2), enter(1, KNIGHT, LIGHT, 50), turn(0, 3),
             enter(0, BANSHEE, MOOR, 20), turn(1, 4), enter(1, RANGER, LIGHT, 30), turn(0, 5),
             enter(0, GHOUL, MOOR, 30), turn(1, 6), turn(0, 7),
             E.PlacementPending(seat=0, kind="character", character=GARGOYLE, location=MINE))
    state = g.state
    assert state.phase == PLACE and len(state.players[0].hand) == 4
    pairs = set()
    for seed in SEEDS:
        _, fork = dealt(state, seed)
        kind, character, location = fork.pending
        assert kind == "character" and {character, location} <= set(fork.players[0].hand)
        pairs.add((character, location))
        # The command that made the placement is legal with the dealt pair.
        before = dataclasses.replace(fork, phase=MAIN, pending=None)
        assert SPEC.decide(C.PlayCharacterOnNewLocation(seat=0, card=character, location=location), before,
                           Context(rng=FairRng(SEED, "", 0)))
        assert SPEC.view(fork, None) == SPEC.view(state, None)
        assert legal_actions(fork, 0)  # the cell to choose
    assert (TROLL, MINE) not in pairs and (TROLL, CRYPT) not in pairs
    assert {(TROLL, MANOR), (GARGOYLE, MINE)} <= pairs


def test_a_pending_placement_never_gets_a_location_or_character_already_in_play():
    # Mirrored decks: seat 1 holds a Misty Moor and a Werewolf, whose designs seat 0 has in play.
    moor1, wolf1, crypt1, ghoul1 = "s1-misty-moor-1", "s1-werewolf-1", "s1-old-crypt-1", "s1-ghoul-1"
    g = game(*deal(hand0=(WOLF,), hand1=(moor1, wolf1, crypt1, ghoul1), deck1=("s1-torch-1", "s1-medkit-1"),
                   open1="s1-haunted-manor-1"),
             enter(0, WOLF, MOOR, 50), turn(1, 2), turn(0, 3), turn(1, 4),
             E.PlacementPending(seat=1, kind="character", character=ghoul1, location=crypt1),
             options={"deck_1": "monsters"})
    state = g.state
    for seed in SEEDS[:10]:
        _, fork = dealt(state, seed)
        assert fork.pending == ("character", ghoul1, crypt1)
        assert {ghoul1, crypt1} <= set(fork.players[1].hand)


def test_a_discovering_character_keeps_its_place_and_its_location_is_dealt_from_the_hand():
    g = game(*deal(hand0=(WOLF, CRYPT, MINE, "s0-torch-1"), deck0=(MANOR, "s0-medkit-1"), hand1=(KNIGHT,)),
             enter(0, WOLF, MOOR, 50), turn(1, 2), turn(0, 3),
             E.PlacementPending(seat=0, kind="discover", character=WOLF, location=CRYPT))
    state = g.state
    locations = set()
    for seed in SEEDS:
        _, fork = dealt(state, seed)
        kind, character, location = fork.pending
        assert (kind, character) == ("discover", WOLF)
        assert category_of(location) == "location" and location in fork.players[0].hand
        locations.add(location)
    assert locations == {CRYPT, MINE, MANOR}


def test_forks_of_games_under_rules_version_1_deal_again_too():
    assert SPEC.redeal is not None
    assert SPEC.for_version(1).redeal is SPEC.redeal


def test_the_replay_words_for_the_deal_name_no_card():
    state = played(30)
    events, _ = dealt(state)
    for event in events:
        text = describe(event)
        assert "dealt" in text and "\n" not in text
        cards = {*event.hand, *event.deck, *event.traps, *event.placing}
        assert not any(card in text for card in cards)
        assert not any(design_of(card) in text or CONTENT.name(design_of(card)) in text for card in cards)
