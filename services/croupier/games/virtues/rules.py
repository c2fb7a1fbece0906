"""The rules of `virtues`: initial_state, decide, evolve, legal_actions and the end.

A turn is a series of decision points (state.phase):

    draw       DrawCard | TakeDiscard                      (skipped when neither is possible)
    act        exactly one of the three choices:
               PlayAction | PlaySpecial                    1) play a card (or a special)
               MoveAction                                  2) re-arrange (opens "rearrange")
               DiscardHand | DiscardLocations              3) discard all, draw three
    rearrange  MoveAction (each card once) | StopRearranging
    bonus      PlayAction | StopPlaying                    (Clan Gathering, up to two plays)
    scout      ChooseCard                                  (Brahan Seer)
    survey     ExchangeLocation | KeepLocations            (Ordnance Survey)
    claim      TakeLocation                                (after a completion, from the Display)
    end        ReturnLocation while > 3 Locations, then DiscardCard while > 3 cards

`decide` checks a command with `_problem` and resolves it by emitting events onto a
running copy of the state (`_Out`), then settles the end of the turn: it draws Locations
and Action cards up to three, keeps a face-up card on the discard pile, and begins the next
turn, stopping wherever the seat has a choice to make. `legal_actions` generates commands
from the same helpers (`_slots`, `_moves`, `_special_options`, ...) that `_problem` checks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from operator import attrgetter
from typing import Any

from croupier.engine.contract import (
    MALFORMED,
    Command,
    Context,
    Emitter,
    Event,
    Rejection,
    Start,
    Tick,
)

from .cards import CATALOG
from .commands import (
    ChooseCard,
    DiscardCard,
    DiscardHand,
    DiscardLocations,
    DrawCard,
    ExchangeLocation,
    KeepLocations,
    MoveAction,
    PlayAction,
    PlaySpecial,
    ReturnLocation,
    StopPlaying,
    StopRearranging,
    TakeDiscard,
    TakeLocation,
)
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
from .state import (
    ACT,
    BONUS,
    CLAIM,
    DRAW,
    END,
    OVER,
    REARRANGE,
    SCOUT,
    SETUP,
    SURVEY,
    Config,
    Player,
    Site,
    State,
    Turn,
)

HAND_SIZE = 3
ARRAY_SIZE = 3
DISPLAY_SIZE = 3
LOOK = 3  # cards the Seer and the Survey look at
BONUS_PLAYS = 2

LOC_SYMBOLS: dict[str, tuple[str, ...]] = {lid: loc.symbols for lid, loc in CATALOG.locations.items()}
CARD_SYMBOLS: dict[str, tuple[str, ...]] = {aid: a.symbols for aid, a in CATALOG.actions.items()}
KIND: dict[str, str | None] = {aid: a.kind for aid, a in CATALOG.actions.items()}


def initial_state(options: Mapping[str, Any], seats: int, rules: int = 3) -> State:
    config = Config(
        seats=seats,
        target=int(options.get("completions_to_win", 6)),
        specials=int(options.get("special_cards", 10)),
        max_rounds=int(options.get("max_rounds", 100)),
        rules=rules,
    )
    return State(config=config, players=(Player(),) * seats)


def initial_state_v2(options: Mapping[str, Any], seats: int) -> State:
    """Rules versions 1 and 2: an Action deck that runs out is rebuilt at the next draw."""
    return initial_state(options, seats, rules=2)


# --- shared rule helpers (used by both _problem and legal_actions) -------------------------


def _site(player: Player, location: str) -> Site | None:
    for site in player.array:
        if site.location == location:
            return site
    return None


def _slots(player: Player, card: str) -> list[tuple[str, str]]:
    """The uncovered symbols of the player's Locations that `card` may cover."""
    wild = KIND.get(card) == "wild"
    syms = CARD_SYMBOLS.get(card, ())
    out = []
    for site in player.array:
        for sym, cover in zip(LOC_SYMBOLS[site.location], site.covers):
            if not cover and (wild or sym in syms):
                out.append((site.location, sym))
    return out


def _slot_problem(player: Player, card: str, location: str, symbol: str) -> tuple[str, str] | None:
    site = _site(player, location)
    if site is None:
        return ("no_such_location", f"{location} is not in your Array")
    syms = LOC_SYMBOLS[location]
    if symbol not in syms:
        return ("symbol_not_on_location", f"{location} has no {symbol}")
    if site.covers[syms.index(symbol)]:
        return ("symbol_covered", f"{symbol} of {location} is already covered")
    if KIND.get(card) != "wild" and symbol not in CARD_SYMBOLS.get(card, ()):
        return ("card_does_not_match", f"{card} has no {symbol}")
    return None


def _placed(player: Player) -> list[str]:
    return [c for site in player.array for c in site.covers if c]


def _owner_of_placed(state: State, card: str) -> int | None:
    if not isinstance(card, str) or not card:
        return None  # "" marks an open symbol in `covers`: no card is placed there
    for seat, player in enumerate(state.players):
        for site in player.array:
            if card in site.covers:
                return seat
    return None


def _moves(state: State, player: Player) -> list[tuple[str, str, str]]:
    """Re-arrangements: (card, location, symbol) for each placed card not yet moved this turn."""
    return [(c, loc, sym) for c in _placed(player) if c not in state.turn.moved for loc, sym in _slots(player, c)]


def _can_draw(state: State) -> bool:
    return bool(state.action_deck) or len(state.discard) >= 2


def _can_take(state: State) -> bool:
    return bool(state.discard) and KIND.get(state.discard[-1]) is None


# The optional fields each special kind needs (the rest must be None).
NEEDS: dict[str, tuple[str, ...]] = {
    "wild": ("location", "symbol"), "raid": ("target",), "banish": ("target",), "salvage": ("target",),
    "pilgrim": ("target",), "swap": ("location", "target"), "scout": (), "survey": (), "double": (), "draw": (),
}


def _special_options(state: State, seat: int, card: str) -> list[tuple[str | None, str | None, str | None]]:
    """Every (location, symbol, target) with which the special `card` may be played now."""
    kind = KIND.get(card)
    player = state.players[seat]
    if kind == "wild":
        return [(loc, sym, None) for loc, sym in _slots(player, card)]
    if kind in ("raid", "banish"):
        return [(None, None, c) for s, p in enumerate(state.players) if s != seat for c in _placed(p)]
    if kind == "salvage":
        return [(None, None, c) for c in dict.fromkeys(state.discard) if KIND.get(c) is None]
    if kind == "pilgrim":
        return [(None, None, loc) for loc in state.display]
    if kind == "swap":
        return [(site.location, None, loc) for site in player.array for loc in state.display]
    if kind == "scout":
        return [(None, None, None)] if state.action_deck else []
    if kind == "survey":
        return [(None, None, None)] if state.location_deck else []
    return [(None, None, None)]


def _special_problem(state: State, cmd: PlaySpecial) -> tuple[str, str] | None:
    kind = KIND[cmd.card]
    needs = NEEDS[kind]
    for name in ("location", "symbol", "target"):
        given = getattr(cmd, name) is not None
        if given and name not in needs:
            return ("unexpected_field", f"{cmd.card} ({kind}) takes no {name}")
        if not given and name in needs:
            return ("missing_field", f"{cmd.card} ({kind}) needs a {name}")
    player = state.players[cmd.seat]
    if kind == "wild":
        return _slot_problem(player, cmd.card, cmd.location, cmd.symbol)
    if kind in ("raid", "banish"):
        owner = _owner_of_placed(state, cmd.target)
        if owner is None or owner == cmd.seat:
            return ("no_such_target", f"{cmd.target} does not cover a symbol of another player's Location")
    elif kind == "salvage":
        if cmd.target not in state.discard:
            return ("not_in_discard", f"{cmd.target} is not in the discard pile")
        if KIND.get(cmd.target) is not None:
            return ("not_a_symbol_card", f"{cmd.target} is a special card")
    elif kind in ("pilgrim", "swap"):
        if kind == "swap" and _site(player, cmd.location) is None:
            return ("no_such_location", f"{cmd.location} is not in your Array")
        if cmd.target not in state.display:
            return ("not_in_display", f"{cmd.target} is not in the Display")
    elif kind == "scout" and not state.action_deck:
        return ("deck_empty", "the Action deck is empty")
    elif kind == "survey" and not state.location_deck:
        return ("location_deck_empty", "the Location deck is empty")
    return None


# --- the check of every command ---------------------------------------------------------------

Problem = tuple[str, str] | tuple[str, str, str] | None


def _check_draw(state: State, cmd: Command) -> Problem:
    return None if _can_draw(state) else ("deck_empty", "there is no Action card to draw")


def _check_take(state: State, cmd: Command) -> Problem:
    if not state.discard:
        return ("discard_empty", "the discard pile is empty")
    if KIND.get(state.discard[-1]) is not None:
        return ("discard_top_special", "a special card cannot be taken from the discard pile")
    return None


def _check_play(state: State, cmd: PlayAction) -> Problem:
    player = state.players[cmd.seat]
    if cmd.card not in player.hand:
        return ("card_not_in_hand", f"{cmd.card} is not in your hand")
    if KIND.get(cmd.card) is not None:
        return ("not_a_symbol_card", f"{cmd.card} is a special card: use PlaySpecial")
    return _slot_problem(player, cmd.card, cmd.location, cmd.symbol)


def _check_special(state: State, cmd: PlaySpecial) -> Problem:
    if cmd.card not in state.players[cmd.seat].hand:
        return ("card_not_in_hand", f"{cmd.card} is not in your hand")
    if KIND.get(cmd.card) is None:
        return ("not_a_special", f"{cmd.card} is a symbol card: use PlayAction")
    return _special_problem(state, cmd)


def _check_move(state: State, cmd: MoveAction) -> Problem:
    player = state.players[cmd.seat]
    if cmd.card not in _placed(player):
        return ("card_not_placed", f"{cmd.card} is not on one of your Locations")
    if cmd.card in state.turn.moved:
        return ("card_already_moved", f"{cmd.card} was already moved this turn")
    return _slot_problem(player, cmd.card, cmd.location, cmd.symbol)


def _check_nothing(state: State, cmd: Command) -> Problem:
    return None


def _check_discard_locations(state: State, cmd: Command) -> Problem:
    return None if state.players[cmd.seat].array else ("no_locations", "your Array is empty")


def _check_choose(state: State, cmd: ChooseCard) -> Problem:
    return None if cmd.card in state.turn.peek else ("not_looking_at_card", f"{cmd.card} is not among the cards you look at")


def _check_exchange(state: State, cmd: ExchangeLocation) -> Problem:
    if _site(state.players[cmd.seat], cmd.give) is None:
        return ("no_such_location", f"{cmd.give} is not in your Array")
    if cmd.take not in state.turn.peek:
        return ("not_looking_at_location", f"{cmd.take} is not among the Locations you look at")
    return None


def _check_take_location(state: State, cmd: TakeLocation) -> Problem:
    return None if cmd.location in state.display else ("not_in_display", f"{cmd.location} is not in the Display")


def _check_discard_card(state: State, cmd: DiscardCard) -> Problem:
    player = state.players[cmd.seat]
    if len(player.array) > ARRAY_SIZE:
        return ("return_location_first", "return a Location first: you have more than three")
    if cmd.card not in player.hand:
        return ("card_not_in_hand", f"{cmd.card} is not in your hand")
    return None


def _check_return(state: State, cmd: ReturnLocation) -> Problem:
    player = state.players[cmd.seat]
    if len(player.array) <= ARRAY_SIZE:
        return ("enough_locations", "you do not have more than three Locations")
    if _site(player, cmd.location) is None:
        return ("no_such_location", f"{cmd.location} is not in your Array")
    return None


_CHECKS: dict[type, tuple[tuple[str, ...], Callable[[State, Any], Problem]]] = {
    DrawCard: ((DRAW,), _check_draw),
    TakeDiscard: ((DRAW,), _check_take),
    PlayAction: ((ACT, BONUS), _check_play),
    PlaySpecial: ((ACT,), _check_special),
    MoveAction: ((ACT, REARRANGE), _check_move),
    StopRearranging: ((REARRANGE,), _check_nothing),
    DiscardHand: ((ACT,), _check_nothing),
    DiscardLocations: ((ACT,), _check_discard_locations),
    ChooseCard: ((SCOUT,), _check_choose),
    ExchangeLocation: ((SURVEY,), _check_exchange),
    KeepLocations: ((SURVEY,), _check_nothing),
    StopPlaying: ((BONUS,), _check_nothing),
    TakeLocation: ((CLAIM,), _check_take_location),
    DiscardCard: ((END,), _check_discard_card),
    ReturnLocation: ((END,), _check_return),
}
_STR_FIELDS = {cls: tuple(f.name for f in dataclasses.fields(cls) if f.name != "seat") for cls in _CHECKS}


def _problem(state: State, cmd: Command) -> Problem:
    entry = _CHECKS.get(type(cmd))
    if entry is None:
        return ("not_an_action", f"{cmd.TYPE} is not a move of virtues", MALFORMED)
    for name in _STR_FIELDS[type(cmd)]:
        value = getattr(cmd, name)
        if not (isinstance(value, str) or (value is None and isinstance(cmd, PlaySpecial) and name != "card")):
            return ("malformed_command", f"{cmd.TYPE}.{name} must be a string", MALFORMED)
    if state.phase == SETUP:
        return ("not_started", "the game has not started")
    if state.phase == OVER:
        return ("game_over", "the game is over")
    if cmd.seat != state.current:
        return ("not_your_turn", f"it is seat {state.current}'s turn")
    phases, check = entry
    if state.phase not in phases:
        return ("wrong_phase", f"{cmd.TYPE} is not possible now (step: {state.phase})")
    return check(state, cmd)


# --- decide -------------------------------------------------------------------------------


def _Out(state: State, ctx: Context | None = None) -> Emitter:
    """The events of one decide, each seen by the rules after it (engine.Emitter)."""
    return Emitter(state, evolve, ctx)


def decide(command: Command, state: State, ctx: Context) -> list[Event]:
    if isinstance(command, Start):
        return _start(state, ctx)
    if isinstance(command, Tick):
        raise Rejection("no_deadline", "virtues has no deadlines")
    problem = _problem(state, command)
    if problem is not None:
        raise Rejection(*problem)
    out = _Out(state)
    _RESOLVE[type(command)](out, command, ctx)
    _settle(out, ctx)
    if state.config.rules >= 3 and out.state.phase != OVER and not out.state.action_deck:
        # "If the Action Card deck runs out, the discard pile is turned over to form the new
        # one": at once, so that the Seer sees a deck and the next seat takes from the new
        # face-up card, not from the old pile. (Versions 1-2 waited for the next draw.)
        _rebuild(out, ctx)
    return out.events


def _start(state: State, ctx: Context) -> list[Event]:
    if state.phase != SETUP:
        raise Rejection("already_started", "the game has already started")
    n = state.config.seats
    locs = ctx.rng.shuffle(list(CATALOG.locations))
    acts = ctx.rng.shuffle(list(CATALOG.action_deck(state.config.specials)))
    first = ctx.rng.below(n)
    deal = DISPLAY_SIZE + ARRAY_SIZE * n
    setup = GameSetUp(
        location_deck=tuple(locs[deal:]),
        display=tuple(locs[:DISPLAY_SIZE]),
        arrays=tuple(tuple(locs[DISPLAY_SIZE + ARRAY_SIZE * s: DISPLAY_SIZE + ARRAY_SIZE * (s + 1)]) for s in range(n)),
        action_deck=tuple(acts[1 + HAND_SIZE * n:]),
        hands=tuple(tuple(acts[1 + HAND_SIZE * s: 1 + HAND_SIZE * (s + 1)]) for s in range(n)),
        discard=(acts[0],),
        first=first,
    )
    return [setup, TurnBegan(seat=first, turn=1)]


def redeal(state: State, ctx: Context) -> list[Event]:
    """A fork's new deal (GameSpec.redeal): what no seat but one (or none) may see, dealt
    again with the fork's randomness, from the public position and the pools alone.

    - Action cards: every hand and the Action deck are one pool (any hidden Action card may
      be in any of them, as far as the table can tell: the pool is the game's Action cards
      less the public ones, on Locations and in the discard pile). Sorted, shuffled, and dealt
      back: each hand in seat order its own number of cards, the rest the deck in its order.
    - Locations: the Location deck, sorted and shuffled. Its cards are the Locations in no
      Array, not in the Display and not completed: all public, so the pool is the deck itself.
    - Kept: completion piles (each card was completed in view of the table and named in the
      record; only their counts play on), Arrays, the Display, the discard pile, the turn.
    The Seer's or the Survey's look follows the new top cards (evolve), so that the state
    never says a seat looks at cards it does not."""
    players = state.players
    pool = sorted([*state.action_deck, *(card for p in players for card in p.hand)])
    dealt = ctx.rng.shuffle(pool)
    hands = []
    at = 0
    for p in players:
        hands.append(tuple(dealt[at: at + len(p.hand)]))
        at += len(p.hand)
    locations = ctx.rng.shuffle(sorted(state.location_deck))
    return [ForkDealt(hands=tuple(hands), action_deck=tuple(dealt[at:]), location_deck=tuple(locations))]


def _rebuild(out: _Out, ctx: Context) -> bool:
    """The empty Action deck made again from the discard pile, shuffled, and its top card
    turned face up as the new discard; False when the pile has too few cards for that."""
    st = out.state
    if len(st.discard) < 2:
        return False
    order = ctx.rng.shuffle(list(st.discard))
    out.emit(DeckRebuilt(deck=tuple(order)))
    out.emit(DiscardFlipped(card=order[0]))
    return True


def _draw(out: _Out, ctx: Context, seat: int) -> bool:
    """Draw the top Action card, rebuilding the deck from the discard pile when it has run out."""
    if not out.state.action_deck and not _rebuild(out, ctx):
        return False
    out.emit(CardDrawn(seat=seat, card=out.state.action_deck[0]))
    return True


def _refill_display(out: _Out) -> None:
    st = out.state
    if len(st.display) < DISPLAY_SIZE and st.location_deck:
        out.emit(DisplayRefilled(location=st.location_deck[0]))


def _complete(out: _Out, seat: int) -> None:
    for site in out.state.players[seat].array:
        if all(site.covers):
            out.emit(LocationCompleted(seat=seat, location=site.location, cards=site.covers))
            st = out.state
            if len(st.players[seat].completed) >= st.config.target:
                out.emit(GameEnded(winners=(seat,), reason="completed"))
            return


def _leaders(state: State) -> tuple[int, ...]:
    best = max(len(p.completed) for p in state.players)
    return tuple(s for s, p in enumerate(state.players) if len(p.completed) == best)


def _settle(out: _Out, ctx: Context) -> None:
    """The end of the turn: the counts, a face-up discard, then the next turn (or the end)."""
    st = out.state
    if st.phase != END:
        return
    seat = st.current
    while True:
        player = st.players[seat]
        if len(player.array) > ARRAY_SIZE:
            return  # the seat chooses a Location to return
        if len(player.array) < ARRAY_SIZE and st.location_deck:
            out.emit(LocationDrawn(seat=seat, location=st.location_deck[0]))
        elif len(player.hand) > HAND_SIZE:
            return  # the seat chooses a card to discard
        elif not (len(player.hand) < HAND_SIZE and _draw(out, ctx, seat)):
            break
        st = out.state
    if not st.discard and st.action_deck:
        out.emit(DiscardFlipped(card=st.action_deck[0]))
        st = out.state
    if st.turn.number >= st.config.max_rounds * st.config.seats:
        out.emit(GameEnded(winners=_leaders(st), reason="turn_limit"))
    else:
        out.emit(TurnBegan(seat=(seat + 1) % st.config.seats, turn=st.turn.number + 1))


def _resolve_play(out: _Out, cmd: PlayAction, ctx: Context) -> None:
    out.emit(ActionPlayed(seat=cmd.seat, card=cmd.card, location=cmd.location, symbol=cmd.symbol))
    _complete(out, cmd.seat)


def _resolve_move(out: _Out, cmd: MoveAction, ctx: Context) -> None:
    out.emit(ActionMoved(seat=cmd.seat, card=cmd.card, location=cmd.location, symbol=cmd.symbol))
    _complete(out, cmd.seat)


def _resolve_special(out: _Out, cmd: PlaySpecial, ctx: Context) -> None:
    seat, kind = cmd.seat, KIND[cmd.card]
    if kind == "wild":
        out.emit(ActionPlayed(seat=seat, card=cmd.card, location=cmd.location, symbol=cmd.symbol))
        _complete(out, seat)
        return
    owner = _owner_of_placed(out.state, cmd.target) if kind in ("raid", "banish") else None
    out.emit(SpecialPlayed(seat=seat, card=cmd.card, kind=kind))
    if kind == "raid":
        out.emit(CardSeized(seat=seat, victim=owner, card=cmd.target))
    elif kind == "banish":
        out.emit(CardBanished(seat=seat, victim=owner, card=cmd.target))
    elif kind == "salvage":
        out.emit(CardSalvaged(seat=seat, card=cmd.target))
    elif kind == "draw":
        for _ in range(2):
            _draw(out, ctx, seat)
    elif kind == "swap":
        site = _site(out.state.players[seat], cmd.location)
        cards = tuple(c for c in site.covers if c)
        out.emit(LocationSwapped(seat=seat, give=cmd.location, take=cmd.target, cards=cards))
    elif kind == "pilgrim":
        out.emit(LocationTaken(seat=seat, location=cmd.target))
        _refill_display(out)


def _resolve_take_location(out: _Out, cmd: TakeLocation, ctx: Context) -> None:
    out.emit(LocationTaken(seat=cmd.seat, location=cmd.location))
    _refill_display(out)


def _covers(out: _Out, seat: int, location: str) -> tuple[str, ...]:
    site = _site(out.state.players[seat], location)
    return tuple(c for c in site.covers if c) if site else ()


_RESOLVE: dict[type, Callable[[_Out, Any, Context], None]] = {
    DrawCard: lambda out, cmd, ctx: _draw(out, ctx, cmd.seat),
    TakeDiscard: lambda out, cmd, ctx: out.emit(DiscardTaken(seat=cmd.seat, card=out.state.discard[-1])),
    PlayAction: _resolve_play,
    PlaySpecial: _resolve_special,
    MoveAction: _resolve_move,
    StopRearranging: lambda out, cmd, ctx: out.emit(RearrangingStopped(seat=cmd.seat)),
    DiscardHand: lambda out, cmd, ctx: out.emit(HandDiscarded(seat=cmd.seat, cards=out.state.players[cmd.seat].hand)),
    DiscardLocations: lambda out, cmd, ctx: out.emit(LocationsDiscarded(
        seat=cmd.seat,
        locations=tuple(s.location for s in out.state.players[cmd.seat].array),
        cards=tuple(_placed(out.state.players[cmd.seat])),
    )),
    ChooseCard: lambda out, cmd, ctx: out.emit(PeekedCardTaken(seat=cmd.seat, card=cmd.card)),
    ExchangeLocation: lambda out, cmd, ctx: out.emit(LocationExchanged(
        seat=cmd.seat, give=cmd.give, take=cmd.take, cards=_covers(out, cmd.seat, cmd.give))),
    KeepLocations: lambda out, cmd, ctx: out.emit(LocationsKept(seat=cmd.seat)),
    StopPlaying: lambda out, cmd, ctx: out.emit(PlayingStopped(seat=cmd.seat)),
    TakeLocation: _resolve_take_location,
    DiscardCard: lambda out, cmd, ctx: out.emit(CardDiscarded(seat=cmd.seat, card=cmd.card)),
    ReturnLocation: lambda out, cmd, ctx: out.emit(LocationReturned(
        seat=cmd.seat, location=cmd.location, cards=_covers(out, cmd.seat, cmd.location))),
}


# --- legal actions ------------------------------------------------------------------------------


def legal_actions(state: State, seat: int) -> list[Command]:
    if seat != state.current or state.phase in (SETUP, OVER):
        return []
    player = state.players[seat]
    phase = state.phase
    out: list[Command] = []
    if phase == DRAW:
        if _can_draw(state):
            out.append(DrawCard(seat=seat))
        if _can_take(state):
            out.append(TakeDiscard(seat=seat))
    elif phase in (ACT, BONUS):
        for card in player.hand:
            if KIND.get(card) is None:
                out.extend(PlayAction(seat=seat, card=card, location=loc, symbol=sym) for loc, sym in _slots(player, card))
            elif phase == ACT:
                out.extend(
                    PlaySpecial(seat=seat, card=card, location=loc, symbol=sym, target=target)
                    for loc, sym, target in _special_options(state, seat, card)
                )
        if phase == ACT:
            out.extend(MoveAction(seat=seat, card=c, location=loc, symbol=sym) for c, loc, sym in _moves(state, player))
            out.append(DiscardHand(seat=seat))
            if player.array:
                out.append(DiscardLocations(seat=seat))
        else:
            out.append(StopPlaying(seat=seat))
    elif phase == REARRANGE:
        out.extend(MoveAction(seat=seat, card=c, location=loc, symbol=sym) for c, loc, sym in _moves(state, player))
        out.append(StopRearranging(seat=seat))
    elif phase == SCOUT:
        out.extend(ChooseCard(seat=seat, card=c) for c in state.turn.peek)
    elif phase == SURVEY:
        out.extend(ExchangeLocation(seat=seat, give=s.location, take=t) for s in player.array for t in state.turn.peek)
        out.append(KeepLocations(seat=seat))
    elif phase == CLAIM:
        out.extend(TakeLocation(seat=seat, location=loc) for loc in state.display)
    elif phase == END:
        if len(player.array) > ARRAY_SIZE:
            out.extend(ReturnLocation(seat=seat, location=s.location) for s in player.array)
        else:
            out.extend(DiscardCard(seat=seat, card=c) for c in player.hand)
    out.sort(key=_order)
    return out


def _special_key(cmd: PlaySpecial) -> tuple[str, ...]:
    return (cmd.card, cmd.location or "", cmd.symbol or "", cmd.target or "")


# The order of engine.contract.sort_actions, computed cheaply: the seat is the same for every
# action of a list, and a field is a string or None (None sorts first, as "" does here).
_KEYS: dict[type, Callable[[Any], Any]] = {
    cls: (_special_key if cls is PlaySpecial else attrgetter(*names) if names else (lambda cmd: ""))
    for cls, names in _STR_FIELDS.items()
}


def _order(cmd: Command) -> tuple:
    return (cmd.TYPE, _KEYS[type(cmd)](cmd))


def to_act(state: State) -> tuple[int, ...]:
    return () if state.phase in (SETUP, OVER) else (state.current,)


def is_over(state: State) -> bool:
    return state.phase == OVER


def result(state: State) -> dict[str, Any]:
    return {
        "winners": list(state.winners),
        "scores": [len(p.completed) for p in state.players],
        "reason": state.end_reason,
        "turns": state.turn.number,
        "target": state.config.target,
    }


# --- evolve ---------------------------------------------------------------------------------
# Hot path: states are rebuilt field by field (`_with`) rather than with dataclasses.replace.


def _with(
    s: State, *, players: tuple[Player, ...] | None = None, turn: Turn | None = None,
    action_deck: tuple[str, ...] | None = None, discard: tuple[str, ...] | None = None,
    location_deck: tuple[str, ...] | None = None, display: tuple[str, ...] | None = None,
) -> State:
    return State(
        s.config,
        s.players if players is None else players,
        s.turn if turn is None else turn,
        s.action_deck if action_deck is None else action_deck,
        s.discard if discard is None else discard,
        s.location_deck if location_deck is None else location_deck,
        s.display if display is None else display,
        s.winners,
        s.end_reason,
    )


def _phase(t: Turn, phase: str, *, moved: tuple[str, ...] = (), bonus: int = 0, peek: tuple[str, ...] = (),
           resume: str = "") -> Turn:
    return Turn(t.current, t.number, phase, moved, bonus, peek, resume)


def _to_end(t: Turn) -> Turn:
    return t if t.phase == END and not t.peek else Turn(t.current, t.number, END)


def _without(items: tuple[str, ...], item: str) -> tuple[str, ...]:
    if items and items[0] == item:
        return items[1:]
    if items and items[-1] == item:
        return items[:-1]
    if item not in items:
        return items
    i = items.index(item)
    return items[:i] + items[i + 1:]


def _get(state: State, seat: int) -> Player:
    return state.players[seat] if 0 <= seat < len(state.players) else Player()


def _put(state: State, seat: int, player: Player) -> tuple[Player, ...]:
    players = state.players
    if not 0 <= seat < len(players):
        return players
    return players[:seat] + (player,) + players[seat + 1:]


def _hand(state: State, seat: int, hand: tuple[str, ...]) -> tuple[Player, ...]:
    p = _get(state, seat)
    return _put(state, seat, Player(hand, p.array, p.completed))


def _array(state: State, seat: int, array: tuple[Site, ...]) -> tuple[Player, ...]:
    p = _get(state, seat)
    return _put(state, seat, Player(p.hand, array, p.completed))


def _cover(array: tuple[Site, ...], location: str, symbol: str, card: str) -> tuple[Site, ...]:
    out = []
    for site in array:
        if site.location == location:
            syms = LOC_SYMBOLS.get(location, ())
            if symbol in syms:
                i = syms.index(symbol)
                site = Site(location, site.covers[:i] + (card,) + site.covers[i + 1:])
        out.append(site)
    return tuple(out)


def _uncover(array: tuple[Site, ...], card: str) -> tuple[Site, ...]:
    return tuple(
        Site(s.location, tuple("" if c == card else c for c in s.covers)) if card in s.covers else s for s in array
    )


def _drop_site(array: tuple[Site, ...], location: str) -> tuple[Site, ...]:
    return tuple(s for s in array if s.location != location)


def _replace_site(array: tuple[Site, ...], location: str, new: str) -> tuple[Site, ...]:
    return tuple(Site(new) if s.location == location else s for s in array)


def _ev_setup(state: State, e: GameSetUp) -> State:
    players = tuple(
        Player(hand=tuple(hand), array=tuple(Site(loc) for loc in arr)) for hand, arr in zip(e.hands, e.arrays)
    )
    return State(
        state.config, players, Turn(e.first, 0, SETUP), tuple(e.action_deck), tuple(e.discard),
        tuple(e.location_deck), tuple(e.display),
    )


def _ev_turn(state: State, e: TurnBegan) -> State:
    phase = DRAW if _can_draw(state) or _can_take(state) else ACT
    return _with(state, turn=Turn(e.seat, e.turn, phase))


def _ev_drawn(state: State, e: CardDrawn) -> State:
    t = state.turn
    return _with(
        state, action_deck=_without(state.action_deck, e.card),
        players=_hand(state, e.seat, _get(state, e.seat).hand + (e.card,)),
        turn=_phase(t, ACT) if t.phase == DRAW else t,
    )


def _ev_taken(state: State, e: DiscardTaken) -> State:
    return _with(
        state, discard=_without(state.discard, e.card),
        players=_hand(state, e.seat, _get(state, e.seat).hand + (e.card,)), turn=_phase(state.turn, ACT),
    )


def _ev_rebuilt(state: State, e: DeckRebuilt) -> State:
    return _with(state, action_deck=tuple(e.deck), discard=())


def _ev_flipped(state: State, e: DiscardFlipped) -> State:
    return _with(state, action_deck=_without(state.action_deck, e.card), discard=state.discard + (e.card,))


def _ev_played(state: State, e: ActionPlayed) -> State:
    p = _get(state, e.seat)
    players = _put(state, e.seat, Player(_without(p.hand, e.card), _cover(p.array, e.location, e.symbol, e.card), p.completed))
    t = state.turn
    if t.phase == BONUS and t.bonus > 1:
        return _with(state, players=players, turn=_phase(t, BONUS, bonus=t.bonus - 1))
    return _with(state, players=players, turn=_to_end(t))


def _ev_moved(state: State, e: ActionMoved) -> State:
    t = state.turn
    array = _cover(_uncover(_get(state, e.seat).array, e.card), e.location, e.symbol, e.card)
    return _with(state, players=_array(state, e.seat, array), turn=_phase(t, REARRANGE, moved=t.moved + (e.card,)))


def _ev_to_end(state: State, e: Event) -> State:
    return _with(state, turn=_to_end(state.turn))


def _ev_hand_discarded(state: State, e: HandDiscarded) -> State:
    return _with(state, players=_hand(state, e.seat, ()), discard=state.discard + tuple(e.cards), turn=_to_end(state.turn))


def _ev_locations_discarded(state: State, e: LocationsDiscarded) -> State:
    return _with(
        state, players=_array(state, e.seat, ()), location_deck=state.location_deck + tuple(e.locations),
        discard=state.discard + tuple(e.cards), turn=_to_end(state.turn),
    )


def _ev_location_drawn(state: State, e: LocationDrawn) -> State:
    return _with(
        state, location_deck=_without(state.location_deck, e.location),
        players=_array(state, e.seat, _get(state, e.seat).array + (Site(e.location),)),
    )


def _ev_completed(state: State, e: LocationCompleted) -> State:
    p = _get(state, e.seat)
    players = _put(state, e.seat, Player(p.hand, _drop_site(p.array, e.location), p.completed + (e.location,)))
    t = state.turn
    turn = _phase(t, CLAIM, moved=t.moved, bonus=t.bonus, resume=t.phase) if state.display else t
    return _with(state, players=players, discard=state.discard + tuple(e.cards), turn=turn)


def _ev_location_taken(state: State, e: LocationTaken) -> State:
    t = state.turn
    if t.phase == CLAIM:
        t = _phase(t, t.resume or END, moved=t.moved, bonus=t.bonus)
    return _with(
        state, display=_without(state.display, e.location), turn=t,
        players=_array(state, e.seat, _get(state, e.seat).array + (Site(e.location),)),
    )


def _ev_refilled(state: State, e: DisplayRefilled) -> State:
    return _with(state, location_deck=_without(state.location_deck, e.location), display=state.display + (e.location,))


def _ev_special(state: State, e: SpecialPlayed) -> State:
    t = state.turn
    if e.kind == "scout":
        turn = _phase(t, SCOUT, peek=state.action_deck[:LOOK])
    elif e.kind == "survey":
        turn = _phase(t, SURVEY, peek=state.location_deck[:LOOK])
    elif e.kind == "double":
        turn = _phase(t, BONUS, bonus=BONUS_PLAYS)
    else:
        turn = _to_end(t)
    return _with(
        state, players=_hand(state, e.seat, _without(_get(state, e.seat).hand, e.card)),
        discard=state.discard + (e.card,), turn=turn,
    )


def _ev_seized(state: State, e: CardSeized) -> State:
    state = _with(state, players=_array(state, e.victim, _uncover(_get(state, e.victim).array, e.card)))
    return _with(state, players=_hand(state, e.seat, _get(state, e.seat).hand + (e.card,)))


def _ev_banished(state: State, e: CardBanished) -> State:
    return _with(
        state, players=_array(state, e.victim, _uncover(_get(state, e.victim).array, e.card)),
        discard=state.discard + (e.card,),
    )


def _ev_salvaged(state: State, e: CardSalvaged) -> State:
    return _with(
        state, discard=_without(state.discard, e.card), players=_hand(state, e.seat, _get(state, e.seat).hand + (e.card,)),
    )


def _ev_peeked_taken(state: State, e: PeekedCardTaken) -> State:
    return _with(
        state, action_deck=_without(state.action_deck, e.card),
        players=_hand(state, e.seat, _get(state, e.seat).hand + (e.card,)), turn=_to_end(state.turn),
    )


def _ev_exchanged(state: State, e: LocationExchanged) -> State:
    return _with(
        state, players=_array(state, e.seat, _replace_site(_get(state, e.seat).array, e.give, e.take)),
        location_deck=_without(state.location_deck, e.take) + (e.give,), discard=state.discard + tuple(e.cards),
        turn=_to_end(state.turn),
    )


def _ev_swapped(state: State, e: LocationSwapped) -> State:
    return _with(
        state, players=_array(state, e.seat, _replace_site(_get(state, e.seat).array, e.give, e.take)),
        display=tuple(e.give if loc == e.take else loc for loc in state.display),
        discard=state.discard + tuple(e.cards),
    )


def _ev_card_discarded(state: State, e: CardDiscarded) -> State:
    return _with(
        state, players=_hand(state, e.seat, _without(_get(state, e.seat).hand, e.card)), discard=state.discard + (e.card,),
    )


def _ev_returned(state: State, e: LocationReturned) -> State:
    return _with(
        state, players=_array(state, e.seat, _drop_site(_get(state, e.seat).array, e.location)),
        location_deck=state.location_deck + (e.location,), discard=state.discard + tuple(e.cards),
    )


def _ev_ended(state: State, e: GameEnded) -> State:
    t = state.turn
    return State(
        state.config, state.players, Turn(t.current, t.number, OVER), state.action_deck, state.discard,
        state.location_deck, state.display, tuple(e.winners), e.reason,
    )


def _ev_fork_dealt(state: State, e: ForkDealt) -> State:
    players = tuple(
        Player(tuple(e.hands[s]) if s < len(e.hands) else p.hand, p.array, p.completed)
        for s, p in enumerate(state.players)
    )
    action_deck, location_deck = tuple(e.action_deck), tuple(e.location_deck)
    t = state.turn
    peek = t.peek
    if peek and t.phase == SCOUT:
        peek = action_deck[:len(peek)]  # the Seer looks at the new top cards
    elif peek and t.phase == SURVEY:
        peek = location_deck[:len(peek)]
    turn = Turn(t.current, t.number, t.phase, t.moved, t.bonus, peek, t.resume)
    return _with(state, players=players, turn=turn, action_deck=action_deck, location_deck=location_deck)


_EVOLVE: dict[type, Callable[[State, Any], State]] = {
    GameSetUp: _ev_setup,
    TurnBegan: _ev_turn,
    CardDrawn: _ev_drawn,
    DiscardTaken: _ev_taken,
    DeckRebuilt: _ev_rebuilt,
    DiscardFlipped: _ev_flipped,
    ActionPlayed: _ev_played,
    ActionMoved: _ev_moved,
    RearrangingStopped: _ev_to_end,
    HandDiscarded: _ev_hand_discarded,
    LocationsDiscarded: _ev_locations_discarded,
    LocationDrawn: _ev_location_drawn,
    LocationCompleted: _ev_completed,
    LocationTaken: _ev_location_taken,
    DisplayRefilled: _ev_refilled,
    SpecialPlayed: _ev_special,
    CardSeized: _ev_seized,
    CardBanished: _ev_banished,
    CardSalvaged: _ev_salvaged,
    PeekedCardTaken: _ev_peeked_taken,
    LocationExchanged: _ev_exchanged,
    LocationsKept: _ev_to_end,
    LocationSwapped: _ev_swapped,
    PlayingStopped: _ev_to_end,
    CardDiscarded: _ev_card_discarded,
    LocationReturned: _ev_returned,
    GameEnded: _ev_ended,
    ForkDealt: _ev_fork_dealt,
}


def evolve(state: State, event: Event) -> State:
    """Total and pure: an event this game does not know leaves the state as it is."""
    handler = _EVOLVE.get(type(event))
    return handler(state, event) if handler is not None else state
