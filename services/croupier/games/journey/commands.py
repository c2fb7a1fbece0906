"""Commands of the journey: what a traveller asks to do. `seat` is inherited."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from croupier.engine.contract import Command

# --- at a refuge ------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Forage(Command):
    """Draw the top Supply card into your satchel (one refuge action)."""

    TYPE: ClassVar[str] = "Forage"


@dataclass(frozen=True, kw_only=True)
class Recover(Command):
    """Slide a card of the discard pile under the Supply (one refuge action)."""

    TYPE: ClassVar[str] = "Recover"
    card: str


@dataclass(frozen=True, kw_only=True)
class Cache(Command):
    """Hide a satchel card at this refuge until the journey home; your refuge ends."""

    TYPE: ClassVar[str] = "Cache"
    card: str


@dataclass(frozen=True, kw_only=True)
class MoveOn(Command):
    """Leave the refuge, giving up the actions left."""

    TYPE: ClassVar[str] = "MoveOn"


# --- in a fight -------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Strike(Command):
    """Strike with a diamond (double value), a club (value) or HMS Thunder Child (A-diamonds).
    `rally` (Allies only) is the rank 2-10 a King rallies as; 0 otherwise."""

    TYPE: ClassVar[str] = "Strike"
    card: str
    rally: int = 0


@dataclass(frozen=True, kw_only=True)
class Regroup(Command):
    """Play a club to the discard, then take another discard (TakeBack) into the satchel."""

    TYPE: ClassVar[str] = "Regroup"
    card: str


@dataclass(frozen=True, kw_only=True)
class TakeBack(Command):
    """The second half of Regroup: the discard taken into the satchel."""

    TYPE: ClassVar[str] = "TakeBack"
    card: str


@dataclass(frozen=True, kw_only=True)
class Retrieve(Command):
    """Allies: after striking with a Jack, the same-suit discard it brings back."""

    TYPE: ClassVar[str] = "Retrieve"
    card: str


@dataclass(frozen=True, kw_only=True)
class Flee(Command):
    """Discard a card; the adversary goes back into the Journey at a random place."""

    TYPE: ClassVar[str] = "Flee"
    card: str


@dataclass(frozen=True, kw_only=True)
class Hide(Command):
    """Reveal the top Supply card: lower than the adversary (and the last reveal) slips past."""

    TYPE: ClassVar[str] = "Hide"


@dataclass(frozen=True, kw_only=True)
class PlayReckoning(Command):
    """Terrestrial Bacteria (A-clubs): a free action halving the adversary's health."""

    TYPE: ClassVar[str] = "PlayReckoning"


@dataclass(frozen=True, kw_only=True)
class Brace(Command):
    """Do nothing this round; only when no strike, regroup, flight or hiding is possible."""

    TYPE: ClassVar[str] = "Brace"


@dataclass(frozen=True, kw_only=True)
class ShedBurden(Command):
    """Companions: leave the Burden to this adversary. Every traveller discards a card and
    `extra` (a traveller) discards one more."""

    TYPE: ClassVar[str] = "ShedBurden"
    extra: int


@dataclass(frozen=True, kw_only=True)
class Discard(Command):
    """The card you discard to be rid of the Burden."""

    TYPE: ClassVar[str] = "Discard"
    card: str


@dataclass(frozen=True, kw_only=True)
class Deliver(Command):
    """Companions: discard the Deliverance (10 of clubs) to be rid of the Burden, free."""

    TYPE: ClassVar[str] = "Deliver"


# --- covering a strike ------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Cover(Command):
    """Pay one card (or a Partner/Witness companion as 10) towards the attack on you."""

    TYPE: ClassVar[str] = "Cover"
    card: str


@dataclass(frozen=True, kw_only=True)
class UseWreckage(Command):
    """Cover the rest of the attack with banked wreckage."""

    TYPE: ClassVar[str] = "UseWreckage"


# --- the Return Journey -----------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ShedJoker(Command):
    """Discard a face card from the purse; the Joker goes with it."""

    TYPE: ClassVar[str] = "ShedJoker"
    card: str


@dataclass(frozen=True, kw_only=True)
class StripRuin(Command):
    """Pay half the Ruin's value (rounded up) from the purse to salvage its value in points."""

    TYPE: ClassVar[str] = "StripRuin"


@dataclass(frozen=True, kw_only=True)
class Proceed(Command):
    """Done at this stop: pay the tolls."""

    TYPE: ClassVar[str] = "Proceed"


@dataclass(frozen=True, kw_only=True)
class Pay(Command):
    """Pay one purse card (or a Partner/Witness companion as 10) towards a toll or a Ruin."""

    TYPE: ClassVar[str] = "Pay"
    card: str


COMMANDS = (
    Forage, Recover, Cache, MoveOn,
    Strike, Regroup, TakeBack, Retrieve, Flee, Hide, PlayReckoning, Brace, ShedBurden, Discard, Deliver,
    Cover, UseWreckage,
    ShedJoker, StripRuin, Proceed, Pay,
)
