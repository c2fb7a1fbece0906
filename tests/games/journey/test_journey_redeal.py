"""A fork's new deal (GameSpec.redeal): the hearts and spades of the Journey, and the diamonds
and clubs of the Supply, the satchels and the caches, are dealt again with the fork's
randomness into the same places in the same numbers; the face-down Ruins among themselves.
What every traveller sees (the Witness's top card, the purse) and every public card stay."""

from __future__ import annotations

import collections
import dataclasses

from croupier.engine.codec import MessageCodec, canonical_json, loads
from croupier.engine.contract import Context, Start
from croupier.engine.local import LocalTable
from croupier.engine.table import DEAL_KEPT, TableHost
from croupier.engine.testing import fair_rng, scenario
from croupier.games.journey import SPEC
from croupier.games.journey import events as E
from croupier.games.journey.cards import DECK, SUIT
from croupier.games.journey.rules import cover_means, limit_of, redeal, room_used
from croupier.games.journey.state import replace
from croupier.games.journey.views import describe

ALL = {"allies": True, "return_journey": True, "companions": True}
SEEDS = [f"{n:02x}" * 32 for n in range(40)]


def dealt(state, seed="00" * 32):
    events = redeal(state, Context(rng=fair_rng(seed)))
    for event in events:
        state = SPEC.evolve(state, event)
    return state, events


def started(seats, options=None, seed="11" * 32):
    return scenario(SPEC, seats, options).when(Start(), rng=fair_rng(seed)).then_state()


def played(seats, steps, options=None, seed="11" * 32):
    """A game `steps` commands in, each seat taking its first legal action but MoveOn/Brace
    where it can forage or fight, so that satchels change and cards reach the discard."""
    state = started(seats, options, seed)
    for _ in range(steps):
        if SPEC.is_over(state):
            break
        seat = SPEC.to_act(state)[0]
        actions = SPEC.legal_actions(state, seat)
        preferred = [a for a in actions if a.TYPE in ("Forage", "Strike", "Cache", "Cover", "TakeBack")]
        action = (preferred or actions)[0]
        for event in SPEC.decide(action, state, Context(rng=fair_rng(seed))):
            state = SPEC.evolve(state, event)
    return state


def cards_of(state):
    """Every card of every zone, public or hidden."""
    zones = [state.journey, state.supply, state.discard, state.defeated, state.route, state.purse,
             [c for t in state.travellers for c in t.satchel], [c for _, _, c in state.caches],
             [c for _, c, _, _ in state.ruins], [state.current] if state.current else []]
    return collections.Counter(c for zone in zones for c in zone)


def test_a_dealt_fork_keeps_every_size_and_every_card_and_the_spectators_view():
    state = played(3, 30)
    assert sum(len(t.satchel) for t in state.travellers) >= 6 and state.discard
    fork, _ = dealt(state)
    assert fork != state
    assert SPEC.view(fork, None) == SPEC.view(state, None)
    assert SPEC.to_act(fork) == SPEC.to_act(state)
    assert cards_of(fork) == cards_of(state)
    assert len(fork.journey) == len(state.journey) and len(fork.supply) == len(state.supply)
    assert [len(t.satchel) for t in fork.travellers] == [len(t.satchel) for t in state.travellers]
    # Public cards do not move.
    assert (fork.discard, fork.defeated, fork.route, fork.current) == \
        (state.discard, state.defeated, state.route, state.current)


def test_the_kinds_stay_apart_hearts_and_spades_in_the_journey_diamonds_and_clubs_in_hand():
    state = played(2, 12)
    for seed in SEEDS[:10]:
        fork, _ = dealt(state, seed)
        assert sorted(fork.journey) == sorted(state.journey)
        assert all(SUIT[c] in "HS" for c in fork.journey)
        held = [c for t in fork.travellers for c in t.satchel] + list(fork.supply)
        assert all(SUIT[c] in "DC" for c in held)


def test_satchels_caches_and_the_supply_are_one_pool_between_travellers():
    given = [E.DecksShuffled(journey=("7S", "8S"), supply=("2C", "3C", "4C", "5C")),
             E.Foraged(seat=0, card="QD"), E.Foraged(seat=0, card="JD"), E.Foraged(seat=1, card="9C"),
             E.RefugeReached(card="9H", actions=9), E.RefugeTurnBegan(seat=0),
             E.Cached(seat=0, card="JD", place="9H")]
    state = scenario(SPEC, 2).given(*given).state
    seen = collections.defaultdict(set)
    for seed in SEEDS:
        fork, _ = dealt(state, seed)
        seen["satchel0"].update(fork.travellers[0].satchel)
        seen["satchel1"].update(fork.travellers[1].satchel)
        seen["cache"].add(fork.caches[0][2])
        assert fork.caches[0][:2] == ("9H", 0)  # the place and the owner are public
        assert len(fork.travellers[0].satchel) == 1 and len(fork.travellers[1].satchel) == 1
    pool = {"2C", "3C", "4C", "5C", "QD", "JD", "9C"}
    # Over 40 deals every card of the pool reached every hidden place at least once.
    assert seen["satchel0"] == seen["satchel1"] == seen["cache"] == pool


def test_alone_a_traveller_keeps_the_satchel_and_cache_they_see():
    given = [E.DecksShuffled(journey=("7S", "8S", "2H"), supply=("2C", "3C", "4C", "5C", "6D")),
             E.Foraged(seat=0, card="QD"), E.Foraged(seat=0, card="JD"), E.Foraged(seat=0, card="9C"),
             E.RefugeReached(card="9H", actions=9), E.RefugeTurnBegan(seat=0),
             E.Cached(seat=0, card="JD", place="9H")]
    state = scenario(SPEC, 1).given(*given).state
    for seed in SEEDS[:5]:
        fork, _ = dealt(state, seed)
        assert fork.travellers == state.travellers and fork.caches == state.caches
        assert sorted(fork.supply) == sorted(state.supply) and sorted(fork.journey) == sorted(state.journey)
    assert any(dealt(state, seed)[0].supply != state.supply for seed in SEEDS[:5])


def test_the_deal_is_the_same_for_a_seed_and_blind_to_where_the_origin_had_its_cards():
    state = played(2, 16)
    a, events = dealt(state, SEEDS[1])
    assert dealt(state, SEEDS[1]) == (a, events)
    assert dealt(state, SEEDS[2])[0] != a
    # The origin with two hidden cards exchanged (one in a satchel, one in the Supply; two
    # hearts of the Journey) is dealt into the very same game.
    t1 = state.travellers[1]
    mine, theirs = t1.satchel[0], state.supply[-1]
    swapped_t1 = dataclasses.replace(t1, satchel=(theirs,) + t1.satchel[1:])
    supply = state.supply[:-1] + (mine,)
    journey = tuple(reversed(state.journey))
    other = replace(state, travellers=(state.travellers[0], swapped_t1), supply=supply, journey=journey)
    assert other != state
    assert dealt(other, SEEDS[1])[0] == a


def test_a_satchel_fuller_than_the_limit_keeps_its_free_aces():
    """Seven cards at a limit of five: both A♣ and A♦ must be in it (they take no room), as
    everyone can tell from its count; the deal keeps every satchel within the limit."""
    satchel0 = ("AC", "AD", "2C", "3C", "4C", "5C", "6C")
    satchel1 = ("7C", "8C", "9C", "10C", "JC")
    given = [E.DecksShuffled(journey=("7S", "8S"), supply=("2D", "3D", "4D", "5D", "6D", "7D")),
             *[E.Foraged(seat=0, card=c) for c in satchel0], *[E.Foraged(seat=1, card=c) for c in satchel1],
             E.RefugeReached(card="9H", actions=9), E.RefugeTurnBegan(seat=0)]
    state = scenario(SPEC, 2).given(*given).state
    assert limit_of(state) == 5
    for seed in SEEDS:
        fork, _ = dealt(state, seed)
        assert {"AC", "AD"} <= set(fork.travellers[0].satchel)
        assert all(room_used(t.satchel) <= 5 for t in fork.travellers)


def test_a_traveller_covering_an_attack_can_still_cover_it_after_the_deal():
    """Mid-cover, the traveller struck was asked to cover because they could: the deal gives
    them a satchel that still can (here two cards worth 20: only tens and faces do)."""
    given = [E.DecksShuffled(journey=("8S",), supply=tuple(c for c in DECK.supply if c not in ("10D", "KD"))),
             E.Foraged(seat=0, card="10D"), E.Foraged(seat=0, card="KD"),
             E.Foraged(seat=1, card="2C"), E.Foraged(seat=1, card="3C"),
             E.AdversaryRevealed(card="AS", health=50, attack=20), E.RoundBegan(round=1),
             E.CounterStruck(attack=20), E.CoverDemanded(seat=0, due=20, reason="counter")]
    state = scenario(SPEC, 2).given(*given).state
    assert state.step == "cover" and cover_means(state, 0) == 20
    hands = set()
    for seed in SEEDS:
        fork, _ = dealt(state, seed)
        assert cover_means(fork, 0) >= fork.due - fork.paid
        assert SPEC.legal_actions(fork, 0)
        hands.add(fork.travellers[0].satchel)
    assert len(hands) > 5  # a random covering hand, not always the origin's or the best


def test_the_witness_top_card_and_the_purse_stay_the_journey_below_is_dealt():
    given = [E.CompanionJoined(card="KH"), E.DecksShuffled(journey=("7S", "3H", "4H", "5S"), supply=("2C", "3C")),
             E.RefugeReached(card="9H", actions=9), E.RefugeTurnBegan(seat=0)]
    state = scenario(SPEC, 2, {"companions": True}).given(*given).state
    below = set()
    for seed in SEEDS[:12]:
        fork, _ = dealt(state, seed)
        assert fork.journey[0] == "7S" and SPEC.view(fork, 1)["witnessed"] == "7S"
        below.add(fork.journey[1:])
    assert len(below) > 1


def test_on_the_way_home_the_face_down_ruins_are_dealt_among_themselves_and_the_joker_stays_in_the_supply():
    given = [E.DecksShuffled(journey=(), supply=()),
             *[e for h, p in (("5H", "Woking"), ("6H", "Horsell"), ("7H", "Ottershaw"))
               for e in (E.RefugeReached(card=h, actions=0), E.RefugeEnded(card=h, place=p))],
             E.DestinationReached(card="AH"),
             E.ReturnBegan(removed=(), supply=("4C", "JOKER", "9D")), E.PurseFormed(purse=("9C", "2C"), walkers=(0, 1)),
             E.RuinsSeeded(ruins=(("7H", "KS"), ("6H", "QS"), ("5H", "2S"))), E.StopReached(place="7H"),
             E.RuinRevealed(place="7H", card="KS")]
    state = scenario(SPEC, 2, {"return_journey": True}).given(*given).state
    places = collections.defaultdict(set)
    for seed in SEEDS[:20]:
        fork, _ = dealt(state, seed)
        assert fork.ruins[0] == ("7H", "KS", True, False)  # turned face up: it stays
        assert sorted(c for _, c, _, _ in fork.ruins[1:]) == ["2S", "QS"]
        assert fork.purse == state.purse and "JOKER" in fork.supply and sorted(fork.supply) == sorted(state.supply)
        for place, card, _, _ in fork.ruins[1:]:
            places[place].add(card)
        assert SPEC.view(fork, None) == SPEC.view(state, None)
    assert places["6H"] == places["5H"] == {"2S", "QS"}


def test_the_replay_words_name_no_card_and_the_event_travels_on_the_wire():
    state = played(3, 24)
    _, events = dealt(state)
    assert len(events) == 1 and isinstance(events[0], E.ForkDealt)
    event = events[0]
    words = describe(event)
    assert words == "The fork's hidden cards are dealt again."
    for card in DECK.cards:
        assert card not in words
    assert E.ForkDealt in SPEC.events
    codec = MessageCodec(SPEC.events)
    assert codec.decode(loads(canonical_json(codec.encode(event)))) == event


def test_a_fork_of_a_played_table_deals_again_and_one_of_a_version_1_game_too():
    assert SPEC.for_version(1).redeal is not None and SPEC.for_version(2).redeal is not None
    table = LocalTable(SPEC, "origin", 2, None, "33" * 32)
    table.join_all()
    for step in range(10):
        seat = SPEC.to_act(table.state.game)[0]
        table.handle(SPEC.legal_actions(table.state.game, seat)[-1], now=1000 * (step + 1))
    host = TableHost(SPEC)
    envs = host.fork("fork", list(table.envelopes), "44" * 32, now=20_000)
    assert [env.type for env in envs] == ["TableCreated", "TableForked", "ForkDealt"]
    kept = host.fold(host.fork("kept", list(table.envelopes), "44" * 32, now=20_000, deal=DEAL_KEPT))
    fork = host.fold(envs)
    assert SPEC.view(fork.game, None) == SPEC.view(kept.game, None)
    assert fork.game.journey != kept.game.journey
