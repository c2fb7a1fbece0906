"""The state of a game of expeditions: small, flat, immutable."""

from __future__ import annotations

from dataclasses import dataclass

from croupier.engine.records import replacer
from croupier.games.expeditions.cards import Config

SETUP, PLAY, MOVE, DRAW, SCORED, OVER = "setup", "play", "move", "draw", "scored", "over"
ARROW_MOVE, LAST_STEP_MOVE = "arrow", "last_step"


@dataclass(frozen=True, slots=True)
class Player:
    hand: tuple[str, ...] = ()
    piles: tuple[tuple[str, ...], ...] = ()  # per path: the own cards laid, the top card last
    steps: tuple[int, ...] = ()  # per path: 0 = no figure there, else the step it stands on
    researchers: tuple[bool, ...] = ()  # per path: the figure there is a researcher
    chips: int = 0  # victory points (face down: only the owner sees them)
    artefacts: tuple[str, ...] = ()  # artefact tiles found in this expedition
    artefact_chips: int = 0


@dataclass(frozen=True, slots=True)
class State:
    cfg: Config
    seats: int
    phase: str = SETUP
    expedition: int = 0
    current: int = 0
    players: tuple[Player, ...] = ()
    supply: tuple[str, ...] = ()  # drawing order, top card first
    discards: tuple[tuple[str, ...], ...] = ()  # per colour, top card last
    removed: tuple[str, ...] = ()  # two players: back in the box for this expedition
    tiles: tuple[tuple[str | None, ...], ...] = ()  # per path, per step (index step - 1)
    spent: frozenset[str] = frozenset()  # points tiles already claimed (first arrival only)
    crossings: int = 0  # figures past the bridge in this expedition, all players together
    pending: str = ""  # in the move phase: ARROW_MOVE or LAST_STEP_MOVE
    pending_exclude: int = -1  # last-step rule: the path whose figure may not be the one moved
    turn_discard: str | None = None  # the card the current player discarded this turn
    last_points: tuple[int, ...] = ()  # figures' points of the last expedition scored
    artefact_points: tuple[int, ...] = ()
    scores: tuple[int, ...] = ()
    winners: tuple[int, ...] = ()


# evolve replaces the state several times per event: the engine's generated copies.
replace_player = replacer(Player)
replace_state = replacer(State)
