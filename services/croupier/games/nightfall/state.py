"""Nightfall's state: small frozen records, tuples not lists.

A card's owner and design are in its id (see cards.py), so records store ids only.
"""

from __future__ import annotations

from dataclasses import dataclass

from croupier.engine.records import replacer

# Phases
SETUP = "setup"  # before Start
OPENING = "opening"  # both players choose a face-down first Location
MAIN = "main"  # the active player's turn
PLACE = "place"  # a pending choice: where the new Location goes
TRAPS = "traps"  # end of the active player's turn: lay traps or finish
OVER = "over"

# Pending placements
PENDING_CHARACTER = "character"  # a Character entering play on a new Location
PENDING_DISCOVER = "discover"  # a Character in play discovering a new Location (Play Location action)


@dataclass(frozen=True, slots=True)
class Place:
    """A Location in play on the grid."""

    card: str
    x: int
    y: int


@dataclass(frozen=True, slots=True)
class Fighter:
    """A Character in play."""

    card: str
    location: str  # card id of the Location it stands on
    hp: int
    actions: int  # actions left this turn
    acted: bool = False  # spent an action this turn (Items attach only before that)
    item: str | None = None
    uses: int = 0  # uses left on the item
    item_used: bool = False  # the item was used this turn
    ability_used: bool = False
    transferred: bool = False
    ward: int = 0  # DMG reduction from a ward item, until its owner's next turn
    attached: tuple[str, ...] = ()  # Event cards attached to it (either player's)


@dataclass(frozen=True, slots=True)
class Trap:
    owner: int
    design: str
    cards: tuple[str, ...]
    location: str


@dataclass(frozen=True, slots=True)
class Player:
    deck: tuple[str, ...] = ()  # top first
    hand: tuple[str, ...] = ()
    withdrawn: tuple[tuple[str, int], ...] = ()  # (card, hp): off the play area, treated as hand
    discard: tuple[str, ...] = ()
    graveyard: tuple[str, ...] = ()  # defeated Characters
    grave_hp: int = 0
    redraws: int = 0


@dataclass(frozen=True, slots=True)
class State:
    decks: tuple[str, ...]  # deck id per seat
    withdraw_cost: int
    max_rounds: int
    phase: str = SETUP
    players: tuple[Player, ...] = ()
    opening: tuple[str | None, ...] = (None, None)  # face-down first Locations
    places: tuple[Place, ...] = ()
    fighters: tuple[Fighter, ...] = ()
    traps: tuple[Trap, ...] = ()
    turn: int = 0  # 1, 2, ... counted over both players; round = (turn + 1) // 2
    active: int = 0
    first: int = 0
    started_empty: bool = False  # the active player began the turn with no Character in play
    moved: bool = False  # the first-Move draw of this turn is taken
    paid_draw: bool = False
    event_played: bool = False
    character_played: bool = False
    pending: tuple[str, str, str] | None = None  # (kind, character, location card)
    winners: tuple[int, ...] = ()
    end_reason: str = ""


# --- copies with changes --------------------------------------------------------------

# evolve copies a record for every event: the engine's generated copies, not dataclasses.replace
replace_state = replacer(State)
replace_player = replacer(Player)
replace_fighter = replacer(Fighter)
