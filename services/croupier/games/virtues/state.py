"""The state of a game of `virtues`: small, flat, immutable.

Decks hold the top card first; the discard pile holds its top card last. The fields that
change together are grouped (Turn: whose turn and which decision point; Config: fixed at
creation) so that an event rebuilds as few fields as it can.
"""

from __future__ import annotations

from dataclasses import dataclass

from croupier.engine.records import setstate_with_defaults

# Decision points. "end" is the end-of-turn count: it rests there only while the seat has
# more than three Locations (ReturnLocation) or more than three cards (DiscardCard).
SETUP, DRAW, ACT, REARRANGE, BONUS, SCOUT, SURVEY, CLAIM, END, OVER = (
    "setup", "draw", "act", "rearrange", "bonus", "scout", "survey", "claim", "end", "over",
)


@dataclass(frozen=True, slots=True)
class Config:
    seats: int
    target: int  # completions that win
    specials: int  # special cards in the Action deck
    max_rounds: int  # the cap: after this many rounds, most completions wins
    # The rules version the game is played under, where its rules differ (initial_state sets
    # it; a state pickled before this field reads 2). 3: an Action deck that runs out is
    # rebuilt at once, not at the next draw.
    rules: int = 2

    __setstate__ = setstate_with_defaults


@dataclass(frozen=True, slots=True)
class Turn:
    current: int = 0
    number: int = 0  # turns begun so far
    phase: str = SETUP
    moved: tuple[str, ...] = ()  # cards re-arranged this turn (each moves at most once)
    bonus: int = 0  # Clan Gathering: plays left
    peek: tuple[str, ...] = ()  # the top cards the current seat is looking at
    resume: str = ""  # the decision point to return to after taking a Location (claim)


@dataclass(frozen=True, slots=True)
class Site:
    """A Location in an Array and the card on each of its symbols ("" when uncovered)."""

    location: str
    covers: tuple[str, ...] = ("", "", "")


@dataclass(frozen=True, slots=True)
class Player:
    hand: tuple[str, ...] = ()
    array: tuple[Site, ...] = ()
    completed: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class State:
    config: Config
    players: tuple[Player, ...]
    turn: Turn = Turn()
    action_deck: tuple[str, ...] = ()
    discard: tuple[str, ...] = ()
    location_deck: tuple[str, ...] = ()
    display: tuple[str, ...] = ()
    winners: tuple[int, ...] = ()
    end_reason: str = ""

    @property
    def phase(self) -> str:
        return self.turn.phase

    @property
    def current(self) -> int:
        return self.turn.current
