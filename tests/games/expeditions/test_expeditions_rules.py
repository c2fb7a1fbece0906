"""Given / when / then on events, one test per rule of the text (and per setting)."""

from __future__ import annotations

from expeditions_helpers import on_path, position

from croupier.engine.contract import Start
from croupier.engine.testing import fair_rng, scenario
from croupier.games.expeditions import SPEC
from croupier.games.expeditions.cards import CONTENT
from croupier.games.expeditions.commands import (
    BeginPath,
    DiscardCard,
    DrawFromDiscard,
    DrawFromSupply,
    MoveFigure,
    PlayOnPath,
    SkipMove,
)
from croupier.games.expeditions.events import (
    ArrowFound,
    ArtefactFound,
    CardDiscarded,
    CardDrawn,
    CardPlayed,
    ExpeditionDealt,
    ExpeditionEnded,
    FigureMoved,
    GameEnded,
    LastStepPlayed,
    MoveSkipped,
    PathBegun,
    PointsFound,
)
from croupier.games.expeditions.views import hidden, view

H0 = ["red-3-a", "red-5-a", "red-5-b", "red-8-a", "blue-2-a", "blue-6-a", "green-1-a", "white-9-a"]
H1 = ["yellow-0-a", "yellow-4-a", "yellow-7-a", "blue-3-a", "blue-4-b", "green-2-a", "green-10-a", "white-1-a"]
H2 = ["yellow-1-a", "yellow-2-b", "white-3-a", "white-4-a", "green-5-a", "green-6-a", "red-0-a", "red-1-a"]


def _legal(sc, seat):
    return SPEC.legal_actions(sc.state, seat)


# --- setup and the deal ---------------------------------------------------------------


def test_deal_gives_eight_cards_each_and_the_rest_is_the_supply():
    events = scenario(SPEC, 4).when(Start(), rng=fair_rng()).events
    assert [type(e) for e in events] == [ExpeditionDealt]
    deal = events[0]
    assert [len(h) for h in deal.hands] == [8, 8, 8, 8]
    assert len(deal.supply) == 110 - 32 and deal.removed == ()
    every = [c for h in deal.hands for c in h] + list(deal.supply)
    assert sorted(every) == sorted(CONTENT.cards)


def test_two_players_remove_thirty_random_cards_before_dealing():
    deal = scenario(SPEC, 2).when(Start(), rng=fair_rng()).events[0]
    assert len(deal.removed) == 30 and len(deal.supply) == 110 - 30 - 16
    every = list(deal.removed) + [c for h in deal.hands for c in h] + list(deal.supply)
    assert sorted(every) == sorted(CONTENT.cards)


def test_deal_order_and_first_player_come_from_the_recorded_shuffles():
    # outcomes: the first player, the card shuffle (a permutation), the tile shuffle
    deal = scenario(SPEC, 2).when(Start(), outcomes=[1, list(range(110)), list(range(25))]).events[0]
    cards = CONTENT.cards
    assert deal.first == 1 and deal.expedition == 1
    assert deal.removed == cards[:30]
    assert deal.hands == (cards[30:38], cards[38:46])
    assert deal.supply == cards[46:]
    # tiles go path by path onto steps 2, 4, 6, 7, 9
    assert deal.tiles[0] == (None, "artefact-1", None, "artefact-2", None, "artefact-3", "artefact-4", None, "artefact-5")
    assert deal.tiles[4][8] == "points-15-b"


def test_event_tiles_lie_on_steps_2_4_6_7_9_of_every_path():
    deal = scenario(SPEC, 3).when(Start(), rng=fair_rng()).events[0]
    for row in deal.tiles:
        assert [s + 1 for s, t in enumerate(row) if t is not None] == [2, 4, 6, 7, 9]
    assert sorted(t for row in deal.tiles for t in row if t) == sorted(CONTENT.tiles)


def test_setting_tile_spaces_selects_other_steps_and_leaves_spare_tiles_in_the_box():
    deal = scenario(SPEC, 3, {"tile_spaces": "2,4,7,9"}).when(Start(), rng=fair_rng()).events[0]
    for row in deal.tiles:
        assert [s + 1 for s, t in enumerate(row) if t is not None] == [2, 4, 7, 9]
    assert len({t for row in deal.tiles for t in row if t}) == 20


def test_first_turn_is_the_play_phase_of_the_first_player():
    sc = position(2, [H0, H1], current=0)
    assert {a.TYPE for a in _legal(sc, 0)} == {"BeginPath", "DiscardCard"}
    assert _legal(sc, 1) == []


# --- begin a path ---------------------------------------------------------------------


def test_begin_path_lays_the_card_and_puts_a_figure_on_the_first_step():
    sc = position(2, [H0, H1]).when(BeginPath(seat=0, card="red-3-a"))
    sc.then(PathBegun(seat=0, card="red-3-a", researcher=False))
    state = sc.then_state()
    me = view(state, 0)["players"][0]
    assert me["paths"] == {"red": {"cards": ["red-3-a"], "step": 1, "researcher": False}}
    assert "red-3-a" not in me["hand"] and state.phase == "draw"


def test_begin_path_with_any_card_of_the_colour_by_default():
    position(2, [H0, H1]).when(BeginPath(seat=0, card="red-8-a")).then(
        PathBegun(seat=0, card="red-8-a", researcher=False))


def test_setting_strict_start_requires_the_lowest_card_of_the_colour():
    sc = position(2, [H0, H1], options={"strict_start": True})
    sc.when(BeginPath(seat=0, card="red-5-a")).rejects("not_lowest_card")
    sc.when(BeginPath(seat=0, card="red-3-a")).then(PathBegun(seat=0, card="red-3-a", researcher=False))
    begins = {a.card for a in _legal(sc, 0) if a.TYPE == "BeginPath"}
    assert begins == {"red-3-a", "blue-2-a", "green-1-a", "white-9-a"}


def test_the_researcher_may_begin_a_path_once():
    sc = position(2, [H0, H1])
    sc.when(BeginPath(seat=0, card="blue-2-a", researcher=True)).then(
        PathBegun(seat=0, card="blue-2-a", researcher=True))
    sc = position(2, [H0, H1], *on_path(0, "blue-2-a", 1, researcher=True))
    sc.when(BeginPath(seat=0, card="red-3-a", researcher=True)).rejects("no_researcher_left")
    assert not any(a.TYPE == "BeginPath" and a.researcher for a in _legal(sc, 0))


def test_four_adventurers_then_only_the_researcher_is_left():
    hand = ["yellow-1-a", "blue-1-a", "white-1-a", "green-1-a", "red-1-a", "red-2-a", "red-3-a", "red-4-a"]
    setup = [e for c in hand[:4] for e in on_path(0, c, 1)]
    sc = position(2, [hand, H1], *setup)
    sc.when(BeginPath(seat=0, card="red-1-a")).rejects("no_adventurer_left")
    sc.when(BeginPath(seat=0, card="red-1-a", researcher=True)).then(
        PathBegun(seat=0, card="red-1-a", researcher=True))


def test_only_one_search_per_colour_for_a_player():
    sc = position(2, [H0, H1], *on_path(0, "red-3-a", 1))
    sc.when(BeginPath(seat=0, card="red-5-a")).rejects("path_already_begun")


def test_several_players_may_search_the_same_path():
    sc = position(2, [H0, H1], *on_path(0, "blue-2-a", 3), current=1)
    sc.when(BeginPath(seat=1, card="blue-3-a")).then(PathBegun(seat=1, card="blue-3-a", researcher=False))


# --- move forward ---------------------------------------------------------------------


def test_a_card_of_equal_or_higher_value_moves_the_figure_one_step():
    sc = position(2, [H0, H1], *on_path(0, "red-5-a", 1))
    sc.when(PlayOnPath(seat=0, card="red-5-b")).then(
        CardPlayed(seat=0, card="red-5-b"), FigureMoved(seat=0, color="red", step=2))
    sc.when(PlayOnPath(seat=0, card="red-8-a")).then(
        CardPlayed(seat=0, card="red-8-a"), FigureMoved(seat=0, color="red", step=2))
    sc.when(PlayOnPath(seat=0, card="red-3-a")).rejects("card_too_low")
    assert {a.card for a in _legal(sc, 0) if a.TYPE == "PlayOnPath"} == {"red-5-b", "red-8-a"}


def test_playing_on_a_path_needs_it_begun():
    position(2, [H0, H1]).when(PlayOnPath(seat=0, card="red-3-a")).rejects("path_not_begun")


def test_artefact_tile_is_taken_and_its_space_stays_empty():
    tile_map = {("red", 2): "artefact-1"}
    sc = position(2, [H0, H1], *on_path(0, "red-3-a", 1), tile_map=tile_map)
    sc.when(PlayOnPath(seat=0, card="red-5-a")).then(
        CardPlayed(seat=0, card="red-5-a"), FigureMoved(seat=0, color="red", step=2),
        ArtefactFound(seat=0, color="red", step=2, tile="artefact-1"))
    after = sc.then_state()
    assert view(after, 1)["players"][0]["artefact_tiles"] == ["artefact-1"]
    assert view(after, 1)["tiles"]["red"][1] is None
    # a later figure on that space finds nothing
    hand1 = ["red-1-a", "red-2-a"] + H1[:6]
    taken = ArtefactFound(seat=0, color="red", step=2, tile="artefact-1")
    sc = position(2, [H0, hand1], *on_path(0, "red-3-a", 2), taken, *on_path(1, "red-1-a", 1), current=1,
                  tile_map=tile_map)
    sc.when(PlayOnPath(seat=1, card="red-2-a")).then(
        CardPlayed(seat=1, card="red-2-a"), FigureMoved(seat=1, color="red", step=2))


def test_points_tile_pays_its_value_not_doubled_for_the_researcher():
    sc = position(2, [H0, H1], *on_path(0, "red-3-a", 3, researcher=True), tile_map={("red", 4): "points-10-a"})
    sc.when(PlayOnPath(seat=0, card="red-5-a")).then(
        CardPlayed(seat=0, card="red-5-a"), FigureMoved(seat=0, color="red", step=4),
        PointsFound(seat=0, color="red", step=4, tile="points-10-a", points=10))
    after = sc.then_state()
    assert view(after, 0)["players"][0]["chips"] == 10
    assert view(after, 0)["tiles"]["red"][3] == "points-10-a"  # the tile stays on the board


def test_points_tile_pays_every_arrival_by_default_and_only_the_first_with_the_setting():
    """The rule text: the tile "remains face-up on the space", so a later figure reaching it is
    paid too (the README default); `vp_first_arrival_only` pays only the first in an expedition."""
    tile_map = {("red", 4): "points-10-a"}
    hand1 = ["red-1-a", "red-2-a"] + H1[:6]
    setup = [*on_path(0, "red-3-a", 4), PointsFound(seat=0, color="red", step=4, tile="points-10-a", points=10),
             *on_path(1, "red-1-a", 3)]
    sc = position(2, [H0, hand1], *setup, current=1, tile_map=tile_map)
    sc.when(PlayOnPath(seat=1, card="red-2-a")).then(
        CardPlayed(seat=1, card="red-2-a"), FigureMoved(seat=1, color="red", step=4),
        PointsFound(seat=1, color="red", step=4, tile="points-10-a", points=10))
    assert view(sc.then_state(), 1)["players"][1]["chips"] == 10
    assert view(sc.then_state(), 1)["spent"] == []  # what a bot reads: the tile still pays
    sc = position(2, [H0, hand1], *setup, current=1, tile_map=tile_map, options={"vp_first_arrival_only": True})
    assert view(sc.state, 1)["spent"] == ["points-10-a"]
    sc.when(PlayOnPath(seat=1, card="red-2-a")).then(
        CardPlayed(seat=1, card="red-2-a"), FigureMoved(seat=1, color="red", step=4))


def test_arrow_tile_lets_the_player_move_any_own_figure_and_arrows_chain():
    tile_map = {("red", 2): "arrow-1", ("blue", 4): "arrow-2", ("blue", 5): None}
    sc = position(2, [H0, H1], *on_path(0, "red-3-a", 1), *on_path(0, "blue-2-a", 3), tile_map=tile_map)
    sc.when(PlayOnPath(seat=0, card="red-5-a")).then(
        CardPlayed(seat=0, card="red-5-a"), FigureMoved(seat=0, color="red", step=2),
        ArrowFound(seat=0, color="red", step=2, tile="arrow-1", choice=True))
    sc.given(*sc.events)
    assert _legal(sc, 0) == [MoveFigure(seat=0, color="blue"), MoveFigure(seat=0, color="red"), SkipMove(seat=0)]
    sc.when(MoveFigure(seat=0, color="blue")).then(
        FigureMoved(seat=0, color="blue", step=4), ArrowFound(seat=0, color="blue", step=4, tile="arrow-2", choice=True))
    sc.given(*sc.events)
    sc.when(MoveFigure(seat=0, color="red")).then(FigureMoved(seat=0, color="red", step=3))
    assert sc.then_state().phase == "draw"


def test_arrow_move_may_be_declined():
    sc = position(2, [H0, H1], *on_path(0, "red-3-a", 1), tile_map={("red", 2): "arrow-1"})
    sc.given(*sc.when(PlayOnPath(seat=0, card="red-5-a")).events)
    sc.when(SkipMove(seat=0)).then(MoveSkipped(seat=0))
    assert sc.then_state().phase == "draw"


def test_arrow_with_no_figure_able_to_move_offers_no_choice():
    sc = position(2, [H0, H1], *on_path(0, "red-3-a", 8), tile_map={("red", 9): "arrow-1"})
    sc.when(PlayOnPath(seat=0, card="red-5-a")).then(
        CardPlayed(seat=0, card="red-5-a"), FigureMoved(seat=0, color="red", step=9),
        ArrowFound(seat=0, color="red", step=9, tile="arrow-1", choice=False))
    assert sc.then_state().phase == "draw"


def test_last_step_rule_a_card_for_a_path_at_step_nine_moves_another_figure():
    sc = position(2, [H0, H1], *on_path(0, "red-3-a", 9), *on_path(0, "blue-2-a", 3))
    sc.when(PlayOnPath(seat=0, card="red-5-a")).then(
        CardPlayed(seat=0, card="red-5-a"), LastStepPlayed(seat=0, color="red"))
    sc.given(*sc.events)
    assert _legal(sc, 0) == [MoveFigure(seat=0, color="blue"), SkipMove(seat=0)]
    sc.when(MoveFigure(seat=0, color="red")).rejects("same_figure")
    sc.when(MoveFigure(seat=0, color="blue")).then(FigureMoved(seat=0, color="blue", step=4))


def test_last_step_rule_without_another_movable_figure_does_nothing():
    sc = position(2, [H0, H1], *on_path(0, "red-3-a", 9))
    sc.when(PlayOnPath(seat=0, card="red-5-a")).then(CardPlayed(seat=0, card="red-5-a"))
    assert sc.then_state().phase == "draw"


# --- discard and draw -----------------------------------------------------------------


def test_discard_piles_are_by_colour_and_only_the_top_card_shows():
    sc = position(2, [H0, H1], CardDiscarded(seat=1, card="blue-3-a"))
    sc.when(DiscardCard(seat=0, card="blue-6-a")).then(CardDiscarded(seat=0, card="blue-6-a"))
    after = sc.then_state()
    for seat in (None, 0, 1):
        v = view(after, seat)
        assert v["discards"]["blue"] == {"top": "blue-6-a", "count": 2}
        assert v["discards"]["red"] == {"top": None, "count": 0}
        assert "blue-3-a" in hidden(after, seat)


def test_after_playing_the_player_draws_from_the_supply_or_a_discard_pile():
    sc = position(2, [H0, H1], CardDiscarded(seat=1, card="green-2-a"), supply=("white-0-a", "white-0-b"))
    sc.given(*sc.when(DiscardCard(seat=0, card="red-8-a")).events)
    assert _legal(sc, 0) == [
        DrawFromDiscard(seat=0, color="green"), DrawFromDiscard(seat=0, color="red"), DrawFromSupply(seat=0)]
    sc.when(DrawFromSupply(seat=0)).then(CardDrawn(seat=0, card="white-0-a", source="supply"))
    sc.when(DrawFromDiscard(seat=0, color="green")).then(CardDrawn(seat=0, card="green-2-a", source="green"))
    after = sc.then_state()
    assert after.current == 1 and after.phase == "play" and len(after.players[0].hand) == 8


def test_a_player_may_take_back_the_card_just_discarded():
    # The text does not forbid it (the card game Lost Cities does); see docs/games/expeditions.md.
    sc = position(2, [H0, H1])
    sc.given(*sc.when(DiscardCard(seat=0, card="red-8-a")).events)
    sc.when(DrawFromDiscard(seat=0, color="red")).then(CardDrawn(seat=0, card="red-8-a", source="red"))


def test_turns_go_clockwise():
    sc = position(3, [H0, H1, H2], current=2, phase="draw")
    sc.when(DrawFromSupply(seat=2)).then(CardDrawn(seat=2, card="blue-0-a", source="supply"))
    assert sc.then_state().current == 0


# --- end of an expedition -------------------------------------------------------------

CROSSED_4 = [*on_path(1, "yellow-0-a", 7), *on_path(1, "blue-3-a", 7), *on_path(1, "white-1-a", 8),
             *on_path(1, "green-2-a", 7)]


def test_bridge_fifth_crossing_ends_expedition_without_tile():
    sc = position(2, [H0, H1], *CROSSED_4, *on_path(0, "red-3-a", 6), tile_map={("red", 7): "points-15-a"})
    events = sc.when(PlayOnPath(seat=0, card="red-5-a"), rng=fair_rng()).events
    assert events[:3] == [
        CardPlayed(seat=0, card="red-5-a"), FigureMoved(seat=0, color="red", step=7),
        ExpeditionEnded(expedition=1, reason="bridge", last_player=0, points=(30, 125), chips=(30, 125),
                        artefact_chips=(0, 0)),
    ]
    assert isinstance(events[3], ExpeditionDealt) and events[3].expedition == 2 and events[3].first == 1


def test_bridge_crossings_of_all_players_count_and_a_fourth_does_not_end():
    setup = [*on_path(1, "yellow-0-a", 7), *on_path(1, "blue-3-a", 7), *on_path(0, "white-9-a", 7)]
    sc = position(2, [H0, H1], *setup, *on_path(0, "red-3-a", 6), tile_map={("red", 7): "points-15-a"})
    sc.when(PlayOnPath(seat=0, card="red-5-a")).then(
        CardPlayed(seat=0, card="red-5-a"), FigureMoved(seat=0, color="red", step=7),
        PointsFound(seat=0, color="red", step=7, tile="points-15-a", points=15))
    assert sc.then_state().crossings == 4


def test_a_granted_move_over_the_bridge_can_end_the_expedition():
    sc = position(2, [H0, H1], *CROSSED_4, *on_path(0, "red-3-a", 1), *on_path(0, "blue-2-a", 6),
                  tile_map={("red", 2): "arrow-1", ("blue", 7): "artefact-1"})
    sc.given(*sc.when(PlayOnPath(seat=0, card="red-5-a")).events)
    events = sc.when(MoveFigure(seat=0, color="blue"), rng=fair_rng()).events
    assert events[0] == FigureMoved(seat=0, color="blue", step=7)
    assert isinstance(events[1], ExpeditionEnded) and events[1].reason == "bridge"
    assert not any(isinstance(e, ArtefactFound) for e in events)


def test_drawing_the_last_supply_card_ends_the_expedition():
    sc = position(2, [H0, H1], *on_path(0, "red-3-a", 4), current=0, phase="draw", supply=("white-0-a",))
    events = sc.when(DrawFromSupply(seat=0), rng=fair_rng()).events
    assert events[:2] == [
        CardDrawn(seat=0, card="white-0-a", source="supply"),
        ExpeditionEnded(expedition=1, reason="supply", last_player=0, points=(5, 0), chips=(5, 0),
                        artefact_chips=(0, 0)),
    ]
    deal = events[2]
    assert isinstance(deal, ExpeditionDealt) and deal.first == 1 and len(deal.removed) == 30


def test_next_expedition_begins_left_of_the_player_who_played_last():
    sc = position(3, [H0, H1, H2], current=2, phase="draw", supply=("white-0-a",))
    events = sc.when(DrawFromSupply(seat=2), rng=fair_rng()).events
    assert events[2].first == 0 and events[2].removed == ()
    after = sc.then_state()
    assert after.current == 0 and after.phase == "play" and after.expedition == 2


# --- scoring --------------------------------------------------------------------------


def test_expedition_scoring_researcher_doubles_plus_and_minus():
    setup = [*on_path(0, "red-3-a", 8, researcher=True), *on_path(0, "blue-2-a", 2),  # 2 * 35 - 15 = 55
             *on_path(1, "yellow-0-a", 1, researcher=True), *on_path(1, "green-2-a", 9)]  # 2 * -20 + 50 = 10
    sc = position(2, [H0, H1], *setup, phase="draw", supply=("white-0-a",))
    ended = sc.when(DrawFromSupply(seat=0), rng=fair_rng()).events[1]
    assert ended.points == (55, 10) and ended.chips == (55, 10)


def test_chips_never_go_below_zero():
    setup = [PointsFound(seat=1, color="red", step=4, tile="points-10-a", points=10),
             *on_path(1, "yellow-0-a", 1, researcher=True), *on_path(1, "green-2-a", 4),  # -40 + 5
             *on_path(0, "red-3-a", 1)]  # -20 with no chips
    sc = position(2, [H0, H1], *setup, phase="draw", supply=("white-0-a",))
    ended = sc.when(DrawFromSupply(seat=0), rng=fair_rng()).events[1]
    assert ended.points == (-20, -35) and ended.chips == (0, 0)


def test_artefact_tiles_become_artefact_chips_after_each_expedition():
    setup = [ArtefactFound(seat=0, color="red", step=2, tile="artefact-1"),
             ArtefactFound(seat=0, color="blue", step=4, tile="artefact-2"),
             ArtefactFound(seat=1, color="green", step=2, tile="artefact-3")]
    sc = position(2, [H0, H1], *setup, phase="draw", supply=("white-0-a",))
    events = sc.when(DrawFromSupply(seat=0), rng=fair_rng()).events
    assert events[1].artefact_chips == (2, 1)
    after = sc.then_state()
    assert [p["artefact_tiles"] for p in view(after, None)["players"]] == [[], []]
    assert [p["artefact_chips"] for p in view(after, None)["players"]] == [2, 1]


def _final(seats, setup, options=None):
    sc = position(seats, [H0, H1, H2][:seats], *setup, phase="draw", supply=("white-0-a",), expedition=3,
                  options=options)
    return sc.when(DrawFromSupply(seat=0), rng=fair_rng())


def _chips(seat, points):
    return PointsFound(seat=seat, color="red", step=4, tile="points-5-a", points=points)


def test_game_ends_after_the_third_expedition_artefact_table_scores_and_a_tie_goes_to_most_artefact_chips():
    from dataclasses import replace
    setup = [_chips(0, 60), _chips(1, 40)]
    sc = position(2, [H0, H1], *setup, phase="draw", supply=("white-0-a",), expedition=3)
    players = list(sc.state.players)
    players[0] = replace(players[0], artefact_chips=7)  # +10
    players[1] = replace(players[1], artefact_chips=12)  # +30
    sc.given_state(replace(sc.state, players=tuple(players)))
    events = sc.when(DrawFromSupply(seat=0)).events
    assert events[2] == GameEnded(artefact_points=(10, 30), scores=(70, 70), winners=(1,))
    assert SPEC.is_over(sc.then_state())
    assert SPEC.result(sc.then_state())["winners"] == [1]


def test_artefact_table_rows():
    cfg = position(2, [H0, H1]).state.cfg
    assert [cfg.artefact_points(n) for n in (0, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 27)] == [
        -20, -20, -15, -15, 10, 10, 15, 15, 30, 30, 50, 50]


def test_setting_artefact_table_mild_and_few_artefacts_lose_points_but_never_below_zero():
    events = _final(2, [_chips(0, 15), _chips(1, 3)], options={"artefact_table": "mild"}).events
    assert events[2] == GameEnded(artefact_points=(-10, -10), scores=(5, 0), winners=(0,))


def test_tie_on_points_and_artefact_chips_shares_the_win():
    events = _final(3, [_chips(0, 40), _chips(1, 40), _chips(2, 30)]).events
    assert events[2] == GameEnded(artefact_points=(-20, -20, -20), scores=(20, 20, 10), winners=(0, 1))


def test_setting_board_gentle_uses_its_step_values():
    setup = [*on_path(0, "red-3-a", 1, researcher=True), *on_path(1, "green-2-a", 9)]
    sc = position(2, [H0, H1], *setup, phase="draw", supply=("white-0-a",), options={"board": "gentle"})
    ended = sc.when(DrawFromSupply(seat=0), rng=fair_rng()).events[1]
    assert ended.points == (-30, 40)
