"""A fork of virtues deals its hidden cards again (rules.redeal, ForkDealt): the hands and the
Action deck from one pool, the Location deck shuffled; everything public stays. See
docs/games/virtues.md, "Forks: the hidden cards dealt again"."""

from __future__ import annotations

from collections import Counter

from virtues_support import (
    ACTION_DECK,
    BANNOCKBURN,
    DISCARD,
    DISPLAY,
    HAND0,
    HAND1,
    LOCATION_DECK,
    SEER,
    SURVEY,
    completed,
    cover,
    game,
)

from croupier.engine.contract import Context
from croupier.engine.local import LocalTable
from croupier.engine.rng import FairRng
from croupier.engine.table import DEAL_AGAIN, DEAL_KEPT, JoinSeat, TableHost
from croupier.games.virtues import SPEC
from croupier.games.virtues.cards import CATALOG
from croupier.games.virtues.events import ForkDealt, SpecialPlayed
from croupier.games.virtues.state import SCOUT
from croupier.games.virtues.views import describe

SEED = "5e" * 32


def dealt(state, seed: str = SEED):
    events = SPEC.redeal(state, Context(rng=FairRng(seed, "", 0)))
    for event in events:
        state = SPEC.evolve(state, event)
    return events, state


def hidden_action_cards(state) -> Counter:
    return Counter([*state.action_deck, *(c for p in state.players for c in p.hand)])


def a_game(**layout):
    """Seat 0's turn 1, with one card on Bannockburn and seat 1 one Location completed."""
    return game(cover(0, BANNOCKBURN, "valour", "act-va-co-2"), completed(1, "loc-culloden-moor"), **layout).state


def test_hands_and_the_action_deck_are_dealt_again_from_one_pool_keeping_their_sizes():
    state = a_game()
    events, fork = dealt(state)
    assert [type(e) for e in events] == [ForkDealt]
    assert [len(p.hand) for p in fork.players] == [len(p.hand) for p in state.players]
    assert len(fork.action_deck) == len(state.action_deck)
    # The same Action cards are hidden, only laid out otherwise.
    assert hidden_action_cards(fork) == hidden_action_cards(state)
    assert Counter(fork.location_deck) == Counter(state.location_deck)


def test_the_pool_is_every_action_card_of_the_game_not_in_view():
    """Played out from Start, the hands and the deck of a fork hold exactly the game's Action
    cards less those on Locations and in the discard pile (nothing in a box: all are in play)."""
    table = LocalTable(SPEC, "g", 3, {"special_cards": 4}, "07" * 32)
    table.join_all()
    _, fork = dealt(table.state.game)
    public = Counter([*fork.discard, *(c for p in fork.players for s in p.array for c in s.covers if c)])
    assert hidden_action_cards(fork) + public == Counter(CATALOG.action_deck(4))


def test_what_the_table_sees_does_not_change():
    state = a_game()
    _, fork = dealt(state)
    assert fork.discard == state.discard == DISCARD
    assert fork.display == state.display == DISPLAY
    assert [p.array for p in fork.players] == [p.array for p in state.players]
    assert fork.turn == state.turn and fork.config == state.config
    assert SPEC.view(fork, None) == SPEC.view(state, None)


def test_completion_piles_are_kept():
    state = a_game()
    _, fork = dealt(state)
    assert fork.players[1].completed == ("loc-culloden-moor",)
    assert "loc-culloden-moor" not in fork.location_deck


def test_the_deal_is_fixed_by_the_seed_and_blind_to_the_origins_layout():
    state = a_game()
    # The same hidden cards laid out otherwise: hands swapped, decks in another order.
    other = a_game(hands=(HAND1, HAND0), action_deck=tuple(reversed(ACTION_DECK)),
                   location_deck=tuple(reversed(LOCATION_DECK)))
    assert other != state
    assert dealt(other)[1] == dealt(state)[1]
    assert dealt(state, "11" * 32)[1] != dealt(state)[1]


def test_the_deal_moves_hidden_cards():
    state = a_game()
    hands = {tuple(p.hand for p in dealt(state, f"{n:02x}" * 32)[1].players) for n in range(8)}
    assert len(hands) > 1 and any(h != (HAND0, HAND1) for h in hands)


def test_the_seer_looks_at_the_new_top_cards_of_the_action_deck():
    scn = game(hands=((SEER, "act-va-st-1", "act-co-wi-1"), HAND1))
    scn.given(SpecialPlayed(seat=0, card=SEER, kind="scout"))
    assert scn.state.phase == SCOUT and scn.state.turn.peek == ACTION_DECK[:3]
    fork = dealt(scn.state)[1]
    assert fork.turn.peek == fork.action_deck[:3]
    assert sorted(a.card for a in SPEC.legal_actions(fork, 0)) == sorted(fork.action_deck[:3])
    # What seat 0 is shown is the new top, and the other seat still sees none of it.
    assert [c["id"] for c in SPEC.view(fork, 0)["looking_at"]] == list(fork.action_deck[:3])
    assert set(fork.action_deck[:3]) <= SPEC.hidden(fork, 1)


def test_the_survey_looks_at_the_new_top_cards_of_the_location_deck():
    scn = game(hands=((SURVEY, "act-va-st-1", "act-co-wi-1"), HAND1))
    scn.given(SpecialPlayed(seat=0, card=SURVEY, kind="survey"))
    seen = []
    for n in range(6):
        fork = dealt(scn.state, f"{n:02x}" * 32)[1]
        assert fork.turn.peek == fork.location_deck[:3]
        assert {a.take for a in SPEC.legal_actions(fork, 0) if a.TYPE == "ExchangeLocation"} == set(fork.location_deck[:3])
        seen.append(fork.location_deck)
    assert len(set(seen)) > 1


def test_describe_names_no_card():
    event, = dealt(a_game())[0]
    text = describe(event)
    assert "dealt again" in text
    names = {*CATALOG.actions, *CATALOG.locations, *(loc.name for loc in CATALOG.locations.values()),
             *(a.name for a in CATALOG.actions.values() if a.name)}
    assert not [n for n in names if n in text]


def test_a_fork_of_a_game_of_rules_version_1_deals_again():
    host = TableHost(SPEC)
    envs = host.for_version(1).create("old", 2, {}, "09" * 32, now=0, command_id="c")
    state = host.fold(envs)
    for seat in range(2):
        more = host.decide(state, JoinSeat(seat=seat, player=f"p{seat}", entropy="e"), now=0, command_id=f"j{seat}")
        envs += more
        state = host.fold(more, state)
    assert state.rules_version == 1 and state.game.phase != "setup"
    fork = host.fold(host.fork("f", envs, SEED, deal=DEAL_AGAIN))
    kept = host.fold(host.fork("k", envs, SEED, deal=DEAL_KEPT))
    assert fork.rules_version == 1 and SPEC.for_version(1).redeal is not None
    assert fork.game != kept.game
    assert hidden_action_cards(fork.game) == hidden_action_cards(kept.game)
    assert SPEC.view(fork.game, None) == SPEC.view(kept.game, None)
