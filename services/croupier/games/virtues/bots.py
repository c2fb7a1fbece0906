"""The heuristic bot of `virtues`: it sees only its seat's view and legal actions.

It scores every legal action and plays the best (ties broken at random):
- finish a Location whenever a play, a Standing Stone, a move or a stolen card can;
- otherwise cover the symbol of the Location closest to completion, with the card whose
  other symbol is least needed;
- take the discard only when it covers an open symbol of a Location already begun;
- keep special cards for when they pay (Reivers on a card that finishes a Location of
  ours, Clan Gathering with two plays in hand, the Storm on the leader's nearly finished
  Location), and discard its hand only when nothing in it fits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def _symbols_of(card: str | None, codes: Mapping[str, str]) -> tuple[str, ...]:
    """A symbol card's symbols from its id (act-<code>-<code>-<n>); () for a special."""
    if not card or not card.startswith("act-"):
        return ()
    parts = card.split("-")
    return tuple(codes[p] for p in parts[1:3] if p in codes)


class _Seat:
    """What the bot reads from its view, once per decision."""

    def __init__(self, view: Mapping[str, Any]):
        self.view = view
        self.codes = view.get("symbol_codes") or {}
        me = view["you"]
        self.me = me
        self.players = view["players"]
        self.array = self.players[me]["array"]
        self.hand = view.get("hand") or []
        # weight of each open symbol: how far its Location is along (1, 2 or 3)
        self.need: dict[str, int] = {}
        self.locs = {}
        for loc in self.array:
            covered = sum(1 for c in loc["covers"] if c)
            self.locs[loc["id"]] = (loc, covered)
            for sym, cover in zip(loc["symbols"], loc["covers"]):
                if not cover:
                    self.need[sym] = max(self.need.get(sym, 0), covered + 1)

    def card_symbols(self, card: Mapping[str, Any] | str) -> tuple[str, ...]:
        if isinstance(card, Mapping):
            return tuple(card.get("symbols") or ())
        return _symbols_of(card, self.codes)

    def value(self, card: Mapping[str, Any]) -> float:
        """How much a card in hand is worth keeping."""
        kind = card.get("special")
        if kind == "wild":
            return 10.0
        if kind:
            return 4.0
        return float(max((self.need.get(s, 0) for s in card.get("symbols") or ()), default=0))

    def fits(self, symbols: Sequence[str]) -> int:
        """Open symbols of a Location (given as its symbols) that the hand's symbol cards cover."""
        hand_syms = {s for c in self.hand for s in c.get("symbols") or ()}
        return sum(1 for s in symbols if s in hand_syms)

    def completes(self, location: str | None) -> bool:
        entry = self.locs.get(location or "")
        return entry is not None and entry[1] == 2

    def playable_cards(self) -> int:
        return sum(1 for c in self.hand if not c.get("special") and any(s in self.need for s in c.get("symbols") or ()))


def _score(a: Mapping[str, Any], seat: _Seat, view: Mapping[str, Any]) -> float:
    kind = a["type"]
    hand = {c["id"]: c for c in seat.hand}
    if kind == "DrawCard":
        return 1.0
    if kind == "TakeDiscard":
        top = view["discard"][-1] if view["discard"] else None
        best = max((seat.need.get(s, 0) for s in seat.card_symbols(top)), default=0)
        return 3.0 if best >= 3 else 1.5 if best == 2 else 0.0
    if kind == "PlayAction":
        entry = seat.locs.get(a["location"])
        covered = entry[1] if entry else 0
        if covered == 2:
            return 100.0
        other = [s for s in hand[a["card"]].get("symbols", ()) if s != a["symbol"]]
        waste = max((seat.need.get(s, 0) for s in other), default=0)
        return 20.0 + 6 * covered - waste
    if kind == "MoveAction":
        return 95.0 if seat.completes(a["location"]) else -10.0
    if kind in ("StopRearranging", "StopPlaying", "KeepLocations"):
        return 0.0
    if kind == "PlaySpecial":
        return _special_score(a, seat, view, hand[a["card"]].get("special"))
    if kind == "DiscardHand":
        return 5.0 if seat.playable_cards() == 0 else -20.0
    if kind == "DiscardLocations":
        begun = any(covered for _, covered in seat.locs.values())
        return 4.0 if not begun and seat.playable_cards() == 0 else -30.0
    if kind == "ChooseCard":
        return seat.value(next(c for c in view["looking_at"] if c["id"] == a["card"]))
    if kind == "ExchangeLocation":
        give = seat.locs[a["give"]]
        take = next(loc for loc in view["looking_at"] if loc["id"] == a["take"])
        if give[1]:
            return -10.0
        return seat.fits(take["symbols"]) - seat.fits(give[0]["symbols"]) - 0.5
    if kind == "TakeLocation":
        loc = next(x for x in view["display"] if x["id"] == a["location"])
        return float(seat.fits(loc["symbols"]))
    if kind == "DiscardCard":
        card = hand[a["card"]]
        return -seat.value(card)
    if kind == "ReturnLocation":
        loc, covered = seat.locs[a["location"]]
        return -(10 * covered + seat.fits(loc["symbols"]))
    return 0.0


def _special_score(a: Mapping[str, Any], seat: _Seat, view: Mapping[str, Any], kind: str | None) -> float:
    if kind == "wild":
        return 90.0 if seat.completes(a["location"]) else -5.0
    if kind == "raid":
        syms = seat.card_symbols(a["target"])
        if any(seat.need.get(s) == 3 for s in syms):
            return 80.0
        return 8.0 + _leader_bonus(a["target"], view)
    if kind == "banish":
        return 6.0 + _leader_bonus(a["target"], view)
    if kind == "salvage":
        best = max((seat.need.get(s, 0) for s in seat.card_symbols(a["target"])), default=0)
        return 70.0 if best == 3 else 4.0 * best
    if kind == "double":
        return 45.0 if seat.playable_cards() >= 2 else -5.0
    if kind == "scout":
        return 12.0
    if kind == "draw":
        return 11.0
    if kind == "swap":
        loc, covered = seat.locs[a["location"]]
        take = next(x for x in view["display"] if x["id"] == a["target"])
        gain = seat.fits(take["symbols"]) - seat.fits(loc["symbols"])
        return 5.0 + 3 * gain if not covered and gain > 0 else -10.0
    if kind == "survey":
        return 7.0
    if kind == "pilgrim":
        best = max((seat.fits(x["symbols"]) for x in view["display"]), default=0)
        return 3.0 + best
    return 0.0


def _leader_bonus(target: str, view: Mapping[str, Any]) -> float:
    """More for hitting a Location with two covers, of a player with many completions."""
    for p in view["players"]:
        for loc in p["array"]:
            if target in loc["covers"]:
                covered = sum(1 for c in loc["covers"] if c)
                return 4.0 * (covered - 1) + 2.0 * p["completed_count"]
    return 0.0


def heuristic(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: Any) -> Mapping[str, Any]:
    game = view.get("game", view)  # the table's view wraps the game's
    seat = _Seat(game)
    best, choice = None, []
    for action in legal:
        score = _score(action, seat, game)
        if best is None or score > best:
            best, choice = score, [action]
        elif score == best:
            choice.append(action)
    return choice[rng.randrange(len(choice))]
