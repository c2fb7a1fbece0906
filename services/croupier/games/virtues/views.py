"""What each seat sees of a game of `virtues`, the cards hidden from it, and the move list.

Public: every Array (Locations and the cards on them), the Display, the whole face-up
discard pile, the sizes of the decks and hands, how many Locations each player completed.
Private: a hand (its owner only), the cards the current seat is looking at with the Seer or
the Survey (that seat only, while it looks), a completion pile (face down: its owner only).
Never: the contents or order of either deck.
"""

from __future__ import annotations

from typing import Any

from croupier.engine.contract import Event

from .cards import CATALOG
from .events import (
    ActionMoved,
    ActionPlayed,
    CardBanished,
    CardDiscarded,
    CardDrawn,
    CardSalvaged,
    CardSeized,
    DeckRebuilt,
    DiscardFlipped,
    DiscardTaken,
    DisplayRefilled,
    ForkDealt,
    GameEnded,
    GameSetUp,
    HandDiscarded,
    LocationCompleted,
    LocationDrawn,
    LocationExchanged,
    LocationReturned,
    LocationsDiscarded,
    LocationsKept,
    LocationSwapped,
    LocationTaken,
    PeekedCardTaken,
    PlayingStopped,
    RearrangingStopped,
    SpecialPlayed,
    TurnBegan,
)
from .rules import ARRAY_SIZE, LOC_SYMBOLS
from .state import END, SCOUT, SURVEY, State

# Symbol cards are named act-<code>-<code>-<n> after their two symbols; a view says which
# symbols the codes stand for, so a client can read a card on a Location or in the discard.
SYMBOL_CODES = {code: sym for sym, code in CATALOG.symbol_codes.items()}

def card_view(card: str) -> dict[str, Any]:
    """A card in a hand or being looked at, with what is printed on it."""
    action = CATALOG.actions.get(card)
    if action is None:
        return {"id": card}
    if action.kind is None:
        return {"id": card, "symbols": list(action.symbols)}
    return {"id": card, "special": action.kind, "name": action.name}


def location_view(location: str, covers: tuple[str, ...] | None = None) -> dict[str, Any]:
    """A Location: its symbols and, in an Array, the id of the card on each (None: uncovered)."""
    out: dict[str, Any] = {"id": location, "symbols": list(LOC_SYMBOLS.get(location, ()))}
    if covers is not None:
        out["covers"] = [c or None for c in covers]
    return out


def step(state: State) -> str:
    """The decision point in words a client can switch on ("end" split into its two choices)."""
    if state.phase == END:
        player = state.players[state.current]
        return "return_location" if len(player.array) > ARRAY_SIZE else "discard"
    return state.phase


def view(state: State, seat: int | None) -> dict[str, Any]:
    looking = seat is not None and seat == state.current and state.phase in (SCOUT, SURVEY)
    players = []
    for s, p in enumerate(state.players):
        entry: dict[str, Any] = {
            "seat": s,
            "hand_count": len(p.hand),
            "array": [location_view(site.location, site.covers) for site in p.array],
            "completed_count": len(p.completed),
        }
        if s == seat:
            entry["completed"] = list(p.completed)
        players.append(entry)
    out: dict[str, Any] = {
        "phase": state.phase,
        "step": step(state),
        "current": state.current,
        "turn": state.turn.number,
        "turn_limit": state.config.max_rounds * state.config.seats,
        "target": state.config.target,
        "symbol_codes": SYMBOL_CODES,
        "you": seat,
        "hand": [card_view(c) for c in state.players[seat].hand] if seat is not None and state.players else None,
        "players": players,
        "display": [location_view(loc) for loc in state.display],
        "action_deck_count": len(state.action_deck),
        "location_deck_count": len(state.location_deck),
        "discard": list(state.discard),
        "moved": list(state.turn.moved),
        "bonus_plays_left": state.turn.bonus,
        "looking_at": None,
        "winners": list(state.winners),
        "end_reason": state.end_reason or None,
    }
    if looking:
        out["looking_at"] = (
            [card_view(c) for c in state.turn.peek] if state.phase == SCOUT else [location_view(loc) for loc in state.turn.peek]
        )
    return out


def hidden(state: State, seat: int | None) -> frozenset[str]:
    secret: set[str] = set(state.action_deck)
    secret.update(state.location_deck)
    for s, p in enumerate(state.players):
        if s != seat:
            secret.update(p.hand)
            secret.update(p.completed)
    if seat is not None and seat == state.current and state.phase in (SCOUT, SURVEY):
        secret.difference_update(state.turn.peek)
    return frozenset(secret)


def _name(card: str) -> str:
    action = CATALOG.actions.get(card)
    if action is None:
        loc = CATALOG.locations.get(card)
        return loc.name if loc else card
    if action.kind:
        return action.name
    return "/".join(s.capitalize() for s in action.symbols)


def describe(event: Event) -> str:
    """One line per event; cards drawn from a deck are not named (the log is not a view)."""
    e: Any = event
    match event:
        case GameSetUp():
            return f"The cards were dealt; seat {e.first} begins."
        case TurnBegan():
            return f"Turn {e.turn}: seat {e.seat}."
        case CardDrawn():
            return f"Seat {e.seat} drew an Action card."
        case DiscardTaken():
            return f"Seat {e.seat} took {_name(e.card)} from the discard pile."
        case DeckRebuilt():
            return f"The discard pile was shuffled into a new Action deck of {len(e.deck)} cards."
        case DiscardFlipped():
            return f"{_name(e.card)} was turned face up on the discard pile."
        case ActionPlayed():
            return f"Seat {e.seat} covered {e.symbol} of {_name(e.location)} with {_name(e.card)}."
        case ActionMoved():
            return f"Seat {e.seat} moved {_name(e.card)} to {e.symbol} of {_name(e.location)}."
        case RearrangingStopped():
            return f"Seat {e.seat} finished re-arranging."
        case HandDiscarded():
            return f"Seat {e.seat} discarded their hand ({len(e.cards)} cards)."
        case LocationsDiscarded():
            return f"Seat {e.seat} discarded their Locations: {', '.join(_name(x) for x in e.locations)}."
        case LocationDrawn():
            return f"Seat {e.seat} drew the Location {_name(e.location)}."
        case LocationCompleted():
            return f"Seat {e.seat} completed {_name(e.location)}."
        case LocationTaken():
            return f"Seat {e.seat} took {_name(e.location)} from the Display."
        case DisplayRefilled():
            return f"{_name(e.location)} was added to the Display."
        case SpecialPlayed():
            return f"Seat {e.seat} played {_name(e.card)}."
        case CardSeized():
            return f"Seat {e.seat} took {_name(e.card)} from seat {e.victim}'s Array."
        case CardBanished():
            return f"Seat {e.seat} sent {_name(e.card)} from seat {e.victim}'s Array to the discard pile."
        case CardSalvaged():
            return f"Seat {e.seat} took {_name(e.card)} from the discard pile."
        case PeekedCardTaken():
            return f"Seat {e.seat} took one of the cards they looked at."
        case LocationExchanged():
            return f"Seat {e.seat} exchanged {_name(e.give)} for {_name(e.take)} from the Location deck."
        case LocationsKept():
            return f"Seat {e.seat} kept their Locations."
        case LocationSwapped():
            return f"Seat {e.seat} exchanged {_name(e.give)} for {_name(e.take)} from the Display."
        case PlayingStopped():
            return f"Seat {e.seat} stopped playing cards."
        case CardDiscarded():
            return f"Seat {e.seat} discarded {_name(e.card)}."
        case LocationReturned():
            return f"Seat {e.seat} returned {_name(e.location)} to the bottom of the Location deck."
        case ForkDealt():
            return (f"The fork's hidden cards were dealt again: the hands, the Action deck "
                    f"({len(e.action_deck)} cards) and the Location deck ({len(e.location_deck)} cards).")
        case GameEnded():
            who = ", ".join(str(s) for s in e.winners) or "nobody"
            why = "completed enough Locations" if e.reason == "completed" else "the turn limit was reached"
            return f"The game ended ({why}); winner(s): seat {who}."
    return event.TYPE

