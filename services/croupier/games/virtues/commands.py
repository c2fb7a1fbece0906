"""The moves of `virtues`. Wire names are stable; `seat` travels in the envelope.

A turn is a series of decision points (see rules.py): the draw step (DrawCard or
TakeDiscard), then exactly one of the three choices (PlayAction or PlaySpecial,
MoveAction to re-arrange, DiscardHand or DiscardLocations), then any follow-up the choice
opened (StopRearranging, StopPlaying, ChooseCard, ExchangeLocation/KeepLocations,
TakeLocation after a completion), then the end-of-turn counts (DiscardCard, ReturnLocation).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from croupier.engine.contract import Command


@dataclass(frozen=True, kw_only=True)
class DrawCard(Command):
    """Draw step: take the top card of the Action deck."""

    TYPE: ClassVar[str] = "DrawCard"


@dataclass(frozen=True, kw_only=True)
class TakeDiscard(Command):
    """Draw step: take the top card of the discard pile (never a special card)."""

    TYPE: ClassVar[str] = "TakeDiscard"


@dataclass(frozen=True, kw_only=True)
class PlayAction(Command):
    """Cover `symbol` of `location` in your Array with symbol card `card` from your hand."""

    TYPE: ClassVar[str] = "PlayAction"
    card: str
    location: str
    symbol: str


@dataclass(frozen=True, kw_only=True)
class PlaySpecial(Command):
    """Play special card `card`; which of location/symbol/target it needs depends on its kind."""

    TYPE: ClassVar[str] = "PlaySpecial"
    card: str
    location: str | None = None
    symbol: str | None = None
    target: str | None = None


@dataclass(frozen=True, kw_only=True)
class MoveAction(Command):
    """Re-arrange: move a card already on one of your Locations to an uncovered symbol it matches."""

    TYPE: ClassVar[str] = "MoveAction"
    card: str
    location: str
    symbol: str


@dataclass(frozen=True, kw_only=True)
class StopRearranging(Command):
    TYPE: ClassVar[str] = "StopRearranging"


@dataclass(frozen=True, kw_only=True)
class DiscardHand(Command):
    """Discard all your Action cards; you draw back up to three at the end of the turn."""

    TYPE: ClassVar[str] = "DiscardHand"


@dataclass(frozen=True, kw_only=True)
class DiscardLocations(Command):
    """Discard all your Locations (to the bottom of the deck); you draw three new ones."""

    TYPE: ClassVar[str] = "DiscardLocations"


@dataclass(frozen=True, kw_only=True)
class ChooseCard(Command):
    """Brahan Seer: take one of the Action cards you are looking at."""

    TYPE: ClassVar[str] = "ChooseCard"
    card: str


@dataclass(frozen=True, kw_only=True)
class ExchangeLocation(Command):
    """Ordnance Survey: give one of your Locations, take one of those you are looking at."""

    TYPE: ClassVar[str] = "ExchangeLocation"
    give: str
    take: str


@dataclass(frozen=True, kw_only=True)
class KeepLocations(Command):
    """Ordnance Survey: exchange nothing."""

    TYPE: ClassVar[str] = "KeepLocations"


@dataclass(frozen=True, kw_only=True)
class StopPlaying(Command):
    """Clan Gathering: play no more cards this turn."""

    TYPE: ClassVar[str] = "StopPlaying"


@dataclass(frozen=True, kw_only=True)
class TakeLocation(Command):
    """After a completion: take this Location from the Display into your Array."""

    TYPE: ClassVar[str] = "TakeLocation"
    location: str


@dataclass(frozen=True, kw_only=True)
class DiscardCard(Command):
    """End of turn, more than three cards in hand: discard this one face up."""

    TYPE: ClassVar[str] = "DiscardCard"
    card: str


@dataclass(frozen=True, kw_only=True)
class ReturnLocation(Command):
    """End of turn, more than three Locations: return this one to the bottom of the deck."""

    TYPE: ClassVar[str] = "ReturnLocation"
    location: str


COMMANDS = (
    DrawCard, TakeDiscard, PlayAction, PlaySpecial, MoveAction, StopRearranging, DiscardHand,
    DiscardLocations, ChooseCard, ExchangeLocation, KeepLocations, StopPlaying, TakeLocation,
    DiscardCard, ReturnLocation,
)
