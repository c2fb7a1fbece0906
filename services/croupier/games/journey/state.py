"""State of a journey: small, frozen, slotted records. Piles are tuples with the top first.

The state is a handful of records (the piles, the encounter, the pending choice, the road
home) so that evolve copies a few fields per event rather than forty; `State` reads through
to them (`s.discard` is `s.piles.discard`) and `replace` writes through to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import Any

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


_KEEP = object()  # "leave this field as it is" in the generated replace functions


def _compile(name: str, lines: list[str], scope: dict[str, Any]) -> Any:
    exec("\n".join(lines), scope)  # noqa: S102 - generated from the records' own field names
    return scope[name]


def _record_replacer(cls: type) -> Any:
    """A fast `dataclasses.replace` for a frozen slotted record: evolve runs one for every
    event, and the generic one re-runs __init__ through keyword arguments."""
    names = cls.__slots__
    lines = [f"def replace(s, *, {', '.join(f'{n}=_K' for n in names)}):", "    o = _new(_cls)"]
    lines += [f"    _set(o, {n!r}, s.{n} if {n} is _K else {n})" for n in names]
    lines.append("    return o")
    return _compile("replace", lines, {"_new": object.__new__, "_set": object.__setattr__, "_cls": cls, "_K": _KEEP})


def _state_replacer() -> Any:
    """replace(state, **changes) where a change may name a field of State or of one of its
    records: State's own fields are copied, the few changes applied, and only the records
    that change are copied."""
    scope: dict[str, Any] = {"_new": object.__new__, "_set": object.__setattr__, "_cls": State,
                             "_group_of": _GROUP_OF, "_records": {g: _record_replacer(c) for g, c in _GROUPS.items()}}
    lines = ["def replace(s, **kw):", "    o = _new(_cls)"]
    lines += [f"    _set(o, {n!r}, s.{n})" for n in State.__slots__]
    lines += [
        "    parts = None",
        "    for name, value in kw.items():",
        "        group = _group_of.get(name)",
        "        if group is None:",
        "            _set(o, name, value)",
        "        elif parts is None:",
        "            parts = {group: {name: value}}",
        "        elif group in parts:",
        "            parts[group][name] = value",
        "        else:",
        "            parts[group] = {name: value}",
        "    if parts is not None:",
        "        for group, part in parts.items():",
        "            _set(o, group, _records[group](getattr(s, group), **part))",
        "    return o",
    ]
    return _compile("replace", lines, scope)


replace = _state_replacer()
replace_traveller = _record_replacer(Traveller)
