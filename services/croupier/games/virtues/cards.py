"""The cards of `virtues`: five Virtues, forty Locations and sixty Action cards, as data.

`load()` reads content/locations.yaml and content/actions.yaml and validates them: the
counts the rules need (each three-symbol combination on four Locations, each pair of
symbols on five Action cards, ten specials), unique ids, known symbols and special kinds.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import yaml

CONTENT_DIR = Path(__file__).parent / "content"

# The rule each special card follows; rules.py implements exactly these.
SPECIAL_KINDS = ("wild", "raid", "scout", "swap", "survey", "double", "draw", "banish", "salvage", "pilgrim")
SYMBOL_COUNT = 5
LOCATION_SYMBOLS = 3
SPECIAL_COUNT = 10


class ContentError(ValueError):
    """The content files do not describe a valid set of cards."""


@dataclass(frozen=True, slots=True)
class Location:
    id: str
    name: str
    symbols: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Action:
    """A symbol card (two symbols, kind None) or a special card (no symbols, a kind)."""

    id: str
    symbols: tuple[str, ...] = ()
    kind: str | None = None
    name: str = ""
    text: str = ""


@dataclass(frozen=True)
class Catalog:
    symbols: tuple[str, ...]
    symbol_names: dict[str, str]
    symbol_codes: dict[str, str]  # symbol -> the code used in symbol card ids
    locations: dict[str, Location]
    actions: dict[str, Action]
    symbol_card_ids: tuple[str, ...]
    special_ids: tuple[str, ...]

    def action_deck(self, specials: int) -> tuple[str, ...]:
        """The Action cards of a game with the first `specials` special cards."""
        return self.symbol_card_ids + self.special_ids[:specials]


def _read(path: Path) -> Any:
    try:
        with path.open(encoding="utf-8") as fh:
            return yaml.safe_load(fh)
    except (OSError, yaml.YAMLError) as exc:
        raise ContentError(f"{path.name}: {exc}") from None


def _need(cond: bool, message: str) -> None:
    if not cond:
        raise ContentError(message)


def load(directory: Path = CONTENT_DIR) -> Catalog:
    loc_doc = _read(directory / "locations.yaml")
    act_doc = _read(directory / "actions.yaml")
    _need(isinstance(loc_doc, dict) and isinstance(act_doc, dict), "content files must be mappings")

    raw_symbols = loc_doc.get("symbols") or []
    _need(len(raw_symbols) == SYMBOL_COUNT, f"locations.yaml: expected {SYMBOL_COUNT} symbols, got {len(raw_symbols)}")
    symbols = tuple(str(s["id"]) for s in raw_symbols)
    codes = {str(s["id"]): str(s["code"]) for s in raw_symbols}
    names = {str(s["id"]): str(s["name"]) for s in raw_symbols}
    _need(len(set(symbols)) == SYMBOL_COUNT, "locations.yaml: symbol ids must be unique")
    _need(len(set(codes.values())) == SYMBOL_COUNT, "locations.yaml: symbol codes must be unique")
    order = {s: i for i, s in enumerate(symbols)}

    ids: set[str] = set()

    def new_id(card_id: Any, where: str) -> str:
        _need(isinstance(card_id, str) and card_id != "", f"{where}: a card id must be a non-empty string")
        _need(card_id not in ids, f"{where}: duplicate card id {card_id!r}")
        _need(card_id not in order and card_id not in SPECIAL_KINDS, f"{where}: id {card_id!r} clashes with a word")
        ids.add(card_id)
        return card_id

    copies = loc_doc.get("copies_per_combination")
    _need(isinstance(copies, int) and copies > 0, "locations.yaml: copies_per_combination must be a positive integer")
    locations: dict[str, Location] = {}
    for raw in loc_doc.get("locations") or []:
        lid = new_id(raw.get("id"), "locations.yaml")
        syms = tuple(raw.get("symbols") or ())
        _need(len(syms) == LOCATION_SYMBOLS and len(set(syms)) == LOCATION_SYMBOLS,
              f"locations.yaml: {lid} needs three different symbols")
        unknown = [s for s in syms if s not in order]
        _need(not unknown, f"locations.yaml: {lid} has unknown symbol(s) {unknown}")
        locations[lid] = Location(lid, str(raw.get("name") or lid), tuple(sorted(syms, key=order.__getitem__)))
    combos = Counter(loc.symbols for loc in locations.values())
    for combo in combinations(symbols, LOCATION_SYMBOLS):
        _need(combos.get(combo, 0) == copies,
              f"locations.yaml: {'+'.join(combo)} is on {combos.get(combo, 0)} locations, expected {copies}")
    _need(len(locations) == copies * len(list(combinations(symbols, LOCATION_SYMBOLS))),
          "locations.yaml: unexpected number of locations")

    block = act_doc.get("symbol_cards") or {}
    pair_copies = block.get("copies")
    _need(isinstance(pair_copies, int) and pair_copies > 0, "actions.yaml: symbol_cards.copies must be a positive integer")
    pairs = []
    for raw in block.get("pairs") or []:
        pair = tuple(raw)
        _need(len(pair) == 2 and len(set(pair)) == 2 and all(s in order for s in pair),
              f"actions.yaml: {raw!r} is not a pair of two different known symbols")
        pairs.append(tuple(sorted(pair, key=order.__getitem__)))
    _need(sorted(pairs) == sorted(combinations(symbols, 2)), "actions.yaml: pairs must list each pair of symbols exactly once")
    actions: dict[str, Action] = {}
    symbol_ids = []
    for pair in pairs:
        for n in range(1, pair_copies + 1):
            aid = new_id(f"act-{codes[pair[0]]}-{codes[pair[1]]}-{n}", "actions.yaml")
            actions[aid] = Action(aid, pair)
            symbol_ids.append(aid)

    special_ids = []
    for raw in act_doc.get("specials") or []:
        sid = new_id(raw.get("id"), "actions.yaml")
        kind = raw.get("kind")
        _need(kind in SPECIAL_KINDS, f"actions.yaml: {sid} has unknown kind {kind!r}")
        _need(bool(raw.get("name")) and bool(raw.get("text")), f"actions.yaml: {sid} needs a name and a text")
        actions[sid] = Action(sid, (), str(kind), str(raw["name"]), str(raw["text"]))
        special_ids.append(sid)
    _need(len(special_ids) == SPECIAL_COUNT, f"actions.yaml: expected {SPECIAL_COUNT} specials, got {len(special_ids)}")
    missing = set(SPECIAL_KINDS) - {actions[s].kind for s in special_ids}
    _need(not missing, f"actions.yaml: no special card of kind(s) {sorted(missing)}")

    return Catalog(symbols, names, codes, locations, actions, tuple(symbol_ids), tuple(special_ids))


CATALOG = load()
