"""Nightfall's rules: initial_state, decide, evolve, legal_actions, is_over, result, to_act.

decide checks a command with `_check` (one function per command type) and then emits its
events through `_Out`, which folds the events emitted so far whenever it is read, so that
later steps (a defeat, a loss at 200) see the state they caused. legal_actions builds
candidate commands and keeps exactly those `_check` accepts, so the two cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from operator import attrgetter
from typing import Any

from croupier.engine.contract import Command, Context, Emitter, Event, Rejection, Start, Tick
from croupier.games.nightfall import commands as C
from croupier.games.nightfall import events as E
from croupier.games.nightfall.cards import CONTENT, deck_cards, design_of, owner_of
from croupier.games.nightfall.state import (
    MAIN,
    OPENING,
    OVER,
    PENDING_CHARACTER,
    PENDING_DISCOVER,
    PLACE,
    SETUP,
    TRAPS,
    Fighter,
    Place,
    Player,
    State,
    Trap,
    replace_fighter,
    replace_player,
    replace_state,
)

SEATS = 2
HAND_SIZE = 6
ACTIONS_PER_TURN = 3
LOSS_AT = 200  # Graveyard HP at which a player loses
PENALTY = 10  # Graveyard HP for the paid draw and for a turn without a Character
COST_PLAY_CHARACTER = 1
COST_MOVE = 1
COST_PLAY_LOCATION = 2
COST_ATTACK = 2
COST_TRANSFER = 1
COST_ABILITY = 1
OPENING_CELLS = ((0, 0), (1, 0))

LOCS = CONTENT.locations
CHARS = CONTENT.characters
ITEMS = CONTENT.items
EVENT_CARDS = CONTENT.events
TRAP_CARDS = CONTENT.traps
CATEGORY = CONTENT.category


# --- setup ----------------------------------------------------------------------------


def initial_state(options: Mapping[str, Any], seats: int) -> State:
    return State(
        decks=(options["deck_0"], options["deck_1"]),
        withdraw_cost=options["withdraw_cost"],
        max_rounds=options["max_rounds"],
        players=(Player(), Player()),
    )


# --- small reads ----------------------------------------------------------------------


def _fighter(state: State, card: str | None) -> Fighter | None:
    for f in state.fighters:
        if f.card == card:
            return f
    return None


def _place(state: State, card: str | None) -> Place | None:
    for p in state.places:
        if p.card == card:
            return p
    return None


def _adjacent(a: Place, b: Place) -> bool:
    """Neighbours on the grid, diagonals included (Chebyshev distance 1)."""
    dx = a.x - b.x
    dy = a.y - b.y
    return a is not b and -1 <= dx <= 1 and -1 <= dy <= 1 and (dx != 0 or dy != 0)


def _free_cells_around(state: State, places: tuple[Place, ...]) -> list[tuple[int, int]]:
    taken = {(p.x, p.y) for p in state.places}
    cells = set()
    for p in places:
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                cell = (p.x + dx, p.y + dy)
                if cell not in taken:
                    cells.add(cell)
    return sorted(cells)


def _conditions_on(state: State) -> bool:
    """A Location's condition may not be used on the very first turn of the game."""
    return state.turn > 1


def _condition(state: State, location: str, kind: str) -> int:
    """The amount of a Location's condition of this kind (0 when off or absent)."""
    if not _conditions_on(state):
        return 0
    card = LOCS[design_of(location)]
    if card.condition != kind:
        return 0
    return card.amount if kind != "no_attack" else 1


@cache  # content is fixed: one entry per (Character, Location) design pair
def _in_effect(character: str, location: str) -> tuple:
    """The abilities a Character design has in effect on a Location design: Special
    Abilities whose icon the Location shows, then its Secondary Ability."""
    card = CHARS[character]
    types = LOCS[location].types
    found = [ability for ability in card.abilities if ability.type in types]
    if card.secondary is not None:
        found.append(card.secondary)
    return tuple(found)


@cache
def _active_in_effect(character: str, location: str):
    for ability in _in_effect(character, location):
        if ability.kind in ("heal", "strike", "draw"):
            return ability
    return None


def _abilities(fighter: Fighter) -> tuple:
    """The Character's abilities in effect where it stands."""
    return _in_effect(design_of(fighter.card), design_of(fighter.location))


def _passive(fighter: Fighter, kind: str) -> int:
    return sum(a.amount for a in _abilities(fighter) if a.kind == kind)


def _active_ability(fighter: Fighter):
    return _active_in_effect(design_of(fighter.card), design_of(fighter.location))


def _printed_hp(card: str) -> int:
    return CHARS[design_of(card)].hp


def _capacity_left(state: State) -> int:
    return sum(LOCS[design_of(p.card)].capacity for p in state.places) - sum(f.hp for f in state.fighters)


def _weapon_ready(fighter: Fighter) -> bool:
    return (fighter.item is not None and ITEMS[design_of(fighter.item)].kind == "weapon"
            and fighter.uses > 0 and not fighter.item_used)


def _complete_traps(player: Player) -> list[str]:
    counts: dict[str, int] = {}
    for card in player.hand:
        design = design_of(card)
        if design in TRAP_CARDS:
            counts[design] = counts.get(design, 0) + 1
    return sorted(d for d, n in counts.items() if n >= TRAP_CARDS[d].components)


def _first_round(state: State) -> bool:
    """New Locations come into play only after the first round (turns 1 and 2)."""
    return state.turn <= SEATS


# --- checks: one per command, shared by decide and legal_actions ----------------------


class _Reads:
    """Lookups over one state that the checks make again and again: built once per decide,
    and once per legal_actions for all its candidates (the state is immutable)."""

    __slots__ = ("state", "fighter", "place", "_fighter_designs", "_place_designs", "_capacity_left")

    # No __getattr__ here: a class with one loses the interpreter's fast attribute reads,
    # and the checks read r.fighter and r.place for every candidate.
    def __init__(self, state: State):
        self.state = state
        self.fighter = {f.card: f for f in reversed(state.fighters)}  # the first wins, as in _fighter
        self.place = {p.card: p for p in reversed(state.places)}
        self._fighter_designs = self._place_designs = self._capacity_left = None

    # The rarer reads, made on first use.

    def fighter_designs(self) -> set[str]:
        if self._fighter_designs is None:
            self._fighter_designs = {design_of(f.card) for f in self.state.fighters}
        return self._fighter_designs

    def place_designs(self) -> set[str]:
        if self._place_designs is None:
            self._place_designs = {design_of(p.card) for p in self.state.places}
        return self._place_designs

    def capacity_left(self) -> int:
        if self._capacity_left is None:
            self._capacity_left = _capacity_left(self.state)
        return self._capacity_left


def _at(table: dict, card: Any) -> Any:
    """table.get(card), and None for a card no table could hold (an unhashable id off the
    wire is simply not in play, as the scans over the state said)."""
    try:
        return table.get(card)
    except TypeError:
        return None


def _reject(code: str, message: str) -> None:
    raise Rejection(code, message)


def _check_turn(state: State, cmd: Command, phase: str) -> None:
    now = state.phase
    if now == phase and cmd.seat == state.active and now != OPENING:
        return  # the usual case, settled at once: the active seat, in its command's phase
    if now == OVER:
        _reject("game_over", "the game is over")
    if now == SETUP:
        _reject("not_started", "the game has not started")
    if (cmd.seat != state.active or now == OPENING) and cmd.seat not in to_act(state):
        _reject("not_your_turn", f"seat {cmd.seat} is not to act")
    if now != phase:
        _reject("wrong_phase", f"{cmd.TYPE} is not allowed in the {now} phase")


def _own_fighter(r: _Reads, seat: int, card: str) -> Fighter:
    try:
        f = r.fighter.get(card)
    except TypeError:  # an unhashable id off the wire: no card in play
        f = None
    if f is None:
        _reject("no_such_character", f"{card} is not a Character in play")
    if owner_of(card) != seat:
        _reject("not_your_character", f"{card} is not yours")
    return f


def _enemy_fighter(r: _Reads, seat: int, card: str | None) -> Fighter:
    try:
        f = r.fighter.get(card)
    except TypeError:  # an unhashable id off the wire: no card in play
        f = None
    if f is None:
        _reject("no_such_character", f"{card} is not a Character in play")
    if owner_of(card) == seat:
        _reject("own_character", f"{card} is your own Character")
    return f


def _spend(f: Fighter, cost: int) -> None:
    if f.actions < cost:
        _reject("not_enough_actions", f"{f.card} has {f.actions} actions left, needs {cost}")


def _acting(state: State, cmd: Command, r: _Reads, card: str, cost: int) -> Fighter:
    """The checks most actions open with, in this order: the seat's turn in the main phase,
    `card` is its own Character, and that has `cost` actions left. (One call instead of
    three: legal_actions makes this check for every Move it weighs.)"""
    _check_turn(state, cmd, MAIN)
    f = _own_fighter(r, cmd.seat, card)
    if f.actions < cost:
        _spend(f, cost)
    return f


_NOT_A = {"location": "not_a_location", "character": "not_a_character", "item": "not_an_item", "event": "not_an_event"}


def _in_hand(player: Player, card: str, category: str) -> None:
    if card not in player.hand:
        _reject("not_in_hand", f"{card} is not in your hand")
    if CATEGORY.get(design_of(card)) != category:
        _reject(_NOT_A[category], f"{card} is not a {category.capitalize()}")


def _new_location_ok(state: State, player: Player, location: str, r: _Reads) -> None:
    _in_hand(player, location, "location")
    if _first_round(state):
        _reject("first_round", "new Locations come into play only after the first round")
    design = design_of(location)
    if design in r.place_designs():
        _reject("duplicate_location", f"a {LOCS[design].name} is already in play")


def _character_ok(state: State, seat: int, card: str, extra_capacity: int, r: _Reads) -> int:
    """A Character card may enter play now; returns the HP it enters with."""
    player = state.players[seat]
    hp = None
    for w, whp in player.withdrawn:
        if w == card:
            hp = whp
    if hp is None:
        _in_hand(player, card, "character")
        hp = _printed_hp(card)
    if state.character_played:
        _reject("character_already_played", "one Character per turn")
    design = design_of(card)
    if design in r.fighter_designs():
        _reject("duplicate_character", f"a {CHARS[design].name} is already in play")
    if _printed_hp(card) > r.capacity_left() + extra_capacity:
        _reject("over_capacity", "the Characters' HP would exceed the Locations' HP capacity")
    return hp


def _check_opening(state: State, cmd: C.PlayOpeningLocation, r: _Reads) -> None:
    if state.phase == OPENING and state.opening[cmd.seat] is not None:
        _reject("already_chosen", "your first Location is already down")
    _check_turn(state, cmd, OPENING)
    _in_hand(state.players[cmd.seat], cmd.card, "location")


def _check_play_character(state: State, cmd: C.PlayCharacter, r: _Reads) -> None:
    _check_turn(state, cmd, MAIN)
    _character_ok(state, cmd.seat, cmd.card, 0, r)
    if _at(r.place, cmd.location) is None:
        _reject("no_such_location", f"{cmd.location} is not a Location in play")


def _check_character_new_location(state: State, cmd: C.PlayCharacterOnNewLocation, r: _Reads) -> None:
    _check_turn(state, cmd, MAIN)
    player = state.players[cmd.seat]
    _new_location_ok(state, player, cmd.location, r)
    _character_ok(state, cmd.seat, cmd.card, LOCS[design_of(cmd.location)].capacity, r)


def _check_play_location(state: State, cmd: C.PlayLocation, r: _Reads) -> None:
    f = _acting(state, cmd, r, cmd.character, COST_PLAY_LOCATION)
    _new_location_ok(state, state.players[cmd.seat], cmd.location, r)
    if not _free_cells_around(state, (r.place.get(f.location),)):
        _reject("no_room", f"no free cell next to {f.location}")


def _placement_cells(state: State) -> list[tuple[int, int]]:
    kind, character, _ = state.pending
    if kind == PENDING_DISCOVER:
        return _free_cells_around(state, (_place(state, _fighter(state, character).location),))
    return _free_cells_around(state, state.places)


def _check_place_location(state: State, cmd: C.PlaceLocation, r: _Reads) -> None:
    _check_turn(state, cmd, PLACE)
    cell = (cmd.x, cmd.y)
    if any((p.x, p.y) == cell for p in state.places):
        _reject("cell_occupied", f"a Location already lies at {cell}")
    if cell not in _placement_cells(state):
        _reject("cell_not_adjacent", f"{cell} does not touch the Location it must touch")


def _check_move(state: State, cmd: C.MoveCharacter, r: _Reads) -> None:
    f = _acting(state, cmd, r, cmd.character, COST_MOVE)
    to = _at(r.place, cmd.to)
    if to is None:
        _reject("no_such_location", f"{cmd.to} is not a Location in play")
    if not _adjacent(r.place.get(f.location), to):
        _reject("not_adjacent", f"{cmd.to} is not adjacent to {f.location}")


def _check_attack(state: State, cmd: C.Attack, r: _Reads) -> None:
    _check_turn(state, cmd, MAIN)
    f = _own_fighter(r, cmd.seat, cmd.attacker)
    t = _enemy_fighter(r, cmd.seat, cmd.target)
    if f.location != t.location:
        _reject("not_same_location", "Characters must be on the same Location to attack")
    _spend(f, COST_ATTACK)
    if _condition(state, f.location, "no_attack"):
        _reject("no_attack_here", f"no attacks on {f.location}")
    if cmd.with_item and not _weapon_ready(f):
        _reject("no_weapon", f"{f.card} has no weapon it can use this turn")


def _check_transfer(state: State, cmd: C.TransferItem, r: _Reads) -> None:
    _check_turn(state, cmd, MAIN)
    f = _own_fighter(r, cmd.seat, cmd.character)
    if f.item is None:
        _reject("no_item", f"{f.card} holds no Item")
    if f.transferred:
        _reject("already_transferred", f"{f.card} has transferred an Item this turn")
    _spend(f, COST_TRANSFER)
    if cmd.to == cmd.character:
        _reject("same_character", "an Item goes to another Character")
    to = _own_fighter(r, cmd.seat, cmd.to)
    if to.location != f.location:
        _reject("not_same_location", "an Item passes between Characters on the same Location")
    if to.item is not None:
        _reject("has_item", f"{to.card} already holds an Item")


def _check_withdraw(state: State, cmd: C.Withdraw, r: _Reads) -> None:
    _acting(state, cmd, r, cmd.character, state.withdraw_cost)


def _check_play_item(state: State, cmd: C.PlayItem, r: _Reads) -> None:
    _check_turn(state, cmd, MAIN)
    _in_hand(state.players[cmd.seat], cmd.card, "item")
    f = _own_fighter(r, cmd.seat, cmd.character)
    if f.acted:
        _reject("already_acted", f"{f.card} has used an action this turn; Items attach before")
    if f.item is not None:
        _reject("has_item", f"{f.card} already holds an Item")


def _check_use_item(state: State, cmd: C.UseItem, r: _Reads) -> None:
    _check_turn(state, cmd, MAIN)
    f = _own_fighter(r, cmd.seat, cmd.character)
    if f.item is None:
        _reject("no_item", f"{f.card} holds no Item")
    kind = ITEMS[design_of(f.item)].kind
    if kind == "weapon":
        _reject("weapon_item", "a weapon is used by attacking with it")
    if f.item_used:
        _reject("item_used", "an Item is used once per turn")
    if kind == "draw" and not state.players[cmd.seat].deck:
        _reject("deck_empty", "your deck is empty")


def _check_discard_item(state: State, cmd: C.DiscardItem, r: _Reads) -> None:
    _check_turn(state, cmd, MAIN)
    if _own_fighter(r, cmd.seat, cmd.character).item is None:
        _reject("no_item", f"{cmd.character} holds no Item")


def _check_ability(state: State, cmd: C.UseAbility, r: _Reads) -> None:
    _check_turn(state, cmd, MAIN)
    f = _own_fighter(r, cmd.seat, cmd.character)
    card = CHARS[design_of(f.card)]
    if not any(a.kind in ("heal", "strike", "draw") for a in card.abilities):
        _reject("no_ability", f"{card.name} has no ability to activate")
    ability = _active_ability(f)
    if ability is None:
        _reject("ability_inactive", f"{f.location} does not show the ability's type icon")
    if f.ability_used:
        _reject("ability_used", "an ability is used once per turn")
    _spend(f, COST_ABILITY)
    if ability.kind == "draw":
        if cmd.target is not None:
            _reject("no_target", "this ability takes no target")
        if not state.players[cmd.seat].deck:
            _reject("deck_empty", "your deck is empty")
    elif ability.kind == "heal":
        t = _own_fighter(r, cmd.seat, cmd.target)
        if t.location != f.location:
            _reject("not_same_location", "heal a Character on the same Location")
    else:  # strike
        t = _enemy_fighter(r, cmd.seat, cmd.target)
        if not _adjacent(r.place.get(f.location), r.place.get(t.location)):
            _reject("not_adjacent", "strike a Character on an adjacent Location")
        if _condition(state, t.location, "no_attack"):
            _reject("no_attack_here", f"no attacks on {t.location}")


def _check_event(state: State, cmd: C.PlayEvent, r: _Reads) -> None:
    _check_turn(state, cmd, MAIN)
    if state.event_played:
        _reject("event_already_played", "one Event per turn")
    _in_hand(state.players[cmd.seat], cmd.card, "event")
    target = EVENT_CARDS[design_of(cmd.card)].target
    if target == "none":
        if cmd.target is not None:
            _reject("no_target", "this Event takes no target")
    elif target == "friendly":
        _own_fighter(r, cmd.seat, cmd.target)
    else:
        _enemy_fighter(r, cmd.seat, cmd.target)


def _check_draw(state: State, cmd: C.DrawCard, r: _Reads) -> None:
    _check_turn(state, cmd, MAIN)
    if state.paid_draw:
        _reject("already_drawn", "the paid draw is once per turn")
    if not state.players[cmd.seat].deck:
        _reject("deck_empty", "your deck is empty")


def _check_set_trap(state: State, cmd: C.SetTrap, r: _Reads) -> None:
    # At the end of the turn: from the main phase (which it ends) or in the trap window.
    _check_turn(state, cmd, TRAPS if state.phase == TRAPS else MAIN)
    if not isinstance(cmd.trap, str) or cmd.trap not in TRAP_CARDS:
        _reject("not_a_trap", f"{cmd.trap} is not a Trap")
    need = TRAP_CARDS[cmd.trap].components
    have = sum(1 for c in state.players[cmd.seat].hand if design_of(c) == cmd.trap)
    if have < need:
        _reject("trap_incomplete", f"{cmd.trap} needs {need} copies in hand, you have {have}")
    if _at(r.place, cmd.location) is None:
        _reject("no_such_location", f"{cmd.location} is not a Location in play")


def _check_end_turn(state: State, cmd: C.EndTurn, r: _Reads) -> None:
    if state.phase == TRAPS:
        _check_turn(state, cmd, TRAPS)
    else:
        _check_turn(state, cmd, MAIN)


_CHECKS: dict[type, Callable[[State, Any], None]] = {
    C.PlayOpeningLocation: _check_opening,
    C.PlayCharacter: _check_play_character,
    C.PlayCharacterOnNewLocation: _check_character_new_location,
    C.PlayLocation: _check_play_location,
    C.PlaceLocation: _check_place_location,
    C.MoveCharacter: _check_move,
    C.Attack: _check_attack,
    C.TransferItem: _check_transfer,
    C.Withdraw: _check_withdraw,
    C.PlayItem: _check_play_item,
    C.UseItem: _check_use_item,
    C.DiscardItem: _check_discard_item,
    C.UseAbility: _check_ability,
    C.PlayEvent: _check_event,
    C.DrawCard: _check_draw,
    C.SetTrap: _check_set_trap,
    C.EndTurn: _check_end_turn,
}


def _check(state: State, cmd: Command, r: _Reads | None = None) -> None:
    check = _CHECKS.get(type(cmd))
    if check is None:
        _reject("unknown_command", f"{cmd.TYPE} is not a nightfall command")
    check(state, cmd, _Reads(state) if r is None else r)


# --- decide ---------------------------------------------------------------------------


def _Out(state: State, ctx: Context | None = None) -> Emitter:
    """The events of one decide, each seen by the rules after it (engine.Emitter)."""
    return Emitter(state, evolve, ctx)


def decide_v1(cmd: Command, state: State, ctx: Context) -> list[Event]:
    """Rules version 1, for the games created under it (their log and audit re-run with it):
    Traps were laid only in a window that EndTurn opened when the hand held a complete Trap,
    and SetTrap was refused in the main phase. Version 2 (decide) lets SetTrap end the main
    phase and EndTurn always end the turn, so the phase no longer shows the hand."""
    if isinstance(cmd, C.EndTurn) and state.phase == MAIN:
        _check(state, cmd)
        if _complete_traps(state.players[cmd.seat]):
            return [E.TrapWindowOpened(seat=cmd.seat)]
    if isinstance(cmd, C.SetTrap) and state.phase != TRAPS:
        _check_turn(state, cmd, TRAPS)  # refused, as version 1 refused it
    return decide(cmd, state, ctx)


def legal_actions_v1(state: State, seat: int) -> list[Command]:
    """Rules version 1's legal actions: no SetTrap outside the trap window."""
    legal = legal_actions(state, seat)
    if state.phase == TRAPS:
        return legal
    return [cmd for cmd in legal if not isinstance(cmd, C.SetTrap)]


def decide(cmd: Command, state: State, ctx: Context) -> list[Event]:
    if isinstance(cmd, Start):
        if state.phase != SETUP:
            _reject("already_started", "the game has started")
        return _deal(state, ctx)
    if isinstance(cmd, Tick):
        _reject("no_deadline", "nightfall has no deadlines")
    _check(state, cmd)
    out = _Out(state)
    _APPLY[type(cmd)](out, cmd, ctx)
    return out.events


def _draw(out: _Out, seat: int, count: int, reason: str) -> None:
    count = min(count, len(out.state.players[seat].deck))  # no draw from an empty deck
    if count > 0:
        out.emit(E.CardsDrawn(seat=seat, count=count, reason=reason))


def _deal(state: State, ctx: Context) -> list[Event]:
    out = _Out(state)
    for seat in range(SEATS):
        out.emit(E.DeckShuffled(seat=seat, order=tuple(ctx.rng.shuffle(list(deck_cards(seat, state.decks[seat]))))))
        _draw(out, seat, HAND_SIZE, "deal")
        # No Location in hand: shuffle the cards back and draw six again, until there is one.
        while not any(CATEGORY[design_of(c)] == "location" for c in out.state.players[seat].hand):
            player = out.state.players[seat]
            order = tuple(ctx.rng.shuffle(list(player.hand + player.deck)))
            out.emit(E.HandRedrawn(seat=seat, order=order))
            _draw(out, seat, HAND_SIZE, "deal")
    out.emit(E.HandsDealt())
    return out.events


def _check_loss(out: _Out) -> None:
    if out.state.phase == OVER:
        return
    graves = tuple(p.grave_hp for p in out.state.players)
    losers = [s for s in range(SEATS) if graves[s] >= LOSS_AT]
    if losers:
        winners = tuple(s for s in range(SEATS) if s not in losers)
        out.emit(E.GameEnded(winners=winners, reason="graveyard", graveyard=graves))


def _heal(out: _Out, card: str, amount: int, source: str) -> None:
    f = _fighter(out.state, card)
    if f is None:
        return
    hp = min(_printed_hp(card), f.hp + amount)
    if hp > f.hp:
        out.emit(E.CharacterHealed(character=card, amount=hp - f.hp, hp=hp, source=source))


def _hurt(out: _Out, card: str, amount: int, source: str) -> int:
    """Deal DMG; returns what was dealt. Attacks are reduced by armor and wards; a shield
    Event prevents up to its amount of any DMG."""
    f = _fighter(out.state, card)
    if f is None or out.state.phase == OVER:
        return 0
    if source == "attack":
        amount -= _passive(f, "armor") + _condition(out.state, f.location, "armor") + f.ward
    amount = max(0, amount)
    if amount > 0:
        for ev in f.attached:
            event_card = EVENT_CARDS[design_of(ev)]
            if event_card.kind == "shield":
                amount = max(0, amount - event_card.amount)
                out.emit(E.EventDiscarded(character=card, card=ev, reason="spent"))
                break
    if amount <= 0:
        return 0
    hp = max(0, f.hp - amount)
    out.emit(E.CharacterDamaged(character=card, amount=amount, hp=hp, source=source))
    if hp == 0:
        out.emit(E.CharacterDefeated(character=card, seat=owner_of(card), hp=_printed_hp(card)))
        _check_loss(out)
    return amount


def _set_actions(out: _Out, card: str, actions: int, reason: str) -> None:
    f = _fighter(out.state, card)
    if f is not None and f.actions != max(0, actions):
        out.emit(E.ActionsChanged(character=card, actions=max(0, actions), reason=reason))


def _begin_turn(out: _Out, seat: int) -> None:
    state = out.state
    started_empty = not any(owner_of(f.card) == seat for f in state.fighters)
    out.emit(E.TurnStarted(seat=seat, turn=state.turn + 1, started_empty=started_empty))
    # The opponent's Traps fire first, before any other condition.
    for trap in out.state.traps:
        if trap.owner == seat:
            continue
        victims = [f.card for f in out.state.fighters if f.location == trap.location and owner_of(f.card) == seat]
        out.emit(E.TrapSprung(seat=trap.owner, trap=trap.design, cards=trap.cards, location=trap.location))
        card = TRAP_CARDS[trap.design]
        for victim in victims:
            f = _fighter(out.state, victim)
            if f is None:
                continue
            if card.kind == "damage":
                _hurt(out, victim, card.amount, "trap")
                if out.state.phase == OVER:
                    return
            elif card.kind == "stun":
                _set_actions(out, victim, f.actions - card.amount, "trap")
            elif f.item is not None:  # disarm
                out.emit(E.ItemDiscarded(character=victim, item=f.item, reason="trap"))
    mine = [f.card for f in out.state.fighters if owner_of(f.card) == seat]
    for card in mine:
        f = _fighter(out.state, card)
        if f is None:
            continue
        heal = _condition(out.state, f.location, "heal_start") + _passive(f, "regenerate")
        if heal:
            _heal(out, card, heal, "regenerate")
        hurt = _condition(out.state, f.location, "damage_start")
        if hurt:
            _hurt(out, card, hurt, "location")
            if out.state.phase == OVER:
                return
        f = _fighter(out.state, card)
        if f is None:
            continue
        extra = _condition(out.state, f.location, "extra_action")
        if extra:
            _set_actions(out, card, f.actions + extra, "location")
        for ev in f.attached:
            if EVENT_CARDS[design_of(ev)].kind == "snare":
                _set_actions(out, card, 0, "snare")
                out.emit(E.EventDiscarded(character=card, card=ev, reason="spent"))


def _end_turn(out: _Out) -> None:
    state = out.state
    seat = state.active
    if state.started_empty and not any(owner_of(f.card) == seat for f in state.fighters):
        out.emit(E.GraveyardPenalty(seat=seat, amount=PENALTY, reason="no_character"))
        _check_loss(out)
        if out.state.phase == OVER:
            return
    out.emit(E.TurnEnded(seat=seat))
    if out.state.turn >= SEATS * out.state.max_rounds:
        graves = tuple(p.grave_hp for p in out.state.players)
        low = min(graves)
        winners = tuple(s for s in range(SEATS) if graves[s] == low) if graves.count(low) == 1 else ()
        out.emit(E.GameEnded(winners=winners, reason="round_limit", graveyard=graves))
        return
    _begin_turn(out, 1 - seat)


def _apply_opening(out: _Out, cmd: C.PlayOpeningLocation, ctx: Context) -> None:
    out.emit(E.OpeningLocationChosen(seat=cmd.seat, card=cmd.card))
    cards = out.state.opening
    if None in cards:
        return
    caps = [LOCS[design_of(c)].capacity for c in cards]
    tie = caps[0] == caps[1]
    first = ctx.rng.below(SEATS) if tie else caps.index(min(caps))
    out.emit(E.OpeningLocationsRevealed(cards=tuple(cards), first=first, tie_broken=tie))
    _begin_turn(out, first)


def _apply_play_character(out: _Out, cmd: C.PlayCharacter, ctx: Context) -> None:
    _enter(out, cmd.seat, cmd.card, cmd.location)


def _enter(out: _Out, seat: int, card: str, location: str) -> None:
    withdrawn = dict(out.state.players[seat].withdrawn)
    hp = withdrawn.get(card, _printed_hp(card))
    out.emit(E.CharacterPlayed(seat=seat, card=card, location=location, hp=hp,
                               actions=ACTIONS_PER_TURN - COST_PLAY_CHARACTER, withdrawn=card in withdrawn))


def _apply_character_new_location(out: _Out, cmd: C.PlayCharacterOnNewLocation, ctx: Context) -> None:
    out.emit(E.PlacementPending(seat=cmd.seat, kind=PENDING_CHARACTER, character=cmd.card, location=cmd.location))


def _apply_play_location(out: _Out, cmd: C.PlayLocation, ctx: Context) -> None:
    out.emit(E.PlacementPending(seat=cmd.seat, kind=PENDING_DISCOVER, character=cmd.character, location=cmd.location))


def _apply_place_location(out: _Out, cmd: C.PlaceLocation, ctx: Context) -> None:
    kind, character, location = out.state.pending
    if kind == PENDING_DISCOVER:
        out.emit(E.LocationPlayed(seat=cmd.seat, card=location, x=cmd.x, y=cmd.y, character=character,
                                  cost=COST_PLAY_LOCATION))
    else:
        # No card is drawn for playing a new Character on a new Location.
        out.emit(E.LocationPlayed(seat=cmd.seat, card=location, x=cmd.x, y=cmd.y, character=None, cost=0))
        _enter(out, cmd.seat, character, location)


def _apply_move(out: _Out, cmd: C.MoveCharacter, ctx: Context) -> None:
    first = not out.state.moved
    out.emit(E.CharacterMoved(character=cmd.character, to=cmd.to, cost=COST_MOVE))
    if first:
        _draw(out, cmd.seat, 1, "move")


def _apply_attack(out: _Out, cmd: C.Attack, ctx: Context) -> None:
    f = _fighter(out.state, cmd.attacker)
    dmg = CHARS[design_of(f.card)].dmg + _passive(f, "attack_bonus") + _condition(out.state, f.location, "attack_bonus")
    if cmd.with_item:
        dmg += ITEMS[design_of(f.item)].amount
    empowered = [ev for ev in f.attached if EVENT_CARDS[design_of(ev)].kind == "empower"]
    dmg += sum(EVENT_CARDS[design_of(ev)].amount for ev in empowered)
    out.emit(E.Attacked(attacker=f.card, target=cmd.target, dmg=dmg, item=f.item if cmd.with_item else None,
                        cost=COST_ATTACK))
    if cmd.with_item:
        _use_item(out, f)
    for ev in empowered:
        out.emit(E.EventDiscarded(character=f.card, card=ev, reason="spent"))
    dealt = _hurt(out, cmd.target, dmg, "attack")
    drain = _passive(f, "drain")
    if dealt > 0 and drain and not out.state.phase == OVER:
        _heal(out, f.card, drain, "drain")


def _use_item(out: _Out, f: Fighter) -> None:
    out.emit(E.ItemUsed(character=f.card, item=f.item, uses=f.uses - 1))
    if f.uses - 1 <= 0:
        out.emit(E.ItemDiscarded(character=f.card, item=f.item, reason="used_up"))


def _apply_transfer(out: _Out, cmd: C.TransferItem, ctx: Context) -> None:
    f = _fighter(out.state, cmd.character)
    out.emit(E.ItemTransferred(character=cmd.character, to=cmd.to, item=f.item, cost=COST_TRANSFER))


def _apply_withdraw(out: _Out, cmd: C.Withdraw, ctx: Context) -> None:
    f = _fighter(out.state, cmd.character)
    if f.item is not None:
        out.emit(E.ItemDiscarded(character=f.card, item=f.item, reason="withdrawn"))
    for ev in f.attached:
        out.emit(E.EventDiscarded(character=f.card, card=ev, reason="withdrawn"))
    out.emit(E.CharacterWithdrawn(character=f.card, hp=f.hp, cost=out.state.withdraw_cost))


def _apply_play_item(out: _Out, cmd: C.PlayItem, ctx: Context) -> None:
    out.emit(E.ItemAttached(seat=cmd.seat, item=cmd.card, character=cmd.character,
                            uses=ITEMS[design_of(cmd.card)].uses))


def _apply_use_item(out: _Out, cmd: C.UseItem, ctx: Context) -> None:
    f = _fighter(out.state, cmd.character)
    item = ITEMS[design_of(f.item)]
    _use_item(out, f)
    if item.kind == "heal":
        _heal(out, f.card, item.amount, "item")
    elif item.kind == "ward":
        out.emit(E.CharacterWarded(character=f.card, ward=f.ward + item.amount))
    elif item.kind == "haste":
        _set_actions(out, f.card, f.actions + item.amount, "item")
    else:
        _draw(out, cmd.seat, item.amount, "item")


def _apply_discard_item(out: _Out, cmd: C.DiscardItem, ctx: Context) -> None:
    f = _fighter(out.state, cmd.character)
    out.emit(E.ItemDiscarded(character=f.card, item=f.item, reason="discarded"))


def _apply_ability(out: _Out, cmd: C.UseAbility, ctx: Context) -> None:
    f = _fighter(out.state, cmd.character)
    ability = _active_ability(f)
    out.emit(E.AbilityUsed(character=f.card, kind=ability.kind, target=cmd.target, cost=COST_ABILITY))
    if ability.kind == "heal":
        _heal(out, cmd.target, ability.amount, "ability")
    elif ability.kind == "strike":
        _hurt(out, cmd.target, ability.amount, "strike")
    else:
        _draw(out, cmd.seat, ability.amount, "ability")


def _apply_event(out: _Out, cmd: C.PlayEvent, ctx: Context) -> None:
    card = EVENT_CARDS[design_of(cmd.card)]
    out.emit(E.EventPlayed(seat=cmd.seat, card=cmd.card, target=cmd.target))
    if card.kind == "draw":
        _draw(out, cmd.seat, card.amount, "event")
    elif card.kind == "heal_all":
        for f in [f for f in out.state.fighters if owner_of(f.card) == cmd.seat]:
            _heal(out, f.card, card.amount, "event")
    elif card.kind == "damage":
        _hurt(out, cmd.target, card.amount, "event")
    elif card.kind == "refresh":
        _set_actions(out, cmd.target, _fighter(out.state, cmd.target).actions + card.amount, "event")
    elif card.kind == "discard_random":
        other = 1 - cmd.seat
        player = out.state.players[other]
        pool = list(player.hand) + [w for w, _ in player.withdrawn]
        chosen = []
        for _ in range(min(card.amount, len(pool))):
            chosen.append(pool.pop(ctx.rng.below(len(pool))))
        if chosen:
            out.emit(E.CardsDiscarded(seat=other, cards=tuple(chosen), reason="event"))
    # empower, shield and snare stay attached to their target (EventPlayed attaches them).


def _apply_draw(out: _Out, cmd: C.DrawCard, ctx: Context) -> None:
    out.emit(E.GraveyardPenalty(seat=cmd.seat, amount=PENALTY, reason="paid_draw"))
    _check_loss(out)
    if not out.state.phase == OVER:
        _draw(out, cmd.seat, 1, "paid")


def _apply_set_trap(out: _Out, cmd: C.SetTrap, ctx: Context) -> None:
    if out.state.phase == MAIN:
        # The first Trap ends the main phase: the window stays open for more, until EndTurn.
        out.emit(E.TrapWindowOpened(seat=cmd.seat))
    need = TRAP_CARDS[cmd.trap].components
    cards = tuple(sorted(c for c in out.state.players[cmd.seat].hand if design_of(c) == cmd.trap)[:need])
    out.emit(E.TrapSet(seat=cmd.seat, trap=cmd.trap, cards=cards, location=cmd.location))


def _apply_end_turn(out: _Out, cmd: C.EndTurn, ctx: Context) -> None:
    # Rules version 2: EndTurn ends the turn, whatever the hand holds. (Version 1 opened a
    # trap window here when the hand held a complete Trap, which told the opponent so:
    # decide_v1 below keeps that for the games played under it.)
    _end_turn(out)


_APPLY: dict[type, Callable[[_Out, Any, Context], None]] = {
    C.PlayOpeningLocation: _apply_opening,
    C.PlayCharacter: _apply_play_character,
    C.PlayCharacterOnNewLocation: _apply_character_new_location,
    C.PlayLocation: _apply_play_location,
    C.PlaceLocation: _apply_place_location,
    C.MoveCharacter: _apply_move,
    C.Attack: _apply_attack,
    C.TransferItem: _apply_transfer,
    C.Withdraw: _apply_withdraw,
    C.PlayItem: _apply_play_item,
    C.UseItem: _apply_use_item,
    C.DiscardItem: _apply_discard_item,
    C.UseAbility: _apply_ability,
    C.PlayEvent: _apply_event,
    C.DrawCard: _apply_draw,
    C.SetTrap: _apply_set_trap,
    C.EndTurn: _apply_end_turn,
}


# --- forks: the hidden cards dealt again ---------------------------------------------


def _pick(rng: Any, items: list) -> Any:
    """One of `items` (a fixed order) at random; no draw when there is no choice."""
    return items[0] if len(items) == 1 else items[rng.below(len(items))]


def _take(pool: list[str], cards: Any) -> None:
    for card in cards:
        pool.remove(card)


def _is(card: str, category: str) -> bool:
    return CATEGORY.get(design_of(card)) == category


def _deal_seat(state: State, seat: int, rng: Any) -> E.ForkDealt:
    """Seat `seat`'s hidden cards dealt again. Its pool is every card of its deck that some
    seat may not see: its hand, its deck, its face-down first Location and the cards of its
    face-down Traps (a seat's cards stay that seat's). The pool is sorted, so nothing of
    where the origin had them survives; the slots the rules tie to a kind of card are filled
    first, each from the pool's cards that may stand there, then the rest is shuffled into
    the hand and the deck, at their sizes. Public: every count, the Traps' places, the
    pending placement's kind (and a discovering Character), the map and the Characters."""
    p = state.players[seat]
    opening = state.opening[seat] if state.opening else None
    trap_slots = [len(t.cards) for t in state.traps if t.owner == seat]
    pool = sorted([*p.hand, *p.deck, *([opening] if opening is not None else []),
                   *(c for t in state.traps if t.owner == seat for c in t.cards)])

    # Each face-down Trap: N copies of one Trap design that needs N (as SetTrap lays them).
    traps: list[str] = []
    for need in trap_slots:
        copies: dict[str, list[str]] = {}
        for card in pool:
            copies.setdefault(design_of(card), []).append(card)
        fits = [c for c in pool if design_of(c) in TRAP_CARDS and TRAP_CARDS[design_of(c)].components == need
                and len(copies[design_of(c)]) >= need]
        design = design_of(_pick(rng, fits))  # each card a chance: as drawn from the shuffled pool
        same = copies[design]
        chosen = sorted(same if len(same) == need else rng.shuffle(same)[:need])
        _take(pool, chosen)
        traps.extend(chosen)

    # The face-down first Location: a Location.
    new_opening = None
    if opening is not None:
        new_opening = _pick(rng, [c for c in pool if _is(c, "location")])
        pool.remove(new_opening)

    # The pending placement, whose cards are still in the hand: a Location that is not in
    # play and, for a new Character, a Character (from the hand, or a withdrawn one) that
    # may enter on it (no duplicate in play, within the HP capacity with it).
    placing: tuple[str, ...] = ()
    held: list[str] = []  # hand cards the placement holds
    if state.pending is not None and seat == state.active:
        kind, character, _ = state.pending
        r = _Reads(state)
        locations = [c for c in pool if _is(c, "location") and design_of(c) not in r.place_designs()]
        if kind == PENDING_DISCOVER:
            pairs = [(character, loc) for loc in locations]
        else:
            entering = sorted([c for c in pool if _is(c, "character")] + [w for w, _ in p.withdrawn])
            pairs = [(ch, loc) for ch in entering for loc in locations
                     if design_of(ch) not in r.fighter_designs()
                     and _printed_hp(ch) <= r.capacity_left() + LOCS[design_of(loc)].capacity
                     and 1 + (ch in pool) <= len(p.hand)]
        character, location = _pick(rng, pairs)
        placing = (character, location)
        held = [c for c in (character, location) if c in pool]
        _take(pool, held)

    # The rest: shuffled into the hand (beside the placement's cards) and the deck. In the
    # opening phase a hand whose first Location is still to choose must hold a Location:
    # shuffled again until it does, as the rules redraw a hand without one.
    free = len(p.hand) - len(held)
    must_hold_location = state.phase == OPENING and opening is None and any(_is(c, "location") for c in pool)
    while True:
        rest = rng.shuffle(pool)
        if not must_hold_location or any(_is(c, "location") for c in rest[:free]):
            break
    hand = tuple(sorted(held + rest[:free]))
    return E.ForkDealt(seat=seat, hand=hand, deck=tuple(rest[free:]), opening=new_opening, traps=tuple(traps),
                       placing=placing)


def redeal(state: State, ctx: Context) -> list[Event]:
    """A fork's new deal (GameSpec.redeal): each seat's hidden cards dealt again from its
    own pool (_deal_seat), seat 0's first. What a spectator sees stays as it was."""
    if not state.players:
        return []
    return [_deal_seat(state, seat, ctx.rng) for seat in range(len(state.players))]


# --- evolve ---------------------------------------------------------------------------


# The hottest copies, each compiled once for its fields (records.replacer's setter): the
# same copies replace_* make, without the keyword arguments.
_set_players = replace_state.setter("players")
_set_fighters = replace_state.setter("fighters")
_set_hand_deck = replace_player.setter("hand", "deck")
_set_grave_hp = replace_player.setter("grave_hp")
_set_hp = replace_fighter.setter("hp")
_set_spent = replace_fighter.setter("actions", "acted")
_set_fresh = replace_fighter.setter("actions", "acted", "ward", "item_used", "ability_used", "transferred")
_set_turn = replace_state.setter("phase", "active", "turn", "started_empty", "moved", "paid_draw", "event_played",
                                 "character_played", "pending", "fighters")


def _put_player(state: State, seat: int, player: Player) -> State:
    players = state.players
    return _set_players(state, players[:seat] + (player,) + players[seat + 1:])


def _with_player(state: State, seat: int, **changes: Any) -> State:
    return _put_player(state, seat, replace_player(state.players[seat], **changes))


def _fighter_index(state: State, card: str) -> int:
    """Where the Character is in state.fighters (the first match, as _fighter); -1 if not in play."""
    for i, f in enumerate(state.fighters):
        if f.card == card:
            return i
    return -1


def _put_fighter(state: State, i: int, fighter: Fighter) -> State:
    fighters = state.fighters
    return _set_fighters(state, fighters[:i] + (fighter,) + fighters[i + 1:])


def _with_fighter(state: State, card: str, **changes: Any) -> State:
    i = _fighter_index(state, card)
    if i < 0:
        return state
    return _put_fighter(state, i, replace_fighter(state.fighters[i], **changes))


def _with_hp(state: State, card: str, hp: int) -> State:
    i = _fighter_index(state, card)
    if i < 0:
        return state
    return _put_fighter(state, i, _set_hp(state.fighters[i], hp))


def _spent(state: State, card: str, cost: int, **changes: Any) -> State:
    i = _fighter_index(state, card)
    if i < 0:
        return state
    f = state.fighters[i]
    actions = max(0, f.actions - cost)
    f = replace_fighter(f, actions=actions, acted=True, **changes) if changes else _set_spent(f, actions, True)
    return _put_fighter(state, i, f)


def _to_discard(state: State, cards: tuple[str, ...]) -> State:
    for card in cards:
        seat = owner_of(card)
        state = _with_player(state, seat, discard=state.players[seat].discard + (card,))
    return state


def _without(cards: tuple[str, ...], gone: tuple[str, ...]) -> tuple[str, ...]:
    return tuple([c for c in cards if c not in gone])


def _ev_deck_shuffled(s: State, e: E.DeckShuffled) -> State:
    return _with_player(s, e.seat, deck=tuple(e.order))


def _ev_hand_redrawn(s: State, e: E.HandRedrawn) -> State:
    return _with_player(s, e.seat, hand=(), deck=tuple(e.order), redraws=s.players[e.seat].redraws + 1)


def _ev_hands_dealt(s: State, e: E.HandsDealt) -> State:
    return replace_state(s, phase=OPENING)


def _ev_cards_drawn(s: State, e: E.CardsDrawn) -> State:
    p = s.players[e.seat]
    return _put_player(s, e.seat, _set_hand_deck(p, p.hand + p.deck[:e.count], p.deck[e.count:]))


def _ev_cards_discarded(s: State, e: E.CardsDiscarded) -> State:
    p = s.players[e.seat]
    gone = tuple(e.cards)
    s = _with_player(s, e.seat, hand=_without(p.hand, gone), withdrawn=tuple(w for w in p.withdrawn if w[0] not in gone))
    return _to_discard(s, gone)


def _ev_opening_chosen(s: State, e: E.OpeningLocationChosen) -> State:
    opening = list(s.opening)
    opening[e.seat] = e.card
    s = _with_player(s, e.seat, hand=_without(s.players[e.seat].hand, (e.card,)))
    return replace_state(s, opening=tuple(opening))


def _ev_opening_revealed(s: State, e: E.OpeningLocationsRevealed) -> State:
    places = tuple(Place(card=c, x=x, y=y) for c, (x, y) in zip(e.cards, OPENING_CELLS))
    return replace_state(s, places=places, opening=(None, None), first=e.first)


def _ev_turn_started(s: State, e: E.TurnStarted) -> State:
    seat = e.seat
    # actions, acted, ward, item_used, ability_used, transferred
    fighters = tuple([_set_fresh(f, ACTIONS_PER_TURN, False, 0, False, False, False) if owner_of(f.card) == seat else f
                      for f in s.fighters])
    # phase, active, turn, started_empty, moved, paid_draw, event_played, character_played, pending, fighters
    return _set_turn(s, MAIN, seat, e.turn, e.started_empty, False, False, False, False, None, fighters)


def _ev_trap_window(s: State, e: E.TrapWindowOpened) -> State:
    return replace_state(s, phase=TRAPS)


def _ev_turn_ended(s: State, e: E.TurnEnded) -> State:
    return s


def _ev_game_ended(s: State, e: E.GameEnded) -> State:
    return replace_state(s, phase=OVER, winners=tuple(e.winners), end_reason=e.reason, pending=None)


def _ev_penalty(s: State, e: E.GraveyardPenalty) -> State:
    p = s.players[e.seat]
    s = _put_player(s, e.seat, _set_grave_hp(p, p.grave_hp + e.amount))
    return replace_state(s, paid_draw=True) if e.reason == "paid_draw" else s


def _ev_pending(s: State, e: E.PlacementPending) -> State:
    return replace_state(s, phase=PLACE, pending=(e.kind, e.character, e.location))


def _ev_location_played(s: State, e: E.LocationPlayed) -> State:
    s = _with_player(s, e.seat, hand=_without(s.players[e.seat].hand, (e.card,)))
    s = replace_state(s, places=s.places + (Place(card=e.card, x=e.x, y=e.y),), phase=MAIN, pending=None)
    if e.character is not None:
        s = _spent(s, e.character, e.cost)
    return s


def _ev_character_played(s: State, e: E.CharacterPlayed) -> State:
    p = s.players[e.seat]
    s = _with_player(s, e.seat, hand=_without(p.hand, (e.card,)),
                     withdrawn=tuple(w for w in p.withdrawn if w[0] != e.card))
    fighter = Fighter(card=e.card, location=e.location, hp=e.hp, actions=e.actions, acted=True)
    return replace_state(s, fighters=s.fighters + (fighter,), character_played=True)


def _ev_moved(s: State, e: E.CharacterMoved) -> State:
    return replace_state(_spent(s, e.character, e.cost, location=e.to), moved=True)


def _ev_attacked(s: State, e: E.Attacked) -> State:
    return _spent(s, e.attacker, e.cost)


def _ev_damaged(s: State, e: E.CharacterDamaged) -> State:
    return _with_hp(s, e.character, e.hp)


def _ev_healed(s: State, e: E.CharacterHealed) -> State:
    return _with_hp(s, e.character, e.hp)


def _remove_fighter(s: State, card: str) -> tuple[State, Fighter | None]:
    f = _fighter(s, card)
    if f is None:
        return s, None
    s = replace_state(s, fighters=tuple(x for x in s.fighters if x.card != card))
    return _to_discard(s, ((f.item,) if f.item else ()) + f.attached), f


def _ev_defeated(s: State, e: E.CharacterDefeated) -> State:
    s, f = _remove_fighter(s, e.character)
    if f is None:
        return s
    p = s.players[e.seat]
    return _with_player(s, e.seat, graveyard=p.graveyard + (e.character,), grave_hp=p.grave_hp + e.hp)


def _ev_withdrawn(s: State, e: E.CharacterWithdrawn) -> State:
    s, f = _remove_fighter(s, e.character)
    if f is None:
        return s
    seat = owner_of(e.character)
    return _with_player(s, seat, withdrawn=s.players[seat].withdrawn + ((e.character, e.hp),))


def _ev_actions(s: State, e: E.ActionsChanged) -> State:
    return _with_fighter(s, e.character, actions=e.actions)


def _ev_warded(s: State, e: E.CharacterWarded) -> State:
    return _with_fighter(s, e.character, ward=e.ward)


def _ev_ability(s: State, e: E.AbilityUsed) -> State:
    return _spent(s, e.character, e.cost, ability_used=True)


def _ev_item_attached(s: State, e: E.ItemAttached) -> State:
    s = _with_player(s, e.seat, hand=_without(s.players[e.seat].hand, (e.item,)))
    return _with_fighter(s, e.character, item=e.item, uses=e.uses, item_used=False)


def _ev_item_used(s: State, e: E.ItemUsed) -> State:
    return _with_fighter(s, e.character, uses=e.uses, item_used=True)


def _ev_item_transferred(s: State, e: E.ItemTransferred) -> State:
    f = _fighter(s, e.character)
    if f is None:
        return s
    s = _spent(s, e.character, e.cost, item=None, uses=0, item_used=False, transferred=True)
    return _with_fighter(s, e.to, item=e.item, uses=f.uses, item_used=f.item_used)


def _ev_item_discarded(s: State, e: E.ItemDiscarded) -> State:
    s = _with_fighter(s, e.character, item=None, uses=0, item_used=False)
    return _to_discard(s, (e.item,))


def _ev_event_played(s: State, e: E.EventPlayed) -> State:
    s = _with_player(s, e.seat, hand=_without(s.players[e.seat].hand, (e.card,)))
    s = replace_state(s, event_played=True)
    if EVENT_CARDS[design_of(e.card)].kind in ("empower", "shield", "snare"):
        f = _fighter(s, e.target)
        if f is not None:
            return _with_fighter(s, e.target, attached=f.attached + (e.card,))
    return _to_discard(s, (e.card,))


def _ev_event_discarded(s: State, e: E.EventDiscarded) -> State:
    f = _fighter(s, e.character)
    if f is not None:
        s = _with_fighter(s, e.character, attached=_without(f.attached, (e.card,)))
    return _to_discard(s, (e.card,))


def _ev_trap_set(s: State, e: E.TrapSet) -> State:
    s = _with_player(s, e.seat, hand=_without(s.players[e.seat].hand, tuple(e.cards)))
    return replace_state(s, traps=s.traps + (Trap(owner=e.seat, design=e.trap, cards=tuple(e.cards), location=e.location),))


def _ev_trap_sprung(s: State, e: E.TrapSprung) -> State:
    cards = tuple(e.cards)
    s = replace_state(s, traps=tuple(t for t in s.traps if t.cards != cards))
    return _to_discard(s, cards)


def _ev_fork_dealt(s: State, e: E.ForkDealt) -> State:
    if not (isinstance(e.seat, int) and 0 <= e.seat < len(s.players)):
        return s  # no such seat: nothing to deal (evolve never raises)
    s = _with_player(s, e.seat, hand=tuple(e.hand), deck=tuple(e.deck))
    if s.opening and e.seat < len(s.opening) and s.opening[e.seat] is not None and e.opening is not None:
        s = replace_state(s, opening=s.opening[:e.seat] + (e.opening,) + s.opening[e.seat + 1:])
    cards, traps = tuple(e.traps), []
    for t in s.traps:
        if t.owner == e.seat and len(cards) >= len(t.cards):
            laid, cards = cards[:len(t.cards)], cards[len(t.cards):]
            design = design_of(laid[0]) if laid and isinstance(laid[0], str) else t.design
            t = Trap(owner=t.owner, design=design, cards=laid, location=t.location)
        traps.append(t)
    s = replace_state(s, traps=tuple(traps))
    if s.pending is not None and s.active == e.seat and len(e.placing) == 2:
        s = replace_state(s, pending=(s.pending[0], e.placing[0], e.placing[1]))
    return s


_EVOLVE: dict[type, Callable[[State, Any], State]] = {
    E.DeckShuffled: _ev_deck_shuffled,
    E.HandRedrawn: _ev_hand_redrawn,
    E.HandsDealt: _ev_hands_dealt,
    E.CardsDrawn: _ev_cards_drawn,
    E.CardsDiscarded: _ev_cards_discarded,
    E.OpeningLocationChosen: _ev_opening_chosen,
    E.OpeningLocationsRevealed: _ev_opening_revealed,
    E.TurnStarted: _ev_turn_started,
    E.TrapWindowOpened: _ev_trap_window,
    E.TurnEnded: _ev_turn_ended,
    E.GameEnded: _ev_game_ended,
    E.GraveyardPenalty: _ev_penalty,
    E.PlacementPending: _ev_pending,
    E.LocationPlayed: _ev_location_played,
    E.CharacterPlayed: _ev_character_played,
    E.CharacterMoved: _ev_moved,
    E.Attacked: _ev_attacked,
    E.CharacterDamaged: _ev_damaged,
    E.CharacterHealed: _ev_healed,
    E.CharacterDefeated: _ev_defeated,
    E.CharacterWithdrawn: _ev_withdrawn,
    E.ActionsChanged: _ev_actions,
    E.CharacterWarded: _ev_warded,
    E.AbilityUsed: _ev_ability,
    E.ItemAttached: _ev_item_attached,
    E.ItemUsed: _ev_item_used,
    E.ItemTransferred: _ev_item_transferred,
    E.ItemDiscarded: _ev_item_discarded,
    E.EventPlayed: _ev_event_played,
    E.EventDiscarded: _ev_event_discarded,
    E.TrapSet: _ev_trap_set,
    E.TrapSprung: _ev_trap_sprung,
    E.ForkDealt: _ev_fork_dealt,
}


def evolve(state: State, event: Event) -> State:
    """Total: an event this game does not know leaves the state as it is."""
    fold = _EVOLVE.get(type(event))
    return fold(state, event) if fold is not None else state


# --- reads for the platform -----------------------------------------------------------


def to_act(state: State) -> tuple[int, ...]:
    if state.phase == OPENING:
        return tuple(s for s in range(SEATS) if state.opening[s] is None)
    if state.phase in (MAIN, PLACE, TRAPS):
        return (state.active,)
    return ()


def is_over(state: State) -> bool:
    return state.phase == OVER


def result(state: State) -> dict[str, Any]:
    graves = [p.grave_hp for p in state.players]
    return {
        "winners": list(state.winners),
        "scores": [max(0, LOSS_AT - g) for g in graves],
        "graveyard": graves,
        "reason": state.end_reason,
        "rounds": (state.turn + 1) // 2,
        "draw": state.phase == OVER and not state.winners,
    }


_B = C.BUILD
_OPENING = _B[C.PlayOpeningLocation]
_PLACE_AT = _B[C.PlaceLocation]
_END = _B[C.EndTurn]
_DRAW = _B[C.DrawCard]
_TRAP = _B[C.SetTrap]
_PLAY_CHARACTER = _B[C.PlayCharacter]
_PLAY_CHARACTER_NEW = _B[C.PlayCharacterOnNewLocation]
_MOVE = _B[C.MoveCharacter]
_PLAY_LOCATION = _B[C.PlayLocation]
_ATTACK = _B[C.Attack]
_USE_ITEM = _B[C.UseItem]
_DISCARD_ITEM = _B[C.DiscardItem]
_TRANSFER = _B[C.TransferItem]
_WITHDRAW = _B[C.Withdraw]
_ABILITY = _B[C.UseAbility]
_PLAY_ITEM = _B[C.PlayItem]
_PLAY_EVENT = _B[C.PlayEvent]


_CARD = attrgetter("card")


def _candidates(state: State, seat: int, r: _Reads) -> dict[type, list[Command]]:
    """Every command worth asking `_check` about, by command class: a superset of the legal
    ones. (Built with the commands' generated constructors: fields in declaration order,
    seat first.)

    Each class's list comes in the order sort_actions gives it, so legal_actions sorts
    nothing: the ids and cells a command holds are taken in their own order (fighters,
    Locations and hand cards by id; cells sorted; with_item False before True), the outer
    field's loop outside the inner one's. Keep it so when adding a candidate; selfplay and
    the legal-actions tests check the order."""
    phase = state.phase
    player = state.players[seat]
    hand = sorted(player.hand)
    places = sorted(state.places, key=_CARD)
    if phase == OPENING:
        return {C.PlayOpeningLocation: [_OPENING(seat, c) for c in hand if CATEGORY[design_of(c)] == "location"]}
    if phase == PLACE:
        return {C.PlaceLocation: [_PLACE_AT(seat, x, y) for x, y in _placement_cells(state)]}
    if phase == TRAPS:
        return {C.EndTurn: [_END(seat)],
                C.SetTrap: [_TRAP(seat, trap, p.card) for trap in _complete_traps(player) for p in places]}
    # Below, a candidate is left out only where its check would surely reject it (rejections
    # are the dear part of legal_actions); the checks still judge every one that is made.
    out: dict[type, list[Command]] = {C.EndTurn: [_END(seat)]}
    traps = _complete_traps(player)
    if traps:
        out[C.SetTrap] = [_TRAP(seat, trap, p.card) for trap in traps for p in places]
    if not state.paid_draw and player.deck:
        out[C.DrawCard] = [_DRAW(seat)]
    mine = []
    theirs = []
    for f in sorted(state.fighters, key=_CARD):
        (mine if owner_of(f.card) == seat else theirs).append(f)
    by_card = r.place
    hand_locations = []
    hand_characters = []
    hand_other = []
    for c in hand:
        category = CATEGORY[design_of(c)]
        if category == "location":
            hand_locations.append(c)
        elif category == "character":
            hand_characters.append(c)
        else:
            hand_other.append((c, category))
    # Characters entering play
    if not state.character_played:
        entering = sorted(hand_characters + [w for w, _ in player.withdrawn])
        if entering:
            out[C.PlayCharacter] = [_PLAY_CHARACTER(seat, card, p.card) for card in entering for p in places]
            if hand_locations:
                out[C.PlayCharacterOnNewLocation] = [_PLAY_CHARACTER_NEW(seat, card, loc)
                                                     for card in entering for loc in hand_locations]
    moves: list[Command] = []
    discoveries: list[Command] = []
    attacks: list[Command] = []
    use_items: list[Command] = []
    discard_items: list[Command] = []
    transfers: list[Command] = []
    withdrawals: list[Command] = []
    abilities: list[Command] = []
    withdraw_cost = state.withdraw_cost
    for f in mine:
        actions = f.actions
        card = f.card
        location = f.location
        here = by_card[location]
        if actions >= COST_MOVE:
            hx = here.x
            hy = here.y
            for p in places:
                if p is not here and -1 <= p.x - hx <= 1 and -1 <= p.y - hy <= 1:
                    moves.append(_MOVE(seat, card, p.card))
        if actions >= COST_PLAY_LOCATION:
            for loc in hand_locations:
                discoveries.append(_PLAY_LOCATION(seat, card, loc))
        if actions >= COST_ATTACK and not _condition(state, location, "no_attack"):
            armed = _weapon_ready(f)
            for t in theirs:
                if t.location == location:
                    attacks.append(_ATTACK(seat, card, t.card, False))
                    if armed:
                        attacks.append(_ATTACK(seat, card, t.card, True))
        if f.item is not None:
            if not f.item_used and ITEMS[design_of(f.item)].kind != "weapon":
                use_items.append(_USE_ITEM(seat, card))
            discard_items.append(_DISCARD_ITEM(seat, card))
            if not f.transferred and actions >= COST_TRANSFER:
                for g in mine:
                    if g.location == location and g is not f and g.item is None:
                        transfers.append(_TRANSFER(seat, card, g.card))
        if actions >= withdraw_cost:
            withdrawals.append(_WITHDRAW(seat, card))
        if not f.ability_used and actions >= COST_ABILITY:
            ability = _active_ability(f)
            if ability is not None:
                if ability.kind == "draw":
                    if player.deck:
                        abilities.append(_ABILITY(seat, card, None))
                elif ability.kind == "heal":
                    for g in mine:
                        if g.location == location:
                            abilities.append(_ABILITY(seat, card, g.card))
                else:
                    for t in theirs:
                        if _adjacent(here, by_card[t.location]) and not _condition(state, t.location, "no_attack"):
                            abilities.append(_ABILITY(seat, card, t.card))
    play_items: list[Command] = []
    play_events: list[Command] = []
    for card, category in hand_other:
        if category == "item":
            for f in mine:
                if not f.acted and f.item is None:
                    play_items.append(_PLAY_ITEM(seat, card, f.card))
        elif category == "event" and not state.event_played:
            target = EVENT_CARDS[design_of(card)].target
            if target == "none":
                play_events.append(_PLAY_EVENT(seat, card, None))
            else:
                for f in (mine if target == "friendly" else theirs):
                    play_events.append(_PLAY_EVENT(seat, card, f.card))
    for cls, group in ((C.MoveCharacter, moves), (C.PlayLocation, discoveries), (C.Attack, attacks),
                       (C.UseItem, use_items), (C.DiscardItem, discard_items), (C.TransferItem, transfers),
                       (C.Withdraw, withdrawals), (C.UseAbility, abilities), (C.PlayItem, play_items),
                       (C.PlayEvent, play_events)):
        if group:
            out[cls] = group
    return out


def legal_actions(state: State, seat: int) -> list[Command]:
    if seat not in to_act(state):
        return []
    r = _Reads(state)
    candidates = _candidates(state, seat, r)
    legal: list[Command] = []
    # The order of sort_actions (Command.sort_key: by TYPE, then field by field): the classes
    # by TYPE here, and each class's candidates come in their order (see _candidates).
    append = legal.append
    for cls in _IN_TYPE_ORDER:
        group = candidates.get(cls)
        if group is None:
            continue
        check = _CHECKS[cls]
        for cmd in group:
            try:
                check(state, cmd, r)
            except Rejection:
                continue
            append(cmd)
    return legal


_IN_TYPE_ORDER = tuple(sorted(C.COMMANDS, key=lambda cls: cls.TYPE))
