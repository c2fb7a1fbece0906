"""Nightfall's events: what happened, in past participles. Every random outcome (deck
orders, tie-breaks, random discards) is in an event, so evolve never needs randomness.
Event payloads may name hidden cards: the log is inside the platform's trust boundary and
views (not events) are what players see."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from croupier.engine.contract import Event

# --- setup ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class DeckShuffled(Event):
    TYPE: ClassVar[str] = "DeckShuffled"
    seat: int
    order: tuple[str, ...]  # top first


@dataclass(frozen=True, kw_only=True)
class HandRedrawn(Event):
    """The hand held no Location: shuffled back into the deck, which now has `order`."""

    TYPE: ClassVar[str] = "HandRedrawn"
    seat: int
    order: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class HandsDealt(Event):
    TYPE: ClassVar[str] = "HandsDealt"


@dataclass(frozen=True, kw_only=True)
class OpeningLocationChosen(Event):
    """Laid face down."""

    TYPE: ClassVar[str] = "OpeningLocationChosen"
    seat: int
    card: str


@dataclass(frozen=True, kw_only=True)
class OpeningLocationsRevealed(Event):
    """Both turned face up: seat 0's at (0, 0), seat 1's at (1, 0). The lower capacity
    goes first; `tie_broken` when equal capacities were settled at random."""

    TYPE: ClassVar[str] = "OpeningLocationsRevealed"
    cards: tuple[str, ...]
    first: int
    tie_broken: bool


# --- turns ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class TurnStarted(Event):
    TYPE: ClassVar[str] = "TurnStarted"
    seat: int
    turn: int
    started_empty: bool  # no Character of the seat in play as the turn began


@dataclass(frozen=True, kw_only=True)
class TrapWindowOpened(Event):
    TYPE: ClassVar[str] = "TrapWindowOpened"
    seat: int


@dataclass(frozen=True, kw_only=True)
class TurnEnded(Event):
    TYPE: ClassVar[str] = "TurnEnded"
    seat: int


@dataclass(frozen=True, kw_only=True)
class GameEnded(Event):
    TYPE: ClassVar[str] = "GameEnded"
    winners: tuple[int, ...]
    reason: str  # graveyard | round_limit
    graveyard: tuple[int, ...]


# --- cards ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class CardsDrawn(Event):
    TYPE: ClassVar[str] = "CardsDrawn"
    seat: int
    count: int
    reason: str  # deal | move | paid | event | ability | item


@dataclass(frozen=True, kw_only=True)
class CardsDiscarded(Event):
    """Cards from a hand (or withdrawn Characters) to the discard pile."""

    TYPE: ClassVar[str] = "CardsDiscarded"
    seat: int
    cards: tuple[str, ...]
    reason: str


@dataclass(frozen=True, kw_only=True)
class GraveyardPenalty(Event):
    TYPE: ClassVar[str] = "GraveyardPenalty"
    seat: int
    amount: int
    reason: str  # no_character | paid_draw


# --- map and Characters ---------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class PlacementPending(Event):
    """A new Location is on its way: its cell is the next choice."""

    TYPE: ClassVar[str] = "PlacementPending"
    seat: int
    kind: str  # character | discover
    character: str
    location: str


@dataclass(frozen=True, kw_only=True)
class LocationPlayed(Event):
    TYPE: ClassVar[str] = "LocationPlayed"
    seat: int
    card: str
    x: int
    y: int
    character: str | None  # the discovering Character (Play Location action), if any
    cost: int


@dataclass(frozen=True, kw_only=True)
class CharacterPlayed(Event):
    TYPE: ClassVar[str] = "CharacterPlayed"
    seat: int
    card: str
    location: str
    hp: int
    actions: int  # left this turn, after the 1 it cost
    withdrawn: bool  # came back from the withdrawn Characters


@dataclass(frozen=True, kw_only=True)
class CharacterMoved(Event):
    TYPE: ClassVar[str] = "CharacterMoved"
    character: str
    to: str
    cost: int


@dataclass(frozen=True, kw_only=True)
class Attacked(Event):
    TYPE: ClassVar[str] = "Attacked"
    attacker: str
    target: str
    dmg: int  # before the target's reductions
    item: str | None
    cost: int


@dataclass(frozen=True, kw_only=True)
class CharacterDamaged(Event):
    TYPE: ClassVar[str] = "CharacterDamaged"
    character: str
    amount: int
    hp: int  # after
    source: str  # attack | strike | event | trap | location


@dataclass(frozen=True, kw_only=True)
class CharacterHealed(Event):
    TYPE: ClassVar[str] = "CharacterHealed"
    character: str
    amount: int
    hp: int
    source: str


@dataclass(frozen=True, kw_only=True)
class CharacterDefeated(Event):
    """HP 0: to its owner's Graveyard (printed HP counts), its Item and Events discarded."""

    TYPE: ClassVar[str] = "CharacterDefeated"
    character: str
    seat: int
    hp: int


@dataclass(frozen=True, kw_only=True)
class CharacterWithdrawn(Event):
    TYPE: ClassVar[str] = "CharacterWithdrawn"
    character: str
    hp: int
    cost: int


@dataclass(frozen=True, kw_only=True)
class ActionsChanged(Event):
    TYPE: ClassVar[str] = "ActionsChanged"
    character: str
    actions: int
    reason: str  # location | trap | snare | item | event


@dataclass(frozen=True, kw_only=True)
class CharacterWarded(Event):
    TYPE: ClassVar[str] = "CharacterWarded"
    character: str
    ward: int


@dataclass(frozen=True, kw_only=True)
class AbilityUsed(Event):
    TYPE: ClassVar[str] = "AbilityUsed"
    character: str
    kind: str
    target: str | None
    cost: int


# --- Items, Events, Traps -------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ItemAttached(Event):
    TYPE: ClassVar[str] = "ItemAttached"
    seat: int
    item: str
    character: str
    uses: int


@dataclass(frozen=True, kw_only=True)
class ItemUsed(Event):
    TYPE: ClassVar[str] = "ItemUsed"
    character: str
    item: str
    uses: int  # left


@dataclass(frozen=True, kw_only=True)
class ItemTransferred(Event):
    TYPE: ClassVar[str] = "ItemTransferred"
    character: str
    to: str
    item: str
    cost: int


@dataclass(frozen=True, kw_only=True)
class ItemDiscarded(Event):
    TYPE: ClassVar[str] = "ItemDiscarded"
    character: str
    item: str
    reason: str  # used_up | discarded | withdrawn | trap


@dataclass(frozen=True, kw_only=True)
class EventPlayed(Event):
    TYPE: ClassVar[str] = "EventPlayed"
    seat: int
    card: str
    target: str | None


@dataclass(frozen=True, kw_only=True)
class EventDiscarded(Event):
    """An Event attached to a Character leaves it (spent, or its Character withdrew)."""

    TYPE: ClassVar[str] = "EventDiscarded"
    character: str
    card: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class TrapSet(Event):
    TYPE: ClassVar[str] = "TrapSet"
    seat: int
    trap: str
    cards: tuple[str, ...]
    location: str


@dataclass(frozen=True, kw_only=True)
class TrapSprung(Event):
    TYPE: ClassVar[str] = "TrapSprung"
    seat: int  # its owner
    trap: str
    cards: tuple[str, ...]
    location: str


# --- forks ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ForkDealt(Event):
    """A fork's new deal of one seat's hidden cards (rules.redeal): the seat's cards that
    some seat may not see, dealt again from that seat's own pool with the fork's randomness.
    Every size stays: the hand's, the deck's, each face-down Trap's."""

    TYPE: ClassVar[str] = "ForkDealt"
    seat: int
    hand: tuple[str, ...]
    deck: tuple[str, ...]  # top first
    opening: str | None  # its face-down first Location (opening phase only)
    traps: tuple[str, ...]  # the cards of its face-down Traps, Trap after Trap in play order
    placing: tuple[str, ...]  # its pending placement's (Character, Location), or ()


EVENTS = (
    DeckShuffled, HandRedrawn, HandsDealt, OpeningLocationChosen, OpeningLocationsRevealed, TurnStarted,
    TrapWindowOpened, TurnEnded, GameEnded, CardsDrawn, CardsDiscarded, GraveyardPenalty, PlacementPending,
    LocationPlayed, CharacterPlayed, CharacterMoved, Attacked, CharacterDamaged, CharacterHealed, CharacterDefeated,
    CharacterWithdrawn, ActionsChanged, CharacterWarded, AbilityUsed, ItemAttached, ItemUsed, ItemTransferred,
    ItemDiscarded, EventPlayed, EventDiscarded, TrapSet, TrapSprung, ForkDealt,
)
