"""The moves of expeditions. A turn is two commands: play (begin a path, play on a path, or
discard), then draw (from the supply or a discard pile). Moves granted by an arrow tile or
by the last-step rule are their own decision: MoveFigure or SkipMove."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from croupier.engine.contract import Command


@dataclass(frozen=True, kw_only=True)
class BeginPath(Command):
    """Lay `card` to begin the path of its colour and put a figure on its first step."""

    TYPE: ClassVar[str] = "BeginPath"
    card: str = ""
    researcher: bool = False


@dataclass(frozen=True, kw_only=True)
class PlayOnPath(Command):
    """Lay `card` on the own card of its colour (same or higher value); the figure moves on."""

    TYPE: ClassVar[str] = "PlayOnPath"
    card: str = ""


@dataclass(frozen=True, kw_only=True)
class DiscardCard(Command):
    TYPE: ClassVar[str] = "DiscardCard"
    card: str = ""


@dataclass(frozen=True, kw_only=True)
class MoveFigure(Command):
    """Use a granted move: the own figure on the path of `color` goes one step forward."""

    TYPE: ClassVar[str] = "MoveFigure"
    color: str = ""


@dataclass(frozen=True, kw_only=True)
class SkipMove(Command):
    """Decline a granted move (arrow tile or last-step rule)."""

    TYPE: ClassVar[str] = "SkipMove"


@dataclass(frozen=True, kw_only=True)
class DrawFromSupply(Command):
    TYPE: ClassVar[str] = "DrawFromSupply"


@dataclass(frozen=True, kw_only=True)
class DrawFromDiscard(Command):
    """Take the top card of the discard pile of `color`."""

    TYPE: ClassVar[str] = "DrawFromDiscard"
    color: str = ""


COMMANDS = (BeginPath, PlayOnPath, DiscardCard, MoveFigure, SkipMove, DrawFromSupply, DrawFromDiscard)
