"""The heuristic traveller: plays from its seat's view and legal actions only.

Refuges: forage to the limit, then slide the best discards under the Supply. Fights: free
actions first (the Deliverance, Terrestrial Bacteria against a big adversary), then a direct
hit if one card makes it, hiding when the odds of a lower reveal are good and an ambush can
be covered, a kill with the cheapest card, else the strongest strike that still leaves the
counter covered (fleeing when the fight is hopeless). Covers and tolls are paid with the
cheapest set of cards that reaches the amount, keeping diamonds for striking.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from .cards import DECK, FACES, RANK, SUIT, VALUE

_SUPPLY = DECK.supply


def _worth(card: str) -> float:
    """How much a card is worth keeping in the satchel."""
    if card == DECK.revelation:
        return 24.0
    if card == DECK.reckoning:
        return 16.0
    if card == DECK.joker:
        return -5.0
    value = VALUE.get(card, 0)
    return value * DECK.strike_multiplier.get(SUIT.get(card, ""), 1) + (0.5 if SUIT.get(card) == "D" else 0.0)


def _damage(action: Mapping[str, Any], allies: bool) -> int:
    card = action["card"]
    if card == DECK.revelation:
        return DECK.revelation_damage
    value = action.get("rally") or VALUE[card]
    return value * DECK.strike_multiplier[SUIT[card]]


def _cover_means(view: Mapping[str, Any], satchel: Sequence[str]) -> int:
    me = view["travellers"][view["you"]]
    companion = view.get("companion")
    spendable = companion is not None and DECK.companions[companion].spendable
    return sum(VALUE.get(c, 0) for c in satchel) + me["wreckage"] + (DECK.companion_spend_value if spendable else 0)


def _hide_odds(view: Mapping[str, Any]) -> float:
    enc = view["encounter"]
    below = enc["hide_below"]
    known = set(view["discard"]) | set(view["satchel"] or ())
    pool = [c for c in _SUPPLY if c not in known]
    if not pool:
        return 0.0
    return sum(1 for c in pool if RANK[c] < below) / len(pool)


def _pick(actions: Sequence[Mapping[str, Any]], key) -> Mapping[str, Any]:
    return min(actions, key=lambda a: (key(a), str(sorted(a.items()))))


def _best_payment(cards: Sequence[str], values: Mapping[str, int], due: int, spare: int, wreck_cost: float):
    """The subset of `cards` to pay `due` (with up to `spare` from wreckage), cheapest first.
    Returns the cards of the best subset (empty: wreckage pays it all)."""
    best, best_cost = None, None
    pool = sorted(cards, key=lambda c: -values[c])[:9]
    for n in range(0, len(pool) + 1):
        for combo in combinations(pool, n):
            total = sum(values[c] for c in combo)
            rest = max(0, due - total)
            if rest > spare:
                continue
            if n and total - values[combo[-1]] >= due:
                continue  # a card beyond what was needed
            cost = sum(_worth(c) if c in VALUE and c not in DECK.companions else 15.0 for c in combo)
            cost += rest * wreck_cost + max(0, total - due) * 0.3
            if best_cost is None or cost < best_cost:
                best, best_cost = combo, cost
    return best


def heuristic(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: Any) -> Mapping[str, Any]:
    if isinstance(view.get("game"), Mapping):
        view = view["game"]  # the table's view wraps the game's
    by: dict[str, list[Mapping[str, Any]]] = {}
    for action in legal:
        by.setdefault(action["type"], []).append(action)
    step = view.get("step")
    try:
        if step == "refuge":
            return _refuge(view, by)
        if step == "fight":
            return _fight(view, by)
        if step in ("take", "retrieve"):
            return _pick(legal, lambda a: -_worth(a["card"]))
        if step == "discard":
            return _pick(legal, lambda a: _worth(a["card"]))
        if step == "cover":
            return _cover(view, by)
        if step == "stop":
            return _stop(view, by)
        if step == "pay":
            return _pay(view, by)
    except (KeyError, TypeError, ValueError):
        pass
    return legal[rng.randrange(len(legal))]


def _nemesis_ahead(view) -> bool:
    gone = set(view["defeated"]) | {r["card"] for r in (view.get("return") or {}).get("ruins", [])}
    enc = view.get("encounter") or {}
    return DECK.nemesis not in gone and not enc.get("nemesis")


def _refuge(view, by):
    if "Deliver" in by:
        return by["Deliver"][0]
    if "Forage" in by:
        return by["Forage"][0]
    if "Recover" in by:
        keep = _nemesis_ahead(view)
        return _pick(by["Recover"], lambda a: (keep and a["card"] in DECK.roomless, -_worth(a["card"])))
    return by["MoveOn"][0]


def _fight(view, by):
    enc = view["encounter"]
    allies = any(a.get("rally") for a in by.get("Strike", []))
    health, attack, counter = enc["health"], enc["attack"], enc["counter"]
    satchel = list(view["satchel"])
    if "Deliver" in by:
        return by["Deliver"][0]
    means = _cover_means(view, satchel)
    reserve = _nemesis_ahead(view)
    strikes = [(_damage(a, allies), a) for a in by.get("Strike", [])]
    if reserve:
        # HMS Thunder Child and the Bacteria are kept for the Fighting Machine unless desperate.
        spare = [(d, a) for d, a in strikes if a["card"] != DECK.revelation]
        if spare and means >= counter:
            strikes = spare
    exact = [a for d, a in strikes if d == health]
    if exact:
        return _pick(exact, lambda a: _worth(a["card"]))
    kills = [a for d, a in strikes if d > health]
    if "PlayReckoning" in by and not kills and health >= 10 and (not reserve or means < counter):
        return by["PlayReckoning"][0]
    if "ShedBurden" in by and len(satchel) >= 4 and attack <= 7:
        counts = {a["extra"]: view["travellers"][a["extra"]]["satchel_count"] for a in by["ShedBurden"]}
        return _pick(by["ShedBurden"], lambda a: -counts[a["extra"]])
    if "Hide" in by:
        odds = _hide_odds(view)
        if odds >= 0.75 or (odds >= 0.45 and means >= attack + counter) or (odds >= 0.3 and means >= 2 * attack + 10):
            return by["Hide"][0]
    if kills:
        return _pick(kills, lambda a: _worth(a["card"]))
    if reserve and "Regroup" in by and any(c in DECK.roomless for c in view["discard"]) and means - 10 >= counter:
        return _pick(by["Regroup"], lambda a: _worth(a["card"]))
    potential = sum(d for d, a in strikes if not a.get("rally") or a.get("rally") == 10)
    if "Flee" in by and (potential < health / 2 or means - 8 < counter) and potential < health:
        return _pick(by["Flee"], lambda a: _worth(a["card"]))
    if strikes:
        def score(item):
            d, a = item
            rest = list(satchel)
            rest.remove(a["card"])
            left = health - d
            cut = DECK.revelation_cut if a["card"] == DECK.revelation else 0
            cover_ok = _cover_means(view, rest) >= max(0, counter - cut)
            follow = any(
                (VALUE[c] * DECK.strike_multiplier[SUIT[c]] if c != DECK.revelation else DECK.revelation_damage) == left
                for c in rest if SUIT.get(c) in ("D", "C") and c != DECK.reckoning
            )
            return (0 if cover_ok else 1, -(d + (6 if follow else 0)) + 0.2 * _worth(a["card"]))
        return min(strikes, key=lambda item: (score(item), str(sorted(item[1].items()))))[1]
    if "Regroup" in by and "Flee" not in by:
        return _pick(by["Regroup"], lambda a: _worth(a["card"]))
    for kind in ("Flee", "Regroup", "Hide", "Brace", "PlayReckoning"):
        if kind in by:
            return _pick(by[kind], lambda a: _worth(a.get("card", "")) if a.get("card") else 0)
    return next(iter(by.values()))[0]


def _cover(view, by):
    pending = view["pending"]
    rest = pending["due"] - pending["paid"]
    me = view["travellers"][view["you"]]
    cards = [a["card"] for a in by.get("Cover", [])]
    values = {c: (DECK.companion_spend_value if c in DECK.companions else VALUE[c]) for c in cards}
    spare = me["wreckage"] if "UseWreckage" in by or me["wreckage"] >= rest else 0
    wreck_cost = 1.2 if view["phase"] == "fight" else 1.0
    best = _best_payment(cards, values, rest, spare, wreck_cost)
    if best:
        card = max(best, key=lambda c: values[c])
        return next(a for a in by["Cover"] if a["card"] == card)
    if "UseWreckage" in by:
        return by["UseWreckage"][0]
    return _pick(by["Cover"], lambda a: _worth(a["card"]))


def _stop(view, by):
    if "ShedJoker" in by:
        return _pick(by["ShedJoker"], lambda a: _worth(a["card"]))
    if "StripRuin" in by:
        return by["StripRuin"][0]
    return by["Proceed"][0]


def _pay(view, by):
    pending = view["pending"]
    rest = pending["due"] - pending["paid"]
    options = by["Pay"]

    def value(a):
        return DECK.companion_spend_value if a["card"] in DECK.companions else VALUE[a["card"]]

    exact = [a for a in options if value(a) == rest]
    if exact:
        return _pick(exact, lambda a: 1 if a["card"] in DECK.companions else 0)
    under = [a for a in options if value(a) < rest]
    if under:
        return _pick(under, lambda a: -value(a))
    return _pick(options, lambda a: (value(a), a["card"] in FACES))
