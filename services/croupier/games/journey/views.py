"""What a seat (or a spectator) sees of a journey, the card ids it may not see, and words
for the replay's move list.

A traveller sees their own satchel and their own caches; of the others only counts. The
shared purse of the Return Journey is seen by every traveller. The Journey and the Supply
are counts only; while the Witness walks with the group the travellers see the top Journey
card. Face-down Ruins are hidden until the group reaches them. Spectators see public facts.
"""

from __future__ import annotations

from typing import Any

from . import events as E
from .cards import DECK, RANK
from .rules import limit_of, purse_value, room_used, ruin_at, to_act, witnessed
from .state import State


def _seat(s: State, seat: int | None) -> int | None:
    return seat if isinstance(seat, int) and 0 <= seat < s.seats else None


def _encounter(s: State) -> dict[str, Any] | None:
    if s.phase == "refuge":
        return {
            "kind": "refuge", "card": s.current, "actions": s.refuge_actions,
            "actions_left": s.actions_left if s.step == "refuge" else 0,
            "cache_here": any(p == s.current for p, _, _ in s.caches),
        }
    if s.phase == "fight":
        rank = RANK[s.current]
        return {
            "kind": "adversary", "card": s.current, "nemesis": s.current == DECK.nemesis,
            "rank": rank, "health": s.health, "attack": s.attack, "round": s.round,
            "counter": max(0, s.attack - s.cut), "no_counter": s.hid,
            "hide_below": min(rank, s.last_reveal), "hiding_blocked": s.hide_blocked,
            "reckoning_used": s.reckoning_used,
        }
    return None


def view(s: State, seat: int | None) -> dict[str, Any]:
    me = _seat(s, seat)
    names = dict(s.names)
    out: dict[str, Any] = {
        "phase": s.phase,
        "step": s.step,
        "to_act": list(to_act(s)),
        "you": me,
        "limit": limit_of(s),
        "journey_count": len(s.journey),
        "supply_count": len(s.supply),
        "discard": list(s.discard),
        "defeated": list(s.defeated),
        "route": [{"card": c, "place": names.get(c, "")} for c in s.route],
        "arrived": s.arrived,
        "companion": s.companion,
        "witnessed": witnessed(s) if me is not None else None,
        "encounter": _encounter(s),
        "travellers": [
            {"standing": t.standing, "walking": t.walking, "satchel_count": len(t.satchel),
             # Only one's own: A♣ and A♦ take no room, so another's room used beside the
             # satchel's count would tell how many of them that traveller holds.
             "room_used": room_used(t.satchel) if i == me else None, "wreckage": t.wreckage, "points": t.points}
            for i, t in enumerate(s.travellers)
        ],
        "satchel": list(s.travellers[me].satchel) if me is not None else None,
        "caches": [{"place": names.get(p, ""), "card": p, "seat": owner, "hidden": c if owner == me else None}
                   for p, owner, c in s.caches],
        "pending": ({"seat": s.acting, "reason": s.reason, "due": s.due, "paid": s.paid}
                    if s.step in ("cover", "pay") else None),
        "payers": list(s.queue) if s.step == "discard" else [],
        "played": s.played if s.step in ("take", "retrieve") else None,
        "outcome": s.outcome,
    }
    if s.phase == "return" or (s.phase == "over" and s.return_journey and s.arrived):
        ruin = ruin_at(s, s.place)
        out["return"] = {
            "purse": list(s.purse) if me is not None else None,
            "purse_count": len(s.purse),
            "purse_value": purse_value(s) if me is not None else None,
            "place": s.place,
            "place_name": names.get(s.place or "", None),
            "toll": RANK[s.place] if s.place else None,
            "stops": [{"card": p, "place": names.get(p, "")} for p in s.stops],
            "ruins": [{"place": p, "card": c if revealed else None, "stripped": stripped}
                      for p, c, revealed, stripped in s.ruins],
            "ruin_here": ruin[1] if ruin is not None and ruin[2] and not ruin[3] else None,
            "stolen": s.stolen,
        }
    return out


def hidden(s: State, seat: int | None) -> frozenset[str]:
    me = _seat(s, seat)
    out = set(s.journey)
    if me is not None:
        out.discard(witnessed(s))
    out.update(s.supply)
    for i, t in enumerate(s.travellers):
        if i != me:
            out.update(t.satchel)
    for _, owner, card in s.caches:
        if owner != me:
            out.add(card)
    if me is None:
        out.update(s.purse)
    for _, card, revealed, _ in s.ruins:
        if not revealed:
            out.add(card)
    return frozenset(out)


def _who(seat: int) -> str:
    return f"Traveller {seat + 1}"


def describe(e: Any) -> str:
    if isinstance(e, E.DecksShuffled):
        return f"The Journey ({len(e.journey)} cards) and the Supply ({len(e.supply)}) are shuffled."
    if isinstance(e, E.Foraged):
        return f"{_who(e.seat)} forages a card."
    if isinstance(e, E.RefugeReached):
        return f"A refuge: {e.card}, {e.actions} actions each."
    if isinstance(e, E.RefugeTurnBegan):
        return f"{_who(e.seat)} takes refuge."
    if isinstance(e, E.Recovered):
        return f"{_who(e.seat)} slides {e.card} under the Supply."
    if isinstance(e, E.Cached):
        return f"{_who(e.seat)} hides a card at {e.place}."
    if isinstance(e, E.RefugeLeft):
        return f"{_who(e.seat)} moves on."
    if isinstance(e, E.RefugeEnded):
        return f"{e.card} ({e.place}) is passed."
    if isinstance(e, E.CompanionJoined):
        return f"{DECK.companions[e.card].name.capitalize()} ({e.card}) joins the group."
    if isinstance(e, E.CompanionLeft):
        lost = " and what was hidden with them is lost" if e.lost else ""
        return f"The companion {e.card} leaves ({e.reason}){lost}."
    if isinstance(e, E.AdversaryRevealed):
        return f"An adversary: {e.card}, health {e.health}, attack {e.attack}."
    if isinstance(e, E.RoundBegan):
        return f"Round {e.round} of the fight."
    if isinstance(e, E.FightTurnBegan):
        return f"{_who(e.seat)} faces the adversary."
    if isinstance(e, E.Struck):
        rally = f" rallying as {e.rally}" if e.rally else ""
        cut = f"; the counter is cut by {e.cut}" if e.cut else ""
        return f"{_who(e.seat)} strikes with {e.card}{rally} for {e.damage}{cut}."
    if isinstance(e, E.ReckoningPlayed):
        return f"{_who(e.seat)} releases Terrestrial Bacteria: health falls to {e.health}."
    if isinstance(e, E.Regrouped):
        return f"{_who(e.seat)} regroups, playing {e.card}."
    if isinstance(e, (E.RegroupTaken, E.Retrieved)):
        return f"{_who(e.seat)} takes {e.card} from the discard."
    if isinstance(e, E.RetrievalOffered):
        return f"{_who(e.seat)}'s allied {e.card} may bring back a card of its suit."
    if isinstance(e, E.Fled):
        return f"{_who(e.seat)} flees, dropping {e.card}; {e.adversary} goes back into the Journey."
    if isinstance(e, E.Hid):
        if e.kept:
            return f"{_who(e.seat)} hides: {e.card} is revealed and kept; no counter this round."
        return f"{_who(e.seat)} tries to hide: {e.card} is revealed and lost. Ambush!"
    if isinstance(e, E.Braced):
        return f"{_who(e.seat)} braces, empty-handed."
    if isinstance(e, E.AdversaryDefeated):
        hit = f" Direct hit: {_who(e.seat)} banks {e.wreckage} wreckage." if e.wreckage else ""
        return f"{e.card} is defeated.{hit}"
    if isinstance(e, E.CounterStruck):
        return f"The adversary counters for {e.attack}."
    if isinstance(e, E.CoverDemanded):
        return f"{_who(e.seat)} must cover {e.due} ({e.reason})."
    if isinstance(e, E.CoverCardPaid):
        return f"{_who(e.seat)} covers with {e.card} ({e.value})."
    if isinstance(e, E.Covered):
        spent = f", spending {e.wreckage} wreckage" if e.wreckage else ""
        return f"{_who(e.seat)} is covered{spent}."
    if isinstance(e, E.TravellerFell):
        return f"{_who(e.seat)} falls."
    if isinstance(e, E.BurdenShedBegun):
        return f"{_who(e.seat)} leaves the Burden to the adversary; every traveller pays a card."
    if isinstance(e, E.CardDiscarded):
        return f"{_who(e.seat)} discards {e.card}."
    if isinstance(e, E.DeliveranceDiscarded):
        return f"{_who(e.seat)} discards the Deliverance ({e.card})."
    if isinstance(e, E.DestinationReached):
        return "Primrose Hill: the travellers have arrived."
    if isinstance(e, E.ReturnBegan):
        return "The Return Journey begins: the Joker is shuffled into the Supply."
    if isinstance(e, E.PurseFormed):
        return f"The travellers pool {len(e.purse)} cards into one purse."
    if isinstance(e, E.RuinsSeeded):
        return f"{len(e.ruins)} Ruins lie face down along the way home."
    if isinstance(e, E.StopReached):
        back = " and take back what they hid there" if e.cache else ""
        return f"The travellers reach {e.place}{back}."
    if isinstance(e, E.RuinRevealed):
        return f"A Ruin at {e.place}: {e.card}."
    if isinstance(e, E.JokerStole):
        return "The Joker steals a card from the purse."  # the purse is the travellers' alone
    if isinstance(e, E.JokerShed):
        return f"{_who(e.seat)} sheds {e.card}; the Joker goes with it."
    if isinstance(e, E.RuinStripBegun):
        return f"{_who(e.seat)} strips the Ruin for {e.due}."
    if isinstance(e, E.TollsBegan):
        return f"Tolls at {e.place}."
    if isinstance(e, E.TollDemanded):
        return f"{_who(e.seat)} owes a toll of {e.due}."
    if isinstance(e, E.PurseCardPaid):
        return f"{_who(e.seat)} pays {e.card} ({e.value})."
    if isinstance(e, E.RuinSalvaged):
        return f"{_who(e.seat)} salvages {e.card} for {e.points} points."
    if isinstance(e, E.TollPaid):
        return f"{_who(e.seat)} passes {e.place} and scores {e.points}."
    if isinstance(e, E.TravellerStopped):
        return f"{_who(e.seat)} cannot pay and stops at {e.place}."
    if isinstance(e, E.ReturnEnded):
        return "The Return Journey is over."
    if isinstance(e, E.ForkDealt):
        return "The fork's hidden cards are dealt again."
    if isinstance(e, E.GameEnded):
        return f"The journey is {'won' if e.won else 'lost'}: {e.reason}."
    return type(e).__name__
