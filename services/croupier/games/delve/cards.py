"""The content of delve: player cards, encounters, bosses and floors, loaded from content/*.yaml.

Everything the rule text names but does not list is data designed for Croupier (see
docs/games/delve.md). `load()` validates on load: counts, unique ids, references that
resolve, no loop of extra encounters, and no card that sells for more than it costs (a
buy-and-sell loop must never make coins). A broken file raises ContentError naming the
problem.

Physical cards have unique ids: `<design>.<n>` for market and loot cards, `<design>.s<seat>.<n>`
for an adventurer's basic cards, `diamond.1` for the Diamond. Encounter cards appear at most
once per game, so an encounter's id is its design id prefixed with `enc:`; bosses `boss:`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

SKILLS = ("strength", "finesse", "radiant", "arcane")
WILD = "wild"
# Roll-under arrays: the die used is the middle one, the smallest with advantage, the
# largest with disadvantage. The base success range is 1..base.
DICE = {"high": (6, 8, 10), "low": (4, 6, 8)}
BASE_RANGE = {"high": 3, "low": 1}
CARD_KINDS = ("basic", "market", "loot", "diamond")
ENCOUNTER_KINDS = ("encounter", "extra", "market")
EXTRA_WHEN = ("success", "failure", "always")
REWARD_KEYS = ("coins", "heal", "knowledge", "cards", "diamond")
PENALTY_KEYS = ("damage", "coins", "discard", "destroy", "destroy_top")
MAX_SEATS = 4
MIN_MARKET_DESIGNS = 20
MIN_ENCOUNTERS = 30
MIN_BOSSES = 3
MIN_FLOORS = 3
MARKET_ROW = 5

CONTENT_DIR = Path(__file__).parent / "content"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ContentError(ValueError):
    """The content files are inconsistent; the message says where."""


@dataclass(frozen=True, slots=True)
class CardDesign:
    id: str
    name: str
    kind: str
    icons: tuple[str, ...]
    advantage: int
    one_use: bool
    cost: int | None
    value: int | None
    copies: int
    text: str

    def matches(self, skill: str) -> int:
        return sum(1 for icon in self.icons if icon == skill or icon == WILD)


@dataclass(frozen=True, slots=True)
class Reward:
    coins: int = 0
    heal: int = 0
    knowledge: int = 0
    cards: int = 0
    diamond: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in REWARD_KEYS if getattr(self, k)}


@dataclass(frozen=True, slots=True)
class Penalty:
    damage: int = 0
    coins: int = 0
    discard: int = 0
    destroy: int = 0
    destroy_top: int = 0

    def as_dict(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in PENALTY_KEYS if getattr(self, k)}


@dataclass(frozen=True, slots=True)
class SkillOption:
    reward: Reward
    roll: int  # +1 advantage, -1 disadvantage, 0 normal


@dataclass(frozen=True, slots=True)
class Encounter:
    id: str
    name: str
    kind: str  # encounter, extra, market, boss
    tier: int
    dice: str
    skills: dict[str, SkillOption]
    penalty: Penalty
    bribe: int | None
    extra: str | None
    extra_when: str
    hp: tuple[int, ...]  # bosses: hit points by seat count
    text: str

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "name": self.name, "kind": self.kind}
        if self.kind == "market":
            return out
        out["dice"] = list(DICE[self.dice])
        out["base"] = BASE_RANGE[self.dice]
        out["skills"] = {
            s: {"reward": o.reward.as_dict(), "roll": {1: "advantage", -1: "disadvantage"}.get(o.roll, "normal")}
            for s, o in self.skills.items()
        }
        out["penalty"] = self.penalty.as_dict()
        out["bribe"] = self.bribe
        if self.extra:
            out["extra"] = {"encounter": self.extra, "when": self.extra_when}
        return out


@dataclass(frozen=True, slots=True)
class Floor:
    id: str
    name: str
    tier: int
    markets: int
    covered_by: tuple[tuple[int, ...], ...]  # per slot
    rows: tuple[int, ...]  # per slot: its row
    final: tuple[bool, ...]  # per slot: in the final row

    @property
    def size(self) -> int:
        return len(self.covered_by)


@dataclass(frozen=True)
class Content:
    cards: dict[str, CardDesign]
    encounters: dict[str, Encounter]  # by encounter id (enc:...), bosses by boss:...
    bosses: tuple[str, ...]
    floors: tuple[Floor, ...]
    starting_deck: tuple[tuple[str, int], ...]
    design_of: dict[str, str]  # physical card id -> design id
    market_cards: tuple[str, ...]  # physical ids of the market stock
    loot_cards: tuple[str, ...]  # physical ids of the loot deck
    diamond: str  # physical id of the Diamond
    tier_encounters: dict[int, tuple[str, ...]]
    tier_markets: dict[int, tuple[str, ...]]

    def design(self, card: str) -> CardDesign:
        return self.cards[self.design_of[card]]

    def starting_cards(self, seat: int) -> tuple[str, ...]:
        return tuple(f"{d}.s{seat}.{n}" for d, count in self.starting_deck for n in range(1, count + 1))


def _need(cond: bool, where: str, message: str) -> None:
    if not cond:
        raise ContentError(f"{where}: {message}")


def _int(raw: Any, where: str, name: str, lo: int = 0, hi: int = 99) -> int:
    _need(isinstance(raw, int) and not isinstance(raw, bool) and lo <= raw <= hi, where, f"{name} must be an integer {lo}..{hi}, not {raw!r}")
    return raw


def _keys(raw: Any, where: str, allowed: tuple[str, ...], required: tuple[str, ...] = ()) -> dict:
    _need(isinstance(raw, dict), where, "must be a mapping")
    unknown = sorted(set(raw) - set(allowed))
    _need(not unknown, where, f"unknown field(s) {unknown}")
    missing = [k for k in required if k not in raw]
    _need(not missing, where, f"missing field(s) {missing}")
    return raw


def _card(raw: Any) -> CardDesign:
    where = f"cards.yaml card {raw.get('id') if isinstance(raw, dict) else raw!r}"
    raw = _keys(raw, where, ("id", "name", "kind", "icons", "advantage", "one_use", "cost", "value", "copies", "text"), ("id", "name", "kind"))
    cid = raw["id"]
    _need(isinstance(cid, str) and cid and "." not in cid and ":" not in cid, where, "id must be a non-empty string without '.' or ':'")
    kind = raw["kind"]
    _need(kind in CARD_KINDS, where, f"kind must be one of {CARD_KINDS}")
    icons = tuple(raw.get("icons") or ())
    allowed_icons = SKILLS + ((WILD,) if kind == "diamond" else ())
    _need(all(i in allowed_icons for i in icons), where, f"icons must be among {allowed_icons}")
    cost = raw.get("cost")
    value = raw.get("value")
    if kind == "basic":
        _need(cost is None and value is None, where, "basic cards have no cost and no coin value (they cannot be sold)")
    else:
        value = _int(value, where, "value", 1, 20)
    if kind == "market":
        cost = _int(cost, where, "cost", 1, 20)
        _need(value <= cost, where, "a market card may not sell for more than it costs")
    else:
        _need(cost is None, where, "only market cards have a cost")
    one_use = raw.get("one_use", kind == "diamond")
    _need(isinstance(one_use, bool), where, "one_use must be true or false")
    _need(kind != "diamond" or one_use, where, "the Diamond destroys itself: one_use must be true")
    return CardDesign(
        id=cid, name=str(raw["name"]), kind=kind, icons=icons,
        advantage=1 if raw.get("advantage") else 0, one_use=one_use, cost=cost, value=value,
        copies=_int(raw.get("copies", 1), where, "copies", 1, 8), text=str(raw.get("text", "")),
    )


def _reward(raw: Any, where: str) -> Reward:
    raw = _keys(raw or {}, where, REWARD_KEYS)
    diamond = raw.get("diamond", False)
    _need(isinstance(diamond, bool), where, "diamond must be true or false")
    return Reward(**{k: _int(raw.get(k, 0), where, k, 0, 9) for k in REWARD_KEYS if k != "diamond"}, diamond=diamond)


def _penalty(raw: Any, where: str) -> Penalty:
    raw = _keys(raw or {}, where, PENALTY_KEYS)
    pen = Penalty(**{k: _int(raw.get(k, 0), where, k, 0, 9) for k in PENALTY_KEYS})
    _need(not (pen.discard and pen.destroy), where, "a penalty asks for at most one choice of cards (discard or destroy)")
    return pen


def _encounter(raw: Any, boss: bool = False) -> Encounter:
    file = "bosses.yaml" if boss else "encounters.yaml"
    where = f"{file} {raw.get('id') if isinstance(raw, dict) else raw!r}"
    fields = ("id", "name", "kind", "tier", "dice", "skills", "penalty", "bribe", "extra", "hp", "text")
    raw = _keys(raw, where, fields, ("id", "name") + (("hp",) if boss else ("kind", "tier")))
    eid = raw["id"]
    _need(isinstance(eid, str) and eid and ":" not in eid and "." not in eid, where, "id must be a non-empty string without ':' or '.'")
    kind = "boss" if boss else raw["kind"]
    _need(kind in ENCOUNTER_KINDS + ("boss",), where, f"kind must be one of {ENCOUNTER_KINDS}")
    prefix = "boss:" if boss else "enc:"
    tier = _int(raw.get("tier", 0), where, "tier", 0, 9)
    if kind == "market":
        _need(all(k not in raw for k in ("dice", "skills", "penalty", "bribe", "extra", "hp")), where, "a market has no dice, skills, penalty, bribe, extra or hp")
        return Encounter(prefix + eid, str(raw["name"]), kind, tier, "high", {}, Penalty(), None, None, "success", (), str(raw.get("text", "")))
    dice = raw.get("dice")
    _need(dice in DICE, where, f"dice must be one of {sorted(DICE)}")
    skills_raw = _keys(raw.get("skills"), where + " skills", SKILLS, SKILLS)
    skills = {}
    for skill in SKILLS:
        sraw = _keys(skills_raw[skill] or {}, f"{where} {skill}", ("reward", "roll"))
        roll = sraw.get("roll", "normal")
        _need(roll in ("normal", "advantage", "disadvantage"), f"{where} {skill}", "roll must be normal, advantage or disadvantage")
        reward = _reward(sraw.get("reward"), f"{where} {skill} reward")
        _need(not (boss and reward.knowledge), f"{where} {skill}", "a boss gives no knowledge (there is no floor left to reveal)")
        skills[skill] = SkillOption(reward, {"normal": 0, "advantage": 1, "disadvantage": -1}[roll])
    penalty = _penalty(raw.get("penalty"), where + " penalty")
    if boss:
        _need(penalty.damage > 0, where, "a boss penalty must deal damage, so that every boss round moves the fight on")
    bribe = raw.get("bribe")
    if bribe is not None:
        _need(not boss, where, "a boss cannot be bribed")
        bribe = _int(bribe, where, "bribe", 1, 20)
    extra = raw.get("extra")
    extra_id, extra_when = None, "success"
    if extra is not None:
        _need(not boss, where, "a boss has no extra encounter")
        extra = _keys(extra, where + " extra", ("encounter", "when"), ("encounter",))
        extra_id = "enc:" + str(extra["encounter"])
        extra_when = extra.get("when", "success")
        _need(extra_when in EXTRA_WHEN, where, f"extra.when must be one of {EXTRA_WHEN}")
    hp: tuple[int, ...] = ()
    if boss:
        hp = tuple(raw["hp"]) if isinstance(raw["hp"], list) else ()
        _need(len(hp) == MAX_SEATS, where, f"hp lists the boss's hit points for 1..{MAX_SEATS} seats")
        for h in hp:
            _int(h, where, "hp", 1, 30)
    return Encounter(prefix + eid, str(raw["name"]), kind, tier, dice, skills, penalty, bribe, extra_id, extra_when, hp, str(raw.get("text", "")))


def _floor(raw: Any) -> Floor:
    where = f"floors.yaml {raw.get('id') if isinstance(raw, dict) else raw!r}"
    raw = _keys(raw, where, ("id", "name", "tier", "markets", "rows", "text"), ("id", "name", "tier", "rows"))
    rows = raw["rows"]
    _need(isinstance(rows, list) and len(rows) >= 2, where, "rows must list at least two rows")
    covered_by: list[tuple[int, ...]] = []
    row_of: list[int] = []
    starts = []
    for r, row in enumerate(rows):
        _need(isinstance(row, list) and row, where, f"row {r} must list its slots")
        start = len(covered_by)
        starts.append(start)
        for cover in row:
            _need(isinstance(cover, list), where, f"row {r}: each slot lists the slots covering it")
            if r == 0:
                _need(not cover, where, "the first row is uncovered")
            else:
                prev = range(starts[r - 1], start)
                _need(cover and all(c in prev for c in cover), where, f"row {r}: a slot is covered by slots of row {r - 1} only")
            covered_by.append(tuple(sorted(set(cover))))
            row_of.append(r)
    last = len(rows) - 1
    # Every slot outside the final row covers something, so the floor is one connected stack.
    covering = {c for cover in covered_by for c in cover}
    for slot, r in enumerate(row_of):
        _need(r == last or slot in covering, where, f"slot {slot} covers nothing and is not in the final row")
    return Floor(
        id=str(raw["id"]), name=str(raw["name"]), tier=_int(raw["tier"], where, "tier", 1, 9),
        markets=_int(raw.get("markets", 0), where, "markets", 0, 3), covered_by=tuple(covered_by),
        rows=tuple(row_of), final=tuple(r == last for r in row_of),
    )


def _read(directory: Path, name: str) -> dict:
    path = directory / name
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
    except (OSError, yaml.YAMLError) as exc:
        raise ContentError(f"{name}: cannot read: {exc}") from None
    _need(isinstance(data, dict), name, "must be a mapping at the top")
    return data


def _unique(ids: list[str], where: str) -> None:
    seen = set()
    for i in ids:
        _need(i not in seen, where, f"id {i!r} is used twice")
        seen.add(i)


def load(directory: Path = CONTENT_DIR) -> Content:
    cards_raw = _read(directory, "cards.yaml")
    enc_raw = _read(directory, "encounters.yaml")
    boss_raw = _read(directory, "bosses.yaml")
    floor_raw = _read(directory, "floors.yaml")

    designs = [_card(c) for c in cards_raw.get("cards") or []]
    _unique([d.id for d in designs], "cards.yaml")
    cards = {d.id: d for d in designs}
    market_designs = [d for d in designs if d.kind == "market"]
    _need(len(market_designs) >= MIN_MARKET_DESIGNS, "cards.yaml", f"needs at least {MIN_MARKET_DESIGNS} market cards, has {len(market_designs)}")
    diamonds = [d for d in designs if d.kind == "diamond"]
    _need(len(diamonds) == 1 and diamonds[0].copies == 1, "cards.yaml", "needs exactly one Diamond (one copy)")
    _need(any(d.kind == "loot" for d in designs), "cards.yaml", "needs loot cards for card rewards and the Diamond")

    deck_raw = cards_raw.get("starting_deck")
    _need(isinstance(deck_raw, dict) and deck_raw, "cards.yaml", "starting_deck maps basic card ids to counts")
    starting = []
    for cid, count in deck_raw.items():
        _need(cid in cards and cards[cid].kind == "basic", "cards.yaml starting_deck", f"{cid!r} is not a basic card")
        starting.append((cid, _int(count, "cards.yaml starting_deck", cid, 1, 10)))
    _need(sum(n for _, n in starting) >= MARKET_ROW, "cards.yaml starting_deck", "an adventurer starts with at least 5 cards")

    encounters = [_encounter(e) for e in enc_raw.get("encounters") or []]
    bosses = [_encounter(b, boss=True) for b in boss_raw.get("bosses") or []]
    _unique([e.id for e in encounters] + [b.id for b in bosses], "encounters.yaml/bosses.yaml")
    by_id = {e.id: e for e in encounters + bosses}
    normal = [e for e in encounters if e.kind == "encounter"]
    _need(len(normal) >= MIN_ENCOUNTERS, "encounters.yaml", f"needs at least {MIN_ENCOUNTERS} encounters, has {len(normal)}")
    _need(len(bosses) >= MIN_BOSSES, "bosses.yaml", f"needs at least {MIN_BOSSES} bosses, has {len(bosses)}")
    for e in encounters:
        if e.extra is not None:
            target = by_id.get(e.extra)
            _need(target is not None and target.kind == "extra", f"encounters.yaml {e.id}", f"extra {e.extra!r} is not an extra encounter")
        if e.kind == "extra":
            _need(e.tier == 0, f"encounters.yaml {e.id}", "extra encounters are not dealt: tier 0")
        else:
            _need(e.tier >= 1, f"encounters.yaml {e.id}", "dealt encounters and markets have a tier of 1 or more")
    for e in encounters:  # chains of extras must end
        seen, cur = set(), e
        while cur.extra is not None:
            _need(cur.id not in seen, f"encounters.yaml {e.id}", "extra encounters loop")
            seen.add(cur.id)
            cur = by_id[cur.extra]
    gives_diamond = any(o.reward.diamond for e in encounters + bosses for o in e.skills.values())
    _need(gives_diamond, "encounters.yaml", "no reward gives the Diamond")

    floors = tuple(_floor(f) for f in floor_raw.get("floors") or [])
    _need(len(floors) >= MIN_FLOORS, "floors.yaml", f"needs at least {MIN_FLOORS} floors, has {len(floors)}")
    _unique([f.id for f in floors], "floors.yaml")
    tier_enc: dict[int, tuple[str, ...]] = {}
    tier_mk: dict[int, tuple[str, ...]] = {}
    for e in encounters:
        if e.kind == "encounter":
            tier_enc[e.tier] = tier_enc.get(e.tier, ()) + (e.id,)
        elif e.kind == "market":
            tier_mk[e.tier] = tier_mk.get(e.tier, ()) + (e.id,)
    need_enc: dict[int, int] = {}
    need_mk: dict[int, int] = {}
    for f in floors:
        need_mk[f.tier] = need_mk.get(f.tier, 0) + f.markets
        need_enc[f.tier] = need_enc.get(f.tier, 0) + f.size - f.markets
    for tier, n in need_enc.items():
        _need(len(tier_enc.get(tier, ())) >= n, "floors.yaml", f"tier {tier} floors need {n} encounters, encounters.yaml has {len(tier_enc.get(tier, ()))}")
    for tier, n in need_mk.items():
        _need(len(tier_mk.get(tier, ())) >= n, "floors.yaml", f"tier {tier} floors need {n} markets, encounters.yaml has {len(tier_mk.get(tier, ()))}")

    design_of: dict[str, str] = {}
    market_cards: list[str] = []
    loot_cards: list[str] = []
    diamond = ""
    for d in designs:
        if d.kind == "basic":
            for seat in range(MAX_SEATS):
                for n in range(1, 11):
                    design_of[f"{d.id}.s{seat}.{n}"] = d.id
            continue
        for n in range(1, d.copies + 1):
            pid = f"{d.id}.{n}"
            design_of[pid] = d.id
            if d.kind == "market":
                market_cards.append(pid)
            elif d.kind == "loot":
                loot_cards.append(pid)
            else:
                diamond = pid
    _need(len(market_cards) >= MARKET_ROW, "cards.yaml", "the market stock needs at least five cards")
    return Content(
        cards=cards, encounters=by_id, bosses=tuple(b.id for b in bosses), floors=floors,
        starting_deck=tuple(starting), design_of=design_of, market_cards=tuple(market_cards),
        loot_cards=tuple(loot_cards), diamond=diamond,
        tier_encounters={t: tuple(sorted(v)) for t, v in tier_enc.items()},
        tier_markets={t: tuple(sorted(v)) for t, v in tier_mk.items()},
    )


CONTENT = load()
