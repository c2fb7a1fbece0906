"""The content of expeditions: cards, event tiles, boards and artefact tables, as data.

`load()` reads content/*.yaml once and validates it (counts, unique ids, references between
files); any problem raises ContentError naming the file and what is wrong. `config(...)`
picks the board, tile layout and artefact table that a table's options select.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

ARTEFACT, ARROW, POINTS = "artefact", "arrow", "points"
TILE_KINDS = (ARTEFACT, ARROW, POINTS)


class ContentError(ValueError):
    """The content files are inconsistent; the message says which file and why."""


@dataclass(frozen=True, slots=True)
class Board:
    name: str
    paths: tuple[str, ...]  # colour of each path, in board order
    values: tuple[int, ...]  # value of step 1..n
    bridge_after: int  # the bridge lies between this step and the next
    crossings_to_end: int

    @property
    def steps(self) -> int:
        return len(self.values)


@dataclass(frozen=True, slots=True)
class Content:
    colors: tuple[str, ...]
    cards: tuple[str, ...]  # every card id, in canonical order (colour, value, copy)
    card_color: dict[str, int]  # card id -> colour index
    card_value: dict[str, int]
    card_rank: dict[str, int]  # card id -> position in canonical order (for sorting hands)
    hand_size: int
    removed_with_two: int
    tiles: tuple[str, ...]
    tile_kind: dict[str, str]
    tile_points: dict[str, int]
    boards: dict[str, Board]
    tile_layouts: dict[str, tuple[int, ...]]
    artefact_tables: dict[str, tuple[tuple[int, int], ...]]
    adventurers: int
    researchers: int
    expeditions: int


@dataclass(frozen=True, slots=True)
class Config:
    """What a table's options select; shared by every state of tables with those options."""

    board: Board
    tile_steps: tuple[int, ...]
    artefact_table: tuple[tuple[int, int], ...]  # (min chips, points), ascending
    vp_first_arrival_only: bool
    strict_start: bool

    def artefact_points(self, chips: int) -> int:
        points = self.artefact_table[0][1]
        for least, value in self.artefact_table:
            if chips >= least:
                points = value
        return points


def _read(name: str) -> Any:
    try:
        text = resources.files(__package__).joinpath("content", name).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ContentError(f"content/{name} is missing") from None
    data = yaml.safe_load(text)
    if not isinstance(data, dict):
        raise ContentError(f"content/{name}: expected a mapping at the top")
    return data


def _need(cond: bool, where: str, message: str) -> None:
    if not cond:
        raise ContentError(f"content/{where}: {message}")


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse(cards: dict, tiles: dict, board: dict) -> Content:
    """Validates the three content documents and builds the Content."""
    colors = cards.get("colors")
    _need(isinstance(colors, list) and colors and all(isinstance(c, str) and c for c in colors),
          "cards.yaml", "colors must be a non-empty list of names")
    _need(len(set(colors)) == len(colors), "cards.yaml", f"duplicate colours in {colors}")
    values = cards.get("values") or {}
    lo, hi, copies = values.get("min"), values.get("max"), cards.get("copies")
    _need(_int(lo) and _int(hi) and lo <= hi, "cards.yaml", "values needs integer min <= max")
    _need(_int(copies) and 1 <= copies <= 26, "cards.yaml", "copies must be 1..26")
    ids = tuple(f"{c}-{v}-{chr(97 + k)}" for c in colors for v in range(lo, hi + 1) for k in range(copies))
    _need(len(ids) == cards.get("total"), "cards.yaml", f"{len(ids)} cards but total says {cards.get('total')}")
    _need(len(set(ids)) == len(ids), "cards.yaml", "card ids are not unique")
    hand_size, removed = cards.get("hand_size"), cards.get("removed_with_two_players", 0)
    _need(_int(hand_size) and hand_size >= 1, "cards.yaml", "hand_size must be a positive integer")
    _need(_int(removed) and removed >= 0, "cards.yaml", "removed_with_two_players must be >= 0")

    tile_list = tiles.get("tiles")
    _need(isinstance(tile_list, list), "tiles.yaml", "tiles must be a list")
    _need(len(tile_list) == tiles.get("total"), "tiles.yaml", f"{len(tile_list)} tiles but total says {tiles.get('total')}")
    tile_ids, kind, points = [], {}, {}
    for t in tile_list:
        _need(isinstance(t, dict) and isinstance(t.get("id"), str), "tiles.yaml", f"tile without an id: {t!r}")
        tid = t["id"]
        _need(tid not in kind, "tiles.yaml", f"duplicate tile id {tid}")
        _need(tid not in ids, "tiles.yaml", f"tile id {tid} is also a card id")
        _need(t.get("kind") in TILE_KINDS, "tiles.yaml", f"tile {tid}: kind must be one of {TILE_KINDS}")
        _need(tid.startswith(t["kind"] + "-"), "tiles.yaml", f"tile {tid}: an id begins with its kind and a dash")
        kind[tid] = t["kind"]
        if t["kind"] == POINTS:
            _need(_int(t.get("points")) and t["points"] > 0, "tiles.yaml", f"tile {tid}: points must be a positive integer")
            points[tid] = t["points"]
        else:
            _need("points" not in t, "tiles.yaml", f"tile {tid}: only points tiles have points")
        tile_ids.append(tid)

    boards = {}
    for name, b in (board.get("boards") or {}).items():
        where = f"board.yaml boards.{name}"
        _need(isinstance(b, dict), where, "must be a mapping")
        _need(b.get("paths") == colors, where, f"paths {b.get('paths')} must be the card colours {colors} in order")
        vals = b.get("values")
        _need(isinstance(vals, list) and len(vals) >= 2 and all(_int(v) for v in vals), where,
              "values must be a list of at least 2 integers")
        bridge = b.get("bridge_after")
        _need(_int(bridge) and 1 <= bridge < len(vals), where, f"bridge_after must be 1..{len(vals) - 1}")
        ends = b.get("crossings_to_end")
        _need(_int(ends) and ends >= 1, where, "crossings_to_end must be a positive integer")
        boards[name] = Board(name, tuple(colors), tuple(vals), bridge, ends)
    _need(bool(boards), "board.yaml", "no boards")
    _need("standard" in boards, "board.yaml", "the default board 'standard' is missing")
    shortest = min(b.steps for b in boards.values())

    layouts = {}
    for name, steps in (board.get("tile_layouts") or {}).items():
        where = f"board.yaml tile_layouts.{name}"
        _need(isinstance(steps, list) and steps and all(_int(s) for s in steps), where, "must be a list of steps")
        _need(len(set(steps)) == len(steps) and steps == sorted(steps), where, "steps must be ascending and distinct")
        _need(2 <= steps[0] and steps[-1] <= shortest, where, f"steps must lie in 2..{shortest} (step 1 holds no tile)")
        _need(name == ",".join(map(str, steps)), where, "the layout's name must be its steps joined by commas")
        layouts[name] = tuple(steps)
    _need("2,4,6,7,9" in layouts, "board.yaml", "the default tile layout '2,4,6,7,9' is missing")

    tables = {}
    for name, rows in (board.get("artefact_tables") or {}).items():
        where = f"board.yaml artefact_tables.{name}"
        _need(isinstance(rows, list) and rows, where, "must be a non-empty list")
        mins = [r.get("min") for r in rows]
        _need(all(_int(r.get("min")) and _int(r.get("points")) for r in rows), where, "rows need integer min and points")
        _need(mins[0] == 0 and mins == sorted(set(mins)), where, "mins must start at 0 and ascend")
        tables[name] = tuple((r["min"], r["points"]) for r in rows)
    _need("standard" in tables, "board.yaml", "the default artefact table 'standard' is missing")

    figures = board.get("figures") or {}
    adv, res = figures.get("adventurers"), figures.get("researchers")
    _need(_int(adv) and _int(res) and adv >= 0 and res >= 0, "board.yaml", "figures need adventurers and researchers counts")
    _need(adv + res == len(colors), "board.yaml", f"a player needs one figure per path: {adv} + {res} != {len(colors)}")
    expeditions = board.get("expeditions")
    _need(_int(expeditions) and expeditions >= 1, "board.yaml", "expeditions must be a positive integer")

    per_color = (hi - lo + 1) * copies
    return Content(
        colors=tuple(colors),
        cards=ids,
        card_color={cid: i // per_color for i, cid in enumerate(ids)},
        card_value={cid: lo + (i % per_color) // copies for i, cid in enumerate(ids)},
        card_rank={cid: i for i, cid in enumerate(ids)},
        hand_size=hand_size,
        removed_with_two=removed,
        tiles=tuple(tile_ids),
        tile_kind=kind,
        tile_points=points,
        boards=boards,
        tile_layouts=layouts,
        artefact_tables=tables,
        adventurers=adv,
        researchers=res,
        expeditions=expeditions,
    )


@lru_cache(maxsize=1)
def load() -> Content:
    return parse(_read("cards.yaml"), _read("tiles.yaml"), _read("board.yaml"))


@lru_cache(maxsize=64)
def config(board: str, tile_spaces: str, artefact_table: str, vp_first_arrival_only: bool, strict_start: bool) -> Config:
    content = load()
    return Config(
        board=content.boards[board],
        tile_steps=content.tile_layouts[tile_spaces],
        artefact_table=content.artefact_tables[artefact_table],
        vp_first_arrival_only=vp_first_arrival_only,
        strict_start=strict_start,
    )


CONTENT = load()
