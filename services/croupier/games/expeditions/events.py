"""The events of expeditions. Every random outcome (the removed cards, the hands, the supply
order, the tile placement, the first player) is in ExpeditionDealt (a fork's new deal of the
hidden cards in ForkDealt); scores are computed by decide and recorded, so evolve only
applies them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from croupier.engine.contract import Event


@dataclass(frozen=True, kw_only=True)
class ExpeditionDealt(Event):
    """A new expedition: `tiles[path][step - 1]` is the tile id on that space or None;
    `supply` is in drawing order (first card on top); `removed` went back to the box."""

    TYPE: ClassVar[str] = "ExpeditionDealt"
    expedition: int
    first: int
    removed: tuple[str, ...]
    hands: tuple[tuple[str, ...], ...]
    supply: tuple[str, ...]
    tiles: tuple[tuple[str | None, ...], ...]


@dataclass(frozen=True, kw_only=True)
class PathBegun(Event):
    TYPE: ClassVar[str] = "PathBegun"
    seat: int
    card: str
    researcher: bool


@dataclass(frozen=True, kw_only=True)
class CardPlayed(Event):
    """A card laid on the seat's own pile of its colour."""

    TYPE: ClassVar[str] = "CardPlayed"
    seat: int
    card: str


@dataclass(frozen=True, kw_only=True)
class FigureMoved(Event):
    """The seat's figure on the path of `color` reached step `step`."""

    TYPE: ClassVar[str] = "FigureMoved"
    seat: int
    color: str
    step: int


@dataclass(frozen=True, kw_only=True)
class ArtefactFound(Event):
    TYPE: ClassVar[str] = "ArtefactFound"
    seat: int
    color: str
    step: int
    tile: str


@dataclass(frozen=True, kw_only=True)
class PointsFound(Event):
    TYPE: ClassVar[str] = "PointsFound"
    seat: int
    color: str
    step: int
    tile: str
    points: int


@dataclass(frozen=True, kw_only=True)
class ArrowFound(Event):
    """An arrow tile: the seat may now move one of its figures (none movable: no choice)."""

    TYPE: ClassVar[str] = "ArrowFound"
    seat: int
    color: str
    step: int
    tile: str
    choice: bool


@dataclass(frozen=True, kw_only=True)
class LastStepPlayed(Event):
    """A valid card for a path whose figure stands on the last step: the seat may move one
    of its other figures."""

    TYPE: ClassVar[str] = "LastStepPlayed"
    seat: int
    color: str


@dataclass(frozen=True, kw_only=True)
class MoveSkipped(Event):
    TYPE: ClassVar[str] = "MoveSkipped"
    seat: int


@dataclass(frozen=True, kw_only=True)
class CardDiscarded(Event):
    TYPE: ClassVar[str] = "CardDiscarded"
    seat: int
    card: str


@dataclass(frozen=True, kw_only=True)
class CardDrawn(Event):
    """`source` is "supply" or the colour of the discard pile."""

    TYPE: ClassVar[str] = "CardDrawn"
    seat: int
    card: str
    source: str


@dataclass(frozen=True, kw_only=True)
class ExpeditionEnded(Event):
    """`reason` is "bridge" or "supply"; per seat: the figures' points, the victory points
    and artefact chips after paying (never below zero) and turning artefact tiles in."""

    TYPE: ClassVar[str] = "ExpeditionEnded"
    expedition: int
    reason: str
    last_player: int
    points: tuple[int, ...]
    chips: tuple[int, ...]
    artefact_chips: tuple[int, ...]


@dataclass(frozen=True, kw_only=True)
class GameEnded(Event):
    """Final scoring: artefact table points added to the chips (never below zero)."""

    TYPE: ClassVar[str] = "GameEnded"
    artefact_points: tuple[int, ...]
    scores: tuple[int, ...]
    winners: tuple[int, ...]


@dataclass(frozen=True, kw_only=True)
class ForkDealt(Event):
    """A fork's new deal (GameSpec.redeal): every card hidden at the fork's step that is not
    in a discard pile (the hands, the supply, the cards back in the box) gathered, shuffled
    and laid back in the same places in the same numbers. `hands[seat]`, `supply` in drawing
    order (first card on top), `removed` back in the box."""

    TYPE: ClassVar[str] = "ForkDealt"
    hands: tuple[tuple[str, ...], ...]
    supply: tuple[str, ...]
    removed: tuple[str, ...]


EVENTS = (
    ExpeditionDealt, PathBegun, CardPlayed, FigureMoved, ArtefactFound, PointsFound, ArrowFound,
    LastStepPlayed, MoveSkipped, CardDiscarded, CardDrawn, ExpeditionEnded, GameEnded, ForkDealt,
)
