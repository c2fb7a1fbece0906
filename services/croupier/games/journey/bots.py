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
    for n in range(len(pool) + 1):
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


def _cut(card: str, allies: bool) -> int:
    if card == DECK.revelation:
        return DECK.revelation_cut
    return DECK.queen_cut if allies and RANK.get(card) == 12 else 0


def _single_strikes(cards: Sequence[str], allies: bool) -> set[int]:
    """The damage any one of `cards` could deal (every rally of an allied King)."""
    out = set()
    for c in cards:
        if c == DECK.revelation:
            out.add(DECK.revelation_damage)
        elif SUIT.get(c) in ("D", "C") and c != DECK.reckoning:
            mult = DECK.strike_multiplier[SUIT[c]]
            values = range(DECK.rally_min, DECK.rally_max + 1) if allies and RANK[c] == 13 else (VALUE[c],)
            out.update(v * mult for v in values)
    return out


def _plan(view, satchel, action, damage, health, counter, allies):
    """How a (non-killing) strike plays out: (survives the counter, can kill next round,
    can make a direct hit next round), covering the counter the cheapest way."""
    rest = list(satchel)
    rest.remove(action["card"])
    left = health - damage
    due = max(0, counter - _cut(action["card"], allies))
    wreck = view["travellers"][view["you"]]["wreckage"]
    values = {c: VALUE[c] for c in rest if VALUE.get(c, 0) > 0}
    if sum(values.values()) + wreck < due:
        return (0, 0, 0)
    paid = _best_payment(list(values), values, due, wreck, 1.2) or ()
    after = [c for c in rest if c not in paid]
    hits = _single_strikes(after, allies)
    return (1, int(any(d >= left for d in hits)), int(left in hits))


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
    plans = sorted(
        ((_plan(view, satchel, a, d, health, counter, allies), d, a) for d, a in strikes if d < health),
        key=lambda p: (p[0], p[1] - 0.3 * _worth(p[2]["card"])), reverse=True)
    desperate = not kills and (not plans or plans[0][0][0] == 0)
    if "PlayReckoning" in by and not kills and health >= 10 and (not reserve or desperate):
        return by["PlayReckoning"][0]
    if "ShedBurden" in by and len(satchel) >= 4 and attack <= 7:
        counts = {a["extra"]: view["travellers"][a["extra"]]["satchel_count"] for a in by["ShedBurden"]}
        return _pick(by["ShedBurden"], lambda a: -counts[a["extra"]])
    if "Hide" in by:
        odds = _hide_odds(view)
        safe = means >= attack
        if (kills and safe and odds >= 0.5) or (not kills and ((safe and odds >= 0.35) or odds >= 0.85)):
            return by["Hide"][0]
    if kills:
        return _pick(kills, lambda a: _worth(a["card"]))
    if reserve and "Regroup" in by and any(c in DECK.roomless for c in view["discard"]) and means - 10 >= counter:
        return _pick(by["Regroup"], lambda a: _worth(a["card"]))
    potential = sum(d for d, a in strikes if not a.get("rally") or a.get("rally") == 10)
    if "Flee" in by and (desperate or (potential < health and not (plans and plans[0][0][1]))):
        return _pick(by["Flee"], lambda a: _worth(a["card"]))
    if plans:
        return plans[0][2]
    if "Regroup" in by and "Flee" not in by:
        return _pick(by["Regroup"], lambda a: _worth(a["card"]))
    for kind in ("Flee", "Regroup", "Hide", "Brace", "PlayReckoning", "Strike"):
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
