"""A fork of delve deals its hidden cards again (rules.redeal, docs/games/delve.md "Forks: the
hidden cards dealt again"): each adventurer's hand and draw pile from their own cards, the
unseen encounters and markets of each tier (the box's among them), the market stock and the
loot deck; what everyone sees stays, and nothing of the origin's hidden layout survives."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from delve_helpers import F0, F1, F2, new, run, started, state_of, to_turn

from croupier.engine.contract import Context
from croupier.engine.rng import FairRng
from croupier.games.delve import SPEC, views
from croupier.games.delve import commands as C
from croupier.games.delve import events as E
from croupier.games.delve.cards import CONTENT
from croupier.games.delve.rules import ENC, redeal
from croupier.games.delve.state import Picker

SEEDS = [f"{n:02x}" * 32 for n in range(1, 13)]


def dealt(st, seed: str = SEEDS[0]):
    """(the deal's events, the fork's state) of `st` dealt again with this seed."""
    events = SPEC.redeal(st, Context(rng=FairRng(seed, "", 0), now=0))
    for e in events:
        st = SPEC.evolve(st, e)
    return events, st


def descended(seats: int = 1):
    """The party on floor 1, having left floor 0 with slots 3, 5 and 6 still face down."""
    revealed = (0, 1, 2, 6)  # the first row and the market (F1[6])
    return state_of(seats, [*started(seats), E.FloorDescended(floor=1, revealed=revealed, cards=tuple(F1[s] for s in revealed))])


def test_every_hand_and_draw_pile_is_dealt_again_from_its_own_adventurers_cards():
    st = new(3)
    changed = 0
    for seed in SEEDS:
        events, fork = dealt(st, seed)
        assert [type(e) for e in events] == [E.ForkDealt]
        for before, after in zip(st.players, fork.players):
            assert (len(after.hand), len(after.draw)) == (len(before.hand), len(before.draw))
            assert Counter(after.hand + after.draw) == Counter(before.hand + before.draw)  # never another seat's card
            assert after.discard == before.discard
        changed += any(a.hand != b.hand for a, b in zip(st.players, fork.players))
        # A spectator sees nothing change: counts, the floor's face-up cards, market, boss.
        assert views.view(fork, None) == views.view(st, None)
    assert changed >= len(SEEDS) - 1


def test_face_down_encounters_are_dealt_from_their_tier_with_the_cards_left_in_the_box():
    st = new(1)
    face_down = [s for s, up in enumerate(st.dungeon.face_up) if not up]
    assert face_down == [3, 5, 6]  # F0[4] is the market, dealt face up
    box = {t: set(CONTENT.tier_encounters[t]) - set(F0 + F1 + F2) for t in (1, 2, 3)}
    from_box = Counter()
    market_slots = set()
    for seed in SEEDS:
        _, fork = dealt(st, seed)
        floors = fork.dungeon.floors
        assert len({c for cards in floors for c in cards}) == sum(len(cards) for cards in floors)  # each card once
        for slot, card in enumerate(floors[0]):
            if slot in face_down:
                assert ENC[card].kind == "encounter" and ENC[card].tier == 1
                from_box[1] += card in box[1]
            else:
                assert card == F0[slot]  # seen: stays
        for index, cards in ((1, floors[1]), (2, floors[2])):  # the floors below: wholly unseen
            tier = CONTENT.floors[index].tier
            assert [ENC[c].tier for c in cards] == [tier] * len(cards)
            assert [c for c in cards if ENC[c].kind == "market"] == list(CONTENT.tier_markets[tier])
            from_box[tier] += sum(c in box[tier] for c in cards)
        market_slots.add(floors[1].index("enc:fungal-bazaar"))
    assert from_box[1] and from_box[2] and from_box[3], from_box
    assert len(market_slots) > 1  # where a floor below has its market is dealt again too


def test_the_deal_depends_on_the_public_position_only():
    st = new(2)
    p0 = st.players[0]
    box_card = sorted(set(CONTENT.tier_encounters[1]) - set(F0))[0]
    f0 = list(F0)
    f0[3] = box_card  # a face-down slot holding a card of the box instead
    f1 = list(F1)
    f1[0], f1[6] = f1[6], f1[0]  # the market elsewhere on a floor below
    other = replace(
        st,
        players=(replace(p0, hand=(p0.draw[0],) + p0.hand[1:], draw=(p0.hand[0],) + p0.draw[1:]),) + st.players[1:],
        dungeon=replace(st.dungeon, floors=(tuple(f0), tuple(f1), F2)),
        shop=replace(st.shop, stock=st.shop.stock[::-1], loot=st.shop.loot[::-1]),
    )
    assert views.view(other, None) == views.view(st, None)
    for seed in SEEDS[:4]:
        assert dealt(other, seed)[1] == dealt(st, seed)[1]


def test_the_deal_is_the_seeds_and_recorded_in_its_event():
    st = new(2)
    events, fork = dealt(st, SEEDS[0])
    assert dealt(st, SEEDS[0]) == (events, fork)
    assert dealt(st, SEEDS[1])[1] != fork
    (ev,) = events
    assert ev.hands == tuple(p.hand for p in fork.players) and ev.draws == tuple(p.draw for p in fork.players)
    assert (ev.stock, ev.loot, ev.floors) == (fork.shop.stock, fork.shop.loot, fork.dungeon.floors)
    assert Counter(ev.stock) == Counter(st.shop.stock) and Counter(ev.loot) == Counter(st.shop.loot)
    assert ev.stock != st.shop.stock and ev.loot != st.shop.loot


def test_the_unseen_cards_of_a_floor_left_behind_are_dealt_again_and_still_unseen():
    st = descended()
    assert st.unseen_below == (F0[3], F0[5], F0[6])
    moved = False
    for seed in SEEDS:
        _, fork = dealt(st, seed)
        left = fork.dungeon.floors[0]
        assert [left[s] for s in (0, 1, 2, 4)] == [F0[s] for s in (0, 1, 2, 4)]  # seen before the descent
        assert fork.unseen_below == (left[3], left[5], left[6])
        assert all(ENC[c].kind == "encounter" and ENC[c].tier == 1 for c in fork.unseen_below)
        assert not set(fork.unseen_below) & set(F0[:3])
        assert [fork.dungeon.floors[1][s] for s in (0, 1, 2, 6)] == [F1[s] for s in (0, 1, 2, 6)]
        moved |= fork.unseen_below != st.unseen_below
        assert views.hidden(fork, None) >= set(fork.unseen_below)
    assert moved


def test_cards_laid_on_the_table_stay_in_the_hand_that_laid_them():
    st = to_turn(new(2), 0)
    seat = st.facing.seat
    card = st.players[seat].hand[0]
    st, _ = run(st, C.CommitCard(seat=seat, card=card))
    for seed in SEEDS[:4]:
        _, fork = dealt(st, seed)
        assert card in fork.players[seat].hand and fork.facing.committed == (card,)
        assert views.view(fork, None) == views.view(st, None)


def test_a_pending_choice_keeps_its_count_and_names_newly_dealt_cards():
    st = new(1)
    st, _ = run(st, C.Vote(seat=0, slot=0))  # the encounter's draw: six cards, one over the limit
    assert st.picker is not None and st.picker.mode == "limit"
    st, _ = run(st, C.PickCard(seat=0, card=st.players[0].hand[0]))
    for seed in SEEDS[:6]:
        _, fork = dealt(st, seed)
        (card,) = fork.picker.chosen
        assert card in fork.players[0].hand
        after, _ = run(fork, C.ConfirmPick(seat=0))
        assert card in after.players[0].discard and card not in after.players[0].hand
        assert len(after.players[0].hand) == 5

    # A rescue chooses from the draw and discard piles: the discard pile is public and stays;
    # a chosen card of the draw pile becomes one of the new draw pile.
    st = new(2)
    p0 = st.players[0]
    st = replace(st, players=(replace(p0, hand=p0.hand[1:], discard=p0.hand[:1]),) + st.players[1:],
                 picker=Picker(seat=0, mode="rescue", need=2, chosen=(p0.draw[0], p0.hand[0]), target=1))
    for seed in SEEDS[:6]:
        _, fork = dealt(st, seed)
        assert fork.picker.chosen[0] == p0.hand[0] and fork.picker.chosen[1] in fork.players[0].draw
        assert views.view(fork, None) == views.view(st, None)


def test_the_words_for_the_deal_name_no_card():
    st = descended(2)
    (ev,) = dealt(st)[0]
    text = views.describe(ev)
    cards = {c for zone in (*ev.floors, *ev.hands, *ev.draws, ev.stock, ev.loot, ev.unseen_below) for c in zone}
    for card in cards:
        assert card not in text
        name = ENC[card].name if card in ENC else CONTENT.design(card).name
        assert name not in text


def test_a_fork_of_a_game_of_every_rules_version_deals_again():
    for version in range(1, SPEC.rules_version + 1):
        assert SPEC.for_version(version).redeal is redeal
    assert E.ForkDealt in SPEC.events


def test_a_game_not_started_has_nothing_to_deal():
    st = SPEC.initial_state(SPEC.parse_options(None), 2)
    assert dealt(st)[0] == []
