"""A fork's new deal (GameSpec.redeal): the hands, the supply and the cards back in the box are
one pool, dealt again with the fork's randomness into the same places in the same numbers;
the discard piles, the cards laid on paths, the tiles and the figures stay."""

from __future__ import annotations

import collections

from expeditions_helpers import fold, on_path, position

from croupier.engine.contract import Context, Start
from croupier.engine.testing import fair_rng, scenario
from croupier.games.expeditions import SPEC
from croupier.games.expeditions.cards import CONTENT
from croupier.games.expeditions.events import CardDiscarded, ForkDealt
from croupier.games.expeditions.rules import redeal
from croupier.games.expeditions.views import describe, hidden, view

H0 = ["red-3-a", "red-5-a", "red-5-b", "red-8-a", "blue-2-a", "blue-6-a", "green-1-a", "white-9-a"]
H1 = ["yellow-0-a", "yellow-4-a", "yellow-7-a", "blue-3-a", "blue-4-b", "green-2-a", "green-10-a", "white-1-a"]
SUPPLY = ("white-0-a", "white-1-b", "green-3-a", "green-3-b", "red-10-a")
BOX = ("yellow-9-a", "yellow-9-b", "blue-10-a")


def _dealt(state, seed="00" * 32):
    events = redeal(state, Context(rng=fair_rng(seed)))
    return fold(state, events), events


def _game_in_play(seats: int, seed: str = "11" * 32):
    """A dealt game a few turns in: each seat in turn begins a path (even turns) or discards
    (odd turns) with a card of its hand, then draws from the supply."""
    state = scenario(SPEC, seats).when(Start(), rng=fair_rng(seed)).then_state()
    turns = 0
    while turns < 2 * seats:
        actions = SPEC.legal_actions(state, state.current)
        wanted = {"play": "BeginPath" if turns % 2 == 0 else "DiscardCard", "move": "SkipMove"}.get(
            state.phase, "DrawFromSupply")
        command = next(a for a in actions if a.TYPE == wanted)
        turns += wanted == "DrawFromSupply"
        state = fold(state, SPEC.decide(command, state, Context(rng=fair_rng(seed))))
    assert any(state.discards) and any(pl.piles[p] for pl in state.players for p in range(len(pl.piles)))
    return state


def _pool(state):
    return collections.Counter([c for pl in state.players for c in pl.hand] + list(state.supply) + list(state.removed))


def test_the_deal_keeps_every_size_and_deals_only_the_hidden_pool():
    for seats in (2, 3, 4):
        origin = _game_in_play(seats)
        fork, events = _dealt(origin)
        assert [type(e) for e in events] == [ForkDealt]
        assert [len(pl.hand) for pl in fork.players] == [len(pl.hand) for pl in origin.players]
        assert len(fork.supply) == len(origin.supply) and len(fork.removed) == len(origin.removed)
        # The same cards, only laid out otherwise; no card of a discard pile or a path comes in.
        assert _pool(fork) == _pool(origin)
        assert fork.players != origin.players or fork.supply != origin.supply
        assert fork.discards == origin.discards
        assert [pl.piles for pl in fork.players] == [pl.piles for pl in origin.players]
        assert (fork.tiles, fork.current, fork.phase) == (origin.tiles, origin.current, origin.phase)
        # Still the 110 cards of the game, each once.
        every = _pool(fork) + collections.Counter(
            [c for pile in fork.discards for c in pile] + [c for pl in fork.players for pile in pl.piles for c in pile])
        assert every == collections.Counter(CONTENT.cards)
        assert view(fork, None) == view(origin, None)


def test_the_cards_in_the_box_are_part_of_the_pool():
    origin = position(2, [H0, H1], supply=SUPPLY, removed=BOX).state
    reached = set()
    for n in range(12):
        fork, _ = _dealt(origin, f"{n:02x}" * 32)
        in_play = {c for pl in fork.players for c in pl.hand} | set(fork.supply)
        reached |= in_play & set(BOX)
        assert len(fork.removed) == len(BOX)
    # Every boxed card was dealt into a hand or the supply by one of these seeds.
    assert reached == set(BOX)


def test_the_deal_is_blind_to_where_the_origin_had_its_hidden_cards():
    a = position(2, [H0, H1], supply=SUPPLY, removed=BOX).state
    # The same public position, the hidden cards laid out otherwise (hands, supply and box mixed).
    mixed = sorted(H0 + H1 + list(SUPPLY) + list(BOX), reverse=True)
    b = position(2, [mixed[:8], mixed[8:16]], supply=tuple(mixed[16:21]), removed=tuple(mixed[21:])).state
    assert view(a, None) == view(b, None) and a != b
    assert _dealt(a, "5a" * 32) == _dealt(b, "5a" * 32)


def test_the_deal_follows_the_seed_and_only_the_seed():
    origin = _game_in_play(2)
    assert _dealt(origin, "01" * 32) == _dealt(origin, "01" * 32)
    assert _dealt(origin, "01" * 32)[1] != _dealt(origin, "02" * 32)[1]


def test_discards_under_the_top_and_the_turns_discard_stay():
    sc = position(2, [H0, H1], *on_path(0, "red-3-a", 1), CardDiscarded(seat=1, card="blue-3-a"),
                  supply=SUPPLY, removed=BOX)
    origin = fold(sc.state, [CardDiscarded(seat=0, card="blue-6-a")])
    fork, _ = _dealt(origin)
    assert fork.discards[CONTENT.colors.index("blue")] == ("blue-3-a", "blue-6-a")
    assert fork.turn_discard == "blue-6-a"
    assert "blue-3-a" not in _pool(fork) and "red-3-a" not in _pool(fork)
    assert view(fork, None) == view(origin, None)


def test_each_seat_plays_the_fork_from_its_new_hand():
    origin = position(2, [H0, H1], supply=SUPPLY, removed=BOX).state
    fork, _ = _dealt(origin, "33" * 32)
    assert fork.players[0].hand != origin.players[0].hand
    cards = {a.card for a in SPEC.legal_actions(fork, 0) if a.TYPE == "DiscardCard"}
    assert cards == set(fork.players[0].hand)
    assert set(fork.players[1].hand) <= hidden(fork, 0) and not set(fork.players[0].hand) & hidden(fork, 0)


def test_describe_names_no_card_of_the_deal():
    origin = position(2, [H0, H1], supply=SUPPLY, removed=BOX).state
    _, (event,) = _dealt(origin)
    text = describe(event)
    assert "dealt again" in text
    assert not any(card in text for card in CONTENT.cards)


def test_every_rules_version_deals_a_fork_again():
    assert SPEC.redeal is redeal
    assert all(spec.redeal is redeal for spec in SPEC.previous.values())


def test_nothing_is_dealt_before_the_first_deal():
    state = scenario(SPEC, 2).state
    assert redeal(state, Context(rng=fair_rng())) == []
