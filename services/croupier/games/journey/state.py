"""State of a journey: small, frozen, slotted records. Piles are tuples with the top first.

The state is a handful of records (the piles, the encounter, the pending choice, the road
home) so that evolve copies a few fields per event rather than forty; `State` reads through
to them (`s.discard` is `s.piles.discard`) and `replace` writes through to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter

from croupier.engine.records import replacer

# phase: setup (before Start), travel (between encounters), refuge, fight, arrived, return, over
# step: the decision pending now ("" while the game moves on by itself):
#   refuge, fight, take (second half of Regroup), retrieve (allied Jack), cover, discard
#   (shedding the Burden), stop (a Return Journey stop), pay (a toll or a Ruin)
# stage: fight "turns" or "counter"; return "prep", "arrive", "stop" or "tolls"


@dataclass(frozen=True, slots=True)
class Traveller:
    satchel: tuple[str, ...] = ()
    wreckage: int = 0
    standing: bool = True
    walking: bool = False  # still on the Return Journey
    points: int = 0  # Return Journey points: tolls paid and Ruins salvaged


@dataclass(frozen=True, slots=True)
class Setup:
    """The table's options; they never change."""

    limit: int = 5  # base satchel limit
    allies: bool = False
    return_journey: bool = False
    companions: bool = False


@dataclass(frozen=True, slots=True)
class Piles:
    journey: tuple[str, ...] = ()
    supply: tuple[str, ...] = ()
    discard: tuple[str, ...] = ()
    defeated: tuple[str, ...] = ()
    wrecks: tuple[str, ...] = ()  # adversaries defeated by a direct hit (they seed the Ruins)
    route: tuple[str, ...] = ()  # hearts passed, Woking first (a companion who leaves is taken off)
    names: tuple[tuple[str, str], ...] = ()  # (heart, place name) of every heart passed
    caches: tuple[tuple[str, int, str], ...] = ()  # (place, seat, card)


@dataclass(frozen=True, slots=True)
class Encounter:
    current: str | None = None  # the refuge or adversary faced now
    refuge_actions: int = 0
    actions_left: int = 0
    health: int = 0
    attack: int = 0
    round: int = 0
    cut: int = 0  # this round's counter reduction
    hid: bool = False  # a hide slipped past this round: no counter
    last_reveal: int = 14  # rank of the last kept hide reveal this fight
    hide_blocked: bool = False  # a reveal failed this fight
    reckoning_used: bool = False


@dataclass(frozen=True, slots=True)
class Pending:
    due: int = 0
    paid: int = 0
    reason: str = ""  # of the cover or payment pending: counter, ambush, toll, ruin
    played: str | None = None  # the club of a Regroup, the Jack of a retrieval
    queue: tuple[int, ...] = ()  # who still discards to shed the Burden


@dataclass(frozen=True, slots=True)
class Homeward:
    """The Return Journey."""

    purse: tuple[str, ...] = ()
    stops: tuple[str, ...] = ()  # places still ahead, next first
    place: str | None = None  # the stop the group is at
    ruins: tuple[tuple[str, str, bool, bool], ...] = ()  # (place, card, revealed, stripped)
    stolen: int = 0  # cards the Joker took


@dataclass(frozen=True, slots=True)
class State:
    seats: int
    setup: Setup
    travellers: tuple[Traveller, ...]
    phase: str = "setup"
    step: str = ""
    stage: str = ""
    acting: int = -1
    companion: str | None = None
    arrived: bool = False
    outcome: str | None = None  # won / lost
    piles: Piles = Piles()
    enc: Encounter = Encounter()
    pend: Pending = Pending()
    home: Homeward = Homeward()


_GROUPS = {"setup": Setup, "piles": Piles, "enc": Encounter, "pend": Pending, "home": Homeward}
_GROUP_OF = {name: group for group, cls in _GROUPS.items() for name in cls.__slots__}
for _name, _group in _GROUP_OF.items():
    setattr(State, _name, property(attrgetter(f"{_group}.{_name}")))


# evolve copies the state for every event: the fast replace of croupier.engine.records, where
# a change may name a field of State or of one of its records (only the records that change
# are copied).
replace = replacer(State, _GROUPS)
replace_traveller = replacer(Traveller)
