"""Nightfall's cards as data: the model, and the loader + validator of content/*.yaml.

Every physical card has an id `s<seat>-<design>-<copy>` (e.g. "s0-spike-pit-2"): the seat
whose deck it belongs to, the design it shows, and which copy. Designs are shared by both
seats' decks; ids never are.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

CONTENT_DIR = Path(__file__).with_name("content")

TYPES = ("beast", "undead", "spirit", "hunter", "mystic", "soldier")
FACTIONS = ("monsters", "defenders")
CONDITIONS = ("attack_bonus", "armor", "heal_start", "damage_start", "extra_action", "no_attack", "none")
PASSIVE_ABILITIES = ("attack_bonus", "armor", "drain", "regenerate")
ACTIVE_ABILITIES = ("heal", "strike", "draw")
ITEM_KINDS = ("weapon", "heal", "ward", "haste", "draw")
EVENT_KINDS = {
    "draw": "none", "heal_all": "none", "discard_random": "none", "damage": "enemy",
    "refresh": "friendly", "empower": "friendly", "shield": "friendly", "snare": "enemy",
}
ATTACHED_EVENTS = ("empower", "shield", "snare")
TRAP_KINDS = ("damage", "stun", "disarm")

# The least content the game needs (the project's brief for nightfall).
MIN_COUNTS = {"locations": 12, "characters": 24, "items": 10, "traps": 6, "events": 8}
MIN_PER_FACTION = 12


class ContentError(ValueError):
    """The content files do not describe a playable game."""


@dataclass(frozen=True, slots=True)
class Ability:
    kind: str
    amount: int
    type: str | None  # the icon it sits next to; None for a Secondary Ability


@dataclass(frozen=True, slots=True)
class LocationCard:
    id: str
    name: str
    capacity: int
    types: tuple[str, ...]
    condition: str
    amount: int


@dataclass(frozen=True, slots=True)
class CharacterCard:
    id: str
    name: str
    faction: str
    hp: int
    attack_name: str
    dmg: int
    types: tuple[str, ...]
    abilities: tuple[Ability, ...]
    secondary: Ability | None


@dataclass(frozen=True, slots=True)
class ItemCard:
    id: str
    name: str
    kind: str
    amount: int
    uses: int


@dataclass(frozen=True, slots=True)
class EventCard:
    id: str
    name: str
    kind: str
    amount: int
    target: str  # none | friendly | enemy


@dataclass(frozen=True, slots=True)
class TrapCard:
    id: str
    name: str
    kind: str
    amount: int
    components: int


@dataclass(frozen=True, slots=True)
class Deck:
    id: str
    name: str
    faction: str
    cards: tuple[tuple[str, int], ...]  # (design, copies) in file order


@dataclass(frozen=True)
class Content:
    locations: dict[str, LocationCard]
    characters: dict[str, CharacterCard]
    items: dict[str, ItemCard]
    events: dict[str, EventCard]
    traps: dict[str, TrapCard]
    decks: dict[str, Deck]
    category: dict[str, str]  # design id -> location | character | item | event | trap

    def name(self, design: str) -> str:
        for table in (self.locations, self.characters, self.items, self.events, self.traps):
            if design in table:
                return table[design].name
        return design


# --- loading and validation -----------------------------------------------------------


def _need(cond: bool, where: str, msg: str) -> None:
    if not cond:
        raise ContentError(f"{where}: {msg}")


def _int(raw: dict, key: str, where: str, lo: int = 0) -> int:
    value = raw.get(key)
    _need(isinstance(value, int) and not isinstance(value, bool) and value >= lo, where, f"{key} must be an integer >= {lo}")
    return value


def _str(raw: dict, key: str, where: str) -> str:
    value = raw.get(key)
    _need(isinstance(value, str) and value != "", where, f"{key} must be a non-empty string")
    return value


def _design_id(raw: dict, where: str) -> str:
    value = _str(raw, "id", where)
    _need(value == value.lower() and all(c.isalnum() or c == "-" for c in value), where,
          f"id {value!r} must be lowercase letters, digits and '-'")
    # Card ids are "s<seat>-<design>-<copy>"; a design must never look like one.
    _need(not (len(value) > 2 and value[0] == "s" and value[1].isdigit() and value[2] == "-"), where,
          f"id {value!r} must not look like a card id (s<digit>-...)")
    return value


def _ability(raw: Any, where: str, gated: bool) -> Ability:
    _need(isinstance(raw, dict), where, "an ability is a mapping")
    kind = _str(raw, "kind", where)
    _need(kind in PASSIVE_ABILITIES + ACTIVE_ABILITIES, where, f"unknown ability kind {kind!r}")
    if not gated:
        _need(kind in PASSIVE_ABILITIES, where, "a secondary ability must be passive")
        _need("type" not in raw, where, "a secondary ability has no type icon")
    amount = _int(raw, "amount", where, 1)
    return Ability(kind=kind, amount=amount, type=_str(raw, "type", where) if gated else None)


def _section(data: dict, key: str, file: str) -> list:
    rows = data.get(key)
    _need(isinstance(rows, list), file, f"needs a list under {key!r}")
    return rows


def _read(directory: Path, name: str) -> dict:
    path = directory / name
    _need(path.exists(), str(path), "missing content file")
    with path.open(encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    _need(isinstance(data, dict), str(path), "must be a mapping")
    return data


def load(directory: Path = CONTENT_DIR) -> Content:
    """Read and validate every content file; raises ContentError naming the problem."""
    category: dict[str, str] = {}

    def register(design: str, kind: str, where: str) -> None:
        _need(design not in category, where, f"id {design!r} is used twice")
        category[design] = kind

    locations: dict[str, LocationCard] = {}
    for i, raw in enumerate(_section(_read(directory, "locations.yaml"), "locations", "locations.yaml")):
        where = f"locations.yaml #{i + 1}"
        _need(isinstance(raw, dict), where, "a location is a mapping")
        lid = _design_id(raw, where)
        types = raw.get("types")
        _need(isinstance(types, list) and len(types) == 2 and len(set(types)) == 2 and all(t in TYPES for t in types),
              where, f"types must be two different icons of {TYPES}")
        condition = _str(raw, "condition", where)
        _need(condition in CONDITIONS, where, f"unknown condition {condition!r}")
        amount = _int(raw, "amount", where, 0)
        _need(condition in ("none", "no_attack") or amount > 0, where, f"condition {condition} needs an amount > 0")
        register(lid, "location", where)
        locations[lid] = LocationCard(lid, _str(raw, "name", where), _int(raw, "capacity", where, 1), tuple(types),
                                      condition, amount)

    characters: dict[str, CharacterCard] = {}
    for i, raw in enumerate(_section(_read(directory, "characters.yaml"), "characters", "characters.yaml")):
        where = f"characters.yaml #{i + 1}"
        _need(isinstance(raw, dict), where, "a character is a mapping")
        cid = _design_id(raw, where)
        faction = _str(raw, "faction", where)
        _need(faction in FACTIONS, where, f"faction must be one of {FACTIONS}")
        attack = raw.get("attack")
        _need(isinstance(attack, dict), where, "attack must be a mapping {name, dmg}")
        types = raw.get("types")
        _need(isinstance(types, list) and 1 <= len(types) <= 2 and len(set(types)) == len(types)
              and all(t in TYPES for t in types), where, f"types must be one or two icons of {TYPES}")
        abilities = tuple(_ability(a, where, True) for a in raw.get("abilities") or ())
        for ability in abilities:
            _need(ability.type in types, where, f"ability icon {ability.type!r} is not one of its types")
        _need(len({a.type for a in abilities}) == len(abilities), where, "one special ability per icon")
        _need(sum(a.kind in ACTIVE_ABILITIES for a in abilities) <= 1, where, "at most one activated ability")
        secondary = _ability(raw["secondary"], where, False) if raw.get("secondary") is not None else None
        register(cid, "character", where)
        characters[cid] = CharacterCard(cid, _str(raw, "name", where), faction, _int(raw, "hp", where, 1),
                                        _str(attack, "name", where), _int(attack, "dmg", where, 0), tuple(types),
                                        abilities, secondary)

    items: dict[str, ItemCard] = {}
    for i, raw in enumerate(_section(_read(directory, "items.yaml"), "items", "items.yaml")):
        where = f"items.yaml #{i + 1}"
        _need(isinstance(raw, dict), where, "an item is a mapping")
        iid = _design_id(raw, where)
        kind = _str(raw, "kind", where)
        _need(kind in ITEM_KINDS, where, f"unknown item kind {kind!r}")
        register(iid, "item", where)
        items[iid] = ItemCard(iid, _str(raw, "name", where), kind, _int(raw, "amount", where, 1), _int(raw, "uses", where, 1))

    events: dict[str, EventCard] = {}
    for i, raw in enumerate(_section(_read(directory, "events.yaml"), "events", "events.yaml")):
        where = f"events.yaml #{i + 1}"
        _need(isinstance(raw, dict), where, "an event is a mapping")
        eid = _design_id(raw, where)
        kind = _str(raw, "kind", where)
        _need(kind in EVENT_KINDS, where, f"unknown event kind {kind!r}")
        target = _str(raw, "target", where)
        _need(target == EVENT_KINDS[kind], where, f"an event of kind {kind} has target {EVENT_KINDS[kind]}")
        amount = _int(raw, "amount", where, 0)
        _need(kind == "snare" or amount > 0, where, f"event kind {kind} needs an amount > 0")
        register(eid, "event", where)
        events[eid] = EventCard(eid, _str(raw, "name", where), kind, amount, target)

    traps: dict[str, TrapCard] = {}
    for i, raw in enumerate(_section(_read(directory, "traps.yaml"), "traps", "traps.yaml")):
        where = f"traps.yaml #{i + 1}"
        _need(isinstance(raw, dict), where, "a trap is a mapping")
        tid = _design_id(raw, where)
        kind = _str(raw, "kind", where)
        _need(kind in TRAP_KINDS, where, f"unknown trap kind {kind!r}")
        amount = _int(raw, "amount", where, 0)
        _need(kind == "disarm" or amount > 0, where, f"trap kind {kind} needs an amount > 0")
        register(tid, "trap", where)
        traps[tid] = TrapCard(tid, _str(raw, "name", where), kind, amount, _int(raw, "components", where, 1))

    for key, least in MIN_COUNTS.items():
        have = sum(1 for v in category.values() if v + "s" == key)
        _need(have >= least, "content", f"needs at least {least} {key}, has {have}")
    for faction in FACTIONS:
        have = sum(1 for c in characters.values() if c.faction == faction)
        _need(have >= MIN_PER_FACTION, "characters.yaml", f"needs at least {MIN_PER_FACTION} {faction}, has {have}")

    decks: dict[str, Deck] = {}
    for i, raw in enumerate(_section(_read(directory, "decks.yaml"), "decks", "decks.yaml")):
        where = f"decks.yaml #{i + 1}"
        _need(isinstance(raw, dict), where, "a deck is a mapping")
        did = _str(raw, "id", where)
        _need(did not in decks, where, f"deck id {did!r} is used twice")
        faction = _str(raw, "faction", where)
        _need(faction in FACTIONS, where, f"faction must be one of {FACTIONS}")
        cards = raw.get("cards")
        _need(isinstance(cards, dict) and cards, where, "cards must be a mapping card id -> copies")
        rows = []
        for design, copies in cards.items():
            _need(design in category, where, f"no card {design!r}")
            _need(isinstance(copies, int) and not isinstance(copies, bool) and 1 <= copies <= 9, where,
                  f"copies of {design} must be 1..9")
            if category[design] == "character":
                _need(characters[design].faction == faction, where, f"{design} is not of faction {faction}")
            if category[design] == "trap":
                need = traps[design].components
                _need(copies >= need, where, f"trap {design} is 1/{need}: the deck needs at least {need} copies")
            rows.append((design, copies))
        _need(any(category[d] == "location" for d, _ in rows), where, "a deck needs at least one Location")
        _need(any(category[d] == "character" for d, _ in rows), where, "a deck needs at least one Character")
        decks[did] = Deck(did, _str(raw, "name", where), faction, tuple(rows))
    _need(len(decks) >= 2, "decks.yaml", "needs at least two decks")
    for faction in FACTIONS:
        _need(any(d.faction == faction for d in decks.values()), "decks.yaml", f"needs a ready-made {faction} deck")
    return Content(locations, characters, items, events, traps, decks, category)


CONTENT = load()


# --- card ids -------------------------------------------------------------------------


def deck_cards(seat: int, deck_id: str) -> tuple[str, ...]:
    """The physical cards of a seat's deck, in list order (before any shuffle)."""
    deck = CONTENT.decks[deck_id]
    return tuple(f"s{seat}-{design}-{k}" for design, copies in deck.cards for k in range(1, copies + 1))


def _design_in(card: str) -> str:
    return card[3:].rsplit("-", 1)[0]


def _owner_in(card: str) -> int:
    return ord(card[1]) - 48


class _ReadOfId(dict):
    """card id -> what the id says (design or seat), kept for every card of every deck (the
    rules ask thousands of times a second, and a dict look-up is the cheapest call there
    is); any other id is read afresh on each call and not kept (ids off the wire may be
    anything, and bad ones raise as the plain read does)."""

    __slots__ = ("_read",)

    def __init__(self, read: Any, cards: Any):
        super().__init__((card, read(card)) for card in cards)
        self._read = read

    def __missing__(self, card: str) -> Any:
        return self._read(card)


_EVERY_CARD = tuple({card: None for seat in (0, 1) for deck in CONTENT.decks for card in deck_cards(seat, deck)})

# design_of("s0-spike-pit-2") -> "spike-pit": the design id a card shows.
design_of = _ReadOfId(_design_in, _EVERY_CARD).__getitem__
# owner_of("s0-spike-pit-2") -> 0: the seat whose deck the card is from.
owner_of = _ReadOfId(_owner_in, _EVERY_CARD).__getitem__


def category_of(card: str) -> str:
    return CONTENT.category.get(design_of(card), "")
