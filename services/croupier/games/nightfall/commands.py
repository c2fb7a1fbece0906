"""Nightfall's commands: what a seat may send. Wire names are imperative and stable."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from croupier.engine.contract import Command, _key


@dataclass(frozen=True, kw_only=True)
class PlayOpeningLocation(Command):
    """Setup: lay a Location from hand face down as your first Location."""

    TYPE: ClassVar[str] = "PlayOpeningLocation"
    card: str


@dataclass(frozen=True, kw_only=True)
class PlayCharacter(Command):
    """Put a Character from hand (or a withdrawn one) into play on a Location in play (1 action)."""

    TYPE: ClassVar[str] = "PlayCharacter"
    card: str
    location: str


@dataclass(frozen=True, kw_only=True)
class PlayCharacterOnNewLocation(Command):
    """Put a Character into play on a new Location from hand (1 action); where the Location
    goes is the next choice (PlaceLocation)."""

    TYPE: ClassVar[str] = "PlayCharacterOnNewLocation"
    card: str
    location: str


@dataclass(frozen=True, kw_only=True)
class PlayLocation(Command):
    """A Character discovers a new Location from hand (2 actions); where it goes (next to the
    Character's Location) is the next choice (PlaceLocation)."""

    TYPE: ClassVar[str] = "PlayLocation"
    character: str
    location: str


@dataclass(frozen=True, kw_only=True)
class PlaceLocation(Command):
    """The pending choice: the grid cell of the new Location."""

    TYPE: ClassVar[str] = "PlaceLocation"
    x: int
    y: int


@dataclass(frozen=True, kw_only=True)
class MoveCharacter(Command):
    """Move a Character to an adjacent Location (1 action)."""

    TYPE: ClassVar[str] = "MoveCharacter"
    character: str
    to: str


@dataclass(frozen=True, kw_only=True)
class Attack(Command):
    """Attack an enemy Character on the same Location (2 actions); with_item adds the
    attacker's weapon DMG and spends one use of it."""

    TYPE: ClassVar[str] = "Attack"
    attacker: str
    target: str
    with_item: bool = False


@dataclass(frozen=True, kw_only=True)
class TransferItem(Command):
    """Hand the Item to another of your Characters on the same Location (1 action)."""

    TYPE: ClassVar[str] = "TransferItem"
    character: str
    to: str


@dataclass(frozen=True, kw_only=True)
class Withdraw(Command):
    """Take a Character off the play area (3 actions; 2 with withdraw_cost=2)."""

    TYPE: ClassVar[str] = "Withdraw"
    character: str


@dataclass(frozen=True, kw_only=True)
class PlayItem(Command):
    """Attach an Item from hand to one of your Characters that has not acted this turn."""

    TYPE: ClassVar[str] = "PlayItem"
    card: str
    character: str


@dataclass(frozen=True, kw_only=True)
class UseItem(Command):
    """Use a Character's non-weapon Item (once per turn, no action)."""

    TYPE: ClassVar[str] = "UseItem"
    character: str


@dataclass(frozen=True, kw_only=True)
class DiscardItem(Command):
    """Discard a Character's Item."""

    TYPE: ClassVar[str] = "DiscardItem"
    character: str


@dataclass(frozen=True, kw_only=True)
class UseAbility(Command):
    """Use a Character's activated Special Ability (1 action, once per turn); its Location
    must show the ability's type icon. target: a Character id, or None for draw."""

    TYPE: ClassVar[str] = "UseAbility"
    character: str
    target: str | None = None


@dataclass(frozen=True, kw_only=True)
class PlayEvent(Command):
    """Play an Event from hand (one per turn, no action). target: a Character id or None."""

    TYPE: ClassVar[str] = "PlayEvent"
    card: str
    target: str | None = None


@dataclass(frozen=True, kw_only=True)
class DrawCard(Command):
    """Once per turn: add 10 HP to your Graveyard and draw 1 card."""

    TYPE: ClassVar[str] = "DrawCard"


@dataclass(frozen=True, kw_only=True)
class SetTrap(Command):
    """End of turn: lay a Trap (all its 1/N copies from hand) face down on a Location."""

    TYPE: ClassVar[str] = "SetTrap"
    trap: str
    location: str


@dataclass(frozen=True, kw_only=True)
class EndTurn(Command):
    """End the turn (rules version 2; under version 1 it first opened the trap window when a
    Trap could be laid)."""

    TYPE: ClassVar[str] = "EndTurn"


COMMANDS = (
    PlayOpeningLocation, PlayCharacter, PlayCharacterOnNewLocation, PlayLocation, PlaceLocation, MoveCharacter,
    Attack, TransferItem, Withdraw, PlayItem, UseItem, DiscardItem, UseAbility, PlayEvent, DrawCard, SetTrap, EndTurn,
)


def _sort_key_method(cls: type) -> Any:
    """Command.sort_key for one command class, generated from its fields: the same tuple,
    without looking the fields up by name on every call (legal_actions sorts every list it
    returns). A str or int field takes the tag _key gives it; anything else goes to _key."""
    names = [f.name for f in dataclasses.fields(cls)]
    lines = ["def sort_key(self):"]
    lines += [f"    v{i} = self.{n}" for i, n in enumerate(names)]
    parts = [f"(3, v{i}) if type(v{i}) is str else (2, v{i}) if type(v{i}) is int else _key(v{i})" for i in range(len(names))]
    lines.append(f"    return (_TYPE, {', '.join(f'({p})' for p in parts)})")
    scope: dict[str, Any] = {"_TYPE": cls.TYPE, "_key": _key}
    exec("\n".join(lines), scope)  # noqa: S102 - generated from the command's own field names
    return scope["sort_key"]


for _cls in COMMANDS:
    _cls.sort_key = _sort_key_method(_cls)


def _builder(cls: type) -> Any:
    """build(seat, *fields): the command as cls(seat=..., ...) makes it, every field given
    in declaration order, for the many candidates legal_actions weighs. A frozen dataclass's
    __init__ only stores its fields (one object.__setattr__ each); this stores them straight
    into the instance dict, in the same order."""
    names = [f.name for f in dataclasses.fields(cls)]
    lines = [f"def build({', '.join(names)}):", "    obj = _new(_cls)", "    d = obj.__dict__"]
    lines += [f"    d[{n!r}] = {n}" for n in names]
    lines.append("    return obj")
    scope: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    exec("\n".join(lines), scope)  # noqa: S102 - generated from the command's own field names
    return scope["build"]


BUILD = {cls: _builder(cls) for cls in COMMANDS}
