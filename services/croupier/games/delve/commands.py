"""Commands of delve (imperative wire names). `seat` is inherited from Command."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from croupier.engine.contract import Command


@dataclass(frozen=True, kw_only=True)
class Vote(Command):
    """Vote for (or, solo, choose) an uncovered encounter slot; a new vote replaces the old."""

    TYPE: ClassVar[str] = "Vote"
    slot: int = -1


@dataclass(frozen=True, kw_only=True)
class PickCard(Command):
    """Toggle a card in the pending choice (hand-limit discard, penalty, rescue)."""

    TYPE: ClassVar[str] = "PickCard"
    card: str = ""


@dataclass(frozen=True, kw_only=True)
class ConfirmPick(Command):
    TYPE: ClassVar[str] = "ConfirmPick"


@dataclass(frozen=True, kw_only=True)
class SwitchEncounter(Command):
    """Before committing cards: reveal a face-down encounter of this floor and face it."""

    TYPE: ClassVar[str] = "SwitchEncounter"
    slot: int = -1


@dataclass(frozen=True, kw_only=True)
class CommitCard(Command):
    TYPE: ClassVar[str] = "CommitCard"
    card: str = ""


@dataclass(frozen=True, kw_only=True)
class RollDice(Command):
    TYPE: ClassVar[str] = "RollDice"
    skill: str = ""


@dataclass(frozen=True, kw_only=True)
class OfferAttack(Command):
    """Commit to a skill and let teammates add cards before the roll."""

    TYPE: ClassVar[str] = "OfferAttack"
    skill: str = ""


@dataclass(frozen=True, kw_only=True)
class SupportAttack(Command):
    """Add one card from your hand to a teammate's offered attack."""

    TYPE: ClassVar[str] = "SupportAttack"
    card: str = ""


@dataclass(frozen=True, kw_only=True)
class EndSupport(Command):
    TYPE: ClassVar[str] = "EndSupport"


@dataclass(frozen=True, kw_only=True)
class PayBribe(Command):
    TYPE: ClassVar[str] = "PayBribe"


@dataclass(frozen=True, kw_only=True)
class AcceptPenalty(Command):
    TYPE: ClassVar[str] = "AcceptPenalty"


@dataclass(frozen=True, kw_only=True)
class BuyCard(Command):
    TYPE: ClassVar[str] = "BuyCard"
    card: str = ""


@dataclass(frozen=True, kw_only=True)
class SellCard(Command):
    TYPE: ClassVar[str] = "SellCard"
    card: str = ""


@dataclass(frozen=True, kw_only=True)
class Rest(Command):
    TYPE: ClassVar[str] = "Rest"


@dataclass(frozen=True, kw_only=True)
class LeaveMarket(Command):
    TYPE: ClassVar[str] = "LeaveMarket"


@dataclass(frozen=True, kw_only=True)
class RescueTeammate(Command):
    """Between rounds: destroy two cards of your draw/discard piles (chosen next) to give
    an unconscious teammate 1 health."""

    TYPE: ClassVar[str] = "RescueTeammate"
    target: int = -1


@dataclass(frozen=True, kw_only=True)
class BreakCamp(Command):
    TYPE: ClassVar[str] = "BreakCamp"


COMMANDS = (
    Vote, PickCard, ConfirmPick, SwitchEncounter, CommitCard, RollDice, OfferAttack, SupportAttack,
    EndSupport, PayBribe, AcceptPenalty, BuyCard, SellCard, Rest, LeaveMarket, RescueTeammate, BreakCamp,
)
