"""Events of the journey: facts, past participles. Every random outcome is in an event
(the shuffles, the place a fled adversary goes back to, the Joker's theft, the Ruins)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from croupier.engine.contract import Event

# --- setup and travel -------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class DecksShuffled(Event):
    """The Journey (top first) and the Supply (top first); Primrose Hill and the Joker aside."""

    TYPE: ClassVar[str] = "DecksShuffled"
    journey: tuple[str, ...]
    supply: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Foraged(Event):
    TYPE: ClassVar[str] = "Foraged"
    seat: int
    card: str


@dataclass(frozen=True, kw_only=True)
class RefugeReached(Event):
    TYPE: ClassVar[str] = "RefugeReached"
    card: str
    actions: int


@dataclass(frozen=True, kw_only=True)
class RefugeTurnBegan(Event):
    TYPE: ClassVar[str] = "RefugeTurnBegan"
    seat: int


@dataclass(frozen=True, kw_only=True)
class Recovered(Event):
    TYPE: ClassVar[str] = "Recovered"
    seat: int
    card: str


@dataclass(frozen=True, kw_only=True)
class Cached(Event):
    TYPE: ClassVar[str] = "Cached"
    seat: int
    card: str
    place: str


@dataclass(frozen=True, kw_only=True)
class RefugeLeft(Event):
    TYPE: ClassVar[str] = "RefugeLeft"
    seat: int


@dataclass(frozen=True, kw_only=True)
class RefugeEnded(Event):
    """The heart goes to the route, in the order passed."""

    TYPE: ClassVar[str] = "RefugeEnded"
    card: str
    place: str  # its name: the first heart passed is Woking


@dataclass(frozen=True, kw_only=True)
class CompanionJoined(Event):
    TYPE: ClassVar[str] = "CompanionJoined"
    card: str


@dataclass(frozen=True, kw_only=True)
class CompanionLeft(Event):
    """Removed from the game; `lost` is the card cached at its place, lost with it."""

    TYPE: ClassVar[str] = "CompanionLeft"
    card: str
    reason: str
    lost: str | None = None


# --- fights -----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class AdversaryRevealed(Event):
    TYPE: ClassVar[str] = "AdversaryRevealed"
    card: str
    health: int
    attack: int


@dataclass(frozen=True, kw_only=True)
class RoundBegan(Event):
    TYPE: ClassVar[str] = "RoundBegan"
    round: int


@dataclass(frozen=True, kw_only=True)
class FightTurnBegan(Event):
    TYPE: ClassVar[str] = "FightTurnBegan"
    seat: int


@dataclass(frozen=True, kw_only=True)
class Struck(Event):
    """`cut` lowers this round's counter (HMS Thunder Child, an allied Queen)."""

    TYPE: ClassVar[str] = "Struck"
    seat: int
    card: str
    damage: int
    cut: int = 0
    rally: int = 0


@dataclass(frozen=True, kw_only=True)
class ReckoningPlayed(Event):
    TYPE: ClassVar[str] = "ReckoningPlayed"
    seat: int
    health: int


@dataclass(frozen=True, kw_only=True)
class Regrouped(Event):
    TYPE: ClassVar[str] = "Regrouped"
    seat: int
    card: str


@dataclass(frozen=True, kw_only=True)
class RegroupTaken(Event):
    TYPE: ClassVar[str] = "RegroupTaken"
    seat: int
    card: str


@dataclass(frozen=True, kw_only=True)
class RetrievalOffered(Event):
    """Allies: the Jack just played brings back one same-suit discard."""

    TYPE: ClassVar[str] = "RetrievalOffered"
    seat: int
    card: str


@dataclass(frozen=True, kw_only=True)
class Retrieved(Event):
    TYPE: ClassVar[str] = "Retrieved"
    seat: int
    card: str


@dataclass(frozen=True, kw_only=True)
class Fled(Event):
    """`position` is where the adversary went back into the Journey (0 = top)."""

    TYPE: ClassVar[str] = "Fled"
    seat: int
    card: str
    adversary: str
    position: int


@dataclass(frozen=True, kw_only=True)
class Hid(Event):
    """The revealed Supply card; kept when it slipped past, else discarded (an ambush)."""

    TYPE: ClassVar[str] = "Hid"
    seat: int
    card: str
    kept: bool


@dataclass(frozen=True, kw_only=True)
class Braced(Event):
    TYPE: ClassVar[str] = "Braced"
    seat: int


@dataclass(frozen=True, kw_only=True)
class AdversaryDefeated(Event):
    """`wreckage` > 0 for a direct hit, banked by `seat`."""

    TYPE: ClassVar[str] = "AdversaryDefeated"
    card: str
    seat: int
    wreckage: int


@dataclass(frozen=True, kw_only=True)
class CounterStruck(Event):
    TYPE: ClassVar[str] = "CounterStruck"
    attack: int


@dataclass(frozen=True, kw_only=True)
class CoverDemanded(Event):
    """`reason`: "counter" (end of round) or "ambush" (a failed hide)."""

    TYPE: ClassVar[str] = "CoverDemanded"
    seat: int
    due: int
    reason: str


@dataclass(frozen=True, kw_only=True)
class CoverCardPaid(Event):
    TYPE: ClassVar[str] = "CoverCardPaid"
    seat: int
    card: str
    value: int


@dataclass(frozen=True, kw_only=True)
class Covered(Event):
    TYPE: ClassVar[str] = "Covered"
    seat: int
    wreckage: int
    reason: str


@dataclass(frozen=True, kw_only=True)
class TravellerFell(Event):
    TYPE: ClassVar[str] = "TravellerFell"
    seat: int


@dataclass(frozen=True, kw_only=True)
class BurdenShedBegun(Event):
    """`payers`: who discards, in order (every traveller, then the extra one)."""

    TYPE: ClassVar[str] = "BurdenShedBegun"
    seat: int
    payers: tuple[int, ...]


@dataclass(frozen=True, kw_only=True)
class CardDiscarded(Event):
    TYPE: ClassVar[str] = "CardDiscarded"
    seat: int
    card: str


@dataclass(frozen=True, kw_only=True)
class DeliveranceDiscarded(Event):
    TYPE: ClassVar[str] = "DeliveranceDiscarded"
    seat: int
    card: str


# --- forks ------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ForkDealt(Event):
    """A fork's new deal (GameSpec.redeal): every card hidden from some traveller laid out
    again, in the same places and numbers. The Journey and the Supply (top first), each
    traveller's satchel (seat order), the card of each cache and of each Ruin (in the order
    of the state's caches and Ruins)."""

    TYPE: ClassVar[str] = "ForkDealt"
    journey: tuple[str, ...]
    supply: tuple[str, ...]
    satchels: tuple[tuple[str, ...], ...]
    caches: tuple[str, ...] = ()
    ruins: tuple[str, ...] = ()


# --- arrival and the Return Journey -----------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class DestinationReached(Event):
    TYPE: ClassVar[str] = "DestinationReached"
    card: str


@dataclass(frozen=True, kw_only=True)
class ReturnBegan(Event):
    """The spendable Aces removed; the discard, the Supply and the Joker shuffled together."""

    TYPE: ClassVar[str] = "ReturnBegan"
    removed: tuple[str, ...]
    supply: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class PurseFormed(Event):
    TYPE: ClassVar[str] = "PurseFormed"
    purse: tuple[str, ...]
    walkers: tuple[int, ...]


@dataclass(frozen=True, kw_only=True)
class RuinsSeeded(Event):
    """(place, wreck) pairs, face down."""

    TYPE: ClassVar[str] = "RuinsSeeded"
    ruins: tuple[tuple[str, str], ...]


@dataclass(frozen=True, kw_only=True)
class StopReached(Event):
    TYPE: ClassVar[str] = "StopReached"
    place: str
    cache: str | None = None


@dataclass(frozen=True, kw_only=True)
class RuinRevealed(Event):
    TYPE: ClassVar[str] = "RuinRevealed"
    place: str
    card: str


@dataclass(frozen=True, kw_only=True)
class JokerStole(Event):
    TYPE: ClassVar[str] = "JokerStole"
    card: str


@dataclass(frozen=True, kw_only=True)
class JokerShed(Event):
    TYPE: ClassVar[str] = "JokerShed"
    seat: int
    card: str


@dataclass(frozen=True, kw_only=True)
class RuinStripBegun(Event):
    TYPE: ClassVar[str] = "RuinStripBegun"
    seat: int
    place: str
    due: int


@dataclass(frozen=True, kw_only=True)
class TollsBegan(Event):
    TYPE: ClassVar[str] = "TollsBegan"
    place: str


@dataclass(frozen=True, kw_only=True)
class TollDemanded(Event):
    TYPE: ClassVar[str] = "TollDemanded"
    seat: int
    place: str
    due: int


@dataclass(frozen=True, kw_only=True)
class PurseCardPaid(Event):
    TYPE: ClassVar[str] = "PurseCardPaid"
    seat: int
    card: str
    value: int


@dataclass(frozen=True, kw_only=True)
class RuinSalvaged(Event):
    TYPE: ClassVar[str] = "RuinSalvaged"
    seat: int
    place: str
    card: str
    points: int


@dataclass(frozen=True, kw_only=True)
class TollPaid(Event):
    TYPE: ClassVar[str] = "TollPaid"
    seat: int
    place: str
    points: int


@dataclass(frozen=True, kw_only=True)
class TravellerStopped(Event):
    TYPE: ClassVar[str] = "TravellerStopped"
    seat: int
    place: str


@dataclass(frozen=True, kw_only=True)
class ReturnEnded(Event):
    TYPE: ClassVar[str] = "ReturnEnded"
    home: tuple[int, ...]


@dataclass(frozen=True, kw_only=True)
class GameEnded(Event):
    TYPE: ClassVar[str] = "GameEnded"
    won: bool
    reason: str


EVENTS = (
    DecksShuffled, Foraged, RefugeReached, RefugeTurnBegan, Recovered, Cached, RefugeLeft, RefugeEnded,
    CompanionJoined, CompanionLeft,
    AdversaryRevealed, RoundBegan, FightTurnBegan, Struck, ReckoningPlayed, Regrouped, RegroupTaken,
    RetrievalOffered, Retrieved, Fled, Hid, Braced, AdversaryDefeated, CounterStruck, CoverDemanded,
    CoverCardPaid, Covered, TravellerFell, BurdenShedBegun, CardDiscarded, DeliveranceDiscarded,
    DestinationReached, ReturnBegan, PurseFormed, RuinsSeeded, StopReached, RuinRevealed, JokerStole,
    JokerShed, RuinStripBegun, TollsBegan, TollDemanded, PurseCardPaid, RuinSalvaged, TollPaid,
    TravellerStopped, ReturnEnded, GameEnded, ForkDealt,
)
