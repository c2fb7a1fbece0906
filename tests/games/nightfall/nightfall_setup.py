"""Event-sourced set-ups for nightfall's given/when/then tests (imported by the test files)."""

from __future__ import annotations

from croupier.engine.testing import scenario
from croupier.games.nightfall import SPEC
from croupier.games.nightfall import events as E

MOOR = "s0-misty-moor-1"  # capacity 90, spirit/hunter, no condition
LIGHT = "s1-lighthouse-1"  # capacity 90, mystic/hunter, no condition


def deal(hand0=(), hand1=(), deck0=(), deck1=(), open0=MOOR, open1=LIGHT, first=0, tie=False) -> list:
    """Both hands dealt, both first Locations down and revealed (open0 at (0,0), open1 at
    (1,0)), and turn 1 of `first` begun."""
    return [
        E.DeckShuffled(seat=0, order=(open0, *hand0, *deck0)),
        E.CardsDrawn(seat=0, count=1 + len(hand0), reason="deal"),
        E.DeckShuffled(seat=1, order=(open1, *hand1, *deck1)),
        E.CardsDrawn(seat=1, count=1 + len(hand1), reason="deal"),
        E.HandsDealt(),
        E.OpeningLocationChosen(seat=0, card=open0),
        E.OpeningLocationChosen(seat=1, card=open1),
        E.OpeningLocationsRevealed(cards=(open0, open1), first=first, tie_broken=tie),
        E.TurnStarted(seat=first, turn=1, started_empty=True),
    ]


def enter(seat: int, card: str, location: str, hp: int, actions: int = 2) -> E.CharacterPlayed:
    return E.CharacterPlayed(seat=seat, card=card, location=location, hp=hp, actions=actions, withdrawn=False)


def turn(seat: int, number: int) -> E.TurnStarted:
    return E.TurnStarted(seat=seat, turn=number, started_empty=False)


def place(seat: int, card: str, x: int, y: int) -> E.LocationPlayed:
    return E.LocationPlayed(seat=seat, card=card, x=x, y=y, character=None, cost=0)


def game(*events, options=None):
    return scenario(SPEC, 2, options).given(*events)
