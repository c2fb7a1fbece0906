"""Every kind of illegal command is rejected, with its stable code."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pytest
from virtues_support import (
    ARTHURS_SEAT,
    BANNOCKBURN,
    BOTHY,
    CEILIDH,
    DROVE,
    EDINBURGH,
    GATHERING,
    GLENCOE,
    HAND1,
    HOLYROOD,
    IONA,
    PILGRIMAGE,
    REIVERS,
    SEER,
    SKARA_BRAE,
    STONE,
    STORM,
    SURVEY,
    cover,
    game,
)

from croupier.engine.contract import MALFORMED, Command, Start, Tick
from croupier.engine.testing import scenario
from croupier.games.virtues import SPEC
from croupier.games.virtues.commands import (
    ChooseCard,
    DiscardCard,
    DiscardHand,
    DiscardLocations,
    DrawCard,
    ExchangeLocation,
    KeepLocations,
    MoveAction,
    PlayAction,
    PlaySpecial,
    ReturnLocation,
    StopPlaying,
    StopRearranging,
    TakeDiscard,
    TakeLocation,
)
from croupier.games.virtues.events import CardDrawn, GameEnded, SpecialPlayed


def drawn(scn):
    return scn.given(CardDrawn(seat=0, card="act-va-wi-1"))


def hand(*cards, before=(), **layout):
    return drawn(game(*before, hands=(tuple(cards), HAND1), **layout))


@dataclass(frozen=True, kw_only=True)
class Dance(Command):
    TYPE: ClassVar[str] = "Dance"


def test_commands_before_the_deal_are_rejected_not_started():
    scenario(SPEC, 2).when(DrawCard(seat=0)).rejects("not_started")


def test_start_twice_is_rejected_already_started():
    game().when(Start()).rejects("already_started")


def test_tick_is_rejected_no_deadline():
    game().when(Tick(now=5)).rejects("no_deadline")


def test_commands_after_the_end_are_rejected_game_over():
    game().given(GameEnded(winners=(0,), reason="completed")).when(DrawCard(seat=0)).rejects("game_over")


def test_another_seat_is_rejected_not_your_turn():
    game().when(DrawCard(seat=1)).rejects("not_your_turn")


def test_a_command_of_another_game_is_rejected_not_an_action():
    rejection = game().when(Dance(seat=0)).rejects("not_an_action")
    assert rejection.kind == MALFORMED


def test_a_field_of_the_wrong_type_is_rejected_malformed_command():
    rejection = drawn(game()).when(PlayAction(seat=0, card=7, location=BANNOCKBURN, symbol="valour")).rejects(
        "malformed_command")
    assert rejection.kind == MALFORMED
    drawn(game()).when(ChooseCard(seat=0, card=None)).rejects("malformed_command")


@pytest.mark.parametrize("command", [
    PlayAction(seat=0, card="act-va-st-1", location=BANNOCKBURN, symbol="valour"),
    DiscardHand(seat=0), DiscardLocations(seat=0), StopRearranging(seat=0), StopPlaying(seat=0),
    ChooseCard(seat=0, card="act-va-wi-1"), KeepLocations(seat=0), TakeLocation(seat=0, location=IONA),
    DiscardCard(seat=0, card="act-va-st-1"), ReturnLocation(seat=0, location=GLENCOE),
    ExchangeLocation(seat=0, give=GLENCOE, take=SKARA_BRAE),
    MoveAction(seat=0, card="act-va-co-2", location=EDINBURGH, symbol="valour"),
])
def test_a_choice_before_the_draw_step_is_rejected_wrong_phase(command):
    game().when(command).rejects("wrong_phase")


def test_drawing_twice_is_rejected_wrong_phase():
    drawn(game()).when(DrawCard(seat=0)).rejects("wrong_phase")
    drawn(game()).when(TakeDiscard(seat=0)).rejects("wrong_phase")


def test_drawing_with_no_deck_and_too_small_a_discard_is_rejected_deck_empty():
    game(action_deck=(), discard=("act-st-co-1",)).when(DrawCard(seat=0)).rejects("deck_empty")


def test_taking_from_an_empty_discard_pile_is_rejected_discard_empty():
    game(discard=()).when(TakeDiscard(seat=0)).rejects("discard_empty")


def test_taking_a_special_from_the_discard_is_rejected_discard_top_special():
    game(discard=(CEILIDH,)).when(TakeDiscard(seat=0)).rejects("discard_top_special")


def test_playing_a_card_not_in_hand_is_rejected_card_not_in_hand():
    drawn(game()).when(PlayAction(seat=0, card="act-va-co-1", location=BANNOCKBURN, symbol="valour")).rejects(
        "card_not_in_hand")
    drawn(game()).when(PlaySpecial(seat=0, card=CEILIDH)).rejects("card_not_in_hand")


def test_playing_a_special_as_a_symbol_card_is_rejected_not_a_symbol_card():
    hand(STONE, "act-va-st-1").when(PlayAction(seat=0, card=STONE, location=BANNOCKBURN, symbol="valour")).rejects(
        "not_a_symbol_card")


def test_playing_a_symbol_card_as_a_special_is_rejected_not_a_special():
    drawn(game()).when(PlaySpecial(seat=0, card="act-va-st-1")).rejects("not_a_special")


def test_playing_on_a_location_outside_the_array_is_rejected_no_such_location():
    drawn(game()).when(PlayAction(seat=0, card="act-va-st-1", location=ARTHURS_SEAT, symbol="valour")).rejects(
        "no_such_location")


def test_playing_on_a_symbol_the_location_lacks_is_rejected_symbol_not_on_location():
    drawn(game()).when(PlayAction(seat=0, card="act-wi-sp-1", location=BANNOCKBURN, symbol="wisdom")).rejects(
        "symbol_not_on_location")


def test_playing_on_a_covered_symbol_is_rejected_symbol_covered():
    drawn(game(cover(0, BANNOCKBURN, "valour", "act-va-co-2"))).when(
        PlayAction(seat=0, card="act-va-st-1", location=BANNOCKBURN, symbol="valour")).rejects("symbol_covered")


def test_playing_a_card_without_that_symbol_is_rejected_card_does_not_match():
    drawn(game()).when(PlayAction(seat=0, card="act-co-wi-1", location=BANNOCKBURN, symbol="valour")).rejects(
        "card_does_not_match")


def test_moving_a_card_not_on_the_array_is_rejected_card_not_placed():
    drawn(game(cover(1, ARTHURS_SEAT, "valour", "act-va-co-2"))).when(
        MoveAction(seat=0, card="act-va-co-2", location=EDINBURGH, symbol="valour")).rejects("card_not_placed")


def test_moving_to_a_symbol_the_card_lacks_is_rejected_card_does_not_match():
    drawn(game(cover(0, BANNOCKBURN, "valour", "act-va-co-2"))).when(
        MoveAction(seat=0, card="act-va-co-2", location=EDINBURGH, symbol="strength")).rejects("card_does_not_match")


def test_discarding_locations_with_an_empty_array_is_rejected_no_locations():
    game(arrays=((), ("loc-arthurs-seat",)), location_deck=()).given(CardDrawn(seat=0, card="act-va-wi-1")).when(
        DiscardLocations(seat=0)).rejects("no_locations")


@pytest.mark.parametrize("card, fields, code", [
    (CEILIDH, {"target": "act-va-co-2"}, "unexpected_field"),
    (STONE, {"location": BANNOCKBURN}, "missing_field"),
    (REIVERS, {}, "missing_field"),
    (DROVE, {"target": HOLYROOD}, "missing_field"),
    (STONE, {"location": BANNOCKBURN, "symbol": "valour", "target": "x"}, "unexpected_field"),
])
def test_a_special_with_the_wrong_fields_is_rejected(card, fields, code):
    hand(card, "act-va-st-1").when(PlaySpecial(seat=0, card=card, **fields)).rejects(code)


def test_standing_stone_on_a_covered_symbol_is_rejected_symbol_covered():
    hand(STONE, before=[cover(0, BANNOCKBURN, "valour", "act-va-co-2")]).when(
        PlaySpecial(seat=0, card=STONE, location=BANNOCKBURN, symbol="valour")).rejects("symbol_covered")


def test_reivers_or_storm_on_own_or_unplaced_card_is_rejected_no_such_target():
    before = [cover(0, BANNOCKBURN, "valour", "act-va-co-2")]
    hand(REIVERS, before=before).when(PlaySpecial(seat=0, card=REIVERS, target="act-va-co-2")).rejects("no_such_target")
    hand(STORM, before=before).when(PlaySpecial(seat=0, card=STORM, target="act-va-co-9")).rejects("no_such_target")


def test_bothy_on_a_card_not_in_the_discard_is_rejected_not_in_discard():
    hand(BOTHY).when(PlaySpecial(seat=0, card=BOTHY, target="act-va-co-2")).rejects("not_in_discard")


def test_bothy_on_a_special_in_the_discard_is_rejected_not_a_symbol_card():
    hand(BOTHY, discard=(CEILIDH, "act-st-co-1")).when(PlaySpecial(seat=0, card=BOTHY, target=CEILIDH)).rejects(
        "not_a_symbol_card")


def test_pilgrimage_or_drove_road_on_a_location_not_in_the_display_is_rejected_not_in_display():
    hand(PILGRIMAGE).when(PlaySpecial(seat=0, card=PILGRIMAGE, target=SKARA_BRAE)).rejects("not_in_display")
    hand(DROVE).when(PlaySpecial(seat=0, card=DROVE, location=GLENCOE, target=SKARA_BRAE)).rejects("not_in_display")


def test_drove_road_giving_a_location_outside_the_array_is_rejected_no_such_location():
    hand(DROVE).when(PlaySpecial(seat=0, card=DROVE, location=ARTHURS_SEAT, target=IONA)).rejects("no_such_location")


def test_seer_with_an_empty_deck_is_rejected_deck_empty():
    game(hands=((SEER,), HAND1), action_deck=(), discard=("act-st-co-1",)).given(
        CardDrawn(seat=0, card="act-st-co-1")).when(PlaySpecial(seat=0, card=SEER)).rejects("deck_empty")


def test_survey_with_an_empty_location_deck_is_rejected_location_deck_empty():
    hand(SURVEY, location_deck=()).when(PlaySpecial(seat=0, card=SURVEY)).rejects("location_deck_empty")


def test_choosing_a_card_not_looked_at_is_rejected_not_looking_at_card():
    hand(SEER).given(SpecialPlayed(seat=0, card=SEER, kind="scout")).when(
        ChooseCard(seat=0, card="act-va-st-2")).rejects("not_looking_at_card")


def test_exchanging_for_a_location_not_looked_at_is_rejected_not_looking_at_location():
    scn = hand(SURVEY).given(SpecialPlayed(seat=0, card=SURVEY, kind="survey"))
    scn.when(ExchangeLocation(seat=0, give=GLENCOE, take=IONA)).rejects("not_looking_at_location")
    scn.when(ExchangeLocation(seat=0, give=IONA, take=SKARA_BRAE)).rejects("no_such_location")


def test_playing_a_special_during_clan_gathering_is_rejected_wrong_phase():
    hand(GATHERING, CEILIDH).given(SpecialPlayed(seat=0, card=GATHERING, kind="double")).when(
        PlaySpecial(seat=0, card=CEILIDH)).rejects("wrong_phase")


def test_taking_a_location_not_in_the_display_is_rejected_not_in_display():
    from croupier.games.virtues.events import LocationCompleted
    scn = drawn(game()).given(LocationCompleted(seat=0, location=GLENCOE, cards=()))
    scn.when(TakeLocation(seat=0, location=SKARA_BRAE)).rejects("not_in_display")


def test_discarding_a_card_before_returning_a_location_is_rejected_return_location_first():
    from croupier.games.virtues.events import LocationTaken
    scn = hand(PILGRIMAGE, "act-va-st-1", "act-co-wi-1").given(
        SpecialPlayed(seat=0, card=PILGRIMAGE, kind="pilgrim"), LocationTaken(seat=0, location=IONA))
    scn.when(DiscardCard(seat=0, card="act-va-st-1")).rejects("return_location_first")
    scn.when(ReturnLocation(seat=0, location=SKARA_BRAE)).rejects("no_such_location")


def test_returning_a_location_with_three_is_rejected_enough_locations():
    scn = hand(CEILIDH, "act-va-st-1", "act-co-wi-1").given(SpecialPlayed(seat=0, card=CEILIDH, kind="draw"),
                                                           CardDrawn(seat=0, card="act-st-wi-1"))
    scn.when(ReturnLocation(seat=0, location=GLENCOE)).rejects("enough_locations")
    scn.when(DiscardCard(seat=0, card="act-va-co-1")).rejects("card_not_in_hand")


def test_a_raid_on_an_open_symbol_is_rejected_no_such_target():
    """An open symbol is kept as "" in a Location's covers: a Reivers or Storm aimed at
    target "" found seat 0's open symbol, seized a card that does not exist and put a
    phantom "" into the raider's hand (a review helper's find)."""
    raider = game(hands=(HAND1, (REIVERS, STORM)), seat=1).given(CardDrawn(seat=1, card="act-va-wi-1"))
    for card in (REIVERS, STORM):
        raider.when(PlaySpecial(seat=1, card=card, target="")).rejects("no_such_target")
