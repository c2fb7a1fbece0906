"""Every rule of the virtues text (and of the designed specials), as given / when / then on events."""

from __future__ import annotations

from virtues_support import (
    ACTION_DECK,
    ARRAY0,
    ARTHURS_SEAT,
    BANNOCKBURN,
    BOTHY,
    CAIRNGORMS,
    CEILIDH,
    DISPLAY,
    DROVE,
    EDINBURGH,
    GATHERING,
    GLENCOE,
    HAND0,
    HAND1,
    HOLYROOD,
    IONA,
    LOCATION_DECK,
    PILGRIMAGE,
    REIVERS,
    SCONE,
    SEER,
    SKARA_BRAE,
    STIRLING,
    STONE,
    STORM,
    SURVEY,
    completed,
    cover,
    game,
)

from croupier.engine.contract import Start
from croupier.engine.testing import scenario
from croupier.games.virtues import SPEC
from croupier.games.virtues.cards import CATALOG
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
from croupier.games.virtues.events import (
    ActionMoved,
    ActionPlayed,
    CardBanished,
    CardDiscarded,
    CardDrawn,
    CardSalvaged,
    CardSeized,
    DeckRebuilt,
    DiscardFlipped,
    DiscardTaken,
    DisplayRefilled,
    GameEnded,
    GameSetUp,
    HandDiscarded,
    LocationCompleted,
    LocationDrawn,
    LocationExchanged,
    LocationReturned,
    LocationsDiscarded,
    LocationsKept,
    LocationSwapped,
    LocationTaken,
    PeekedCardTaken,
    PlayingStopped,
    RearrangingStopped,
    SpecialPlayed,
    TurnBegan,
)

DRAWN = ACTION_DECK[0]  # the card seat 0 draws at the start of its turn


def drawn(scn, seat=0, card=DRAWN):
    """The draw step already taken: `card` drawn from the deck."""
    return scn.given(CardDrawn(seat=seat, card=card))


def legal(scn):
    """The legal actions at the scenario's given state."""
    return SPEC.legal_actions(scn.state, scn.state.current)


# --- setup ----------------------------------------------------------------------------------


def test_setup_deals_display_then_three_locations_and_three_actions_each_and_turns_up_a_discard():
    locs = list(CATALOG.locations)
    acts = list(CATALOG.action_deck(10))
    scenario(SPEC, 2).when(Start(), outcomes=[list(range(40)), list(range(60)), 1]).then(
        GameSetUp(
            location_deck=tuple(locs[9:]), display=tuple(locs[:3]), arrays=(tuple(locs[3:6]), tuple(locs[6:9])),
            action_deck=tuple(acts[7:]), hands=(tuple(acts[1:4]), tuple(acts[4:7])), discard=(acts[0],), first=1,
        ),
        TurnBegan(seat=1, turn=1),
    )


def test_setup_deck_has_fifty_symbol_cards_plus_the_special_cards_setting():
    for specials in (0, 4, 10):
        events = scenario(SPEC, 3, {"special_cards": specials}).when(
            Start(), outcomes=[list(range(40)), list(range(50 + specials)), 0]).events
        setup = events[0]
        cards = setup.action_deck + setup.discard + tuple(c for h in setup.hands for c in h)
        assert sorted(cards) == sorted(CATALOG.symbol_card_ids + CATALOG.special_ids[:specials])
        assert len(setup.location_deck) == 40 - 3 - 9


# --- the draw step ----------------------------------------------------------------------------


def test_draw_step_draws_the_top_card_of_the_action_deck():
    game().when(DrawCard(seat=0)).then(CardDrawn(seat=0, card=ACTION_DECK[0]))


def test_draw_step_may_take_the_top_card_of_the_discard_pile_instead():
    game(discard=("act-va-co-4", "act-st-co-1")).when(TakeDiscard(seat=0)).then(DiscardTaken(seat=0, card="act-st-co-1"))


def test_draw_step_cannot_take_a_special_card_from_the_discard_pile():
    scn = game(discard=("act-st-co-1", CEILIDH))
    assert [a.TYPE for a in legal(scn)] == ["DrawCard"]
    scn.when(TakeDiscard(seat=0)).rejects("discard_top_special")


def test_empty_action_deck_is_rebuilt_from_the_discard_pile_and_its_top_card_turned_up():
    discard = ("act-va-wi-1", "act-st-wi-1", "act-va-sp-1")
    game(action_deck=(), discard=discard).when(DrawCard(seat=0), outcomes=[[2, 0, 1]]).then(
        DeckRebuilt(deck=("act-va-sp-1", "act-va-wi-1", "act-st-wi-1")),
        DiscardFlipped(card="act-va-sp-1"),
        CardDrawn(seat=0, card="act-va-wi-1"),
    )


def test_a_deck_that_runs_out_is_rebuilt_at_once_so_the_seer_can_be_played():
    """Rules version 3: "If the Action Card deck runs out, the discard pile is turned over
    to form the new one" at once, not at the next draw."""
    pile = ("act-st-co-1", "act-va-co-2", "act-st-wi-2")
    scn = game(hands=((SEER, "act-va-st-1", "act-co-wi-1"), HAND1), action_deck=("act-va-wi-1",), discard=pile)
    scn.when(DrawCard(seat=0), outcomes=[[1, 2, 0]]).then(
        CardDrawn(seat=0, card="act-va-wi-1"),
        DeckRebuilt(deck=("act-va-co-2", "act-st-wi-2", "act-st-co-1")),
        DiscardFlipped(card="act-va-co-2"),
    )
    st = scn.then_state()
    assert st.action_deck == ("act-st-wi-2", "act-st-co-1") and st.discard == ("act-va-co-2",)
    assert any(a.TYPE == "PlaySpecial" and a.card == SEER for a in SPEC.legal_actions(st, 0))


def test_version_2_rebuilt_the_deck_only_at_the_next_draw():
    from dataclasses import replace

    pile = ("act-st-co-1", "act-va-co-2", "act-st-wi-2")
    scn = game(hands=((SEER, "act-va-st-1", "act-co-wi-1"), HAND1), action_deck=("act-va-wi-1",), discard=pile)
    v2 = replace(scn.state, config=replace(scn.state.config, rules=2))
    events = SPEC.for_version(2).decide(DrawCard(seat=0), v2, _ctx())
    assert events == [CardDrawn(seat=0, card="act-va-wi-1")]


def _ctx():
    from croupier.engine.contract import Context
    from croupier.engine.testing import ScriptedRng

    return Context(rng=ScriptedRng([]), now=0)


def test_draw_step_is_skipped_when_there_is_nothing_to_draw_or_take():
    scn = game(action_deck=(), discard=(CEILIDH,))
    assert scn.state.phase == "act"
    assert not {"DrawCard", "TakeDiscard"} & {a.TYPE for a in legal(scn)}


# --- the three choices ------------------------------------------------------------------------


def test_choice_one_play_an_action_card_on_a_matching_symbol_then_the_turn_ends():
    drawn(game()).when(PlayAction(seat=0, card="act-va-st-1", location=BANNOCKBURN, symbol="strength")).then(
        ActionPlayed(seat=0, card="act-va-st-1", location=BANNOCKBURN, symbol="strength"),
        TurnBegan(seat=1, turn=2),
    )


def test_choice_one_offers_every_matching_open_symbol_of_the_array():
    plays = {(a.card, a.location, a.symbol) for a in legal(drawn(game(cover(0, BANNOCKBURN, "valour", "act-va-co-2"))))
             if a.TYPE == "PlayAction"}
    assert ("act-va-st-1", BANNOCKBURN, "strength") in plays
    assert ("act-va-st-1", BANNOCKBURN, "valour") not in plays  # covered
    assert ("act-va-st-1", GLENCOE, "valour") in plays and ("act-va-st-1", GLENCOE, "strength") in plays
    assert ("act-wi-sp-1", GLENCOE, "spirit") in plays and ("act-wi-sp-1", EDINBURGH, "wisdom") in plays
    assert not any(loc == BANNOCKBURN and card == "act-wi-sp-1" for card, loc, _ in plays)


def test_choice_two_rearranges_a_matched_card_to_an_open_symbol_it_matches():
    scn = drawn(game(cover(0, BANNOCKBURN, "valour", "act-va-co-2")))
    scn.when(MoveAction(seat=0, card="act-va-co-2", location=EDINBURGH, symbol="valour")).then(
        ActionMoved(seat=0, card="act-va-co-2", location=EDINBURGH, symbol="valour"))
    scn.given(*scn.events).when(StopRearranging(seat=0)).then(RearrangingStopped(seat=0))
    scn.given(*scn.events)
    # re-arranging played no card: four in hand, so one is discarded at the end of the turn
    assert {a.TYPE for a in legal(scn)} == {"DiscardCard"}
    scn.when(DiscardCard(seat=0, card="act-wi-sp-1")).then(
        CardDiscarded(seat=0, card="act-wi-sp-1"), TurnBegan(seat=1, turn=2))


def test_choice_two_moves_each_card_at_most_once_per_turn():
    scn = drawn(game(cover(0, BANNOCKBURN, "valour", "act-va-co-2")))
    scn.given(ActionMoved(seat=0, card="act-va-co-2", location=BANNOCKBURN, symbol="courage"))
    assert [a.TYPE for a in legal(scn)] == ["StopRearranging"]
    scn.when(MoveAction(seat=0, card="act-va-co-2", location=EDINBURGH, symbol="valour")).rejects("card_already_moved")


def test_choice_two_a_move_that_covers_the_last_symbol_completes_the_location():
    scn = drawn(game(cover(0, BANNOCKBURN, "valour", "act-va-st-3"), cover(0, BANNOCKBURN, "strength", "act-st-co-2"),
                     cover(0, EDINBURGH, "valour", "act-va-co-2")))
    scn.when(MoveAction(seat=0, card="act-va-co-2", location=BANNOCKBURN, symbol="courage")).then(
        ActionMoved(seat=0, card="act-va-co-2", location=BANNOCKBURN, symbol="courage"),
        LocationCompleted(seat=0, location=BANNOCKBURN, cards=("act-va-st-3", "act-st-co-2", "act-va-co-2")),
    )
    scn.given(*scn.events).when(TakeLocation(seat=0, location=IONA)).then(
        LocationTaken(seat=0, location=IONA), DisplayRefilled(location=SKARA_BRAE))
    scn.given(*scn.events)
    assert scn.state.phase == "rearrange"  # back to re-arranging after taking the Location


def test_choice_three_discard_all_action_cards_and_draw_three_new_ones():
    drawn(game()).when(DiscardHand(seat=0)).then(
        HandDiscarded(seat=0, cards=HAND0 + (DRAWN,)),
        CardDrawn(seat=0, card=ACTION_DECK[1]), CardDrawn(seat=0, card=ACTION_DECK[2]),
        CardDrawn(seat=0, card=ACTION_DECK[3]),
        TurnBegan(seat=1, turn=2),
    )


def test_choice_three_discard_all_locations_to_the_bottom_and_draw_three_new_ones():
    scn = drawn(game(cover(0, GLENCOE, "spirit", "act-va-sp-4")))
    scn.when(DiscardLocations(seat=0)).then(
        LocationsDiscarded(seat=0, locations=ARRAY0, cards=("act-va-sp-4",)),
        LocationDrawn(seat=0, location=LOCATION_DECK[0]), LocationDrawn(seat=0, location=LOCATION_DECK[1]),
        LocationDrawn(seat=0, location=LOCATION_DECK[2]),
    )
    after = scn.then_state()
    assert after.location_deck == ARRAY0 and after.discard[-1] == "act-va-sp-4"


def test_exactly_one_of_the_three_choices_is_made_each_turn():
    scn = drawn(game())
    scn.given(ActionPlayed(seat=0, card="act-va-st-1", location=BANNOCKBURN, symbol="strength"))
    assert scn.state.phase == "end"
    scn.when(PlayAction(seat=0, card="act-co-wi-1", location=BANNOCKBURN, symbol="courage")).rejects("wrong_phase")


# --- the end of the turn ----------------------------------------------------------------------


def test_end_of_turn_draws_action_cards_up_to_three():
    drawn(game(hands=(HAND0[:2], HAND1))).when(
        PlayAction(seat=0, card="act-va-st-1", location=BANNOCKBURN, symbol="valour")).then(
        ActionPlayed(seat=0, card="act-va-st-1", location=BANNOCKBURN, symbol="valour"),
        CardDrawn(seat=0, card=ACTION_DECK[1]),
        TurnBegan(seat=1, turn=2),
    )


def test_end_of_turn_discards_down_to_three_action_cards_by_choice():
    scn = drawn(game(cover(0, BANNOCKBURN, "valour", "act-va-co-2")))
    scn.given(ActionMoved(seat=0, card="act-va-co-2", location=EDINBURGH, symbol="valour"), RearrangingStopped(seat=0))
    assert sorted(a.card for a in legal(scn)) == sorted(HAND0 + (DRAWN,))


def test_end_of_turn_turns_up_a_card_when_the_discard_pile_is_empty():
    scn = game().given(DiscardTaken(seat=0, card="act-st-co-1"))
    scn.when(PlayAction(seat=0, card="act-st-co-1", location=BANNOCKBURN, symbol="strength")).then(
        ActionPlayed(seat=0, card="act-st-co-1", location=BANNOCKBURN, symbol="strength"),
        DiscardFlipped(card=ACTION_DECK[0]),
        TurnBegan(seat=1, turn=2),
    )


def test_turns_pass_to_the_next_seat_and_wrap_around():
    scn = game(seat=1, turn=2).given(CardDrawn(seat=1, card=DRAWN))
    scn.when(PlayAction(seat=1, card="act-va-co-1", location=ARTHURS_SEAT, symbol="valour")).then(
        ActionPlayed(seat=1, card="act-va-co-1", location=ARTHURS_SEAT, symbol="valour"), TurnBegan(seat=0, turn=3))


# --- completion -------------------------------------------------------------------------------


def _nearly(seat=0):
    return (cover(seat, BANNOCKBURN, "valour", "act-va-st-3"), cover(seat, BANNOCKBURN, "strength", "act-st-co-2"))


def test_completed_location_goes_to_the_completion_pile_its_cards_to_the_discard_and_a_display_card_is_taken():
    scn = drawn(game(*_nearly()))
    scn.when(PlayAction(seat=0, card="act-co-wi-1", location=BANNOCKBURN, symbol="courage")).then(
        ActionPlayed(seat=0, card="act-co-wi-1", location=BANNOCKBURN, symbol="courage"),
        LocationCompleted(seat=0, location=BANNOCKBURN, cards=("act-va-st-3", "act-st-co-2", "act-co-wi-1")),
    )
    scn.given(*scn.events)
    assert scn.state.players[0].completed == (BANNOCKBURN,)
    assert scn.state.discard[-3:] == ("act-va-st-3", "act-st-co-2", "act-co-wi-1")
    assert sorted(a.location for a in legal(scn)) == sorted(DISPLAY)
    scn.when(TakeLocation(seat=0, location=CAIRNGORMS)).then(
        LocationTaken(seat=0, location=CAIRNGORMS), DisplayRefilled(location=SKARA_BRAE), TurnBegan(seat=1, turn=2))


def test_completion_with_an_empty_display_fills_the_array_from_the_location_deck():
    drawn(game(*_nearly(), display=())).when(
        PlayAction(seat=0, card="act-co-wi-1", location=BANNOCKBURN, symbol="courage")).then(
        ActionPlayed(seat=0, card="act-co-wi-1", location=BANNOCKBURN, symbol="courage"),
        LocationCompleted(seat=0, location=BANNOCKBURN, cards=("act-va-st-3", "act-st-co-2", "act-co-wi-1")),
        LocationDrawn(seat=0, location=SKARA_BRAE),
        TurnBegan(seat=1, turn=2),
    )


FIVE_DONE = tuple(completed(0, loc) for loc in (
    "loc-culloden-moor", "loc-dunnottar-castle", "loc-linlithgow-palace", "loc-dunfermline-abbey", "loc-ben-nevis"))


def test_sixth_completed_location_wins_at_once():
    drawn(game(*FIVE_DONE, *_nearly())).when(
        PlayAction(seat=0, card="act-co-wi-1", location=BANNOCKBURN, symbol="courage")).then(
        ActionPlayed(seat=0, card="act-co-wi-1", location=BANNOCKBURN, symbol="courage"),
        LocationCompleted(seat=0, location=BANNOCKBURN, cards=("act-va-st-3", "act-st-co-2", "act-co-wi-1")),
        GameEnded(winners=(0,), reason="completed"),
    )


def test_play_to_eight_option_a_sixth_completion_does_not_win():
    scn = drawn(game(*FIVE_DONE, *_nearly(), options={"completions_to_win": 8}))
    scn.when(PlayAction(seat=0, card="act-co-wi-1", location=BANNOCKBURN, symbol="courage")).then(
        ActionPlayed(seat=0, card="act-co-wi-1", location=BANNOCKBURN, symbol="courage"),
        LocationCompleted(seat=0, location=BANNOCKBURN, cards=("act-va-st-3", "act-st-co-2", "act-co-wi-1")),
    )


def test_turn_limit_ends_the_game_and_most_completions_win():
    scn = game(completed(0, "loc-ben-nevis"), seat=1, turn=2, options={"max_rounds": 1}).given(
        CardDrawn(seat=1, card=DRAWN))
    scn.when(PlayAction(seat=1, card="act-va-co-1", location=ARTHURS_SEAT, symbol="valour")).then(
        ActionPlayed(seat=1, card="act-va-co-1", location=ARTHURS_SEAT, symbol="valour"),
        GameEnded(winners=(0,), reason="turn_limit"),
    )


def test_turn_limit_with_equal_completions_is_shared():
    scn = game(seat=1, turn=2, options={"max_rounds": 1}).given(CardDrawn(seat=1, card=DRAWN))
    events = scn.when(PlayAction(seat=1, card="act-va-co-1", location=ARTHURS_SEAT, symbol="valour")).events
    assert events[-1] == GameEnded(winners=(0, 1), reason="turn_limit")
    assert SPEC.result(scn.then_state())["winners"] == [0, 1]


# --- the ten special cards ----------------------------------------------------------------------


def with_hand(*cards, before=(), **layout):
    return drawn(game(*before, hands=(tuple(cards), HAND1), **layout))


def test_special_standing_stone_covers_any_symbol_and_can_complete_a_location():
    scn = with_hand(STONE, "act-va-st-1", "act-co-wi-1", before=_nearly())
    scn.when(PlaySpecial(seat=0, card=STONE, location=BANNOCKBURN, symbol="courage")).then(
        ActionPlayed(seat=0, card=STONE, location=BANNOCKBURN, symbol="courage"),
        LocationCompleted(seat=0, location=BANNOCKBURN, cards=("act-va-st-3", "act-st-co-2", STONE)),
    )


def test_special_standing_stone_is_offered_for_every_open_symbol():
    scn = with_hand(STONE, "act-va-st-1", "act-co-wi-1", before=_nearly())
    stones = {(a.location, a.symbol) for a in legal(scn) if a.TYPE == "PlaySpecial"}
    assert stones == {(BANNOCKBURN, "courage")} | {(loc, s) for loc in (EDINBURGH, GLENCOE)
                                                    for s in CATALOG.locations[loc].symbols}


def test_special_standing_stone_on_a_location_can_be_rearranged_to_any_open_symbol():
    scn = drawn(game(cover(0, EDINBURGH, "wisdom", STONE)))
    moves = {(a.location, a.symbol) for a in legal(scn) if a.TYPE == "MoveAction" and a.card == STONE}
    assert (GLENCOE, "spirit") in moves and (BANNOCKBURN, "courage") in moves
    scn.when(MoveAction(seat=0, card=STONE, location=GLENCOE, symbol="spirit")).then(
        ActionMoved(seat=0, card=STONE, location=GLENCOE, symbol="spirit"))


def test_special_border_reivers_takes_a_matched_card_from_another_player_into_the_hand():
    scn = with_hand(REIVERS, "act-va-st-1", "act-co-wi-1", before=[cover(1, ARTHURS_SEAT, "valour", "act-va-co-2")])
    scn.when(PlaySpecial(seat=0, card=REIVERS, target="act-va-co-2")).then(
        SpecialPlayed(seat=0, card=REIVERS, kind="raid"), CardSeized(seat=0, victim=1, card="act-va-co-2"))
    after = scn.then_state()
    assert "act-va-co-2" in after.players[0].hand
    assert after.players[1].array[0].covers == ("", "", "")
    assert after.discard[-1] == REIVERS


def test_special_brahan_seer_looks_at_the_top_three_takes_one_and_leaves_the_rest_in_order():
    scn = with_hand(SEER, "act-va-st-1", "act-co-wi-1")
    scn.when(PlaySpecial(seat=0, card=SEER)).then(SpecialPlayed(seat=0, card=SEER, kind="scout"))
    scn.given(*scn.events)
    assert [a.card for a in legal(scn)] == sorted(ACTION_DECK[1:4])
    scn.when(ChooseCard(seat=0, card=ACTION_DECK[2])).then(PeekedCardTaken(seat=0, card=ACTION_DECK[2]))
    scn.given(*scn.events, CardDiscarded(seat=0, card="act-va-st-1"), TurnBegan(seat=1, turn=2))
    scn.when(DrawCard(seat=1)).then(CardDrawn(seat=1, card=ACTION_DECK[1]))
    assert scn.then_state().action_deck[0] == ACTION_DECK[3]


def test_special_drove_road_swaps_a_location_with_the_display_and_discards_its_cards():
    scn = with_hand(DROVE, "act-va-st-1", "act-co-wi-1", before=[cover(0, EDINBURGH, "valour", "act-va-co-2")])
    scn.when(PlaySpecial(seat=0, card=DROVE, location=EDINBURGH, target=HOLYROOD)).then(
        SpecialPlayed(seat=0, card=DROVE, kind="swap"),
        LocationSwapped(seat=0, give=EDINBURGH, take=HOLYROOD, cards=("act-va-co-2",)),
        TurnBegan(seat=1, turn=2),
    )
    after = scn.then_state()
    assert after.display == (IONA, CAIRNGORMS, EDINBURGH)
    assert [s.location for s in after.players[0].array] == [BANNOCKBURN, HOLYROOD, GLENCOE]
    assert after.discard[-1] == "act-va-co-2"


def test_special_ordnance_survey_exchanges_a_location_for_one_of_the_top_three():
    scn = with_hand(SURVEY, "act-va-st-1", "act-co-wi-1")
    scn.when(PlaySpecial(seat=0, card=SURVEY)).then(SpecialPlayed(seat=0, card=SURVEY, kind="survey"))
    scn.given(*scn.events)
    assert scn.state.turn.peek == LOCATION_DECK
    scn.when(ExchangeLocation(seat=0, give=GLENCOE, take=STIRLING)).then(
        LocationExchanged(seat=0, give=GLENCOE, take=STIRLING, cards=()), TurnBegan(seat=1, turn=2))
    after = scn.then_state()
    assert after.location_deck == (SKARA_BRAE, SCONE, GLENCOE)
    assert [s.location for s in after.players[0].array] == [BANNOCKBURN, EDINBURGH, STIRLING]


def test_special_ordnance_survey_may_keep_the_locations():
    scn = with_hand(SURVEY, "act-va-st-1", "act-co-wi-1").given(SpecialPlayed(seat=0, card=SURVEY, kind="survey"))
    scn.when(KeepLocations(seat=0)).then(LocationsKept(seat=0), TurnBegan(seat=1, turn=2))
    assert scn.then_state().location_deck == LOCATION_DECK


def test_special_clan_gathering_plays_up_to_two_cards():
    scn = with_hand(GATHERING, "act-va-st-1", "act-co-wi-1")
    scn.when(PlaySpecial(seat=0, card=GATHERING)).then(SpecialPlayed(seat=0, card=GATHERING, kind="double"))
    scn.given(*scn.events).when(PlayAction(seat=0, card="act-va-st-1", location=BANNOCKBURN, symbol="valour")).then(
        ActionPlayed(seat=0, card="act-va-st-1", location=BANNOCKBURN, symbol="valour"))
    scn.given(*scn.events).when(PlayAction(seat=0, card="act-co-wi-1", location=BANNOCKBURN, symbol="courage")).then(
        ActionPlayed(seat=0, card="act-co-wi-1", location=BANNOCKBURN, symbol="courage"),
        CardDrawn(seat=0, card=ACTION_DECK[1]), CardDrawn(seat=0, card=ACTION_DECK[2]), TurnBegan(seat=1, turn=2),
    )


def test_special_clan_gathering_may_stop_early():
    scn = with_hand(GATHERING, "act-va-st-1", "act-co-wi-1").given(SpecialPlayed(seat=0, card=GATHERING, kind="double"))
    assert "StopPlaying" in {a.TYPE for a in legal(scn)}
    scn.when(StopPlaying(seat=0)).then(PlayingStopped(seat=0), TurnBegan(seat=1, turn=2))


def test_special_ceilidh_draws_two_cards_then_the_hand_is_discarded_down_to_three():
    scn = with_hand(CEILIDH, "act-va-st-1", "act-co-wi-1")
    scn.when(PlaySpecial(seat=0, card=CEILIDH)).then(
        SpecialPlayed(seat=0, card=CEILIDH, kind="draw"),
        CardDrawn(seat=0, card=ACTION_DECK[1]), CardDrawn(seat=0, card=ACTION_DECK[2]),
    )
    scn.given(*scn.events)
    assert len([a for a in legal(scn) if a.TYPE == "DiscardCard"]) == 5


def test_special_highland_storm_discards_a_matched_card_of_another_player():
    scn = with_hand(STORM, "act-va-st-1", "act-co-wi-1", before=[cover(1, ARTHURS_SEAT, "valour", "act-va-co-2")])
    scn.when(PlaySpecial(seat=0, card=STORM, target="act-va-co-2")).then(
        SpecialPlayed(seat=0, card=STORM, kind="banish"), CardBanished(seat=0, victim=1, card="act-va-co-2"),
        TurnBegan(seat=1, turn=2),
    )
    after = scn.then_state()
    assert after.discard[-2:] == (STORM, "act-va-co-2")
    assert after.players[1].array[0].covers == ("", "", "")


def test_special_bothy_takes_a_symbol_card_from_the_discard_pile():
    scn = with_hand(BOTHY, "act-va-st-1", "act-co-wi-1", discard=("act-st-co-1", CEILIDH, "act-va-co-3"))
    targets = {a.target for a in legal(scn) if a.TYPE == "PlaySpecial"}
    assert targets == {"act-st-co-1", "act-va-co-3"}
    scn.when(PlaySpecial(seat=0, card=BOTHY, target="act-st-co-1")).then(
        SpecialPlayed(seat=0, card=BOTHY, kind="salvage"), CardSalvaged(seat=0, card="act-st-co-1"))


def test_special_pilgrimage_takes_a_display_location_then_one_is_returned_at_the_end_of_the_turn():
    scn = with_hand(PILGRIMAGE, "act-va-st-1", "act-co-wi-1", before=[cover(0, GLENCOE, "spirit", "act-va-sp-4")])
    scn.when(PlaySpecial(seat=0, card=PILGRIMAGE, target=IONA)).then(
        SpecialPlayed(seat=0, card=PILGRIMAGE, kind="pilgrim"),
        LocationTaken(seat=0, location=IONA), DisplayRefilled(location=SKARA_BRAE),
    )
    scn.given(*scn.events)
    assert sorted(a.location for a in legal(scn)) == sorted(ARRAY0 + (IONA,))
    scn.when(ReturnLocation(seat=0, location=GLENCOE)).then(
        LocationReturned(seat=0, location=GLENCOE, cards=("act-va-sp-4",)), TurnBegan(seat=1, turn=2))
    assert scn.then_state().location_deck[-1] == GLENCOE


def test_special_cards_go_to_the_discard_pile_and_so_block_taking_it():
    scn = with_hand(DROVE, "act-va-st-1", "act-co-wi-1")
    scn.when(PlaySpecial(seat=0, card=DROVE, location=GLENCOE, target=IONA))
    scn.given(*scn.events)
    assert scn.state.current == 1 and scn.state.discard[-1] == DROVE
    assert [a.TYPE for a in legal(scn)] == ["DrawCard"]


def test_a_state_pickled_before_rules_versions_were_told_apart_loads_as_version_2():
    import pickle

    from croupier.games.virtues.state import Config

    config = game().state.config
    back = object.__new__(Config)
    back.__setstate__(config.__getstate__()[:-1])  # as pickled before Config.rules existed
    assert back.rules == 2 and back.seats == config.seats and config.rules == 3
    assert pickle.loads(pickle.dumps(config)) == config
