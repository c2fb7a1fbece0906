"""Nightfall's heuristic bot: scores every legal action from the seat's view and the
(public) card data, and plays the best one (ties at random).

It attacks when it can (kills first), arms a Character before it acts, brings Characters
in where they can strike at once, moves in for an attack, takes the free draw of the first
move, heals the wounded, lays Traps under enemies, and never pays for a draw while it has
cards to play."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from croupier.games.nightfall.cards import CONTENT, design_of, owner_of

LOCS = CONTENT.locations
CHARS = CONTENT.characters
ITEMS = CONTENT.items
EVENTS = CONTENT.events
TRAPS = CONTENT.traps


class _Board:
    """The view, indexed for the scoring functions."""

    def __init__(self, view: Mapping[str, Any]):
        self.seat = view.get("you")
        game = view["game"]
        self.game = game
        self.turn = game["turn"]
        self.places = {p["card"]: (p["x"], p["y"]) for p in game["locations"]}
        self.fighters = {f["card"]: f for f in game["characters"]}
        self.mine = [f for f in game["characters"] if owner_of(f["card"]) == self.seat]
        self.theirs = [f for f in game["characters"] if owner_of(f["card"]) != self.seat]
        me = game["players"][self.seat]
        self.hand = me["hand"] or []
        self.withdrawn = me["withdrawn"]
        self.deck_count = me["deck_count"]
        self.grave = me["graveyard_hp"]
        self.capacity_left = sum(LOCS[design_of(c)].capacity for c in self.places) - sum(
            f["hp"] for f in game["characters"])
        self.moved = game["turn_flags"]["moved"]

    def condition(self, location: str, kind: str) -> int:
        card = LOCS[design_of(location)]
        if self.turn <= 1 or card.condition != kind:
            return 0
        return card.amount or 1

    def passive(self, card: str, location: str, kind: str) -> int:
        char = CHARS[design_of(card)]
        types = LOCS[design_of(location)].types
        total = sum(a.amount for a in char.abilities if a.kind == kind and a.type in types)
        if char.secondary is not None and char.secondary.kind == kind:
            total += char.secondary.amount
        return total

    def attack_dmg(self, card: str, location: str, with_item: bool = False) -> int:
        f = self.fighters.get(card)
        dmg = CHARS[design_of(card)].dmg + self.passive(card, location, "attack_bonus")
        dmg += self.condition(location, "attack_bonus")
        if f is not None:
            if with_item and f.get("item"):
                dmg += ITEMS[design_of(f["item"])].amount
            dmg += sum(EVENTS[design_of(e)].amount for e in f.get("attached", ()) if EVENTS[design_of(e)].kind == "empower")
        return dmg

    def dealt(self, dmg: int, target: Mapping[str, Any]) -> int:
        loc = target["location"]
        reduce = self.passive(target["card"], loc, "armor") + self.condition(loc, "armor") + target.get("ward", 0)
        dmg = max(0, dmg - reduce)
        for e in target.get("attached", ()):
            if EVENTS[design_of(e)].kind == "shield":
                dmg = max(0, dmg - EVENTS[design_of(e)].amount)
        return dmg

    def enemies_at(self, location: str) -> list[Mapping[str, Any]]:
        return [f for f in self.theirs if f["location"] == location]

    def adjacent(self, a: str, b: str) -> bool:
        (ax, ay), (bx, by) = self.places[a], self.places[b]
        return a != b and max(abs(ax - bx), abs(ay - by)) == 1

    def can_attack_here(self, f: Mapping[str, Any]) -> bool:
        return f["actions"] >= 2 and bool(self.enemies_at(f["location"])) and not self.condition(f["location"], "no_attack")

    def threat_at(self, location: str) -> int:
        return sum(self.attack_dmg(f["card"], location) for f in self.enemies_at(location))

    def best_hit(self, card: str, location: str, extra: int = 0) -> float:
        """Value of the best attack this Character could make on this Location."""
        if self.condition(location, "no_attack"):
            return 0.0
        best = 0.0
        for t in self.enemies_at(location):
            d = self.dealt(self.attack_dmg(card, location) + extra, t)
            value = 60 + CHARS[design_of(t["card"])].hp if d >= t["hp"] else d
            best = max(best, value)
        return best

    def missing(self, card: str) -> int:
        f = self.fighters[card]
        return CHARS[design_of(card)].hp - f["hp"]


def _score(b: _Board, a: Mapping[str, Any]) -> float:
    kind = a["type"]
    if kind == "EndTurn":
        return 0.0
    if kind == "PlayOpeningLocation":
        return LOCS[design_of(a["card"])].capacity / 10
    if kind == "PlaceLocation":
        return _score_cell(b, a["x"], a["y"])
    if kind == "SetTrap":
        trap = TRAPS[a["trap"]]
        victims = b.enemies_at(a["location"])
        if not victims:
            return -1.0
        return 20.0 * len(victims) + (trap.amount if trap.kind == "damage" else 10)
    if kind == "Attack":
        f = b.fighters[a["attacker"]]
        t = b.fighters[a["target"]]
        d = b.dealt(b.attack_dmg(f["card"], f["location"], a["with_item"]), t)
        if d >= t["hp"]:
            # A kill; do not spend a weapon use on it if the bare attack kills too.
            spare = a["with_item"] and b.dealt(b.attack_dmg(f["card"], f["location"]), t) >= t["hp"]
            return 200.0 + CHARS[design_of(t["card"])].hp - (5 if spare else 0)
        return 80.0 + d
    if kind == "PlayItem":
        return _score_item(b, a["card"], b.fighters[a["character"]])
    if kind == "UseItem":
        return _score_use_item(b, b.fighters[a["character"]])
    if kind == "PlayCharacter":
        return _score_enter(b, a["card"], a["location"])
    if kind == "PlayCharacterOnNewLocation":
        return 12.0 if b.capacity_left < CHARS[design_of(a["card"])].hp else 4.0
    if kind == "PlayLocation":
        f = b.fighters[a["character"]]
        tight = b.capacity_left < 40 and any(design_of(c) in CHARS for c in b.hand)
        return (18.0 if tight else 2.0) - (60 if b.can_attack_here(f) and f["actions"] - 2 < 2 else 0)
    if kind == "MoveCharacter":
        return _score_move(b, b.fighters[a["character"]], a["to"])
    if kind == "UseAbility":
        return _score_ability(b, b.fighters[a["character"]], a.get("target"))
    if kind == "PlayEvent":
        return _score_event(b, a["card"], a.get("target"))
    if kind == "DrawCard":
        # With no Character in play or in hand, nothing but a draw can bring one.
        stuck = not b.mine and not any(design_of(c) in CHARS for c in b.hand) and not b.withdrawn
        if stuck:
            return 50.0
        return 6.0 if not b.hand and b.grave <= 120 else -30.0
    if kind == "Withdraw":
        f = b.fighters[a["character"]]
        doomed = b.threat_at(f["location"]) >= f["hp"] and f["hp"] <= 15
        return 15.0 if doomed else -50.0
    if kind == "TransferItem":
        giver, taker = b.fighters[a["character"]], b.fighters[a["to"]]
        if giver["item"] and ITEMS[design_of(giver["item"])].kind == "weapon" and taker["actions"] >= 2 \
                and not b.can_attack_here(giver) and b.can_attack_here(taker):
            return 30.0
        return -5.0
    if kind == "DiscardItem":
        return -100.0
    return -1.0


def _score_cell(b: _Board, x: int, y: int) -> float:
    near = 0.0
    for card, (px, py) in b.places.items():
        if max(abs(px - x), abs(py - y)) == 1:
            near += 1 + len(b.enemies_at(card))
    return near


def _score_item(b: _Board, item: str, f: Mapping[str, Any]) -> float:
    card = ITEMS[design_of(item)]
    loc = f["location"]
    foes_here = bool(b.enemies_at(loc)) and not b.condition(loc, "no_attack")
    if card.kind == "weapon":
        return 150.0 if foes_here and f["actions"] >= 2 else 25.0
    if card.kind == "heal":
        return 60.0 if b.missing(f["card"]) >= card.amount // 2 else 15.0
    if card.kind == "ward":
        return 40.0 if foes_here else 15.0
    if card.kind == "haste":
        return 120.0 if foes_here else 20.0
    return 30.0


def _score_use_item(b: _Board, f: Mapping[str, Any]) -> float:
    card = ITEMS[design_of(f["item"])]
    if card.kind == "heal":
        return 60.0 if b.missing(f["card"]) >= card.amount // 2 else -5.0
    if card.kind == "ward":
        near = any(b.adjacent(t["location"], f["location"]) or t["location"] == f["location"] for t in b.theirs)
        return 20.0 if near else -5.0
    if card.kind == "haste":
        return 110.0 if b.enemies_at(f["location"]) and f["actions"] < 2 else -5.0
    return 35.0


def _score_enter(b: _Board, card: str, location: str) -> float:
    char = CHARS[design_of(card)]
    types = LOCS[design_of(location)].types
    score = 40.0 + 3 * sum(1 for ab in char.abilities if ab.type in types)
    hit = b.best_hit(card, location)
    score += hit / 2 if hit else 0
    threat = b.threat_at(location)
    if threat >= char.hp:
        score -= 25
    return score


def _score_move(b: _Board, f: Mapping[str, Any], to: str) -> float:
    draw = 8.0 if not b.moved and b.deck_count else 0.0
    if b.can_attack_here(f) and f["actions"] - 1 < 2:
        return -60.0
    score = draw
    if f["actions"] - 1 >= 2:
        hit = b.best_hit(f["card"], to)
        score += hit / 2 + (15 if hit else 0)
    char = CHARS[design_of(f["card"])]
    if b.threat_at(to) >= f["hp"] and f["hp"] < char.hp:
        score -= 20
    return score - 1.0 if score else -1.0


def _score_ability(b: _Board, f: Mapping[str, Any], target: str | None) -> float:
    types = LOCS[design_of(f["location"])].types
    ability = next(ab for ab in CHARS[design_of(f["card"])].abilities if ab.type in types
                   and ab.kind in ("heal", "strike", "draw"))
    penalty = 60.0 if b.can_attack_here(f) and f["actions"] - 1 < 2 else 0.0
    if ability.kind == "draw":
        return 30.0 - penalty
    if ability.kind == "heal":
        return (min(ability.amount, b.missing(target)) * 3.0 or -5.0) - penalty
    t = b.fighters[target]
    return (150.0 + CHARS[design_of(t["card"])].hp if ability.amount >= t["hp"] else 40.0 + ability.amount) - penalty


def _score_event(b: _Board, card: str, target: str | None) -> float:
    ev = EVENTS[design_of(card)]
    if ev.kind == "draw":
        return 60.0 if not b.mine else 30.0 if len(b.hand) <= 3 else 10.0
    if ev.kind == "heal_all":
        total = sum(min(ev.amount, b.missing(f["card"])) for f in b.mine)
        return total * 1.5 if total >= 15 else -1.0
    if ev.kind == "damage":
        t = b.fighters[target]
        if ev.amount >= t["hp"]:
            return 150.0 + CHARS[design_of(t["card"])].hp
        return 15.0 + ev.amount / 3
    if ev.kind == "refresh":
        f = b.fighters[target]
        return 70.0 if b.enemies_at(f["location"]) and f["actions"] < 2 else -1.0
    if ev.kind == "discard_random":
        return 12.0
    if ev.kind == "empower":
        f = b.fighters[target]
        return 90.0 if b.can_attack_here(f) else -1.0
    if ev.kind == "shield":
        f = b.fighters[target]
        return 20.0 if b.threat_at(f["location"]) else -1.0
    # snare: the enemy that threatens us most
    t = b.fighters[target]
    near = [f for f in b.mine if f["location"] == t["location"] or b.adjacent(f["location"], t["location"])]
    return 15.0 + CHARS[design_of(t["card"])].dmg if near else -1.0


def heuristic(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: Any) -> Mapping[str, Any]:
    board = _Board(view)
    best: list[Mapping[str, Any]] = []
    top = float("-inf")
    scores = [_score(board, action) for action in legal]
    # A Trap laid from the main phase ends it: only once nothing else is worth doing.
    busy = any(s > 0 for s, a in zip(scores, legal) if a["type"] not in ("SetTrap", "EndTurn"))
    for action, score in zip(legal, scores):
        if busy and action["type"] == "SetTrap":
            continue
        if score > top:
            top, best = score, [action]
        elif score == top:
            best.append(action)
    return best[rng.randrange(len(best))]
