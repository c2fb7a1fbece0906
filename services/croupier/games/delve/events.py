"""Events of delve (past participles). Every random outcome is in an event: the deal, deck
orders, reshuffles, dice rolls, tie-breaks, the Diamond's shuffle."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from croupier.engine.contract import Event


@dataclass(frozen=True, kw_only=True)
class ExpeditionStarted(Event):
    """The deal: every floor's cards (slot order), the market row and stock, the loot deck,
    the boss, and each adventurer's shuffled starting deck (top first)."""

    TYPE: ClassVar[str] = "ExpeditionStarted"
    boss: str
    boss_hp: int
    floors: tuple[tuple[str, ...], ...]
    market: tuple[str, ...]
    stock: tuple[str, ...]
    loot: tuple[str, ...]
    decks: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, kw_only=True)
class VoteOpened(Event):
    TYPE: ClassVar[str] = "VoteOpened"
    session: int
    options: tuple[int, ...]
    deadline: int | None  # ms; None when a single seat chooses (no timer)


@dataclass(frozen=True, kw_only=True)
class VoteCast(Event):
    TYPE: ClassVar[str] = "VoteCast"
    seat: int
    slot: int


@dataclass(frozen=True, kw_only=True)
class VoteRestarted(Event):
    """Nobody voted before the deadline: a new session with a new deadline."""

    TYPE: ClassVar[str] = "VoteRestarted"
    session: int
    deadline: int


@dataclass(frozen=True, kw_only=True)
class RouteChosen(Event):
    """how: only (a single uncovered encounter), plurality, tiebreak (random among `tied`),
    random (after too many silent sessions)."""

    TYPE: ClassVar[str] = "RouteChosen"
    slot: int
    card: str
    votes: tuple[int, ...]
    tied: tuple[int, ...]
    how: str


@dataclass(frozen=True, kw_only=True)
class EncounterStarted(Event):
    TYPE: ClassVar[str] = "EncounterStarted"
    slot: int
    card: str
    order: tuple[int, ...]


@dataclass(frozen=True, kw_only=True)
class BossEngaged(Event):
    TYPE: ClassVar[str] = "BossEngaged"
    boss: str
    hp: int


@dataclass(frozen=True, kw_only=True)
class BossRoundStarted(Event):
    TYPE: ClassVar[str] = "BossRoundStarted"
    round: int
    order: tuple[int, ...]


@dataclass(frozen=True, kw_only=True)
class DeckReshuffled(Event):
    """The empty draw pile is replaced by the discard pile in this order (top first)."""

    TYPE: ClassVar[str] = "DeckReshuffled"
    seat: int
    order: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class CardsDrawn(Event):
    TYPE: ClassVar[str] = "CardsDrawn"
    seat: int
    cards: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class ChoiceOpened(Event):
    """A pending choice of `count` cards: mode limit/discard/destroy (hand) or rescue (piles)."""

    TYPE: ClassVar[str] = "ChoiceOpened"
    seat: int
    mode: str
    count: int
    target: int


@dataclass(frozen=True, kw_only=True)
class CardPicked(Event):
    TYPE: ClassVar[str] = "CardPicked"
    seat: int
    card: str


@dataclass(frozen=True, kw_only=True)
class CardUnpicked(Event):
    TYPE: ClassVar[str] = "CardUnpicked"
    seat: int
    card: str


@dataclass(frozen=True, kw_only=True)
class ChoiceConfirmed(Event):
    """limit/discard: the cards go to the discard pile; destroy/rescue: destroyed."""

    TYPE: ClassVar[str] = "ChoiceConfirmed"
    seat: int
    mode: str
    cards: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class TurnStarted(Event):
    TYPE: ClassVar[str] = "TurnStarted"
    seat: int
    card: str
    slot: int


@dataclass(frozen=True, kw_only=True)
class EncounterSwitched(Event):
    TYPE: ClassVar[str] = "EncounterSwitched"
    seat: int
    slot: int
    card: str


@dataclass(frozen=True, kw_only=True)
class CardCommitted(Event):
    TYPE: ClassVar[str] = "CardCommitted"
    seat: int
    card: str


@dataclass(frozen=True, kw_only=True)
class AttackOffered(Event):
    TYPE: ClassVar[str] = "AttackOffered"
    seat: int
    skill: str
    supporters: tuple[int, ...]


@dataclass(frozen=True, kw_only=True)
class SupportGiven(Event):
    TYPE: ClassVar[str] = "SupportGiven"
    seat: int
    card: str


@dataclass(frozen=True, kw_only=True)
class SupportEnded(Event):
    TYPE: ClassVar[str] = "SupportEnded"
    seat: int


@dataclass(frozen=True, kw_only=True)
class DiceRolled(Event):
    """mode: normal (middle die), advantage (smallest), disadvantage (largest). Success when
    roll <= target. The committed and supporting cards go to their owners' discard piles,
    one-use cards (and the Diamond) are destroyed."""

    TYPE: ClassVar[str] = "DiceRolled"
    seat: int
    skill: str
    dice: tuple[int, ...]
    mode: str
    die: int
    target: int
    roll: int
    success: bool
    cards: tuple[str, ...]
    support: tuple[tuple[int, str], ...]


@dataclass(frozen=True, kw_only=True)
class PenaltyAccepted(Event):
    TYPE: ClassVar[str] = "PenaltyAccepted"
    seat: int


@dataclass(frozen=True, kw_only=True)
class BribePaid(Event):
    TYPE: ClassVar[str] = "BribePaid"
    seat: int
    coins: int


@dataclass(frozen=True, kw_only=True)
class CoinsGained(Event):
    TYPE: ClassVar[str] = "CoinsGained"
    seat: int
    amount: int


@dataclass(frozen=True, kw_only=True)
class CoinsLost(Event):
    TYPE: ClassVar[str] = "CoinsLost"
    seat: int
    amount: int


@dataclass(frozen=True, kw_only=True)
class HealthRestored(Event):
    TYPE: ClassVar[str] = "HealthRestored"
    seat: int
    amount: int
    health: int
    reason: str  # reward, rest, rescue


@dataclass(frozen=True, kw_only=True)
class DamageTaken(Event):
    TYPE: ClassVar[str] = "DamageTaken"
    seat: int
    amount: int
    health: int


@dataclass(frozen=True, kw_only=True)
class KnockedOut(Event):
    TYPE: ClassVar[str] = "KnockedOut"
    seat: int


@dataclass(frozen=True, kw_only=True)
class EncountersRevealed(Event):
    """Knowledge: face-down encounters turned face up; they stay covered."""

    TYPE: ClassVar[str] = "EncountersRevealed"
    seat: int
    slots: tuple[int, ...]
    cards: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class LootGained(Event):
    TYPE: ClassVar[str] = "LootGained"
    seat: int
    cards: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class DiamondFound(Event):
    TYPE: ClassVar[str] = "DiamondFound"
    seat: int
    card: str


@dataclass(frozen=True, kw_only=True)
class DiamondCut(Event):
    """The Diamond destroyed itself; `loot` joined the draw pile, now in `order` (top first)."""

    TYPE: ClassVar[str] = "DiamondCut"
    seat: int
    card: str
    loot: tuple[str, ...]
    order: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class CardsDestroyed(Event):
    """A destruction hazard took the top cards of the draw pile."""

    TYPE: ClassVar[str] = "CardsDestroyed"
    seat: int
    cards: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class ExtraEncounterStarted(Event):
    TYPE: ClassVar[str] = "ExtraEncounterStarted"
    seat: int
    card: str


@dataclass(frozen=True, kw_only=True)
class TurnEnded(Event):
    TYPE: ClassVar[str] = "TurnEnded"
    seat: int


@dataclass(frozen=True, kw_only=True)
class BossDamaged(Event):
    TYPE: ClassVar[str] = "BossDamaged"
    seat: int
    hp: int


@dataclass(frozen=True, kw_only=True)
class RoundEnded(Event):
    """Faced cards leave the floor; newly uncovered ones turn face up."""

    TYPE: ClassVar[str] = "RoundEnded"
    cleared: tuple[int, ...]
    revealed: tuple[int, ...]
    cards: tuple[str, ...]
    floor_done: bool
    floor_clear: bool


@dataclass(frozen=True, kw_only=True)
class BossRoundEnded(Event):
    TYPE: ClassVar[str] = "BossRoundEnded"
    round: int


@dataclass(frozen=True, kw_only=True)
class MarketOpened(Event):
    TYPE: ClassVar[str] = "MarketOpened"
    kind: str  # floor (a market card on the floor) or bonus (the floor was cleared)
    slot: int
    order: tuple[int, ...]


@dataclass(frozen=True, kw_only=True)
class VisitStarted(Event):
    TYPE: ClassVar[str] = "VisitStarted"
    seat: int


@dataclass(frozen=True, kw_only=True)
class CardBought(Event):
    TYPE: ClassVar[str] = "CardBought"
    seat: int
    card: str
    cost: int
    refill: str | None


@dataclass(frozen=True, kw_only=True)
class CardSold(Event):
    TYPE: ClassVar[str] = "CardSold"
    seat: int
    card: str
    value: int


@dataclass(frozen=True, kw_only=True)
class Rested(Event):
    TYPE: ClassVar[str] = "Rested"
    seat: int
    amount: int
    health: int


@dataclass(frozen=True, kw_only=True)
class VisitEnded(Event):
    TYPE: ClassVar[str] = "VisitEnded"
    seat: int


@dataclass(frozen=True, kw_only=True)
class MarketClosed(Event):
    TYPE: ClassVar[str] = "MarketClosed"
    kind: str


@dataclass(frozen=True, kw_only=True)
class CampStarted(Event):
    TYPE: ClassVar[str] = "CampStarted"
    order: tuple[int, ...]


@dataclass(frozen=True, kw_only=True)
class CampLeft(Event):
    TYPE: ClassVar[str] = "CampLeft"
    seat: int


@dataclass(frozen=True, kw_only=True)
class CampEnded(Event):
    TYPE: ClassVar[str] = "CampEnded"


@dataclass(frozen=True, kw_only=True)
class FloorDescended(Event):
    TYPE: ClassVar[str] = "FloorDescended"
    floor: int
    revealed: tuple[int, ...]
    cards: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class ExpeditionWon(Event):
    TYPE: ClassVar[str] = "ExpeditionWon"


@dataclass(frozen=True, kw_only=True)
class ExpeditionLost(Event):
    TYPE: ClassVar[str] = "ExpeditionLost"
    reason: str  # unconscious (everyone), exhausted (the round cap)


@dataclass(frozen=True, kw_only=True)
class ForkDealt(Event):
    """A fork's new deal (GameSpec.redeal, rules.redeal): the cards hidden at the fork's step
    dealt again with the fork's own randomness. Every floor's cards (slot order; only the slots
    nobody had seen changed), the cards of the floors left behind that nobody saw (slot order,
    as State.unseen_below), each adventurer's hand and draw pile (top first), the market stock
    and the loot deck (top first), and the cards of a pending choice (its chooser's; () when
    none is pending)."""

    TYPE: ClassVar[str] = "ForkDealt"
    floors: tuple[tuple[str, ...], ...]
    unseen_below: tuple[str, ...]
    hands: tuple[tuple[str, ...], ...]
    draws: tuple[tuple[str, ...], ...]
    stock: tuple[str, ...]
    loot: tuple[str, ...]
    chosen: tuple[str, ...]


EVENTS = (
    ExpeditionStarted, VoteOpened, VoteCast, VoteRestarted, RouteChosen, EncounterStarted, BossEngaged,
    BossRoundStarted, DeckReshuffled, CardsDrawn, ChoiceOpened, CardPicked, CardUnpicked, ChoiceConfirmed,
    TurnStarted, EncounterSwitched, CardCommitted, AttackOffered, SupportGiven, SupportEnded, DiceRolled,
    PenaltyAccepted, BribePaid, CoinsGained, CoinsLost, HealthRestored, DamageTaken, KnockedOut,
    EncountersRevealed, LootGained, DiamondFound, DiamondCut, CardsDestroyed, ExtraEncounterStarted,
    TurnEnded, BossDamaged, RoundEnded, BossRoundEnded, MarketOpened, VisitStarted, CardBought, CardSold,
    Rested, VisitEnded, MarketClosed, CampStarted, CampLeft, CampEnded, FloorDescended, ExpeditionWon,
    ExpeditionLost, ForkDealt,
)
