"""The events of `virtues`. Every random outcome (the deal, rebuilding the deck) is in one.

Decks are tuples with the top card first; the discard pile has its top card last.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from croupier.engine.contract import Event


@dataclass(frozen=True, kw_only=True)
class GameSetUp(Event):
    """The shuffled decks after the deal: the Display, each Array and hand, the first discard."""

    TYPE: ClassVar[str] = "GameSetUp"
    location_deck: tuple[str, ...]
    display: tuple[str, ...]
    arrays: tuple[tuple[str, ...], ...]
    action_deck: tuple[str, ...]
    hands: tuple[tuple[str, ...], ...]
    discard: tuple[str, ...]
    first: int


@dataclass(frozen=True, kw_only=True)
class TurnBegan(Event):
    TYPE: ClassVar[str] = "TurnBegan"
    seat: int
    turn: int


@dataclass(frozen=True, kw_only=True)
class CardDrawn(Event):
    """The top card of the Action deck went into the seat's hand."""

    TYPE: ClassVar[str] = "CardDrawn"
    seat: int
    card: str


@dataclass(frozen=True, kw_only=True)
class DiscardTaken(Event):
    TYPE: ClassVar[str] = "DiscardTaken"
    seat: int
    card: str


@dataclass(frozen=True, kw_only=True)
class DeckRebuilt(Event):
    """The discard pile became the Action deck, in this (shuffled) order."""

    TYPE: ClassVar[str] = "DeckRebuilt"
    deck: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class DiscardFlipped(Event):
    """The top card of the Action deck was turned face up onto the discard pile."""

    TYPE: ClassVar[str] = "DiscardFlipped"
    card: str


@dataclass(frozen=True, kw_only=True)
class ActionPlayed(Event):
    """A card from the hand now covers `symbol` of `location` (a symbol card or a Standing Stone)."""

    TYPE: ClassVar[str] = "ActionPlayed"
    seat: int
    card: str
    location: str
    symbol: str


@dataclass(frozen=True, kw_only=True)
class ActionMoved(Event):
    TYPE: ClassVar[str] = "ActionMoved"
    seat: int
    card: str
    location: str
    symbol: str


@dataclass(frozen=True, kw_only=True)
class RearrangingStopped(Event):
    TYPE: ClassVar[str] = "RearrangingStopped"
    seat: int


@dataclass(frozen=True, kw_only=True)
class HandDiscarded(Event):
    TYPE: ClassVar[str] = "HandDiscarded"
    seat: int
    cards: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class LocationsDiscarded(Event):
    """The seat's whole Array went to the bottom of the Location deck, its cards to the discard."""

    TYPE: ClassVar[str] = "LocationsDiscarded"
    seat: int
    locations: tuple[str, ...]
    cards: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class LocationDrawn(Event):
    """The top Location card of the deck went into the seat's Array."""

    TYPE: ClassVar[str] = "LocationDrawn"
    seat: int
    location: str


@dataclass(frozen=True, kw_only=True)
class LocationCompleted(Event):
    TYPE: ClassVar[str] = "LocationCompleted"
    seat: int
    location: str
    cards: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class LocationTaken(Event):
    """A Location went from the Display into the seat's Array."""

    TYPE: ClassVar[str] = "LocationTaken"
    seat: int
    location: str


@dataclass(frozen=True, kw_only=True)
class DisplayRefilled(Event):
    TYPE: ClassVar[str] = "DisplayRefilled"
    location: str


@dataclass(frozen=True, kw_only=True)
class SpecialPlayed(Event):
    """A special card left the hand for the discard pile; its effect follows."""

    TYPE: ClassVar[str] = "SpecialPlayed"
    seat: int
    card: str
    kind: str


@dataclass(frozen=True, kw_only=True)
class CardSeized(Event):
    TYPE: ClassVar[str] = "CardSeized"
    seat: int
    victim: int
    card: str


@dataclass(frozen=True, kw_only=True)
class CardBanished(Event):
    TYPE: ClassVar[str] = "CardBanished"
    seat: int
    victim: int
    card: str


@dataclass(frozen=True, kw_only=True)
class CardSalvaged(Event):
    TYPE: ClassVar[str] = "CardSalvaged"
    seat: int
    card: str


@dataclass(frozen=True, kw_only=True)
class PeekedCardTaken(Event):
    TYPE: ClassVar[str] = "PeekedCardTaken"
    seat: int
    card: str


@dataclass(frozen=True, kw_only=True)
class LocationExchanged(Event):
    """Ordnance Survey: `give` to the bottom of the Location deck, `take` from the top cards."""

    TYPE: ClassVar[str] = "LocationExchanged"
    seat: int
    give: str
    take: str
    cards: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class LocationsKept(Event):
    TYPE: ClassVar[str] = "LocationsKept"
    seat: int


@dataclass(frozen=True, kw_only=True)
class LocationSwapped(Event):
    """Drove Road: `give` took the place of `take` in the Display, and the other way round."""

    TYPE: ClassVar[str] = "LocationSwapped"
    seat: int
    give: str
    take: str
    cards: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class PlayingStopped(Event):
    TYPE: ClassVar[str] = "PlayingStopped"
    seat: int


@dataclass(frozen=True, kw_only=True)
class CardDiscarded(Event):
    TYPE: ClassVar[str] = "CardDiscarded"
    seat: int
    card: str


@dataclass(frozen=True, kw_only=True)
class LocationReturned(Event):
    TYPE: ClassVar[str] = "LocationReturned"
    seat: int
    location: str
    cards: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class GameEnded(Event):
    """`reason`: "completed" (a seat reached the target) or "turn_limit"."""

    TYPE: ClassVar[str] = "GameEnded"
    winners: tuple[int, ...]
    reason: str


@dataclass(frozen=True, kw_only=True)
class ForkDealt(Event):
    """A fork's new deal (GameSpec.redeal): the Action cards hidden at the fork's step (the
    hands and the Action deck) dealt again from one pool, and the Location deck shuffled
    again. Each hand and deck keeps its size; the Seer's or the Survey's look goes to the
    new top cards (evolve)."""

    TYPE: ClassVar[str] = "ForkDealt"
    hands: tuple[tuple[str, ...], ...]
    action_deck: tuple[str, ...]
    location_deck: tuple[str, ...]


EVENTS = (
    GameSetUp, TurnBegan, CardDrawn, DiscardTaken, DeckRebuilt, DiscardFlipped, ActionPlayed,
    ActionMoved, RearrangingStopped, HandDiscarded, LocationsDiscarded, LocationDrawn,
    LocationCompleted, LocationTaken, DisplayRefilled, SpecialPlayed, CardSeized, CardBanished,
    CardSalvaged, PeekedCardTaken, LocationExchanged, LocationsKept, LocationSwapped,
    PlayingStopped, CardDiscarded, LocationReturned, GameEnded, ForkDealt,
)
