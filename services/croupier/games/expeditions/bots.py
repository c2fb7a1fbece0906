"""The heuristic bot of expeditions. It sees only its seat's view and legal actions.

Plays a card on a path when the step is worth it and the value gap small (a gap strands
the own cards in between); begins a path only with a low card and several cards of that
colour in hand (the researcher on the longest colour); discards stranded cards first, then
the cards least useful to itself and to the others; takes a discard only if it fits one of
its paths closely; uses every granted move on the figure that gains most.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

TILE_WORTH = {"artefact": 7, "arrow": 9}


def _card(card: str) -> tuple[str, int]:
    color, value, _ = card.split("-")
    return color, int(value)


class _Seen:
    """What the bot reads from the view, computed once per decision."""

    def __init__(self, view: Mapping[str, Any]):
        g = view["game"]
        self.g = g
        self.me = g["you"]
        me = g["players"][self.me]
        self.mine = me
        self.hand = me["hand"] or []
        self.values = g["board"]["values"]
        self.steps = len(self.values)
        self.paths = me["paths"]
        self.by_color: dict[str, list[int]] = {}
        for c in self.hand:
            color, value = _card(c)
            self.by_color.setdefault(color, []).append(value)
        # How far the expedition has run: 0 at the start, 1 when it ends.
        supply_left = g["supply_count"] / 60.0
        bridge_left = 1 - g["crossings"] / max(1, g["board"]["crossings_to_end"])
        self.time_left = max(0.0, min(1.0, supply_left, bridge_left + 0.15))

    def tile_worth(self, color: str, step: int) -> float:
        tile = self.g["tiles"][color][step - 1]
        if tile is None:
            return 0
        if tile in self.g["tile_points"]:
            return 0 if tile in self.g["spent"] else self.g["tile_points"][tile]
        return TILE_WORTH.get(tile.split("-")[0], 0)

    def step_gain(self, color: str) -> float:
        path = self.paths[color]
        s = path["step"]
        if s >= self.steps:
            return 6  # the last-step rule moves another figure
        mult = 2 if path["researcher"] else 1
        return (self.values[s] - self.values[s - 1]) * mult + self.tile_worth(color, s + 1)

    def others_want(self, color: str, value: int) -> bool:
        for p in self.g["players"]:
            if p["seat"] == self.me:
                continue
            path = p["paths"].get(color)
            if path and _card(path["cards"][-1])[1] <= value:
                return True
        return False


def _play_score(seen: _Seen, card: str) -> float:
    color, value = _card(card)
    top = _card(seen.paths[color]["cards"][-1])[1]
    stranded = sum(1 for v in seen.by_color.get(color, ()) if top <= v < value)
    return seen.step_gain(color) - 7 * stranded - 1.5 * (value - top) + 4


def _begin_score(seen: _Seen, card: str, researcher: bool) -> float:
    color, value = _card(card)
    later = sum(1 for v in seen.by_color.get(color, ()) if v >= value) - 1
    begun = len(seen.paths)
    score = 7 * later - 1.8 * value - 22 - 4 * begun + 30 * seen.time_left - 20
    if researcher:
        score += 6 * (later - 4)
    elif seen.mine["researchers_left"] and later >= 5:
        score -= 8  # keep the researcher for this colour
    return score


def _discard_score(seen: _Seen, card: str) -> float:
    color, value = _card(card)
    path = seen.paths.get(color)
    if path:
        top = _card(path["cards"][-1])[1]
        if value < top:
            worth = -10.0  # can never be played again
        else:
            worth = 12 - 1.2 * (value - top)
    else:
        count = len(seen.by_color.get(color, ()))
        worth = 3 * count - 0.5 * value - 2
    if seen.others_want(color, value):
        worth += 6
    return -worth


def _draw_score(seen: _Seen, color: str) -> float:
    top = seen.g["discards"][color]["top"]
    if top is None or top == seen.g["turn_discard"]:
        return -100
    _, value = _card(top)
    path = seen.paths.get(color)
    if path:
        my_top = _card(path["cards"][-1])[1]
        if value < my_top:
            return -100
        return 6 - 2 * (value - my_top)
    count = len(seen.by_color.get(color, ()))
    return 2 * count - value - 4 if count >= 3 else -100


def heuristic(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: Any) -> Mapping[str, Any]:
    seen = _Seen(view)
    best, best_score = legal[0], float("-inf")
    for action in legal:
        t = action["type"]
        if t == "PlayOnPath":
            score = _play_score(seen, action["card"])
        elif t == "BeginPath":
            score = _begin_score(seen, action["card"], action["researcher"])
        elif t == "DiscardCard":
            score = _discard_score(seen, action["card"])
        elif t == "MoveFigure":
            score = seen.step_gain(action["color"])
        elif t == "SkipMove":
            score = -1000
        elif t == "DrawFromDiscard":
            score = _draw_score(seen, action["color"])
        elif t == "DrawFromSupply":
            score = 0
        else:
            score = -1e9
        score += rng.random() * 0.01
        if score > best_score:
            best, best_score = action, score
    return best
