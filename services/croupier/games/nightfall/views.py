"""What each seat may see of a nightfall game, the cards it may not, and the replay words.

Card ids carry their owner and design ("s1-knight-1": seat 1's Knight), so views do not
repeat them; the content files (cards.py) give a design's numbers.

Hidden: every deck (order and contents), the other seat's hand, its face-down first
Location before the reveal, its face-down Traps, and the Location card of its pending
placement. Public: the map, Characters in play with their HP, actions and attachments,
withdrawn Characters (they sit in front of their owner), discard piles and Graveyards,
and the sizes of hands and decks.
"""

from __future__ import annotations

from typing import Any

from croupier.engine.contract import Event
from croupier.games.nightfall import events as E
from croupier.games.nightfall.cards import CONTENT, design_of
from croupier.games.nightfall.rules import LOSS_AT
from croupier.games.nightfall.state import Fighter, State


def _player_view(state: State, seat: int, viewer: int | None) -> dict[str, Any]:
    p = state.players[seat]
    mine = viewer == seat
    opening = state.opening[seat] if state.opening else None
    return {
        "hand": list(p.hand) if mine else None,
        "hand_count": len(p.hand),
        "deck_count": len(p.deck),
        "withdrawn": [{"card": c, "hp": hp} for c, hp in p.withdrawn],
        "discard": list(p.discard),
        "graveyard": list(p.graveyard),
        "graveyard_hp": p.grave_hp,
        "redraws": p.redraws,
        "opening_chosen": opening is not None,
        "opening": opening if mine else None,
    }


def _fighter_view(f: Fighter) -> dict[str, Any]:
    out: dict[str, Any] = {"card": f.card, "location": f.location, "hp": f.hp, "actions": f.actions}
    if f.item is not None:
        out["item"] = f.item
        out["uses"] = f.uses
    flags = [name for name, on in (("acted", f.acted), ("item_used", f.item_used), ("ability_used", f.ability_used),
                                   ("transferred", f.transferred)) if on]
    if flags:
        out["flags"] = flags
    if f.ward:
        out["ward"] = f.ward
    if f.attached:
        out["attached"] = list(f.attached)
    return out


def view(state: State, seat: int | None) -> dict[str, Any]:
    pending = None
    if state.pending is not None:
        kind, character, location = state.pending
        if seat == state.active:
            pending = {"kind": kind, "character": character, "location": location}
        else:
            # A Character entering on a new Location is still in hand until it is placed.
            pending = {"kind": kind, "character": character if kind == "discover" else None, "location": None}
    return {
        "phase": state.phase,
        "turn": state.turn,
        "round": (state.turn + 1) // 2,
        "max_rounds": state.max_rounds,
        "active": state.active,
        "first": state.first,
        "withdraw_cost": state.withdraw_cost,
        "loss_at": LOSS_AT,
        "decks": list(state.decks),
        "locations": [{"card": p.card, "x": p.x, "y": p.y} for p in state.places],
        "characters": [_fighter_view(f) for f in state.fighters],
        "traps": [
            {"owner": t.owner, "location": t.location, "count": len(t.cards),
             "trap": t.design if t.owner == seat else None, "cards": list(t.cards) if t.owner == seat else None}
            for t in state.traps
        ],
        "players": [_player_view(state, s, seat) for s in range(len(state.players))],
        "turn_flags": {
            "started_empty": state.started_empty, "moved": state.moved, "paid_draw": state.paid_draw,
            "event_played": state.event_played, "character_played": state.character_played,
        },
        "pending": pending,
        "winners": list(state.winners),
        "end_reason": state.end_reason,
    }


def hidden(state: State, seat: int | None) -> frozenset[str]:
    out: set[str] = set()
    for s, p in enumerate(state.players):
        out.update(p.deck)
        if s != seat:
            out.update(p.hand)
            if state.opening and state.opening[s] is not None:
                out.add(state.opening[s])
    for t in state.traps:
        if t.owner != seat:
            out.update(t.cards)
    return frozenset(out)


def _name(card: str | None) -> str:
    if card is None:
        return "-"
    return f"{CONTENT.name(design_of(card))} ({card})"


def describe(event: Event) -> str:
    e: Any = event
    match event:
        case E.DeckShuffled():
            return f"Seat {e.seat} shuffled their deck."
        case E.HandRedrawn():
            return f"Seat {e.seat} had no Location and shuffled their hand back to draw again."
        case E.HandsDealt():
            return "Both hands are dealt; each player lays a first Location face down."
        case E.OpeningLocationChosen():
            return f"Seat {e.seat} laid a first Location face down."
        case E.OpeningLocationsRevealed():
            how = " (equal capacity, settled at random)" if e.tie_broken else ""
            return f"First Locations turned up: {' and '.join(_name(c) for c in e.cards)}; seat {e.first} goes first{how}."
        case E.TurnStarted():
            return f"Turn {e.turn}: seat {e.seat} to play."
        case E.TrapWindowOpened():
            return f"Seat {e.seat} may lay Traps before the turn ends."
        case E.TurnEnded():
            return f"Seat {e.seat} ended the turn."
        case E.GameEnded():
            who = " and ".join(f"seat {s}" for s in e.winners) or "nobody (a draw)"
            why = "a Graveyard reached 200 HP" if e.reason == "graveyard" else "the round limit was reached"
            return f"Game over: {why}; graveyards {list(e.graveyard)}; {who} wins."
        case E.CardsDrawn():
            return f"Seat {e.seat} drew {e.count} card{'s' if e.count != 1 else ''} ({e.reason})."
        case E.CardsDiscarded():
            return f"Seat {e.seat} discarded {', '.join(_name(c) for c in e.cards)} ({e.reason})."
        case E.GraveyardPenalty():
            why = "to draw a card" if e.reason == "paid_draw" else "for a turn without a Character"
            return f"Seat {e.seat} added {e.amount} HP to their Graveyard {why}."
        case E.PlacementPending():
            who = "a new Character" if e.kind == "character" else _name(e.character)
            return f"Seat {e.seat} is placing a new Location for {who}."
        case E.LocationPlayed():
            by = f", discovered by {_name(e.character)}" if e.character else ""
            return f"Seat {e.seat} played {_name(e.card)} at ({e.x}, {e.y}){by}."
        case E.CharacterPlayed():
            back = " back from withdrawal" if e.withdrawn else ""
            return f"Seat {e.seat} played {_name(e.card)}{back} on {_name(e.location)} with {e.hp} HP."
        case E.CharacterMoved():
            return f"{_name(e.character)} moved to {_name(e.to)}."
        case E.Attacked():
            with_item = f" with {_name(e.item)}" if e.item else ""
            return f"{_name(e.attacker)} attacked {_name(e.target)}{with_item} for {e.dmg} DMG."
        case E.CharacterDamaged():
            return f"{_name(e.character)} took {e.amount} DMG ({e.source}), {e.hp} HP left."
        case E.CharacterHealed():
            return f"{_name(e.character)} healed {e.amount} ({e.source}), now {e.hp} HP."
        case E.CharacterDefeated():
            return f"{_name(e.character)} fell: {e.hp} HP to seat {e.seat}'s Graveyard."
        case E.CharacterWithdrawn():
            return f"{_name(e.character)} withdrew with {e.hp} HP."
        case E.ActionsChanged():
            return f"{_name(e.character)} now has {e.actions} actions ({e.reason})."
        case E.CharacterWarded():
            return f"{_name(e.character)} is warded against {e.ward} DMG until its owner's next turn."
        case E.AbilityUsed():
            target = f" on {_name(e.target)}" if e.target else ""
            return f"{_name(e.character)} used its {e.kind} ability{target}."
        case E.ItemAttached():
            return f"Seat {e.seat} gave {_name(e.item)} to {_name(e.character)} ({e.uses} uses)."
        case E.ItemUsed():
            return f"{_name(e.character)} used {_name(e.item)} ({e.uses} uses left)."
        case E.ItemTransferred():
            return f"{_name(e.character)} passed {_name(e.item)} to {_name(e.to)}."
        case E.ItemDiscarded():
            return f"{_name(e.item)} of {_name(e.character)} was discarded ({e.reason})."
        case E.EventPlayed():
            target = f" on {_name(e.target)}" if e.target else ""
            return f"Seat {e.seat} played the Event {_name(e.card)}{target}."
        case E.EventDiscarded():
            return f"{_name(e.card)} left {_name(e.character)} ({e.reason})."
        case E.TrapSet():
            return f"Seat {e.seat} laid a Trap face down on {_name(e.location)}."
        case E.ForkDealt():
            return (f"The fork dealt seat {e.seat}'s hidden cards again: its hand, its deck and its face-down cards, "
                    "each as many as before.")
        case E.TrapSprung():
            return f"Seat {e.seat}'s {CONTENT.name(e.trap)} sprang on {_name(e.location)}."
    return event.TYPE



