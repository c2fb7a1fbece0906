"""Every rule of the journey's text, as given / when / then on events."""

from croupier.engine.contract import Start
from croupier.engine.testing import scenario
from croupier.games.journey import SPEC
from croupier.games.journey import commands as C
from croupier.games.journey import events as E
from croupier.games.journey.cards import DECK

ALL = {"allies": True, "return_journey": True, "companions": True}


def deal(journey=("9H",), supply=("2C", "3C", "4C"), satchels=((),), discard=()):
    """A table after the shuffle: the Journey and Supply (top first) and each satchel.
    Cards for the discard pile are passed through a traveller's hands."""
    events = [E.DecksShuffled(journey=tuple(journey), supply=tuple(supply))]
    for seat, cards in enumerate(satchels):
        events += [E.Foraged(seat=seat, card=c) for c in cards]
    if discard:
        events += [E.Foraged(seat=0, card=c) for c in discard]
        events += [E.CardDiscarded(seat=0, card=c) for c in discard]
    return events


def fight(card, health, attack, seat=0):
    return [E.AdversaryRevealed(card=card, health=health, attack=attack), E.RoundBegan(round=1),
            E.FightTurnBegan(seat=seat)]


def refuge(card, actions, seat=0):
    return [E.RefugeReached(card=card, actions=actions), E.RefugeTurnBegan(seat=seat)]


# --- setup ------------------------------------------------------------------------------


def test_start_splits_the_deck_sets_primrose_hill_and_joker_aside_and_forages_to_the_limit():
    sc = scenario(SPEC, 1).when(Start(), outcomes=[list(range(25)), list(range(26))])
    journey = tuple(c for c in DECK.journey)
    assert "AH" not in journey and "AS" in journey and len(journey) == 25
    assert all(c[-1] in "HS" for c in journey)
    supply = DECK.supply
    assert all(c[-1] in "DC" for c in supply) and len(supply) == 26
    sc.then(
        E.DecksShuffled(journey=journey, supply=supply),
        # A-diamonds takes no room: five more cards to reach the limit of 5.
        *[E.Foraged(seat=0, card=c) for c in ("AD", "2D", "3D", "4D", "5D", "6D")],
        E.RefugeReached(card="2H", actions=2),
        E.RefugeTurnBegan(seat=0),
    )


def test_start_every_traveller_forages_to_the_limit_in_seat_order():
    supply = ["2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C", "JC", "QC", "KC", "AC",
              "2D", "3D", "4D", "5D", "6D", "7D", "8D", "9D", "10D", "JD", "QD", "KD", "AD"]
    journey = ["7S", *[c for c in DECK.journey if c != "7S"]]
    sc = scenario(SPEC, 2, {"satchel_limit": 3}).when(Start(), outcomes=[journey, supply])
    events = sc.events
    assert events[1:7] == [E.Foraged(seat=0, card=c) for c in ("2C", "3C", "4C")] + \
        [E.Foraged(seat=1, card=c) for c in ("5C", "6C", "7C")]
    assert events[7:] == [E.AdversaryRevealed(card="7S", health=14, attack=7), E.RoundBegan(round=1),
                          E.FightTurnBegan(seat=0)]


# --- refuges ----------------------------------------------------------------------------


def test_refuge_forage_draws_the_top_supply_card_as_one_action():
    (scenario(SPEC, 1).given(*deal(supply=("5D", "6D")), *refuge("3H", 3))
     .when(C.Forage(seat=0)).then(E.Foraged(seat=0, card="5D")))


def test_refuge_forage_only_below_the_satchel_limit():
    (scenario(SPEC, 1).given(*deal(satchels=(("2D", "3D", "4D", "5D", "6D"),)), *refuge("3H", 3))
     .when(C.Forage(seat=0)).rejects("satchel_full"))


def test_refuge_spendable_aces_take_no_satchel_room():
    (scenario(SPEC, 1).given(*deal(supply=("7C",), satchels=(("2D", "3D", "4D", "5D", "AD", "AC"),)),
                             *refuge("3H", 3))
     .when(C.Forage(seat=0)).then(E.Foraged(seat=0, card="7C")))


def test_refuge_recover_slides_a_discard_under_the_supply():
    sc = (scenario(SPEC, 1).given(*deal(supply=("2C", "3C"), discard=("9D",)), *refuge("3H", 3))
          .when(C.Recover(seat=0, card="9D")).then(E.Recovered(seat=0, card="9D")))
    assert sc.then_state().supply == ("2C", "3C", "9D")


def test_refuge_cache_hides_one_card_and_ends_that_travellers_refuge():
    (scenario(SPEC, 1).given(*deal(journey=("5S",), satchels=(("8D", "2C"),)), *refuge("3H", 3))
     .when(C.Cache(seat=0, card="8D"))
     .then(E.Cached(seat=0, card="8D", place="3H"), E.RefugeLeft(seat=0),
           E.RefugeEnded(card="3H", place="Woking"),
           E.AdversaryRevealed(card="5S", health=10, attack=5), E.RoundBegan(round=1), E.FightTurnBegan(seat=0)))


def test_refuge_only_one_card_may_be_cached_at_a_location():
    (scenario(SPEC, 2).given(*deal(satchels=(("8D",), ("9D",))), *refuge("3H", 3),
                             E.Cached(seat=0, card="8D", place="3H"), E.RefugeLeft(seat=0), E.RefugeTurnBegan(seat=1))
     .when(C.Cache(seat=1, card="9D")).rejects("cache_taken"))


def test_refuge_gives_actions_equal_to_its_value_then_the_heart_joins_the_route():
    sc = (scenario(SPEC, 1).given(*deal(journey=("4S",), supply=("2C", "3C")), *refuge("2H", 2),
                                  E.Foraged(seat=0, card="2C"))
          .when(C.Forage(seat=0)))
    sc.then(E.Foraged(seat=0, card="3C"), E.RefugeLeft(seat=0), E.RefugeEnded(card="2H", place="Woking"),
            E.AdversaryRevealed(card="4S", health=8, attack=4), E.RoundBegan(round=1), E.FightTurnBegan(seat=0))
    assert sc.then_state().route == ("2H",)


def test_refuge_face_hearts_give_ten_actions():
    sc = scenario(SPEC, 1).given(*deal(journey=("4S", "QH")), *fight("4S", 8, 4)) \
        .given(E.Foraged(seat=0, card="5D")).when(C.Strike(seat=0, card="5D"))
    assert E.RefugeReached(card="QH", actions=10) in sc.events


def test_refuge_travellers_take_their_actions_in_seat_order():
    (scenario(SPEC, 3).given(*deal(satchels=((), (), ())), *refuge("3H", 3))
     .when(C.MoveOn(seat=0)).then(E.RefugeLeft(seat=0), E.RefugeTurnBegan(seat=1)))


def test_second_heart_passed_is_named_after_woking():
    sc = (scenario(SPEC, 1).given(*deal(journey=("3H", "5S")), *refuge("2H", 2), E.RefugeLeft(seat=0),
                                  E.RefugeEnded(card="2H", place="Woking"), *refuge("3H", 3))
          .when(C.MoveOn(seat=0)))
    assert E.RefugeEnded(card="3H", place="Horsell Common") in sc.events


# --- fights -------------------------------------------------------------------------------


def test_adversary_health_is_twice_its_rank_and_attack_its_rank():
    sc = (scenario(SPEC, 1).given(*deal(journey=("JS",)), *refuge("3H", 3)).when(C.MoveOn(seat=0)))
    assert E.AdversaryRevealed(card="JS", health=22, attack=11) in sc.events


def test_strike_with_a_diamond_deals_double_its_value_then_the_counter_strikes():
    (scenario(SPEC, 1).given(*deal(satchels=(("7D", "9C", "8C"),)), *fight("KS", 26, 13))
     .when(C.Strike(seat=0, card="7D"))
     .then(E.Struck(seat=0, card="7D", damage=14), E.CounterStruck(attack=13),
           E.CoverDemanded(seat=0, due=13, reason="counter")))


def test_strike_with_a_club_deals_its_value_faces_count_ten():
    sc = scenario(SPEC, 1).given(*deal(satchels=(("QC", "9C", "8C"),)), *fight("KS", 26, 13)) \
        .when(C.Strike(seat=0, card="QC"))
    assert sc.events[0] == E.Struck(seat=0, card="QC", damage=10)


def test_exact_damage_is_a_direct_hit_banking_wreckage_worth_the_attack():
    sc = (scenario(SPEC, 1).given(*deal(journey=("5S", "9H"), satchels=(("7D",),)), *fight("7S", 14, 7))
          .when(C.Strike(seat=0, card="7D")))
    sc.then(E.Struck(seat=0, card="7D", damage=14), E.AdversaryDefeated(card="7S", seat=0, wreckage=7),
            E.AdversaryRevealed(card="5S", health=10, attack=5), E.RoundBegan(round=1), E.FightTurnBegan(seat=0))
    state = sc.then_state()
    assert state.travellers[0].wreckage == 7 and state.defeated == ("7S",)


def test_overkill_defeats_the_adversary_without_wreckage():
    sc = (scenario(SPEC, 1).given(*deal(journey=("5S",), satchels=(("9D",),)), *fight("7S", 14, 7))
          .when(C.Strike(seat=0, card="9D")))
    assert sc.events[1] == E.AdversaryDefeated(card="7S", seat=0, wreckage=0)


def test_every_standing_traveller_acts_then_the_counter_strikes_each_for_its_full_attack():
    given = [*deal(satchels=(("2C", "9C"), ("3C", "9D"))), *fight("KS", 26, 13)]
    sc = scenario(SPEC, 2).given(*given).when(C.Strike(seat=0, card="2C"))
    sc.then(E.Struck(seat=0, card="2C", damage=2), E.FightTurnBegan(seat=1))
    sc = scenario(SPEC, 2).given(*given, E.Struck(seat=0, card="2C", damage=2), E.FightTurnBegan(seat=1),
                                 E.Foraged(seat=0, card="10C"), E.Foraged(seat=0, card="10D"),
                                 E.Foraged(seat=1, card="JC"), E.Foraged(seat=1, card="JD"))
    sc.when(C.Strike(seat=1, card="3C")).then(
        E.Struck(seat=1, card="3C", damage=3), E.CounterStruck(attack=13),
        E.CoverDemanded(seat=0, due=13, reason="counter"))


def test_cover_with_card_values_overpayment_is_lost():
    given = [*deal(satchels=(("10C", "9C"),)), *fight("KS", 26, 13), E.Struck(seat=0, card="2C", damage=2),
             E.CounterStruck(attack=13), E.CoverDemanded(seat=0, due=13, reason="counter")]
    sc = scenario(SPEC, 1).given(*given, E.CoverCardPaid(seat=0, card="10C", value=10))
    sc.when(C.Cover(seat=0, card="9C")).then(
        E.CoverCardPaid(seat=0, card="9C", value=9), E.Covered(seat=0, wreckage=0, reason="counter"),
        E.RoundBegan(round=2), E.FightTurnBegan(seat=0))
    assert sc.then_state().discard[-2:] == ("10C", "9C")


def test_cover_the_rest_with_banked_wreckage():
    given = [*deal(satchels=(("5C", "9C"),)), E.AdversaryDefeated(card="3S", seat=0, wreckage=6),
             *fight("KS", 26, 13), E.CounterStruck(attack=13), E.CoverDemanded(seat=0, due=13, reason="counter"),
             E.CoverCardPaid(seat=0, card="9C", value=9)]
    sc = scenario(SPEC, 1).given(*given).when(C.UseWreckage(seat=0))
    assert sc.events[0] == E.Covered(seat=0, wreckage=4, reason="counter")
    assert sc.then_state().travellers[0].wreckage == 2


def test_a_traveller_who_cannot_cover_the_counter_falls_and_all_fallen_lose():
    sc = (scenario(SPEC, 1).given(*deal(satchels=(("2C", "3C"),)), *fight("KS", 26, 13))
          .when(C.Strike(seat=0, card="2C")))
    sc.then(E.Struck(seat=0, card="2C", damage=2), E.CounterStruck(attack=13), E.TravellerFell(seat=0),
            E.GameEnded(won=False, reason="every traveller has fallen"))
    assert SPEC.result(sc.then_state())["winners"] == []


def test_a_fallen_traveller_no_longer_acts_and_the_others_fight_on():
    given = [*deal(satchels=(("2C",), ("9C", "8C"))), *fight("5S", 10, 5, seat=1),
             E.TravellerFell(seat=0), E.FightTurnBegan(seat=1)]
    (scenario(SPEC, 2).given(*given).when(C.Strike(seat=1, card="9C"))
     .then(E.Struck(seat=1, card="9C", damage=9), E.CounterStruck(attack=5),
           E.CoverDemanded(seat=1, due=5, reason="counter")))


def test_regroup_plays_a_club_and_takes_another_discard_dealing_no_damage():
    given = [*deal(satchels=(("4C", "10C"),), discard=("10D",)), *fight("5S", 10, 5)]
    sc = scenario(SPEC, 1).given(*given).when(C.Regroup(seat=0, card="4C"))
    sc.then(E.Regrouped(seat=0, card="4C"))
    sc = scenario(SPEC, 1).given(*given, E.Regrouped(seat=0, card="4C")).when(C.TakeBack(seat=0, card="10D"))
    sc.then(E.RegroupTaken(seat=0, card="10D"), E.CounterStruck(attack=5),
            E.CoverDemanded(seat=0, due=5, reason="counter"))
    assert sc.then_state().health == 10


def test_regroup_cannot_take_back_the_club_it_played():
    given = [*deal(satchels=(("4C",),), discard=("10D",)), *fight("5S", 10, 5), E.Regrouped(seat=0, card="4C")]
    scenario(SPEC, 1).given(*given).when(C.TakeBack(seat=0, card="4C")).rejects("not_in_discard")


def test_flee_discards_a_card_and_the_adversary_goes_back_into_the_journey_at_random():
    given = [*deal(journey=("3H", "4H", "5H"), satchels=(("2C", "9D"),)), *fight("KS", 26, 13)]
    sc = scenario(SPEC, 1).given(*given).when(C.Flee(seat=0, card="2C"), outcomes=[2])
    sc.then(E.Fled(seat=0, card="2C", adversary="KS", position=2), E.RefugeReached(card="3H", actions=3),
            E.RefugeTurnBegan(seat=0))
    assert sc.then_state().journey == ("4H", "KS", "5H")


def test_hide_a_lower_reveal_is_kept_there_is_no_counter_and_the_traveller_chooses_again():
    given = [*deal(supply=("5D", "9C"), satchels=(("2C",),)), *fight("9S", 18, 9)]
    sc = scenario(SPEC, 1).given(*given).when(C.Hide(seat=0))
    sc.then(E.Hid(seat=0, card="5D", kept=True))
    state = sc.then_state()
    assert state.step == "fight" and state.acting == 0 and "5D" in state.travellers[0].satchel
    # The round ends without a counter.
    (scenario(SPEC, 1).given(*given, E.Hid(seat=0, card="5D", kept=True)).when(C.Strike(seat=0, card="2C"))
     .then(E.Struck(seat=0, card="2C", damage=2), E.RoundBegan(round=2), E.FightTurnBegan(seat=0)))


def test_hide_each_further_reveal_must_be_lower_than_the_one_before():
    given = [*deal(supply=("5D", "5C"), satchels=(("9C", "9D", "8C"),)), *fight("9S", 18, 9),
             E.Hid(seat=0, card="5D", kept=True)]
    sc = scenario(SPEC, 1).given(*given).when(C.Hide(seat=0))
    sc.then(E.Hid(seat=0, card="5C", kept=False), E.CoverDemanded(seat=0, due=9, reason="ambush"))


def test_hide_an_ace_always_slips_past():
    (scenario(SPEC, 1).given(*deal(supply=("AC",)), *fight("2S", 4, 2)).when(C.Hide(seat=0))
     .then(E.Hid(seat=0, card="AC", kept=True)))


def test_hide_a_failed_reveal_is_an_ambush_on_the_front_traveller_then_no_more_hiding():
    given = [*deal(supply=("QD", "2C"), satchels=((), ("9C",), ("10C",))), *fight("6S", 12, 6),
             E.FightTurnBegan(seat=1)]
    sc = scenario(SPEC, 3).given(*given).when(C.Hide(seat=1))
    sc.then(E.Hid(seat=1, card="QD", kept=False), E.CoverDemanded(seat=1, due=6, reason="ambush"))
    state = sc.then_state()
    assert "QD" in state.discard and state.hide_blocked
    after = [*given, *sc.events]
    sc = scenario(SPEC, 3).given(*after).when(C.Cover(seat=1, card="9C"))
    sc.then(E.CoverCardPaid(seat=1, card="9C", value=9), E.Covered(seat=1, wreckage=0, reason="ambush"))
    assert sc.then_state().step == "fight" and sc.then_state().acting == 1  # then fight or flee
    scenario(SPEC, 3).given(*after, *sc.events).when(C.Hide(seat=1)).rejects("hiding_over")


def test_hide_an_ambush_that_cannot_be_covered_fells_the_traveller():
    given = [*deal(supply=("QD",), satchels=(("2C",), ("9C",))), *fight("6S", 12, 6)]
    (scenario(SPEC, 2).given(*given).when(C.Hide(seat=0))
     .then(E.Hid(seat=0, card="QD", kept=False), E.TravellerFell(seat=0), E.FightTurnBegan(seat=1)))


def test_hide_needs_room_in_the_satchel():
    given = [*deal(supply=("9D",), satchels=(("2C", "3C", "4C", "5C", "6C"),)), *fight("9S", 18, 9)]
    scenario(SPEC, 1).given(*given).when(C.Hide(seat=0)).rejects("satchel_full")


def test_brace_only_when_no_strike_regroup_flight_or_hide_is_possible():
    given = [*deal(supply=(), satchels=((),)), *fight("AS", 40, 20)]
    (scenario(SPEC, 1).given(*given).when(C.Brace(seat=0))
     .then(E.Braced(seat=0), E.CounterStruck(attack=20), E.TravellerFell(seat=0),
           E.GameEnded(won=False, reason="every traveller has fallen")))
    given = [*deal(satchels=(("2C",),)), *fight("5S", 10, 5)]
    scenario(SPEC, 1).given(*given).when(C.Brace(seat=0)).rejects("must_act")


# --- the Aces -------------------------------------------------------------------------------


def test_destination_primrose_hill_is_turned_when_the_journey_empties_and_the_journey_is_won():
    sc = (scenario(SPEC, 1).given(*deal(journey=(), satchels=(("7D",),)), *fight("7S", 14, 7))
          .when(C.Strike(seat=0, card="7D")))
    sc.then(E.Struck(seat=0, card="7D", damage=14), E.AdversaryDefeated(card="7S", seat=0, wreckage=7),
            E.DestinationReached(card="AH"), E.GameEnded(won=True, reason="arrived at Primrose Hill"))
    result = SPEC.result(sc.then_state())
    assert result["winners"] == [0] and result["scores"] == [7]


def test_nemesis_has_40_health_plus_10_per_traveller_beyond_the_first_and_20_attack():
    for seats, health in ((1, 40), (3, 60)):
        given = [*deal(journey=("AS",), satchels=((),) * seats), *refuge("3H", 3)]
        for seat in range(1, seats):
            given += [E.RefugeLeft(seat=seat - 1), E.RefugeTurnBegan(seat=seat)]
        sc = scenario(SPEC, seats).given(*given).when(C.MoveOn(seat=seats - 1))
        assert E.AdversaryRevealed(card="AS", health=health, attack=20) in sc.events


def test_nemesis_scales_with_the_travellers_still_standing():
    given = [*deal(journey=("AS",), satchels=((), (), ())), E.TravellerFell(seat=1), *refuge("3H", 3),
             E.RefugeLeft(seat=0), E.RefugeTurnBegan(seat=2)]
    sc = scenario(SPEC, 3).given(*given).when(C.MoveOn(seat=2))
    assert E.AdversaryRevealed(card="AS", health=50, attack=20) in sc.events


def test_nemesis_cannot_be_fled_or_hidden_from():
    given = [*deal(satchels=(("2C",),)), *fight("AS", 40, 20)]
    scenario(SPEC, 1).given(*given).when(C.Flee(seat=0, card="2C")).rejects("nemesis_no_escape")
    scenario(SPEC, 1).given(*given).when(C.Hide(seat=0)).rejects("nemesis_no_escape")


def test_reckoning_is_a_free_action_halving_remaining_health_rounding_up_once_per_fight():
    given = [*deal(satchels=(("AC", "2C"),)), *fight("AS", 40, 20), E.Struck(seat=0, card="2C", damage=13),
             E.RoundBegan(round=2), E.FightTurnBegan(seat=0)]
    sc = scenario(SPEC, 1).given(*given).when(C.PlayReckoning(seat=0))
    sc.then(E.ReckoningPlayed(seat=0, health=14))
    state = sc.then_state()
    assert state.step == "fight" and state.acting == 0 and state.reckoning_used and "AC" in state.discard
    after = [*given, *sc.events, E.Foraged(seat=0, card="AC")]
    scenario(SPEC, 1).given(*after).when(C.PlayReckoning(seat=0)).rejects("reckoning_used")


def test_revelation_strikes_for_20_flat_and_cuts_that_rounds_counter_by_10():
    (scenario(SPEC, 1).given(*deal(satchels=(("AD", "10C"),)), *fight("AS", 40, 20))
     .when(C.Strike(seat=0, card="AD"))
     .then(E.Struck(seat=0, card="AD", damage=20, cut=10), E.CounterStruck(attack=10),
           E.CoverDemanded(seat=0, due=10, reason="counter")))


def test_spendable_aces_count_zero_when_covering():
    given = [*deal(satchels=(("AD", "10C"),)), *fight("5S", 10, 5), E.CounterStruck(attack=5),
             E.CoverDemanded(seat=0, due=5, reason="counter")]
    scenario(SPEC, 1).given(*given).when(C.Cover(seat=0, card="AD")).rejects("worthless_card")


# --- Allies ---------------------------------------------------------------------------------


def test_allies_a_jack_strike_retrieves_one_same_suit_discard():
    given = [*deal(satchels=(("JD", "9C"),), discard=("9D", "8C")), *fight("KS", 26, 13)]
    sc = scenario(SPEC, 1, {"allies": True}).given(*given).when(C.Strike(seat=0, card="JD"))
    sc.then(E.Struck(seat=0, card="JD", damage=20), E.RetrievalOffered(seat=0, card="JD"))
    after = [*given, *sc.events]
    scenario(SPEC, 1, {"allies": True}).given(*after).when(C.Retrieve(seat=0, card="8C")).rejects("not_same_suit")
    sc = scenario(SPEC, 1, {"allies": True}).given(*after).when(C.Retrieve(seat=0, card="9D"))
    assert sc.events[0] == E.Retrieved(seat=0, card="9D")
    assert "9D" in sc.then_state().travellers[0].satchel


def test_allies_a_queen_strike_also_cuts_that_rounds_counter_by_5():
    (scenario(SPEC, 1, {"allies": True}).given(*deal(satchels=(("QC", "9C"),)), *fight("KS", 26, 13))
     .when(C.Strike(seat=0, card="QC"))
     .then(E.Struck(seat=0, card="QC", damage=10, cut=5), E.CounterStruck(attack=8),
           E.CoverDemanded(seat=0, due=8, reason="counter")))


def test_allies_a_king_may_rally_as_any_rank_2_to_10_of_its_suit_diamonds_doubled():
    given = [*deal(satchels=(("KD",),)), *fight("3S", 6, 3)]
    sc = scenario(SPEC, 1, {"allies": True}).given(*given).when(C.Strike(seat=0, card="KD", rally=3))
    assert sc.events[:2] == [E.Struck(seat=0, card="KD", damage=6, rally=3),
                             E.AdversaryDefeated(card="3S", seat=0, wreckage=3)]
    scenario(SPEC, 1, {"allies": True}).given(*given).when(C.Strike(seat=0, card="KD", rally=11)) \
        .rejects("invalid_rally")
    scenario(SPEC, 1).given(*given).when(C.Strike(seat=0, card="KD", rally=3)).rejects("invalid_rally")


def test_without_allies_faces_strike_plainly():
    (scenario(SPEC, 1).given(*deal(satchels=(("QC", "JC", "8C"),)), *fight("KS", 26, 13))
     .when(C.Strike(seat=0, card="QC"))
     .then(E.Struck(seat=0, card="QC", damage=10), E.CounterStruck(attack=13),
           E.CoverDemanded(seat=0, due=13, reason="counter")))


# --- Companions ------------------------------------------------------------------------------


def test_companions_a_heart_face_joins_after_its_refuge_one_at_a_time():
    given = [*deal(journey=("5S",)), *refuge("QH", 10)]
    sc = scenario(SPEC, 1, {"companions": True}).given(*given).when(C.MoveOn(seat=0))
    assert sc.events[:3] == [E.RefugeLeft(seat=0), E.RefugeEnded(card="QH", place="Woking"),
                             E.CompanionJoined(card="QH")]
    sc = scenario(SPEC, 1, {"companions": True}).given(E.CompanionJoined(card="KH"), *given).when(C.MoveOn(seat=0))
    assert E.CompanionJoined(card="QH") not in sc.events
    sc = scenario(SPEC, 1).given(*given).when(C.MoveOn(seat=0))
    assert E.CompanionJoined(card="QH") not in sc.events


def test_companions_the_partner_raises_the_satchel_limit_by_one():
    given = [*deal(supply=("7C",), satchels=(("2D", "3D", "4D", "5D", "6D"),)), *refuge("3H", 3)]
    scenario(SPEC, 1, {"companions": True}).given(*given).when(C.Forage(seat=0)).rejects("satchel_full")
    (scenario(SPEC, 1, {"companions": True}).given(E.CompanionJoined(card="QH"), *given).when(C.Forage(seat=0))
     .then(E.Foraged(seat=0, card="7C")))


def test_companions_the_burden_lowers_the_limit_and_the_group_can_neither_flee_nor_hide():
    given = [*deal(supply=("7C",), satchels=(("2D", "3D", "4D", "5D"),)), *refuge("3H", 3)]
    (scenario(SPEC, 1, {"companions": True}).given(E.CompanionJoined(card="JH"), *given)
     .when(C.Forage(seat=0)).rejects("satchel_full"))
    given = [E.CompanionJoined(card="JH"), *deal(satchels=(("2C",),)), *fight("5S", 10, 5)]
    scenario(SPEC, 1, {"companions": True}).given(*given).when(C.Flee(seat=0, card="2C")) \
        .rejects("burden_blocks_escape")
    scenario(SPEC, 1, {"companions": True}).given(*given).when(C.Hide(seat=0)).rejects("burden_blocks_escape")


def test_companions_the_burden_is_left_to_an_adversary_every_traveller_discards_plus_one_more():
    given = [E.CompanionJoined(card="JH"), *deal(satchels=(("2C", "3C"), ("4C", "5C", "6C"))),
             *fight("5S", 10, 5)]
    opts = {"companions": True}
    sc = scenario(SPEC, 2, opts).given(*given).when(C.ShedBurden(seat=0, extra=1))
    sc.then(E.BurdenShedBegun(seat=0, payers=(0, 1, 1)))
    given += sc.events
    sc = scenario(SPEC, 2, opts).given(*given).when(C.Discard(seat=0, card="2C"))
    sc.then(E.CardDiscarded(seat=0, card="2C"))
    given += sc.events
    scenario(SPEC, 2, opts).given(*given).when(C.Discard(seat=0, card="3C")).rejects("not_your_turn")
    given += [E.CardDiscarded(seat=1, card="4C")]
    sc = scenario(SPEC, 2, opts).given(*given).when(C.Discard(seat=1, card="5C"))
    sc.then(E.CardDiscarded(seat=1, card="5C"), E.CompanionLeft(card="JH", reason="shed"))
    state = sc.then_state()
    assert state.companion is None and state.step == "fight" and state.acting == 0


def test_companions_the_burden_cannot_be_left_to_the_nemesis():
    given = [E.CompanionJoined(card="JH"), *deal(satchels=(("2C", "3C"),)), *fight("AS", 40, 20)]
    scenario(SPEC, 1, {"companions": True}).given(*given).when(C.ShedBurden(seat=0, extra=0)) \
        .rejects("nemesis_no_escape")


def test_companions_discarding_the_deliverance_frees_the_group_of_the_burden_at_no_cost():
    given = [E.CompanionJoined(card="JH"), *deal(satchels=(("10C", "3C"),)), *refuge("3H", 3)]
    sc = scenario(SPEC, 1, {"companions": True}).given(*given).when(C.Deliver(seat=0))
    sc.then(E.DeliveranceDiscarded(seat=0, card="10C"), E.CompanionLeft(card="JH", reason="delivered"))
    state = sc.then_state()
    assert state.step == "refuge" and state.actions_left == 3 and state.companion is None


def test_companions_partner_or_witness_spent_as_10_when_covering_leaves_with_what_was_hidden_there():
    given = [*deal(journey=("5S",), satchels=(("2C", "9D"),)), *refuge("KH", 10), E.Cached(seat=0, card="9D",
                                                                                            place="KH"),
             E.RefugeLeft(seat=0), E.RefugeEnded(card="KH", place="Woking"), E.CompanionJoined(card="KH"),
             *fight("5S", 10, 5), E.CounterStruck(attack=5), E.CoverDemanded(seat=0, due=5, reason="counter")]
    sc = scenario(SPEC, 1, {"companions": True}).given(*given).when(C.Cover(seat=0, card="KH"))
    sc.then(E.CoverCardPaid(seat=0, card="KH", value=10), E.CompanionLeft(card="KH", reason="spent", lost="9D"),
            E.Covered(seat=0, wreckage=0, reason="counter"), E.RoundBegan(round=2), E.FightTurnBegan(seat=0))
    state = sc.then_state()
    assert state.companion is None and state.route == () and state.caches == ()


def test_companions_the_burden_is_not_spendable():
    given = [E.CompanionJoined(card="JH"), *deal(satchels=(("2C", "9D"),)), *fight("5S", 10, 5),
             E.CounterStruck(attack=5), E.CoverDemanded(seat=0, due=5, reason="counter")]
    scenario(SPEC, 1, {"companions": True}).given(*given).when(C.Cover(seat=0, card="JH")).rejects("card_not_held")


# --- the Return Journey ---------------------------------------------------------------------


def _arrive(seats=1, satchels=((),), supply=("2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C", "JC"),
            wrecks=("3S",), route=("2H", "5H"), discard=(), caches=()):
    """A Return Journey table just before the last adversary falls."""
    events = deal(journey=(), supply=supply, satchels=satchels, discard=discard)
    for i, heart in enumerate(route):
        events += [E.RefugeReached(card=heart, actions=0)]
        events += [E.Cached(seat=s, card=c, place=p) for p, s, c in caches if p == heart]
        events += [E.RefugeEnded(card=heart, place=DECK.places[i])]
    events += [E.AdversaryDefeated(card=w, seat=0, wreckage=RANK_OF[w]) for w in wrecks]
    return events


RANK_OF = {"3S": 3, "5S": 5, "9S": 9, "KS": 13}


def test_return_journey_begins_on_arrival_aces_removed_discard_and_joker_shuffled_in_satchels_filled():
    given = [*_arrive(satchels=(("AC", "9D", "9C"),), supply=("2C", "3C"), discard=("AD", "4D")),
             E.Foraged(seat=0, card="7D"), *fight("7S", 14, 7)]
    sc = (scenario(SPEC, 1, {"return_journey": True}).given(*given)
          .when(C.Strike(seat=0, card="7D"), outcomes=[["4D", "JOKER", "3C", "2C", "7D"], ["7S", "3S"], 1]))
    events = sc.events
    assert events[2:8] == [
        E.DestinationReached(card="AH"),
        E.ReturnBegan(removed=("AC", "AD"), supply=("4D", "JOKER", "3C", "2C", "7D")),
        E.Foraged(seat=0, card="4D"), E.Foraged(seat=0, card="JOKER"), E.Foraged(seat=0, card="3C"),
        E.PurseFormed(purse=("9D", "9C", "4D", "JOKER", "3C"), walkers=(0,)),
    ]
    # Wreckage seeds face-down Ruins along the way home, which runs back to Woking.
    assert events[8] == E.RuinsSeeded(ruins=(("5H", "7S"), ("2H", "3S")))
    # The first stop is the last heart passed; the Joker (drawn into the purse) steals there.
    assert events[9:] == [E.StopReached(place="5H", cache=None), E.RuinRevealed(place="5H", card="7S"),
                          E.JokerStole(card="9C")]


def _walking(seats=1, purse=("9D", "9C", "4D"), route=("2H", "5H"), ruins=(), caches=(), opts=None):
    events = _arrive(seats=seats, satchels=((),) * seats, route=route, wrecks=(), caches=caches)
    events += [E.DestinationReached(card="AH"), E.ReturnBegan(removed=(), supply=()),
               E.PurseFormed(purse=tuple(purse), walkers=tuple(range(seats)))]
    if ruins:
        events.append(E.RuinsSeeded(ruins=tuple(ruins)))
    return events


def test_return_journey_each_place_asks_its_rank_per_traveller_from_one_purse_and_scores_it():
    given = [*_walking(seats=2, purse=("5D", "10C", "3C")), E.StopReached(place="5H")]
    opts = {"return_journey": True}
    sc = scenario(SPEC, 2, opts).given(*given).when(C.Proceed(seat=0))
    sc.then(E.TollsBegan(place="5H"), E.TollDemanded(seat=0, place="5H", due=5))
    given += sc.events
    sc = scenario(SPEC, 2, opts).given(*given).when(C.Pay(seat=0, card="5D"))
    sc.then(E.PurseCardPaid(seat=0, card="5D", value=5), E.TollPaid(seat=0, place="5H", points=5),
            E.TollDemanded(seat=1, place="5H", due=5))
    given += sc.events
    sc = scenario(SPEC, 2, opts).given(*given).when(C.Pay(seat=1, card="10C"))
    sc.then(E.PurseCardPaid(seat=1, card="10C", value=10), E.TollPaid(seat=1, place="5H", points=5),
            E.StopReached(place="2H"))
    assert sc.then_state().purse == ("3C",)


def test_return_journey_a_traveller_whose_toll_cannot_be_paid_stops_there():
    given = [*_walking(seats=2, purse=("5D", "3C")), E.StopReached(place="5H"), E.TollsBegan(place="5H"),
             E.TollDemanded(seat=0, place="5H", due=5)]
    sc = scenario(SPEC, 2, {"return_journey": True}).given(*given).when(C.Pay(seat=0, card="5D"))
    sc.then(E.PurseCardPaid(seat=0, card="5D", value=5), E.TollPaid(seat=0, place="5H", points=5),
            E.TravellerStopped(seat=1, place="5H"), E.StopReached(place="2H"))
    state = sc.then_state()
    assert state.travellers[1].walking is False and state.travellers[0].walking is True


def test_return_journey_ends_after_woking_and_scores_wreckage_plus_points():
    given = [*_walking(purse=("2D", "3C"), route=("2H",)), E.StopReached(place="2H"), E.TollsBegan(place="2H"),
             E.TollDemanded(seat=0, place="2H", due=2)]
    sc = scenario(SPEC, 1, {"return_journey": True}).given(*given).when(C.Pay(seat=0, card="2D"))
    sc.then(E.PurseCardPaid(seat=0, card="2D", value=2), E.TollPaid(seat=0, place="2H", points=2),
            E.ReturnEnded(home=(0,)), E.GameEnded(won=True, reason="arrived at Primrose Hill and walked home"))
    result = SPEC.result(sc.then_state())
    assert result["winners"] == [0] and result["scores"] == [2] and result["return_points"] == [2]


def test_return_journey_what_was_cached_comes_back_to_the_purse_at_its_place():
    given = _walking(purse=("2D",), caches=(("5H", 0, "QD"),))
    sc = scenario(SPEC, 1, {"return_journey": True}).given(*given[:-1])
    assert sc.state.caches == (("5H", 0, "QD"),)
    sc = scenario(SPEC, 1, {"return_journey": True}).given(*given, E.StopReached(place="5H", cache="QD"))
    assert sc.state.purse == ("2D", "QD") and sc.state.caches == ()


def test_return_journey_stripping_a_ruin_costs_half_its_value_rounded_up_and_salvages_its_value():
    given = [*_walking(purse=("2D", "3C", "9C"), ruins=(("5H", "9S"),)), E.StopReached(place="5H"),
             E.RuinRevealed(place="5H", card="9S")]
    opts = {"return_journey": True}
    sc = scenario(SPEC, 1, opts).given(*given).when(C.StripRuin(seat=0))
    sc.then(E.RuinStripBegun(seat=0, place="5H", due=5))
    given += sc.events
    sc = scenario(SPEC, 1, opts).given(*given, E.PurseCardPaid(seat=0, card="2D", value=2)) \
        .when(C.Pay(seat=0, card="3C"))
    sc.then(E.PurseCardPaid(seat=0, card="3C", value=3), E.RuinSalvaged(seat=0, place="5H", card="9S", points=9))
    state = sc.then_state()
    assert state.step == "stop" and state.travellers[0].points == 9
    scenario(SPEC, 1, opts).given(*given, *sc.events).when(C.StripRuin(seat=0)).rejects("no_ruin")


def test_return_journey_ruins_lie_face_down_until_the_group_reaches_them():
    given = [*_walking(purse=("5D", "3C"), ruins=(("2H", "9S"),)), E.StopReached(place="5H"),
             E.TollsBegan(place="5H"), E.TollDemanded(seat=0, place="5H", due=5)]
    sc = scenario(SPEC, 1, {"return_journey": True}).given(*given)
    assert "9S" in SPEC.hidden(sc.state, 0)
    sc.when(C.Pay(seat=0, card="5D")).then(
        E.PurseCardPaid(seat=0, card="5D", value=5), E.TollPaid(seat=0, place="5H", points=5),
        E.StopReached(place="2H"), E.RuinRevealed(place="2H", card="9S"))
    assert "9S" not in SPEC.hidden(sc.then_state(), 0)


def test_return_journey_the_joker_steals_a_card_at_every_stop_until_a_face_card_is_shed():
    given = [*_walking(purse=("JOKER", "QD", "3C", "9C"), route=("2H", "5H", "8H")), E.StopReached(place="8H"),
             E.TollsBegan(place="8H"), E.TollDemanded(seat=0, place="8H", due=8)]
    opts = {"return_journey": True}
    sc = scenario(SPEC, 1, opts).given(*given).when(C.Pay(seat=0, card="9C"), outcomes=[1])
    sc.then(E.PurseCardPaid(seat=0, card="9C", value=9), E.TollPaid(seat=0, place="8H", points=8),
            E.StopReached(place="5H"), E.JokerStole(card="3C"))
    given += sc.events
    scenario(SPEC, 1, opts).given(*given).when(C.ShedJoker(seat=0, card="3C")).rejects("card_not_held")
    sc = scenario(SPEC, 1, opts).given(*given).when(C.ShedJoker(seat=0, card="QD"))
    sc.then(E.JokerShed(seat=0, card="QD"))
    assert sc.then_state().purse == ()


def test_return_journey_partner_or_witness_may_be_spent_as_10_for_a_toll():
    given = [E.CompanionJoined(card="QH"), *_walking(purse=("2D",)), E.StopReached(place="5H"),
             E.TollsBegan(place="5H"), E.TollDemanded(seat=0, place="5H", due=5)]
    sc = scenario(SPEC, 1, ALL).given(*given).when(C.Pay(seat=0, card="QH"))
    assert sc.events[:3] == [E.PurseCardPaid(seat=0, card="QH", value=10),
                             E.CompanionLeft(card="QH", reason="spent"),
                             E.TollPaid(seat=0, place="5H", points=5)]
