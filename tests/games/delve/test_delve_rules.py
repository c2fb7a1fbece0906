"""Every rule of the delve text, as given / when / then on events."""

from __future__ import annotations

from dataclasses import replace

from delve_helpers import (
    BOSS,
    F0,
    F1,
    F2,
    LOOT,
    at_boss,
    deck,
    facing,
    floor0,
    market_first,
    new,
    of_type,
    run,
    started,
    state_of,
)

from croupier.engine.contract import Start
from croupier.engine.testing import fair_rng, scenario
from croupier.games.delve import SPEC, views
from croupier.games.delve import commands as C
from croupier.games.delve import events as E
from croupier.games.delve.cards import CONTENT
from croupier.games.delve.rules import ROUND_CAP
from croupier.games.delve.state import DESCEND

HAND0 = ("punch.s0.1", "punch.s0.2", "sidestep.s0.1", "sidestep.s0.2", "prayer.s0.1")


def after_vote(cleared=(0,), options=(1, 2)):
    return [E.TurnEnded(seat=0), E.RoundEnded(cleared=cleared, revealed=(), cards=(), floor_done=False, floor_clear=False),
            E.VoteOpened(session=2, options=options, deadline=None)]


# --- the deal -------------------------------------------------------------------------------


def test_start_deals_floors_by_tier_markets_face_up_five_cards_each_and_aat_boss():
    events = scenario(SPEC, 3).when(Start(), rng=fair_rng()).events
    start = events[0]
    assert isinstance(start, E.ExpeditionStarted)
    for floor, cards in zip(CONTENT.floors, start.floors):
        assert len(cards) == floor.size
        kinds = [CONTENT.encounters[c] for c in cards]
        assert sum(e.kind == "market" for e in kinds) == floor.markets
        assert all(e.tier == floor.tier for e in kinds)
    assert len(start.market) == 5 and len(start.market) + len(start.stock) == len(CONTENT.market_cards)
    assert sorted(start.loot) == sorted(CONTENT.loot_cards)
    assert start.boss in CONTENT.bosses and start.boss_hp == CONTENT.encounters[start.boss].hp[2]
    assert [sorted(d) for d in start.decks] == [sorted(deck(s)) for s in range(3)]
    drawn = of_type(events, E.CardsDrawn)
    assert [(d.seat, d.cards) for d in drawn] == [(s, start.decks[s][:5]) for s in range(3)]
    st = state_of(3, events)
    assert [len(p.hand) for p in st.players] == [5, 5, 5] and all(p.health == 9 for p in st.players)
    market_slots = [s for s, c in enumerate(start.floors[0]) if CONTENT.encounters[c].kind == "market"]
    assert all(st.dungeon.face_up[s] for s in market_slots)
    assert [st.dungeon.face_up[s] for s in range(3)] == [True, True, True]


# --- hand and draw ---------------------------------------------------------------------------


def test_each_normal_encounter_draws_one_card_and_the_excess_is_chosen_and_confirmed():
    st = new(2)
    st, _ = run(st, C.Vote(seat=0, slot=1))
    st, events = run(st, C.Vote(seat=1, slot=1))
    assert events[-4:] == [
        E.EncounterStarted(slot=1, card=F0[1], order=(0, 1)),
        E.CardsDrawn(seat=0, cards=("prayer.s0.2",)),
        E.CardsDrawn(seat=1, cards=("prayer.s1.2",)),
        E.ChoiceOpened(seat=0, mode="limit", count=1, target=-1),
    ]
    st, ev = run(st, C.PickCard(seat=0, card="punch.s0.1"))
    assert ev == [E.CardPicked(seat=0, card="punch.s0.1")]
    st, ev = run(st, C.PickCard(seat=0, card="punch.s0.1"))
    assert ev == [E.CardUnpicked(seat=0, card="punch.s0.1")]
    st, _ = run(st, C.PickCard(seat=0, card="sidestep.s0.2"))
    scenario(SPEC, 2).given_state(st).when(C.ConfirmPick(seat=0)).then(
        E.ChoiceConfirmed(seat=0, mode="limit", cards=("sidestep.s0.2",)),
        E.ChoiceOpened(seat=1, mode="limit", count=1, target=-1),
    )


def test_unused_cards_stay_in_hand_between_encounters():
    st = facing()
    st, _ = run(st, C.RollDice(seat=0, skill="strength"), outcomes=[1])
    assert st.players[0].hand == HAND0


def test_an_empty_draw_pile_reshuffles_the_discard_pile_and_the_shuffle_is_recorded():
    six = deck(0)[:6]  # the draw pile holds one card after the opening hand
    st = facing(decks=[six])  # that card was drawn and discarded at the hand limit
    st, _ = run(st, C.CommitCard(seat=0, card="punch.s0.1"))
    st, _ = run(st, C.RollDice(seat=0, skill="strength"), outcomes=[1])
    assert st.players[0].draw == () and st.players[0].discard == ("prayer.s0.2", "punch.s0.1")
    events = scenario(SPEC, 1).given_state(st).when(C.Vote(seat=0, slot=1), outcomes=[[1, 0]]).events
    assert events[3:5] == [
        E.DeckReshuffled(seat=0, order=("punch.s0.1", "prayer.s0.2")),
        E.CardsDrawn(seat=0, cards=("punch.s0.1",)),
    ]


# --- skills and dice ---------------------------------------------------------------------------


def test_high_array_rolls_the_middle_die_under_a_base_range_of_three():
    scenario(SPEC, 1).given_state(facing()).when(C.RollDice(seat=0, skill="strength"), outcomes=[3]).then(
        E.DiceRolled(seat=0, skill="strength", dice=(6, 8, 10), mode="normal", die=8, target=3, roll=3,
                     success=True, cards=(), support=()),
        E.CoinsGained(seat=0, amount=2),
        *after_vote(),
    )


def test_each_matching_skill_icon_widens_the_success_range_by_one():
    st = facing()
    st, _ = run(st, C.CommitCard(seat=0, card="punch.s0.1"))
    st, _ = run(st, C.CommitCard(seat=0, card="punch.s0.2"))
    st, _ = run(st, C.CommitCard(seat=0, card="prayer.s0.1"))  # no strength icon: no help
    events = scenario(SPEC, 1).given_state(st).when(C.RollDice(seat=0, skill="strength"), outcomes=[6]).events
    assert events[0] == E.DiceRolled(seat=0, skill="strength", dice=(6, 8, 10), mode="normal", die=8, target=5,
                                     roll=6, success=False, cards=("punch.s0.1", "punch.s0.2", "prayer.s0.1"),
                                     support=())
    assert events[1] == E.DamageTaken(seat=0, amount=1, health=8)


def test_low_array_has_a_base_range_of_one():
    st = facing(floors=(floor0(s0="enc:haunted-library"), F1, F2))
    st, _ = run(st, C.CommitCard(seat=0, card="prayer.s0.1"))
    events = scenario(SPEC, 1).given_state(st).when(C.RollDice(seat=0, skill="radiant"), outcomes=[3]).events
    assert events[0].dice == (4, 6, 8) and (events[0].mode, events[0].die, events[0].target) == ("normal", 6, 2)
    assert events[0].success is False


def test_advantage_rolls_the_smallest_die():
    events = scenario(SPEC, 1).given_state(facing()).when(C.RollDice(seat=0, skill="finesse"), outcomes=[4]).events
    assert (events[0].mode, events[0].die, events[0].target, events[0].success) == ("advantage", 6, 3, False)


def test_disadvantage_rolls_the_largest_die():
    st = facing(floors=(floor0(s0="enc:cave-spiders"), F1, F2))
    events = scenario(SPEC, 1).given_state(st).when(C.RollDice(seat=0, skill="finesse"), outcomes=[10]).events
    assert (events[0].mode, events[0].die) == ("disadvantage", 10)


def test_an_advantage_card_cancels_the_encounters_disadvantage():
    hand = ("lucky-coin.1", *deck(0)[1:])
    st = facing(floors=(floor0(s0="enc:cave-spiders"), F1, F2), decks=[hand])
    st, _ = run(st, C.CommitCard(seat=0, card="lucky-coin.1"))
    events = scenario(SPEC, 1).given_state(st).when(C.RollDice(seat=0, skill="finesse"), outcomes=[2]).events
    assert (events[0].mode, events[0].die, events[0].target) == ("normal", 8, 3)


def test_the_roll_button_shows_the_final_die_and_survival_range():
    st = facing()
    st, _ = run(st, C.CommitCard(seat=0, card="sidestep.s0.1"))
    preview = SPEC.view(st, 0)["facing"]["preview"]
    assert preview["finesse"] == ["advantage", 6, 4]
    assert preview["strength"] == ["normal", 8, 3]


def test_each_skill_has_its_own_reward_heal_is_capped_at_nine():
    st = facing(events=[E.DamageTaken(seat=0, amount=2, health=7)])
    events = scenario(SPEC, 1).given_state(st).when(C.RollDice(seat=0, skill="radiant"), outcomes=[1]).events
    assert events[1] == E.HealthRestored(seat=0, amount=1, health=8, reason="reward")
    full = facing()
    events = scenario(SPEC, 1).given_state(full).when(C.RollDice(seat=0, skill="radiant"), outcomes=[1]).events
    assert not of_type(events, E.HealthRestored)


def test_a_card_reward_takes_the_top_loot_card_into_the_discard_pile():
    st = facing(slot=1)  # Giant Rats: finesse gives a card
    st, events = run(st, C.RollDice(seat=0, skill="finesse"), outcomes=[1])
    assert events[1] == E.LootGained(seat=0, cards=(LOOT[0],))
    assert LOOT[0] in st.players[0].discard and st.shop.loot == LOOT[1:]


def test_knowledge_reveals_a_covered_encounter_without_uncovering_it():
    st, events = run(facing(), C.RollDice(seat=0, skill="finesse"), outcomes=[1])
    assert events[1] == E.EncountersRevealed(seat=0, slots=(3,), cards=(F0[3],))
    floor = SPEC.view(st, 0)["floor"]
    assert floor["cards"][3] == F0[3] and 3 not in floor["selectable"]
    assert st.ballot.options == (1, 2)


def test_failed_roll_applies_the_displayed_penalty():
    st, events = run(facing(), C.RollDice(seat=0, skill="arcane"), outcomes=[4])
    assert events[:2] == [
        E.DiceRolled(seat=0, skill="arcane", dice=(6, 8, 10), mode="normal", die=8, target=3, roll=4, success=False,
                     cards=(), support=()),
        E.DamageTaken(seat=0, amount=1, health=8),
    ]
    assert st.players[0].hand == HAND0  # damage takes no cards


# --- discard and destroy ---------------------------------------------------------------------------


def test_played_cards_are_discarded_and_one_use_cards_destroyed():
    hand = ("fire-scroll.1", *deck(0)[1:])
    st = facing(decks=[hand])
    st, _ = run(st, C.CommitCard(seat=0, card="fire-scroll.1"))
    st, _ = run(st, C.CommitCard(seat=0, card="punch.s0.2"))
    st, _ = run(st, C.RollDice(seat=0, skill="arcane"), outcomes=[1])
    p = st.players[0]
    assert "punch.s0.2" in p.discard and "fire-scroll.1" not in p.discard + p.hand + p.draw
    assert p.destroyed == 1


def test_a_discard_penalty_is_chosen_and_confirmed():
    st = facing(floors=(floor0(s0="enc:giant-rats"), F1, F2))
    st, events = run(st, C.RollDice(seat=0, skill="arcane"), outcomes=[8])
    assert events[1:] == [E.DamageTaken(seat=0, amount=1, health=8),
                          E.ChoiceOpened(seat=0, mode="discard", count=1, target=-1)]
    st, _ = run(st, C.PickCard(seat=0, card="punch.s0.2"))
    events = scenario(SPEC, 1).given_state(st).when(C.ConfirmPick(seat=0)).events
    assert events[:2] == [E.ChoiceConfirmed(seat=0, mode="discard", cards=("punch.s0.2",)), E.TurnEnded(seat=0)]


def test_a_penalty_asking_for_more_cards_than_the_hand_holds_takes_them_all():
    st = facing(floors=(floor0(s0="enc:kobold-trapper"), F1, F2))  # penalty: discard 2
    for card in HAND0[:4]:
        st, _ = run(st, C.CommitCard(seat=0, card=card))
    st, events = run(st, C.RollDice(seat=0, skill="arcane"), outcomes=[8])
    assert events[1:] == [E.ChoiceOpened(seat=0, mode="discard", count=1, target=-1)]


def test_a_destroy_penalty_removes_the_chosen_card_for_good():
    st = facing(floors=(floor0(s0="enc:gelatinous-cube"), F1, F2))
    st, events = run(st, C.AcceptPenalty(seat=0))
    assert events == [E.PenaltyAccepted(seat=0), E.DamageTaken(seat=0, amount=1, health=8),
                      E.ChoiceOpened(seat=0, mode="destroy", count=1, target=-1)]
    st, _ = run(st, C.PickCard(seat=0, card="prayer.s0.1"))
    st, events = run(st, C.ConfirmPick(seat=0))
    assert events[0] == E.ChoiceConfirmed(seat=0, mode="destroy", cards=("prayer.s0.1",))
    p = st.players[0]
    assert "prayer.s0.1" not in p.hand + p.draw + p.discard and p.destroyed == 1


def test_a_destruction_hazard_destroys_the_top_card_of_the_draw_pile():
    st = facing(floors=(floor0(s0="enc:collapsed-hall"), F1, F2))
    st, events = run(st, C.AcceptPenalty(seat=0))
    assert events[:3] == [E.PenaltyAccepted(seat=0), E.DamageTaken(seat=0, amount=1, health=8),
                          E.CardsDestroyed(seat=0, cards=("spark.s0.1",))]
    assert st.players[0].draw == ("spark.s0.2",)


def test_the_diamond_destroys_itself_and_shuffles_two_random_loot_cards_into_the_draw_pile():
    hand = ("diamond.1", *deck(0)[1:])
    st = facing(decks=[hand])
    st, _ = run(st, C.CommitCard(seat=0, card="diamond.1"))
    # outcomes: the roll, then the shuffle of the draw pile (spark 1, spark 2) with the loot.
    st2, events = run(st, C.RollDice(seat=0, skill="arcane"), outcomes=[4, [3, 0, 2, 1]])
    assert events[0].target == 4 and events[0].success  # the Diamond matches any skill
    assert events[1] == E.DiamondCut(seat=0, card="diamond.1", loot=LOOT[:2],
                                     order=(LOOT[1], "spark.s0.1", LOOT[0], "spark.s0.2"))
    p = st2.players[0]
    assert "diamond.1" not in p.hand + p.draw + p.discard and p.draw == events[1].order
    assert st2.shop.loot == LOOT[2:]
    # The words for it (the replay's move list, which other seats and spectators read) do
    # not say which rewards went face down into the draw pile.
    words = SPEC.describe(events[1])
    assert "2 reward cards" in words
    assert not any(views._name(card) in words for card in events[1].loot)


def test_a_diamond_reward_finds_the_one_diamond_and_later_ones_pay_coins():
    st = facing(floors=(floor0(s0="enc:cursed-altar"), F1, F2))
    st, events = run(st, C.RollDice(seat=0, skill="arcane"), outcomes=[1])
    assert events[1] == E.DiamondFound(seat=0, card="diamond.1")
    assert "diamond.1" in st.players[0].discard
    again = facing(floors=(floor0(s0="enc:cursed-altar"), F1, F2), events=[E.DiamondFound(seat=0, card="diamond.1")])
    events = scenario(SPEC, 1).given_state(again).when(C.RollDice(seat=0, skill="arcane"), outcomes=[1]).events
    assert events[1] == E.CoinsGained(seat=0, amount=2)


# --- switching, the penalty, bribes -------------------------------------------------------------------


def test_switching_reveals_a_face_down_encounter_to_face_and_the_left_one_stays():
    st = facing()
    st, events = run(st, C.SwitchEncounter(seat=0, slot=3))
    assert events == [E.EncounterSwitched(seat=0, slot=3, card=F0[3])]
    assert st.facing.card == F0[3]
    # Its failure penalty can still be accepted; the left encounter (slot 0) stays on the floor.
    scenario(SPEC, 1).given_state(st).when(C.AcceptPenalty(seat=0)).then(
        E.PenaltyAccepted(seat=0),
        E.DamageTaken(seat=0, amount=1, health=8),
        E.TurnEnded(seat=0),
        E.RoundEnded(cleared=(3,), revealed=(5,), cards=(F0[5],), floor_done=False, floor_clear=False),
        E.VoteOpened(session=2, options=(0, 1, 2, 5), deadline=None),
    )


def test_a_switch_may_not_land_on_the_final_row():
    st = facing()
    refused = scenario(SPEC, 1).given_state(st).when(C.SwitchEncounter(seat=0, slot=5)).rejects("final_row")
    assert "route" in refused.message
    assert all(not (type(a) is C.SwitchEncounter and a.slot in (5, 6)) for a in SPEC.legal_actions(st, 0))
    # Version 2 allowed it (a floor skipped for one penalty).
    _, events = run(replace(st, rules=2), C.SwitchEncounter(seat=0, slot=5))
    assert events == [E.EncounterSwitched(seat=0, slot=5, card=F0[5])]


def test_accepting_the_penalty_instead_of_rolling():
    scenario(SPEC, 1).given_state(facing()).when(C.AcceptPenalty(seat=0)).then(
        E.PenaltyAccepted(seat=0), E.DamageTaken(seat=0, amount=1, health=8), *after_vote(),
    )


def test_a_bribe_buys_safe_passage_with_no_reward():
    st = facing(events=[E.CoinsGained(seat=0, amount=3)])
    st2, events = run(st, C.PayBribe(seat=0))
    assert events == [E.BribePaid(seat=0, coins=2), *after_vote()]
    assert st2.players[0].coins == 1 and st2.players[0].health == 9


# --- extra encounters --------------------------------------------------------------------------------


def test_a_mimic_follows_a_failed_treasure_chest_without_a_new_draw():
    st = facing(slot=2)
    st, events = run(st, C.RollDice(seat=0, skill="strength"), outcomes=[8])
    assert events[1:] == [E.DamageTaken(seat=0, amount=1, health=8),
                          E.ExtraEncounterStarted(seat=0, card="enc:mimic")]
    st, events = run(st, C.AcceptPenalty(seat=0))
    assert not of_type(events, E.CardsDrawn)
    assert events[:4] == [E.PenaltyAccepted(seat=0), E.DamageTaken(seat=0, amount=2, health=6),
                          E.TurnEnded(seat=0),
                          # slot 4, now uncovered, holds the market: face up from the start
                          E.RoundEnded(cleared=(2,), revealed=(), cards=(), floor_done=False, floor_clear=False)]


def test_a_repeat_door_follows_a_successful_rusted_door():
    st = facing(floors=(floor0(s0="enc:rusted-door"), F1, F2))
    st, events = run(st, C.RollDice(seat=0, skill="strength"), outcomes=[1])
    assert events == [events[0], E.CoinsGained(seat=0, amount=1), E.ExtraEncounterStarted(seat=0, card="enc:inner-door")]
    assert st.facing.extra and st.facing.card == "enc:inner-door"


# --- markets --------------------------------------------------------------------------------------------


def test_a_market_card_on_the_floor_is_dealt_face_up():
    st = new(1)
    assert SPEC.view(st, None)["floor"]["cards"][4] == "enc:wandering-merchant"
    assert 4 not in SPEC.view(st, None)["floor"]["selectable"]


def test_a_market_visit_buys_into_the_discard_pile_and_refills_from_the_shared_stock():
    st = market_first(coins=5)
    st, events = run(st, C.Vote(seat=0, slot=0))
    assert events[2:] == [E.MarketOpened(kind="floor", slot=0, order=(0,)), E.VisitStarted(seat=0)]
    st, events = run(st, C.BuyCard(seat=0, card="iron-sword.1"))
    assert events == [E.CardBought(seat=0, card="iron-sword.1", cost=3, refill="spellbook.1")]
    assert st.shop.market[0] == "spellbook.1" and st.players[0].discard == ("iron-sword.1",)
    assert st.players[0].coins == 2
    scenario(SPEC, 1).given_state(st).when(C.LeaveMarket(seat=0)).then(
        E.VisitEnded(seat=0), E.MarketClosed(kind="floor"),
        E.RoundEnded(cleared=(0,), revealed=(), cards=(), floor_done=False, floor_clear=False),
        E.VoteOpened(session=2, options=(1, 2), deadline=None),
    )


def test_resting_heals_two_at_most_up_to_nine():
    st = market_first()
    st = SPEC.evolve(st, E.DamageTaken(seat=0, amount=3, health=6))
    st, _ = run(st, C.Vote(seat=0, slot=0))
    rested, events = run(st, C.Rest(seat=0))
    assert events == [E.Rested(seat=0, amount=2, health=8)] and rested.players[0].health == 8
    st = SPEC.evolve(st, E.HealthRestored(seat=0, amount=2, health=8, reason="reward"))
    assert run(st, C.Rest(seat=0))[1] == [E.Rested(seat=0, amount=1, health=9)]


def test_selling_a_non_basic_card_from_the_draw_pile_pays_its_value():
    cards = (*deck(0)[:5], "war-hammer.1", *deck(0)[5:])
    st = state_of(1, [*started(1, decks=[cards], floors=(floor0(s0="enc:wandering-merchant"), F1, F2)),
                      E.VoteOpened(session=1, options=(0, 1, 2), deadline=None)])
    st, _ = run(st, C.Vote(seat=0, slot=0))
    assert "war-hammer.1" in st.players[0].draw
    st, events = run(st, C.SellCard(seat=0, card="war-hammer.1"))
    assert events == [E.CardSold(seat=0, card="war-hammer.1", value=2)]
    assert "war-hammer.1" not in st.players[0].draw and st.players[0].coins == 2


def test_each_adventurer_finishes_their_visit_before_the_next_one_starts():
    st = market_first(seats=2)
    st, _ = run(st, C.Vote(seat=0, slot=0))
    st, events = run(st, C.Vote(seat=1, slot=0))
    assert events[-2:] == [E.MarketOpened(kind="floor", slot=0, order=(0, 1)), E.VisitStarted(seat=0)]
    assert SPEC.to_act(st) == (0,)
    st, events = run(st, C.LeaveMarket(seat=0))
    assert events == [E.VisitEnded(seat=0), E.VisitStarted(seat=1)]


def _before_last_of_floor(floor_index, cleared, slot, floors=(F0, F1, F2), seats=1):
    cards = floors[floor_index]
    pre = [*started(seats, floors=floors)]
    if floor_index:
        pre.append(E.FloorDescended(floor=floor_index, revealed=(0, 1, 2), cards=cards[:3]))
    pre += [
        E.RoundEnded(cleared=cleared, revealed=(slot,), cards=(cards[slot],), floor_done=False, floor_clear=False),
        E.RouteChosen(slot=slot, card=cards[slot], votes=(), tied=(), how="only"),
        E.EncounterStarted(slot=slot, card=cards[slot], order=tuple(range(seats))),
        *[E.TurnStarted(seat=0, card=cards[slot], slot=slot)],
    ]
    return state_of(seats, pre)


def test_clearing_every_card_of_a_floor_earns_a_bonus_market_visit_then_the_party_descends():
    st = _before_last_of_floor(0, (0, 1, 2, 3, 4, 5), 6)
    st, events = run(st, C.AcceptPenalty(seat=0))
    assert events[2:] == [
        E.TurnEnded(seat=0),
        E.RoundEnded(cleared=(6,), revealed=(), cards=(), floor_done=True, floor_clear=True),
        E.MarketOpened(kind="bonus", slot=-1, order=(0,)),
        E.VisitStarted(seat=0),
    ]
    scenario(SPEC, 1).given_state(st).when(C.LeaveMarket(seat=0)).then(
        E.VisitEnded(seat=0), E.MarketClosed(kind="bonus"),
        E.FloorDescended(floor=1, revealed=(0, 1, 2, 6), cards=(F1[0], F1[1], F1[2], F1[6])),
        E.VoteOpened(session=1, options=(0, 1, 2), deadline=None),
    )


def test_the_final_row_opens_the_stairs_and_a_route_vote_may_take_them_down():
    st = _before_last_of_floor(0, (2, 4), 6)
    st, events = run(st, C.AcceptPenalty(seat=0))
    # The floor goes on: the rest of it may still be cleared for the bonus market.
    assert events[3:] == [
        E.RoundEnded(cleared=(6,), revealed=(), cards=(), floor_done=False, floor_clear=False),
        E.VoteOpened(session=1, options=(0, 1, DESCEND), deadline=None),
    ]
    view = views.view(st, 0)
    assert view["floor"]["stairs_open"] is True and view["vote"]["options"] == [0, 1, DESCEND]
    assert C.Vote(seat=0, slot=DESCEND) in SPEC.legal_actions(st, 0)
    st, events = run(st, C.Vote(seat=0, slot=DESCEND))
    assert events == [
        E.VoteCast(seat=0, slot=DESCEND),
        E.RouteChosen(slot=DESCEND, card="", votes=(DESCEND,), tied=(), how="plurality"),
        E.FloorDescended(floor=1, revealed=(0, 1, 2, 6), cards=(F1[0], F1[1], F1[2], F1[6])),
        E.VoteOpened(session=2, options=(0, 1, 2), deadline=None),
    ]
    assert views.describe(events[1]) == "The party takes the stairs down (most votes)."
    assert views.view(st, 0)["floor"]["stairs_open"] is False  # the new floor's are closed


def test_the_stairs_are_closed_until_a_final_row_card_is_cleared():
    st = new(1)
    assert DESCEND not in st.ballot.options
    scenario(SPEC, 1).given_state(st).when(C.Vote(seat=0, slot=DESCEND)).rejects("stairs_closed")
    # A game of version 2 has no stairs to speak of.
    scenario(SPEC.for_version(2), 1).given_state(replace(st, rules=2)).when(
        C.Vote(seat=0, slot=DESCEND)).rejects("not_selectable")


def test_the_party_may_press_on_past_the_open_stairs_and_clear_the_floor_for_its_bonus_market():
    st = _before_last_of_floor(0, (2, 4), 6)
    st, _ = run(st, C.AcceptPenalty(seat=0))
    st, events = run(st, C.Vote(seat=0, slot=0))
    assert E.EncounterStarted(slot=0, card=F0[0], order=(0,)) in events
    assert views.view(st, 0)["floor"]["stairs_open"] is True


def test_version_2_the_final_row_leads_down_at_once_without_a_bonus_when_cards_remain():
    st = replace(_before_last_of_floor(0, (2, 4), 6), rules=2)
    events = scenario(SPEC.for_version(2), 1).given_state(st).when(C.AcceptPenalty(seat=0)).events
    assert events[3:] == [
        E.RoundEnded(cleared=(6,), revealed=(), cards=(), floor_done=True, floor_clear=False),
        E.FloorDescended(floor=1, revealed=(0, 1, 2, 6), cards=(F1[0], F1[1], F1[2], F1[6])),
        E.VoteOpened(session=1, options=(0, 1, 2), deadline=None),
    ]
    assert "stairs_open" not in views.view(st, 0)["floor"]  # a version 2 game shows what it showed


def test_the_stairs_of_the_last_floor_lead_to_the_boss():
    st = _before_last_of_floor(2, (0, 1, 3, 5), 7)
    st, events = run(st, C.AcceptPenalty(seat=0))
    assert events[3:] == [
        E.RoundEnded(cleared=(7,), revealed=(), cards=(), floor_done=False, floor_clear=False),
        E.VoteOpened(session=1, options=(2, DESCEND), deadline=None),
    ]
    hp = CONTENT.encounters[BOSS].hp[0]
    events = scenario(SPEC, 1).given_state(st).when(C.Vote(seat=0, slot=DESCEND)).events
    assert events[2:] == [
        E.BossEngaged(boss=BOSS, hp=hp),
        E.BossRoundStarted(round=1, order=(0,)),
        E.CardsDrawn(seat=0, cards=("prayer.s0.2",)),
        E.ChoiceOpened(seat=0, mode="limit", count=1, target=-1),
    ]


def test_version_2_the_final_row_of_the_last_floor_leads_to_the_boss_at_once():
    st = replace(_before_last_of_floor(2, (0, 1, 3, 5), 7), rules=2)
    events = scenario(SPEC.for_version(2), 1).given_state(st).when(C.AcceptPenalty(seat=0)).events
    hp = CONTENT.encounters[BOSS].hp[0]
    assert events[3:] == [
        E.RoundEnded(cleared=(7,), revealed=(), cards=(), floor_done=True, floor_clear=False),
        E.BossEngaged(boss=BOSS, hp=hp),
        E.BossRoundStarted(round=1, order=(0,)),
        E.CardsDrawn(seat=0, cards=("prayer.s0.2",)),
        E.ChoiceOpened(seat=0, mode="limit", count=1, target=-1),
    ]


# --- the party: support, health, rescue ---------------------------------------------------------------


def test_an_offered_attack_is_supported_by_a_teammates_cards():
    st = facing(seats=2)
    st, events = run(st, C.OfferAttack(seat=0, skill="strength"))
    assert events == [E.AttackOffered(seat=0, skill="strength", supporters=(1,))]
    assert SPEC.to_act(st) == (1,)
    st, events = run(st, C.SupportAttack(seat=1, card="punch.s1.1"))
    assert events == [E.SupportGiven(seat=1, card="punch.s1.1")]
    st, events = run(st, C.EndSupport(seat=1), outcomes=[4])
    assert events[:2] == [
        E.SupportEnded(seat=1),
        E.DiceRolled(seat=0, skill="strength", dice=(6, 8, 10), mode="normal", die=8, target=4, roll=4,
                     success=True, cards=(), support=((1, "punch.s1.1"),)),
    ]
    assert "punch.s1.1" in st.players[1].discard and "punch.s1.1" not in st.players[1].hand


def test_damage_to_zero_health_makes_an_adventurer_unconscious_and_the_next_one_goes_on():
    st = facing(seats=2, events=[E.DamageTaken(seat=0, amount=8, health=1)])
    events = scenario(SPEC, 2).given_state(st).when(C.AcceptPenalty(seat=0)).events
    assert events == [E.PenaltyAccepted(seat=0), E.DamageTaken(seat=0, amount=1, health=0), E.KnockedOut(seat=0),
                      E.TurnEnded(seat=0), E.TurnStarted(seat=1, card=F0[0], slot=0)]


def test_an_unconscious_adventurer_no_longer_loses_cards():
    st = facing(seats=2, floors=(floor0(s0="enc:giant-rats"), F1, F2),
                events=[E.DamageTaken(seat=0, amount=8, health=1)])
    st, events = run(st, C.AcceptPenalty(seat=0))
    assert not of_type(events, E.ChoiceOpened) and E.KnockedOut(seat=0) in events
    assert len(st.players[0].hand) == 5


def test_everyone_unconscious_loses_the_expedition():
    st = facing(events=[E.DamageTaken(seat=0, amount=8, health=1)])
    st, events = run(st, C.AcceptPenalty(seat=0))
    assert events == [E.PenaltyAccepted(seat=0), E.DamageTaken(seat=0, amount=1, health=0), E.KnockedOut(seat=0),
                      E.ExpeditionLost(reason="unconscious")]
    assert SPEC.is_over(st) and SPEC.result(st)["winners"] == []


def test_a_teammate_destroys_two_pile_cards_between_rounds_to_restore_one_health():
    st = facing(seats=2, events=[E.DamageTaken(seat=1, amount=8, health=1)])
    st, _ = run(st, C.RollDice(seat=0, skill="strength"), outcomes=[1])
    st, events = run(st, C.AcceptPenalty(seat=1))
    assert events[-2:] == [
        E.RoundEnded(cleared=(0,), revealed=(), cards=(), floor_done=False, floor_clear=False),
        E.CampStarted(order=(0,)),
    ]
    st, events = run(st, C.RescueTeammate(seat=0, target=1))
    assert events == [E.ChoiceOpened(seat=0, mode="rescue", count=2, target=1)]
    st, _ = run(st, C.PickCard(seat=0, card="spark.s0.1"))  # from the draw pile
    st, _ = run(st, C.PickCard(seat=0, card="prayer.s0.2"))  # from the discard pile
    st, events = run(st, C.ConfirmPick(seat=0))
    assert events == [
        E.ChoiceConfirmed(seat=0, mode="rescue", cards=("spark.s0.1", "prayer.s0.2")),
        E.HealthRestored(seat=1, amount=1, health=1, reason="rescue"),
        E.CampEnded(),
        E.VoteOpened(session=2, options=(1, 2), deadline=30000),
    ]
    p = st.players[0]
    assert p.destroyed == 2 and "spark.s0.1" not in p.draw and "prayer.s0.2" not in p.discard


def test_breaking_camp_leaves_the_teammate_unconscious():
    st = facing(seats=2, events=[E.DamageTaken(seat=1, amount=8, health=1)])
    st, _ = run(st, C.RollDice(seat=0, skill="strength"), outcomes=[1])
    st, _ = run(st, C.AcceptPenalty(seat=1))
    st, events = run(st, C.BreakCamp(seat=0))
    assert events == [E.CampLeft(seat=0), E.CampEnded(), E.VoteOpened(session=2, options=(1, 2), deadline=30000)]
    assert SPEC.to_act(st) == (0,)


# --- the boss --------------------------------------------------------------------------------------------


def test_a_successful_boss_attack_deals_one_damage_and_gives_its_skill_reward():
    scenario(SPEC, 1).given_state(at_boss(hp=2)).when(C.RollDice(seat=0, skill="strength"), outcomes=[2]).then(
        E.DiceRolled(seat=0, skill="strength", dice=(6, 8, 10), mode="normal", die=8, target=3, roll=2,
                     success=True, cards=(), support=()),
        E.BossDamaged(seat=0, hp=1),
        E.CoinsGained(seat=0, amount=2),
        E.TurnEnded(seat=0),
        E.BossRoundEnded(round=1),
        E.BossRoundStarted(round=2, order=(0,)),
        E.CardsDrawn(seat=0, cards=("prayer.s0.2",)),
        E.ChoiceOpened(seat=0, mode="limit", count=1, target=-1),
    )


def test_defeating_the_boss_wins_the_expedition_for_every_seat_and_the_blow_gets_its_reward():
    st, events = run(at_boss(seats=2, hp=1), C.RollDice(seat=0, skill="strength"), outcomes=[1])
    reward = CONTENT.encounters[BOSS].skills["strength"].reward
    assert events[1] == E.BossDamaged(seat=0, hp=0) and events[-1] == E.ExpeditionWon()
    # "Each successful boss attack deals 1 boss damage and applies its skill reward": the
    # last one too (rules version 3), as the attack before it (hp 2) does.
    _, before = run(at_boss(seats=2, hp=2), C.RollDice(seat=0, skill="strength"), outcomes=[1])
    rewarded = [type(e) for e in before[2:] if not isinstance(e, (E.TurnEnded, E.TurnStarted))]
    assert rewarded and [type(e) for e in events[2:-1]] == rewarded, (reward, events)
    assert SPEC.is_over(st)
    result = SPEC.result(st)
    assert result["winners"] == [0, 1] and result["outcome"] == "won"
    assert result["scores"][0] == result["scores"][1] > 0


def test_version_2_the_killing_blow_gets_no_reward():
    st = replace(at_boss(seats=2, hp=1), rules=2)
    events = SPEC.for_version(2).decide(C.RollDice(seat=0, skill="strength"), st, _ctx([1]))
    assert events[1:] == [E.BossDamaged(seat=0, hp=0), E.ExpeditionWon()]


def _ctx(outcomes):
    from croupier.engine.contract import Context
    from croupier.engine.testing import ScriptedRng

    return Context(rng=ScriptedRng(outcomes), now=0)


def test_a_failed_boss_attack_applies_the_boss_penalty():
    events = scenario(SPEC, 1).given_state(at_boss()).when(C.RollDice(seat=0, skill="strength"), outcomes=[7]).events
    assert events[1] == E.DamageTaken(seat=0, amount=2, health=7)


# --- caps -----------------------------------------------------------------------------------------------


def test_the_round_cap_loses_an_expedition_that_would_not_end():
    st = replace(new(1), rounds=ROUND_CAP)
    scenario(SPEC, 1).given_state(st).when(C.Vote(seat=0, slot=0)).then(
        E.VoteCast(seat=0, slot=0),
        E.RouteChosen(slot=0, card=F0[0], votes=(0,), tied=(), how="plurality"),
        E.ExpeditionLost(reason="exhausted"),
    )


def test_a_state_pickled_before_rules_versions_were_told_apart_loads_as_version_2():
    """A projector's stored state or a snapshot taken before State.rules existed: it loads,
    and plays on under the rules it was created with (2, or 1, whose rules are the same)."""
    import pickle

    from croupier.games.delve.state import State

    st = _before_last_of_floor(0, (2, 4), 6)
    # What the class pickled before its last fields (rules, then unseen_below) were added.
    old = st.__getstate__()[:-2]
    back = object.__new__(State)
    back.__setstate__(old)
    assert back.rules == 2 and back.dungeon == st.dungeon and back.unseen_below == ()
    assert pickle.loads(pickle.dumps(st)) == st
    events = SPEC.for_version(2).decide(C.AcceptPenalty(seat=0), back, _ctx([]))
    assert E.RoundEnded(cleared=(6,), revealed=(), cards=(), floor_done=True, floor_clear=False) in events
