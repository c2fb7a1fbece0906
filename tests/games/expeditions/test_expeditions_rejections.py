"""Every kind of illegal command is rejected with its stable code (and is not a legal action)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pytest
from expeditions_helpers import on_path, position

from croupier.engine.contract import Command, Start, Tick
from croupier.engine.testing import fair_rng, scenario
from croupier.games.expeditions import SPEC
from croupier.games.expeditions.commands import (
    BeginPath,
    DiscardCard,
    DrawFromDiscard,
    DrawFromSupply,
    MoveFigure,
    PlayOnPath,
    SkipMove,
)
from croupier.games.expeditions.events import GameEnded, LastStepPlayed

H0 = ["red-3-a", "red-5-a", "red-5-b", "red-8-a", "blue-2-a", "blue-6-a", "green-1-a", "white-9-a"]
H1 = ["yellow-0-a", "yellow-4-a", "yellow-7-a", "blue-3-a", "blue-4-b", "green-2-a", "green-10-a", "white-1-a"]


def _rejects(sc, command, code):
    sc.when(command).rejects(code)
    if command.seat is not None:
        assert command not in SPEC.legal_actions(sc.state, command.seat)


def test_moves_before_the_deal_are_rejected():
    sc = scenario(SPEC, 2)
    _rejects(sc, DiscardCard(seat=0, card="red-3-a"), "not_started")
    assert SPEC.to_act(sc.state) == ()


def test_start_twice_is_rejected():
    sc = scenario(SPEC, 2)
    sc.given(*sc.when(Start(), rng=fair_rng()).events)
    sc.when(Start()).rejects("already_started")


def test_tick_is_rejected_there_are_no_deadlines():
    position(2, [H0, H1]).when(Tick(now=5)).rejects("no_deadline")


def test_moves_after_the_game_are_rejected():
    sc = position(2, [H0, H1]).given(GameEnded(artefact_points=(0, 0), scores=(0, 0), winners=(0, 1)))
    _rejects(sc, DiscardCard(seat=0, card="red-3-a"), "game_over")
    assert SPEC.to_act(sc.state) == ()


@pytest.mark.parametrize("command", [
    DiscardCard(seat=1, card="blue-3-a"),
    BeginPath(seat=1, card="blue-3-a"),
    DrawFromSupply(seat=1),
    DiscardCard(seat=None, card="red-3-a"),
    DiscardCard(seat=7, card="red-3-a"),
])
def test_not_your_turn(command):
    _rejects(position(2, [H0, H1]), command, "not_your_turn")


@pytest.mark.parametrize("command", [
    DrawFromSupply(seat=0), DrawFromDiscard(seat=0, color="red"), MoveFigure(seat=0, color="red"), SkipMove(seat=0),
])
def test_wrong_phase_in_the_play_phase(command):
    _rejects(position(2, [H0, H1], *on_path(0, "red-3-a", 2)), command, "wrong_phase")


@pytest.mark.parametrize("command", [
    DiscardCard(seat=0, card="red-5-a"), BeginPath(seat=0, card="blue-2-a"), PlayOnPath(seat=0, card="red-5-a"),
    SkipMove(seat=0),
])
def test_wrong_phase_in_the_draw_phase(command):
    _rejects(position(2, [H0, H1], *on_path(0, "red-3-a", 2), phase="draw"), command, "wrong_phase")


def test_wrong_phase_while_a_granted_move_is_pending():
    sc = position(2, [H0, H1], *on_path(0, "red-3-a", 9), *on_path(0, "blue-2-a", 2))
    sc.given(LastStepPlayed(seat=0, color="red"))
    for command in (DrawFromSupply(seat=0), DiscardCard(seat=0, card="red-5-a")):
        _rejects(sc, command, "wrong_phase")


@pytest.mark.parametrize("card", ["yellow-0-a", "red-3-b", "nonsense", 7, None, ("red-3-a",)])
def test_card_not_in_hand(card):
    sc = position(2, [H0, H1])
    for command in (DiscardCard(seat=0, card=card), BeginPath(seat=0, card=card)):
        _rejects(sc, command, "card_not_in_hand")
    sc = position(2, [H0, H1], *on_path(0, "red-3-a", 2))
    _rejects(sc, PlayOnPath(seat=0, card=card), "card_not_in_hand")


def test_researcher_must_be_a_boolean():
    sc = position(2, [H0, H1])
    err = sc.when(BeginPath(seat=0, card="red-3-a", researcher="yes")).rejects("malformed_command")
    assert err.kind == "malformed"


def test_path_already_begun():
    _rejects(position(2, [H0, H1], *on_path(0, "red-3-a", 1)), BeginPath(seat=0, card="red-5-a"), "path_already_begun")


def test_not_lowest_card_with_strict_start():
    sc = position(2, [H0, H1], options={"strict_start": True})
    _rejects(sc, BeginPath(seat=0, card="red-8-a"), "not_lowest_card")


def test_no_researcher_left():
    sc = position(2, [H0, H1], *on_path(0, "green-1-a", 1, researcher=True))
    _rejects(sc, BeginPath(seat=0, card="red-3-a", researcher=True), "no_researcher_left")


def test_no_adventurer_left():
    hand = ["yellow-1-a", "blue-1-a", "white-1-a", "green-1-a", "red-1-a", "red-2-a", "red-3-a", "red-4-a"]
    sc = position(2, [hand, H1], *[e for c in hand[:4] for e in on_path(0, c, 1)])
    _rejects(sc, BeginPath(seat=0, card="red-1-a"), "no_adventurer_left")


def test_path_not_begun():
    _rejects(position(2, [H0, H1]), PlayOnPath(seat=0, card="red-5-a"), "path_not_begun")


def test_card_too_low():
    _rejects(position(2, [H0, H1], *on_path(0, "red-5-a", 3)), PlayOnPath(seat=0, card="red-3-a"), "card_too_low")


@pytest.mark.parametrize("color", ["purple", "", None, 3])
def test_unknown_color(color):
    _rejects(position(2, [H0, H1], phase="draw"), DrawFromDiscard(seat=0, color=color), "unknown_color")
    sc = position(2, [H0, H1], *on_path(0, "red-3-a", 9), *on_path(0, "blue-2-a", 2))
    sc.given(LastStepPlayed(seat=0, color="red"))
    _rejects(sc, MoveFigure(seat=0, color=color), "unknown_color")


def test_discard_pile_empty():
    _rejects(position(2, [H0, H1], phase="draw"), DrawFromDiscard(seat=0, color="red"), "discard_pile_empty")


def _pending_last_step():
    sc = position(2, [H0, H1], *on_path(0, "red-3-a", 9), *on_path(0, "blue-2-a", 2), *on_path(0, "white-9-a", 9))
    return sc.given(LastStepPlayed(seat=0, color="red"))


def test_no_figure_on_path():
    _rejects(_pending_last_step(), MoveFigure(seat=0, color="green"), "no_figure_on_path")


def test_same_figure_for_the_last_step_rule():
    _rejects(_pending_last_step(), MoveFigure(seat=0, color="red"), "same_figure")


def test_figure_at_last_step_cannot_move():
    _rejects(_pending_last_step(), MoveFigure(seat=0, color="white"), "figure_at_last_step")


def test_unknown_command():
    @dataclass(frozen=True, kw_only=True)
    class Dance(Command):
        TYPE: ClassVar[str] = "Dance"

    err = position(2, [H0, H1]).when(Dance(seat=0)).rejects("unknown_command")
    assert err.kind == "malformed"
