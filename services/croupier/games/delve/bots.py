"""The heuristic bot of delve: plays from its seat's view and the public card catalogue.

It rates each way through an encounter (every skill with the best cards to commit,
accepting the penalty, paying a bribe) by expected value: the chance of success times the
reward, minus the chance of failure times the penalty, minus a little for each card spent.
Between rounds it votes for the route its hand handles best, diving for the stairs when
hurt; at markets it sells treasure, rests when hurt and buys the strongest card it can;
at camp it rescues fallen teammates; it gives one matching card to a teammate's attack.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .cards import CONTENT, SKILLS
from .state import DESCEND, NO_VOTE

MAX_HEALTH = 9
CARD_COST = 0.35
COIN = 0.5


def _design(card: str):
    return CONTENT.design(card)


def card_worth(card: str) -> float:
    """How much a card helps in future rolls (what we keep, what we throw away)."""
    d = _design(card)
    icons = len(d.icons) * (0.6 if d.one_use else 1.0)
    if d.kind == "diamond":
        icons = 3.0
    return icons + 1.5 * d.advantage


def _chance(enc: Mapping[str, Any], skill: str, cards: Sequence[str]) -> float:
    dice = enc["dice"]
    icons = 0
    adv = {"advantage": 1, "disadvantage": -1}.get(enc["skills"][skill]["roll"], 0)
    for card in cards:
        d = _design(card)
        icons += d.matches(skill)
        adv += d.advantage
    die = dice[0] if adv > 0 else dice[2] if adv < 0 else dice[1]
    return min(enc["base"] + icons, die) / die


def _reward_value(reward: Mapping[str, int], me: Mapping[str, Any], boss: bool) -> float:
    missing = MAX_HEALTH - me["health"]
    v = COIN * reward.get("coins", 0) + 1.3 * min(reward.get("heal", 0), missing)
    v += 0.3 * reward.get("knowledge", 0) + 1.0 * reward.get("cards", 0) + (3.0 if reward.get("diamond") else 0.0)
    return v + (4.0 if boss else 0.0)


def _penalty_cost(pen: Mapping[str, int], me: Mapping[str, Any]) -> float:
    dmg = pen.get("damage", 0)
    health = me["health"]
    cost = 1.6 * dmg + (8.0 if dmg >= health else 0.0) + (1.5 if health - dmg <= 2 else 0.0)
    cost += COIN * min(pen.get("coins", 0), me["coins"])
    cost += 0.5 * pen.get("discard", 0) + 1.0 * pen.get("destroy", 0) + 0.7 * pen.get("destroy_top", 0)
    return cost


def _plans(enc: Mapping[str, Any], hand: Sequence[str], committed: Sequence[str], me, boss: bool):
    """(value, skill, cards) for every skill and every number of extra cards to commit."""
    pen = _penalty_cost(enc["penalty"], me)
    free = [c for c in hand if c not in committed]
    out = []
    for skill in SKILLS:
        reward = _reward_value(enc["skills"][skill]["reward"], me, boss)
        ranked = sorted(free, key=lambda c: (-(_design(c).matches(skill) + 1.2 * _design(c).advantage), c))
        ranked = [c for c in ranked if _design(c).matches(skill) or _design(c).advantage]
        for j in range(len(ranked) + 1):
            cards = list(committed) + ranked[:j]
            p = _chance(enc, skill, cards)
            spent = sum(0.25 + 0.1 * card_worth(c) for c in ranked[:j])
            out.append((p * reward - (1 - p) * pen - CARD_COST * j - spent * 0.2, skill, cards, p))
    return out


def _find(legal: Sequence[Mapping[str, Any]], type_: str, **fields: Any) -> Mapping[str, Any] | None:
    for a in legal:
        if a["type"] == type_ and all(a.get(k) == v for k, v in fields.items()):
            return a
    return None


_ENCOUNTERS: dict[str, dict[str, Any]] = {}


def encounter(card: str) -> dict[str, Any]:
    """The public description of an encounter card (content is public data)."""
    data = _ENCOUNTERS.get(card)
    if data is None:
        data = _ENCOUNTERS[card] = CONTENT.encounters[card].as_dict()
    return data


def _face(g: Mapping[str, Any], me: Mapping[str, Any], legal) -> Mapping[str, Any]:
    f = g["facing"]
    enc = encounter(f["card"])
    boss = enc["kind"] == "boss"
    plans = _plans(enc, me["hand"], f["committed"], me, boss)
    value, skill, cards, p = max(plans, key=lambda t: (t[0], t[1]))
    accept = -_penalty_cost(enc["penalty"], me)
    bribe = _find(legal, "PayBribe")
    if bribe is not None and enc["bribe"] is not None:
        bribe_value = -COIN * enc["bribe"]
        if bribe_value > value and bribe_value > accept:
            return bribe
    if accept > value and not boss:
        return _find(legal, "AcceptPenalty")
    for card in cards:
        if card not in f["committed"]:
            return _find(legal, "CommitCard", card=card)
    offer = _find(legal, "OfferAttack", skill=skill)
    if offer is not None and p < 0.75:
        return offer
    return _find(legal, "RollDice", skill=skill)


def _pick(g, me, legal):
    choice = g["choice"]
    chosen = choice.get("chosen", [])
    if len(chosen) >= choice["count"]:
        return _find(legal, "ConfirmPick") or legal[0]
    picks = [a for a in legal if a["type"] == "PickCard" and a["card"] not in chosen]
    limit = choice["mode"] == "limit"

    def key(a):
        # Treasure without icons is only good for selling, which works from the discard pile.
        worth = card_worth(a["card"])
        return (worth if limit else worth + 0.3 * (_design(a["card"]).value or 0), a["card"])

    return min(picks, key=key)


def _support(g, me, legal):
    sp = g["support"]
    mine = [c for s, c in sp["cards"] if s == g["you"]]
    if not mine and len(me["hand"]) > 1:
        skill = sp["skill"]
        best = max(me["hand"], key=lambda c: (_design(c).matches(skill), c))
        if _design(best).matches(skill) >= 1:
            return _find(legal, "SupportAttack", card=best)
    return _find(legal, "EndSupport")


def _market(g, me, legal):
    visit = g["visit"]
    for a in legal:
        if a["type"] == "SellCard" and not _design(a["card"]).icons and not _design(a["card"]).advantage:
            return a
    rest = _find(legal, "Rest")
    if rest is not None and me["health"] <= 6:
        return rest
    buys = [a for a in legal if a["type"] == "BuyCard"]
    owned = len(me["hand"]) + len(me["draw"]) + len(me["discard"])
    if buys and owned < 16:
        best = max(buys, key=lambda a: (card_worth(a["card"]) / (_design(a["card"]).cost + 1), a["card"]))
        if card_worth(best["card"]) >= 2:
            return best
    if rest is not None and not visit["bought"]:
        return rest
    return _find(legal, "LeaveMarket")


def _camp(g, me, legal):
    for a in legal:
        if a["type"] == "RescueTeammate":
            return a
    return _find(legal, "BreakCamp")


def _route_score(g, me, slot: int) -> float:
    party = g["players"]
    low = min(p["health"] for p in party if p["conscious"])
    floor = g["floor"]
    remaining = len(floor["cards"]) - len(floor["cleared"])
    if slot == DESCEND:
        # The stairs (rules version 3): down at once when hurt; stay for the bonus market
        # when only a few cards are left.
        return 2.5 if low <= 4 else (-1.0 if remaining <= 3 else 0.5)
    card = floor["cards"][slot]
    score = 0.0
    if card is None:
        score -= 1.0
    else:
        enc = CONTENT.encounters[card]
        if enc.kind == "market":
            coins = me["coins"]
            score += (1.5 if coins >= 3 else 0.0) + (2.5 if me["health"] <= 6 else 0.0)
        else:
            score += max(v for v, *_ in _plans(encounter(card), me["hand"], [], me, False))
    if slot in floor["final"] and not floor.get("stairs_open"):
        # Earlier rules versions: the final row ends the floor. Version 3: it opens the stairs.
        score += 2.5 if low <= 4 else (1.0 if remaining <= 2 else -1.5)
    return score


def _vote(g, me, legal):
    """The best route by _route_score; once this seat has voted, its vote stands and the bot
    waits (None, see croupier.engine.bots): casting the same vote again would change nothing
    but the version."""
    mine = g["vote"]["votes"][g["you"]] if g.get("vote") else NO_VOTE
    if mine != NO_VOTE and _find(legal, "Vote", slot=mine) is not None:
        return WAIT
    return max(legal, key=lambda a: (_route_score(g, me, a["slot"]), -a["slot"]))


WAIT = object()  # _vote's "keep my vote": heuristic() answers None for it


def heuristic(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: Any) -> Mapping[str, Any] | None:
    g = view["game"]
    me = g["players"][g["you"]]
    types = {a["type"] for a in legal}
    if "Vote" in types:
        choice = _vote(g, me, legal)
    elif "ConfirmPick" in types or "PickCard" in types:
        choice = _pick(g, me, legal)
    elif "EndSupport" in types:
        choice = _support(g, me, legal)
    elif "AcceptPenalty" in types:
        choice = _face(g, me, legal)
    elif "LeaveMarket" in types:
        choice = _market(g, me, legal)
    elif "BreakCamp" in types:
        choice = _camp(g, me, legal)
    else:
        choice = None
    if choice is WAIT:
        return None
    return choice if choice is not None else legal[0]
