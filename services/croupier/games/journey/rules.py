"""The journey as a decider: initial_state, decide, evolve, legal_actions and friends.

decide checks a command with `_check` (the one rule check that legal_actions also uses),
turns it into events, then lets the game move on by itself (`_advance`: next traveller,
the counter, the next Journey card, the next stop) until someone must decide again.
Each event is folded into a working state as it is emitted, so what decide does next is
read from exactly the state that evolve will build.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from croupier.engine.contract import MALFORMED, Command, Context, Emitter, Event, Rejection, Start

from . import commands as C
from . import events as E
from .cards import DECK, FACES, RANK, REFUGE_ACTIONS, SUIT, VALUE
from .state import Setup, State, Traveller, replace, replace_traveller

_replace = replace


# --- setup ------------------------------------------------------------------------------


def initial_state(options: Mapping[str, Any], seats: int) -> State:
    setup = Setup(
        limit=int(options.get("satchel_limit", 5)),
        allies=bool(options.get("allies", False)),
        return_journey=bool(options.get("return_journey", False)),
        companions=bool(options.get("companions", False)),
    )
    return State(seats=seats, setup=setup, travellers=tuple(Traveller() for _ in range(seats)))


# --- small reads of the state (shared by decide, legal_actions, views) -------------------


def limit_of(s: State) -> int:
    lim = s.limit
    if s.companion is not None:
        lim += DECK.companions[s.companion].limit
    return max(0, lim)


def room_used(satchel: tuple[str, ...]) -> int:
    roomless = DECK.roomless
    return sum(1 for c in satchel if c not in roomless)


def has_room(s: State, seat: int) -> bool:
    return room_used(s.travellers[seat].satchel) < limit_of(s)


def burden_with_group(s: State) -> bool:
    return s.companion is not None and DECK.companions[s.companion].blocks_escape


def spendable_companion(s: State) -> str | None:
    if s.companion is not None and DECK.companions[s.companion].spendable:
        return s.companion
    return None


def witnessed(s: State) -> str | None:
    """The top Journey card, seen by the travellers while the Witness walks with them."""
    if s.companion is not None and DECK.companions[s.companion].sees_top and s.journey:
        return s.journey[0]
    return None


def spend_value(s: State, card: str) -> int:
    if card == s.companion:
        return DECK.companion_spend_value
    return VALUE.get(card, 0)


def purse_value(s: State) -> int:
    total = sum(VALUE.get(c, 0) for c in s.purse)
    return total + (DECK.companion_spend_value if spendable_companion(s) else 0)


def cover_means(s: State, seat: int) -> int:
    """All a traveller could put against an attack: card values, a companion, wreckage."""
    t = s.travellers[seat]
    total = sum(VALUE.get(c, 0) for c in t.satchel) + t.wreckage
    return total + (DECK.companion_spend_value if spendable_companion(s) else 0)


def strike_effect(s: State, card: str, rally: int) -> tuple[int, int]:
    """(damage, counter cut) of a strike."""
    if card == DECK.revelation:
        return DECK.revelation_damage, DECK.revelation_cut
    value = rally or VALUE[card]
    cut = DECK.queen_cut if s.allies and RANK[card] == 12 else 0
    return value * DECK.strike_multiplier[SUIT[card]], cut


def cache_at(s: State, place: str | None) -> tuple[str, int, str] | None:
    for entry in s.caches:
        if entry[0] == place:
            return entry
    return None


def ruin_at(s: State, place: str | None) -> tuple[str, str, bool, bool] | None:
    for entry in s.ruins:
        if entry[0] == place:
            return entry
    return None


def _next_seat(s: State, after: int, walking: bool = False) -> int | None:
    for seat in range(after + 1, s.seats):
        t = s.travellers[seat]
        if (t.walking if walking else t.standing):
            return seat
    return None


def standing_seats(s: State) -> tuple[int, ...]:
    return tuple(i for i, t in enumerate(s.travellers) if t.standing)


def to_act(s: State) -> tuple[int, ...]:
    if not s.step or s.phase in ("setup", "over"):
        return ()
    if s.step == "discard":
        return s.queue[:1]
    return (s.acting,)


def is_over(s: State) -> bool:
    return s.phase == "over"


def result(s: State) -> dict[str, Any]:
    won = s.outcome == "won"
    scores = [t.wreckage + t.points for t in s.travellers]
    return {
        "winners": list(range(s.seats)) if won else [],
        "scores": scores,
        "outcome": s.outcome,
        "arrived": s.arrived,
        "standing": [t.standing for t in s.travellers],
        "wreckage": [t.wreckage for t in s.travellers],
        "return_points": [t.points for t in s.travellers],
        "team_score": sum(scores),
        "adversaries_left": sum(1 for c in s.journey if SUIT[c] == "S") + (1 if s.phase == "fight" else 0),
    }


# --- the one rule check -------------------------------------------------------------------


def _no(code: str, message: str) -> None:
    raise Rejection(code, message)


def _base(s: State, cmd: Command, *steps: str) -> None:
    if s.phase == "setup":
        _no("not_started", "the journey has not begun")
    if s.phase == "over":
        _no("game_over", "the journey is over")
    actor = (s.queue[0] if s.queue else -1) if s.step == "discard" else s.acting
    if cmd.seat != actor or not s.step or cmd.seat is None:
        _no("not_your_turn", f"seat {cmd.seat} is not the one to act")
    if s.step not in steps:
        _no("wrong_step", f"{cmd.TYPE} is not possible now ({s.step})")


def _held(s: State, seat: int, card: Any) -> None:
    if card not in s.travellers[seat].satchel:
        _no("card_not_held", f"{card!r} is not in your satchel")


def _check_forage(s: State, cmd: C.Forage) -> None:
    _base(s, cmd, "refuge")
    if not s.supply:
        _no("supply_empty", "the Supply is empty")
    if not has_room(s, cmd.seat):
        _no("satchel_full", "you may forage only below your satchel limit")


def _check_recover(s: State, cmd: C.Recover) -> None:
    _base(s, cmd, "refuge")
    if cmd.card not in s.discard:
        _no("not_in_discard", f"{cmd.card!r} is not in the discard pile")


def _check_cache(s: State, cmd: C.Cache) -> None:
    _base(s, cmd, "refuge")
    _held(s, cmd.seat, cmd.card)
    if cache_at(s, s.current) is not None:
        _no("cache_taken", "a card is already hidden at this refuge")


def _check_move_on(s: State, cmd: C.MoveOn) -> None:
    _base(s, cmd, "refuge")


def _check_strike(s: State, cmd: C.Strike) -> None:
    _base(s, cmd, "fight")
    _held(s, cmd.seat, cmd.card)
    if SUIT.get(cmd.card) not in ("D", "C") or cmd.card == DECK.reckoning:
        _no("not_a_strike_card", f"{cmd.card} cannot strike")
    rally = cmd.rally
    if s.allies and RANK[cmd.card] == 13 and cmd.card != DECK.revelation:
        if isinstance(rally, bool) or not isinstance(rally, int) or not DECK.rally_min <= rally <= DECK.rally_max:
            _no("invalid_rally", f"an allied King rallies as a rank {DECK.rally_min}-{DECK.rally_max}")
    elif rally != 0 or isinstance(rally, bool):
        _no("invalid_rally", "only an allied King may rally")


def _escape_check(s: State) -> None:
    if s.current == DECK.nemesis:
        _no("nemesis_no_escape", "there is no fleeing or hiding from the Fighting Machine")
    if burden_with_group(s):
        _no("burden_blocks_escape", "with the Burden along the group can neither flee nor hide")


def _check_regroup(s: State, cmd: C.Regroup) -> None:
    _base(s, cmd, "fight")
    _held(s, cmd.seat, cmd.card)
    if SUIT.get(cmd.card) != "C" or cmd.card == DECK.reckoning:
        _no("not_a_club", "regroup plays a club (2 to King)")
    if not s.discard:
        _no("discard_empty", "there is no discard to take")


def _check_take_back(s: State, cmd: C.TakeBack) -> None:
    _base(s, cmd, "take")
    if cmd.card not in s.discard or cmd.card == s.played:
        _no("not_in_discard", f"{cmd.card!r} is not another card of the discard pile")


def _check_retrieve(s: State, cmd: C.Retrieve) -> None:
    _base(s, cmd, "retrieve")
    if cmd.card not in s.discard or cmd.card == s.played:
        _no("not_in_discard", f"{cmd.card!r} is not another card of the discard pile")
    if SUIT.get(cmd.card) != SUIT.get(s.played or ""):
        _no("not_same_suit", "a Jack retrieves a card of its own suit")


def _check_flee(s: State, cmd: C.Flee) -> None:
    _base(s, cmd, "fight")
    _escape_check(s)
    _held(s, cmd.seat, cmd.card)


def _check_hide(s: State, cmd: C.Hide) -> None:
    _base(s, cmd, "fight")
    _escape_check(s)
    if s.hide_blocked:
        _no("hiding_over", "a reveal failed: no more hiding in this fight")
    if not s.supply:
        _no("supply_empty", "the Supply is empty")
    if not has_room(s, cmd.seat):
        _no("satchel_full", "you may hide only below your satchel limit")


def _check_reckoning(s: State, cmd: C.PlayReckoning) -> None:
    _base(s, cmd, "fight")
    if DECK.reckoning not in s.travellers[cmd.seat].satchel:
        _no("no_reckoning", "you do not hold Terrestrial Bacteria")
    if s.reckoning_used:
        _no("reckoning_used", "Terrestrial Bacteria works once per fight")


def has_fight_action(s: State, seat: int) -> bool:
    """Whether a strike, a regroup, a flight or a hide is open to `seat` (Brace is not)."""
    for cmd in (*_strike_candidates(s, seat), *_fight_candidates(s, seat)):
        try:
            _CHECKS[type(cmd)](s, cmd)
            return True
        except Rejection:
            continue
    return False


def _check_brace(s: State, cmd: C.Brace) -> None:
    _base(s, cmd, "fight")
    if has_fight_action(s, cmd.seat):
        _no("must_act", "you can strike, regroup, flee or hide: bracing is only for the empty-handed")


def _check_shed_burden(s: State, cmd: C.ShedBurden) -> None:
    _base(s, cmd, "fight")
    if not burden_with_group(s):
        _no("no_burden", "the Burden is not with the group")
    if s.current == DECK.nemesis:
        _no("nemesis_no_escape", "the Burden cannot be left to the Fighting Machine")
    extra = cmd.extra
    if isinstance(extra, bool) or not isinstance(extra, int) or not 0 <= extra < s.seats \
            or not s.travellers[extra].standing:
        _no("invalid_payer", f"{extra!r} is not a standing traveller")
    if any(not s.travellers[i].satchel for i in standing_seats(s)) or len(s.travellers[extra].satchel) < 2:
        _no("cannot_pay", "every traveller must discard a card and the extra one a second")


def _check_discard(s: State, cmd: C.Discard) -> None:
    _base(s, cmd, "discard")
    _held(s, cmd.seat, cmd.card)


def _check_deliver(s: State, cmd: C.Deliver) -> None:
    _base(s, cmd, "refuge", "fight", "stop")
    if not burden_with_group(s):
        _no("no_burden", "the Burden is not with the group")
    pile = s.purse if s.phase == "return" else s.travellers[cmd.seat].satchel
    if DECK.deliverance not in pile:
        _no("no_deliverance", f"you do not hold the Deliverance ({DECK.deliverance})")


def _check_cover(s: State, cmd: C.Cover) -> None:
    _base(s, cmd, "cover")
    if cmd.card != spendable_companion(s) or cmd.card is None:
        _held(s, cmd.seat, cmd.card)
    if spend_value(s, cmd.card) <= 0:
        _no("worthless_card", f"{cmd.card} counts 0")


def _check_use_wreckage(s: State, cmd: C.UseWreckage) -> None:
    _base(s, cmd, "cover")
    if s.paid + s.travellers[cmd.seat].wreckage < s.due:
        _no("wreckage_short", "your wreckage does not cover the rest")


def _check_shed_joker(s: State, cmd: C.ShedJoker) -> None:
    _base(s, cmd, "stop")
    if DECK.joker not in s.purse:
        _no("no_joker", "the Joker is not in the purse")
    if cmd.card not in s.purse:
        _no("card_not_held", f"{cmd.card!r} is not in the purse")
    if cmd.card not in FACES:
        _no("not_a_face_card", "the Joker leaves only with a face card")


def _check_strip_ruin(s: State, cmd: C.StripRuin) -> None:
    _base(s, cmd, "stop")
    ruin = ruin_at(s, s.place)
    if ruin is None or not ruin[2] or ruin[3]:
        _no("no_ruin", "there is no Ruin to strip here")
    if purse_value(s) < (VALUE[ruin[1]] + 1) // 2:
        _no("purse_short", "the purse cannot pay for the Ruin")


def _check_proceed(s: State, cmd: C.Proceed) -> None:
    _base(s, cmd, "stop")


def _check_pay(s: State, cmd: C.Pay) -> None:
    _base(s, cmd, "pay")
    if (cmd.card is None or cmd.card != spendable_companion(s)) and cmd.card not in s.purse:
        _no("card_not_held", f"{cmd.card!r} is not in the purse")
    if spend_value(s, cmd.card) <= 0:
        _no("worthless_card", f"{cmd.card} counts 0")


_CHECKS = {
    C.Forage: _check_forage, C.Recover: _check_recover, C.Cache: _check_cache, C.MoveOn: _check_move_on,
    C.Strike: _check_strike, C.Regroup: _check_regroup, C.TakeBack: _check_take_back,
    C.Retrieve: _check_retrieve, C.Flee: _check_flee, C.Hide: _check_hide, C.PlayReckoning: _check_reckoning,
    C.Brace: _check_brace, C.ShedBurden: _check_shed_burden, C.Discard: _check_discard, C.Deliver: _check_deliver,
    C.Cover: _check_cover, C.UseWreckage: _check_use_wreckage, C.ShedJoker: _check_shed_joker,
    C.StripRuin: _check_strip_ruin, C.Proceed: _check_proceed, C.Pay: _check_pay,
}


def _check(s: State, cmd: Command) -> None:
    check = _CHECKS.get(type(cmd))
    if check is None:
        raise Rejection("unknown_command", f"{cmd.TYPE or type(cmd).__name__} is not a journey command", MALFORMED)
    check(s, cmd)


# --- legal actions: candidates from the state, kept when the check accepts them -----------
#
# Candidates are generated in the order of `sort_actions` (command type, then card, then
# rally): sorting the actions afterwards was most of the cost of legal_actions. Each kind
# of command is offered only for cards that could possibly suit it (a superset of the
# legal ones); `_check` decides.


_MADE: dict[tuple, Command] = {}  # commands are immutable: build each (type, seat, card) once


def _card(cls: type, seat: int, card: str) -> Command:
    key = (cls, seat, card)
    cmd = _MADE.get(key)
    if cmd is None:
        cmd = _MADE[key] = cls(seat=seat, card=card)
    return cmd


def _plain(cls: type, seat: int) -> Command:
    key = (cls, seat, None)
    cmd = _MADE.get(key)
    if cmd is None:
        cmd = _MADE[key] = cls(seat=seat)
    return cmd


def _rally(seat: int, card: str, rally: int) -> Command:
    key = (C.Strike, seat, card, rally)
    cmd = _MADE.get(key)
    if cmd is None:
        cmd = _MADE[key] = C.Strike(seat=seat, card=card, rally=rally)
    return cmd


_sorted = sorted


def _escape_candidates(s: State, seat: int, satchel: list[str]) -> list[Command]:
    """Flee with each card, then Hide (when an escape could be open at all)."""
    if s.current == DECK.nemesis or burden_with_group(s):
        return []
    out = [_card(C.Flee, seat, c) for c in satchel]
    out.append(_plain(C.Hide, seat))
    return out


def _regroup_candidates(seat: int, satchel: list[str]) -> list[Command]:
    return [_card(C.Regroup, seat, c) for c in satchel if SUIT[c] == "C"]


def _fight_candidates(s: State, seat: int) -> list[Command]:
    satchel = _sorted(s.travellers[seat].satchel)
    return _escape_candidates(s, seat, satchel) + _regroup_candidates(seat, satchel)


def _strike_candidates(s: State, seat: int, satchel: list[str] | None = None) -> list[Command]:
    out: list[Command] = []
    allies = s.allies
    for card in _sorted(s.travellers[seat].satchel) if satchel is None else satchel:
        if SUIT[card] not in ("D", "C"):
            continue
        if allies and RANK[card] == 13:
            out.extend(_rally(seat, card, r) for r in range(DECK.rally_min, DECK.rally_max + 1))
        else:
            out.append(_card(C.Strike, seat, card))
    return out


def _candidates(s: State, seat: int) -> list[Command]:
    step = s.step
    burden = burden_with_group(s)
    if step == "refuge":
        out: list[Command] = []
        if cache_at(s, s.current) is None:
            out.extend(_card(C.Cache, seat, c) for c in _sorted(s.travellers[seat].satchel))
        if burden:
            out.append(_plain(C.Deliver, seat))
        if s.supply:
            out.append(_plain(C.Forage, seat))
        out.append(_plain(C.MoveOn, seat))
        out.extend(_card(C.Recover, seat, c) for c in _sorted(s.discard))
        return out
    if step == "fight":
        satchel = _sorted(s.travellers[seat].satchel)
        out = [_plain(C.Brace, seat)]
        if burden:
            out.append(_plain(C.Deliver, seat))
        out += _escape_candidates(s, seat, satchel)
        if DECK.reckoning in satchel:
            out.append(_plain(C.PlayReckoning, seat))
        out += _regroup_candidates(seat, satchel)
        if burden:
            out.extend(C.ShedBurden(seat=seat, extra=p) for p in range(s.seats))
        out += _strike_candidates(s, seat, satchel)
        return out
    if step == "take":
        return [_card(C.TakeBack, seat, c) for c in _sorted(s.discard)]
    if step == "retrieve":
        return [_card(C.Retrieve, seat, c) for c in _sorted(s.discard)]
    if step == "cover":
        cards = [*s.travellers[seat].satchel, *([s.companion] if s.companion else [])]
        return [*(_card(C.Cover, seat, c) for c in _sorted(cards) if spend_value(s, c) > 0),
                _plain(C.UseWreckage, seat)]
    if step == "discard":
        return [_card(C.Discard, seat, c) for c in _sorted(s.travellers[seat].satchel)]
    if step == "stop":
        out = [_plain(C.Deliver, seat)] if burden else []
        out.append(_plain(C.Proceed, seat))
        if DECK.joker in s.purse:
            out.extend(_card(C.ShedJoker, seat, c) for c in _sorted(s.purse) if c in FACES)
        out.append(_plain(C.StripRuin, seat))
        return out
    if step == "pay":
        cards = [*s.purse, *([s.companion] if s.companion else [])]
        return [_card(C.Pay, seat, c) for c in _sorted(cards) if spend_value(s, c) > 0]
    return []


def legal_actions(s: State, seat: int) -> list[Command]:
    """Every command `_check` accepts for `seat` now, in the order of `sort_actions`."""
    if seat not in to_act(s):
        return []
    out = []
    for cmd in _candidates(s, seat):
        try:
            _CHECKS[type(cmd)](s, cmd)
        except Rejection:
            continue
        out.append(cmd)
    return out


# --- decide -------------------------------------------------------------------------------


def _Builder(state: State, ctx: Context | None = None) -> Emitter:
    """The events of one decide, each seen by the rules after it (engine.Emitter)."""
    return Emitter(state, evolve, ctx)


def decide(cmd: Command, s: State, ctx: Context) -> list[Event]:
    if isinstance(cmd, Start):
        if s.phase != "setup":
            _no("already_started", "the journey has begun")
        b = _Builder(s)
        _start(b, ctx.rng)
        _advance(b, ctx.rng)
        return b.events
    _check(s, cmd)
    b = _Builder(s)
    _HANDLERS[type(cmd)](b, cmd, ctx.rng)
    _advance(b, ctx.rng)
    return b.events


def _start(b: _Builder, rng: Any) -> None:
    journey = tuple(rng.shuffle(list(DECK.journey)))
    supply = tuple(rng.shuffle(list(DECK.supply)))
    b.emit(E.DecksShuffled(journey=journey, supply=supply))
    for seat in range(b.state.seats):
        _forage_full(b, seat)


def _forage_full(b: _Builder, seat: int) -> None:
    while b.state.supply and has_room(b.state, seat):
        b.emit(E.Foraged(seat=seat, card=b.state.supply[0]))


def _end_refuge_turn_if_spent(b: _Builder, seat: int) -> None:
    if b.state.actions_left <= 0:
        b.emit(E.RefugeLeft(seat=seat))


def _do_forage(b: _Builder, cmd: C.Forage, rng: Any) -> None:
    b.emit(E.Foraged(seat=cmd.seat, card=b.state.supply[0]))
    _end_refuge_turn_if_spent(b, cmd.seat)


def _do_recover(b: _Builder, cmd: C.Recover, rng: Any) -> None:
    b.emit(E.Recovered(seat=cmd.seat, card=cmd.card))
    _end_refuge_turn_if_spent(b, cmd.seat)


def _do_cache(b: _Builder, cmd: C.Cache, rng: Any) -> None:
    b.emit(E.Cached(seat=cmd.seat, card=cmd.card, place=b.state.current))
    b.emit(E.RefugeLeft(seat=cmd.seat))


def _do_move_on(b: _Builder, cmd: C.MoveOn, rng: Any) -> None:
    b.emit(E.RefugeLeft(seat=cmd.seat))


def _do_strike(b: _Builder, cmd: C.Strike, rng: Any) -> None:
    s = b.state
    damage, cut = strike_effect(s, cmd.card, cmd.rally)
    before, adversary = s.health, s.current
    b.emit(E.Struck(seat=cmd.seat, card=cmd.card, damage=damage, cut=cut, rally=cmd.rally))
    if damage >= before:
        wreckage = s.attack if damage == before else 0
        b.emit(E.AdversaryDefeated(card=adversary, seat=cmd.seat, wreckage=wreckage))
    if s.allies and RANK[cmd.card] == 11:
        suit = SUIT[cmd.card]
        if any(SUIT[c] == suit and c != cmd.card for c in b.state.discard):
            b.emit(E.RetrievalOffered(seat=cmd.seat, card=cmd.card))


def _do_regroup(b: _Builder, cmd: C.Regroup, rng: Any) -> None:
    b.emit(E.Regrouped(seat=cmd.seat, card=cmd.card))


def _do_take_back(b: _Builder, cmd: C.TakeBack, rng: Any) -> None:
    b.emit(E.RegroupTaken(seat=cmd.seat, card=cmd.card))


def _do_retrieve(b: _Builder, cmd: C.Retrieve, rng: Any) -> None:
    b.emit(E.Retrieved(seat=cmd.seat, card=cmd.card))


def _do_flee(b: _Builder, cmd: C.Flee, rng: Any) -> None:
    position = rng.below(len(b.state.journey) + 1)
    b.emit(E.Fled(seat=cmd.seat, card=cmd.card, adversary=b.state.current, position=position))


def _do_hide(b: _Builder, cmd: C.Hide, rng: Any) -> None:
    s = b.state
    card = s.supply[0]
    kept = RANK[card] < RANK[s.current] and RANK[card] < s.last_reveal
    b.emit(E.Hid(seat=cmd.seat, card=card, kept=kept))
    if not kept:
        _strike_traveller(b, cmd.seat, s.attack, "ambush")


def _strike_traveller(b: _Builder, seat: int, due: int, reason: str) -> None:
    if cover_means(b.state, seat) >= due:
        b.emit(E.CoverDemanded(seat=seat, due=due, reason=reason))
    else:
        b.emit(E.TravellerFell(seat=seat))


def _do_reckoning(b: _Builder, cmd: C.PlayReckoning, rng: Any) -> None:
    b.emit(E.ReckoningPlayed(seat=cmd.seat, health=(b.state.health + 1) // 2))


def _do_brace(b: _Builder, cmd: C.Brace, rng: Any) -> None:
    b.emit(E.Braced(seat=cmd.seat))


def _do_shed_burden(b: _Builder, cmd: C.ShedBurden, rng: Any) -> None:
    b.emit(E.BurdenShedBegun(seat=cmd.seat, payers=standing_seats(b.state) + (cmd.extra,)))


def _companion_leaves(b: _Builder, reason: str) -> None:
    card = b.state.companion
    cache = cache_at(b.state, card)
    b.emit(E.CompanionLeft(card=card, reason=reason, lost=cache[2] if cache else None))


def _do_discard(b: _Builder, cmd: C.Discard, rng: Any) -> None:
    b.emit(E.CardDiscarded(seat=cmd.seat, card=cmd.card))
    if not b.state.queue:
        _companion_leaves(b, "shed")


def _do_deliver(b: _Builder, cmd: C.Deliver, rng: Any) -> None:
    b.emit(E.DeliveranceDiscarded(seat=cmd.seat, card=DECK.deliverance))
    _companion_leaves(b, "delivered")


def _do_cover(b: _Builder, cmd: C.Cover, rng: Any) -> None:
    companion = cmd.card == b.state.companion
    b.emit(E.CoverCardPaid(seat=cmd.seat, card=cmd.card, value=spend_value(b.state, cmd.card)))
    if companion:
        _companion_leaves(b, "spent")
    s = b.state
    if s.paid >= s.due:
        b.emit(E.Covered(seat=cmd.seat, wreckage=0, reason=s.reason))


def _do_use_wreckage(b: _Builder, cmd: C.UseWreckage, rng: Any) -> None:
    s = b.state
    b.emit(E.Covered(seat=cmd.seat, wreckage=s.due - s.paid, reason=s.reason))


def _do_shed_joker(b: _Builder, cmd: C.ShedJoker, rng: Any) -> None:
    b.emit(E.JokerShed(seat=cmd.seat, card=cmd.card))


def _do_strip_ruin(b: _Builder, cmd: C.StripRuin, rng: Any) -> None:
    ruin = ruin_at(b.state, b.state.place)
    b.emit(E.RuinStripBegun(seat=cmd.seat, place=b.state.place, due=(VALUE[ruin[1]] + 1) // 2))


def _do_proceed(b: _Builder, cmd: C.Proceed, rng: Any) -> None:
    b.emit(E.TollsBegan(place=b.state.place))


def _do_pay(b: _Builder, cmd: C.Pay, rng: Any) -> None:
    companion = cmd.card == b.state.companion
    b.emit(E.PurseCardPaid(seat=cmd.seat, card=cmd.card, value=spend_value(b.state, cmd.card)))
    if companion:
        _companion_leaves(b, "spent")
    s = b.state
    if s.paid < s.due:
        return
    if s.reason == "ruin":
        ruin = ruin_at(s, s.place)
        b.emit(E.RuinSalvaged(seat=cmd.seat, place=s.place, card=ruin[1], points=VALUE[ruin[1]]))
    else:
        b.emit(E.TollPaid(seat=cmd.seat, place=s.place, points=RANK[s.place]))


_HANDLERS = {
    C.Forage: _do_forage, C.Recover: _do_recover, C.Cache: _do_cache, C.MoveOn: _do_move_on,
    C.Strike: _do_strike, C.Regroup: _do_regroup, C.TakeBack: _do_take_back, C.Retrieve: _do_retrieve,
    C.Flee: _do_flee, C.Hide: _do_hide, C.PlayReckoning: _do_reckoning, C.Brace: _do_brace,
    C.ShedBurden: _do_shed_burden, C.Discard: _do_discard, C.Deliver: _do_deliver, C.Cover: _do_cover,
    C.UseWreckage: _do_use_wreckage, C.ShedJoker: _do_shed_joker, C.StripRuin: _do_strip_ruin,
    C.Proceed: _do_proceed, C.Pay: _do_pay,
}


# --- the game moving on by itself -----------------------------------------------------------


def _advance(b: _Builder, rng: Any) -> None:
    while True:
        s = b.state
        if s.step or s.phase in ("setup", "over"):
            return
        if s.phase != "return" and not any(t.standing for t in s.travellers):
            b.emit(E.GameEnded(won=False, reason="every traveller has fallen"))
            return
        if s.phase == "travel":
            _travel(b, rng)
        elif s.phase == "refuge":
            nxt = _next_seat(s, s.acting)
            if nxt is not None:
                b.emit(E.RefugeTurnBegan(seat=nxt))
            else:
                card = s.current
                b.emit(E.RefugeEnded(card=card, place=DECK.places[len(s.names) % len(DECK.places)]))
                if s.companions and card in DECK.companions and s.companion is None:
                    b.emit(E.CompanionJoined(card=card))
        elif s.phase == "fight":
            _fight_moves_on(b)
        elif s.phase == "return":
            _return_moves_on(b, rng)
        else:  # pragma: no cover - every phase is handled above
            return


def _travel(b: _Builder, rng: Any) -> None:
    s = b.state
    if not s.journey:
        b.emit(E.DestinationReached(card=DECK.destination))
        if s.return_journey:
            _begin_return(b, rng)
        else:
            b.emit(E.GameEnded(won=True, reason="arrived at Primrose Hill"))
        return
    card = s.journey[0]
    if SUIT[card] == "H":
        b.emit(E.RefugeReached(card=card, actions=REFUGE_ACTIONS[card]))
        return
    if card == DECK.nemesis:
        extra = len(standing_seats(s)) - 1
        health, attack = DECK.nemesis_health + DECK.nemesis_health_per_extra * extra, DECK.nemesis_attack
    else:
        health, attack = 2 * RANK[card], RANK[card]
    b.emit(E.AdversaryRevealed(card=card, health=health, attack=attack))
    b.emit(E.RoundBegan(round=1))


def _fight_moves_on(b: _Builder) -> None:
    s = b.state
    nxt = _next_seat(s, s.acting)
    if s.stage == "turns":
        if nxt is not None:
            b.emit(E.FightTurnBegan(seat=nxt))
        elif s.hid:
            b.emit(E.RoundBegan(round=s.round + 1))
        else:
            b.emit(E.CounterStruck(attack=max(0, s.attack - s.cut)))
    elif nxt is None or s.due <= 0:
        b.emit(E.RoundBegan(round=s.round + 1))
    else:
        _strike_traveller(b, nxt, s.due, "counter")


def _begin_return(b: _Builder, rng: Any) -> None:
    s = b.state
    spendable = (DECK.reckoning, DECK.revelation)
    held = {c for t in s.travellers for c in t.satchel} | {c for _, _, c in s.caches}
    removed = tuple(c for c in spendable if c in held or c in s.discard or c in s.supply)
    pool = [c for c in s.supply + s.discard if c not in spendable] + [DECK.joker]
    b.emit(E.ReturnBegan(removed=removed, supply=tuple(rng.shuffle(pool))))
    walkers = standing_seats(b.state)
    for seat in walkers:
        _forage_full(b, seat)
    purse = tuple(c for seat in walkers for c in b.state.travellers[seat].satchel)
    b.emit(E.PurseFormed(purse=purse, walkers=walkers))
    s = b.state
    if s.wrecks and s.stops:
        wrecks = rng.shuffle(list(s.wrecks))
        b.emit(E.RuinsSeeded(ruins=tuple(zip(s.stops, wrecks))))


def _return_moves_on(b: _Builder, rng: Any) -> None:
    s = b.state
    if s.stage == "tolls":
        nxt = _next_seat(s, s.acting, walking=True)
        if nxt is not None:
            due = RANK[s.place]
            if purse_value(s) >= due:
                b.emit(E.TollDemanded(seat=nxt, place=s.place, due=due))
            else:
                b.emit(E.TravellerStopped(seat=nxt, place=s.place))
            return
    walkers = tuple(i for i, t in enumerate(s.travellers) if t.walking)
    if not s.stops or not walkers:
        b.emit(E.ReturnEnded(home=walkers))
        b.emit(E.GameEnded(won=True, reason="arrived at Primrose Hill and walked home" if walkers
                           else "arrived at Primrose Hill"))
        return
    place = s.stops[0]
    cache = cache_at(s, place)
    b.emit(E.StopReached(place=place, cache=cache[2] if cache else None))
    ruin = ruin_at(b.state, place)
    if ruin is not None and not ruin[2]:
        b.emit(E.RuinRevealed(place=place, card=ruin[1]))
    purse = b.state.purse
    if DECK.joker in purse:
        others = [c for c in purse if c != DECK.joker]
        if others:
            b.emit(E.JokerStole(card=others[rng.below(len(others))]))


# --- forks: the hidden cards dealt again -------------------------------------------------
#
# A fork of a journey deals again, with its own randomness, every card some traveller may not
# see at its step (docs/games/journey.md, "Forks"). Two pools, kept apart as the rules keep
# them: the hearts and spades of the Journey (and, on the way home, the face-down Ruins among
# themselves), and the diamonds and clubs of the Supply, the satchels and the caches (the
# Joker, once in the Supply, only there). Each pool is sorted before it is shuffled, and every
# choice below reads only what every traveller knows (the counts, the limit, a pending cover),
# so the deal says nothing of where the origin had its hidden cards.

# Random hands tried for a traveller who must cover an attack now, before the most valuable
# hand is taken (the origin's own hand shows one that covers exists).
COVER_TRIES = 24


def _cover_need(s: State, seat: int) -> int:
    """What the satchel of the traveller covering now must be worth: what `_strike_traveller`
    checked when the cover was asked, less what has been paid since."""
    companion = DECK.companion_spend_value if spendable_companion(s) else 0
    return s.due - s.paid - s.travellers[seat].wreckage - companion


def _cover_hand(s: State, pool: list[str], seat: int, short: list[int], rng: Any) -> list[str]:
    """A satchel for the traveller covering now, from `pool` (sorted): a random one that can
    still cover, holding the free Aces its size asks for and leaving those the other satchels
    ask for; else the most valuable."""
    size, need = len(s.travellers[seat].satchel), _cover_need(s, seat)
    roomless = DECK.roomless
    aces = sum(1 for c in pool if c in roomless)
    least = min(short[seat], aces)
    most = max(least, aces - sum(short) + short[seat])
    for _ in range(COVER_TRIES):
        hand = rng.shuffle(pool)[:size]
        if sum(VALUE[c] for c in hand) >= need and least <= sum(1 for c in hand if c in roomless) <= most:
            return hand
    return sorted(pool, key=lambda c: (-VALUE[c], c))[:size]


def _deal_private(s: State, pool: list[str], rng: Any) -> tuple[list[list[str]], list[str], list[str]]:
    """The diamonds and clubs hidden from some traveller (`pool`, sorted), dealt into the
    satchels, the caches and the Supply, each keeping its size: (satchels, caches, supply)."""
    counts = [len(t.satchel) for t in s.travellers]
    lim = limit_of(s)
    # A satchel holding more cards than the limit holds free Aces (A-clubs, A-diamonds) for the
    # difference, as every traveller can tell from its count: the deal keeps it so, and no
    # satchel goes over the limit. (After the limit dropped, a satchel may have been over it
    # with no Ace: the deal then still gives it the Aces there are, in seat order.)
    short = [max(0, n - lim) for n in counts]
    satchels: list[list[str] | None] = [None] * s.seats
    rest = list(pool)
    if s.step == "cover" and 0 <= s.acting < s.seats:
        seat = s.acting
        hand = _cover_hand(s, rest, seat, short, rng)
        satchels[seat] = hand
        taken = set(hand)
        rest = [c for c in rest if c not in taken]
    aces = [c for c in rest if c in DECK.roomless]
    if len(aces) > 1 and any(short[i] and satchels[i] is None for i in range(s.seats)):
        aces = rng.shuffle(aces)
    forced: list[list[str]] = [[] for _ in range(s.seats)]
    for i in range(s.seats):
        if satchels[i] is None and short[i]:
            forced[i], aces = aces[:short[i]], aces[short[i]:]
    placed = {c for hand in forced for c in hand}
    deck = [c for c in rest if c not in placed]
    if len(deck) > 1:
        deck = rng.shuffle(deck)
    for i in range(s.seats):
        if satchels[i] is None:
            free = counts[i] - len(forced[i])
            satchels[i], deck = forced[i] + deck[:free], deck[free:]
    caches = deck[:len(s.caches)]
    return [list(hand or ()) for hand in satchels], caches, deck[len(s.caches):]


def redeal(s: State, ctx: Context) -> list[Event]:
    """A fork's new deal (GameSpec.redeal): every card some traveller may not see now dealt
    again with ctx.rng, what a spectator sees unchanged."""
    rng = ctx.rng

    def shuffled(cards: list[str]) -> list[str]:
        cards = sorted(cards)
        return rng.shuffle(cards) if len(cards) > 1 else cards

    # The Journey: every card but the top one while the Witness shows it to the travellers.
    top = witnessed(s)
    journey = ((top,) if top is not None else ()) + tuple(shuffled(list(s.journey[1 if top else 0:])))
    # Diamonds and clubs: the Supply, and the satchels and caches when another traveller sits
    # at the table (alone, a traveller sees their own).
    joker = DECK.joker in s.supply
    pool = [c for c in s.supply if c != DECK.joker]
    if s.seats > 1:
        pool += [c for t in s.travellers for c in t.satchel] + [c for _, _, c in s.caches]
        satchels, caches, supply = _deal_private(s, sorted(pool), rng)
    else:
        satchels = [list(t.satchel) for t in s.travellers]
        caches = [c for _, _, c in s.caches]
        supply = shuffled(pool)
    if joker:  # the Joker, set aside with the Supply on the way home, stays in it
        supply.insert(rng.below(len(supply) + 1), DECK.joker)
    # The face-down Ruins among themselves (their cards are known: the wrecks not defeated).
    down = [i for i, ruin in enumerate(s.ruins) if not ruin[2]]
    ruins = [ruin[1] for ruin in s.ruins]
    for i, card in zip(down, shuffled([ruins[i] for i in down])):
        ruins[i] = card
    return [E.ForkDealt(journey=journey, supply=tuple(supply), satchels=tuple(tuple(h) for h in satchels),
                        caches=tuple(caches), ruins=tuple(ruins))]


# --- evolve -------------------------------------------------------------------------------


def _without(pile: tuple[str, ...], card: str | None) -> tuple[str, ...]:
    if card in pile:
        i = pile.index(card)
        return pile[:i] + pile[i + 1:]
    return pile


def _with_traveller(s: State, seat: int, **changes: Any) -> tuple[Traveller, ...]:
    if not 0 <= seat < len(s.travellers):
        return s.travellers
    ts = list(s.travellers)
    ts[seat] = replace_traveller(ts[seat], **changes)
    return tuple(ts)


def _satchel(s: State, seat: int) -> tuple[str, ...]:
    return s.travellers[seat].satchel if 0 <= seat < len(s.travellers) else ()


def _ev_shuffled(s: State, e: E.DecksShuffled) -> State:
    return _replace(s, phase="travel", journey=tuple(e.journey), supply=tuple(e.supply))


def _ev_foraged(s: State, e: E.Foraged) -> State:
    travellers = _with_traveller(s, e.seat, satchel=_satchel(s, e.seat) + (e.card,))
    if s.step == "refuge":
        return _replace(s, supply=_without(s.supply, e.card), actions_left=s.actions_left - 1, travellers=travellers)
    return _replace(s, supply=_without(s.supply, e.card), travellers=travellers)


def _ev_refuge_reached(s: State, e: E.RefugeReached) -> State:
    return _replace(s, phase="refuge", journey=_without(s.journey, e.card), current=e.card,
                    refuge_actions=e.actions, acting=-1, step="")


def _ev_refuge_turn(s: State, e: E.RefugeTurnBegan) -> State:
    return _replace(s, step="refuge", acting=e.seat, actions_left=s.refuge_actions)


def _ev_recovered(s: State, e: E.Recovered) -> State:
    return _replace(s, discard=_without(s.discard, e.card), supply=s.supply + (e.card,),
                    actions_left=s.actions_left - 1)


def _ev_cached(s: State, e: E.Cached) -> State:
    return _replace(s, caches=s.caches + ((e.place, e.seat, e.card),),
                    travellers=_with_traveller(s, e.seat, satchel=_without(_satchel(s, e.seat), e.card)))


def _ev_refuge_left(s: State, e: E.RefugeLeft) -> State:
    return _replace(s, step="", actions_left=0)


def _ev_refuge_ended(s: State, e: E.RefugeEnded) -> State:
    return _replace(s, phase="travel", route=s.route + (e.card,), names=s.names + ((e.card, e.place),),
                    current=None, acting=-1, step="", refuge_actions=0)


def _ev_companion_joined(s: State, e: E.CompanionJoined) -> State:
    return _replace(s, companion=e.card)


def _ev_companion_left(s: State, e: E.CompanionLeft) -> State:
    return _replace(s, companion=None if s.companion == e.card else s.companion,
                    route=_without(s.route, e.card), stops=_without(s.stops, e.card),
                    caches=tuple(c for c in s.caches if c[0] != e.card))


def _ev_adversary(s: State, e: E.AdversaryRevealed) -> State:
    return _replace(s, phase="fight", journey=_without(s.journey, e.card), current=e.card, health=e.health,
                    attack=e.attack, round=0, last_reveal=14, hide_blocked=False, reckoning_used=False,
                    step="", stage="")


def _ev_round(s: State, e: E.RoundBegan) -> State:
    return _replace(s, round=e.round, stage="turns", acting=-1, cut=0, hid=False, due=0, paid=0, step="")


def _ev_fight_turn(s: State, e: E.FightTurnBegan) -> State:
    return _replace(s, step="fight", acting=e.seat)


def _discarding(s: State, seat: int, card: str) -> dict[str, Any]:
    """The changes that move `card` from a satchel to the discard pile."""
    return {"discard": s.discard + (card,),
            "travellers": _with_traveller(s, seat, satchel=_without(_satchel(s, seat), card))}


def _to_discard(s: State, seat: int, card: str) -> State:
    return _replace(s, **_discarding(s, seat, card))


def _ev_struck(s: State, e: E.Struck) -> State:
    return _replace(s, health=max(0, s.health - e.damage), cut=s.cut + e.cut, step="",
                    **_discarding(s, e.seat, e.card))


def _ev_reckoning(s: State, e: E.ReckoningPlayed) -> State:
    return _replace(s, health=e.health, reckoning_used=True, **_discarding(s, e.seat, DECK.reckoning))


def _ev_regrouped(s: State, e: E.Regrouped) -> State:
    return _replace(s, step="take", played=e.card, **_discarding(s, e.seat, e.card))


def _ev_taken(s: State, e: E.RegroupTaken | E.Retrieved) -> State:
    return _replace(s, discard=_without(s.discard, e.card), step="", played=None,
                    travellers=_with_traveller(s, e.seat, satchel=_satchel(s, e.seat) + (e.card,)))


def _ev_retrieval(s: State, e: E.RetrievalOffered) -> State:
    return _replace(s, step="retrieve", acting=e.seat, played=e.card)


def _ev_fled(s: State, e: E.Fled) -> State:
    pos = max(0, min(e.position, len(s.journey)))
    return _replace(s, journey=s.journey[:pos] + (e.adversary,) + s.journey[pos:], phase="travel",
                    current=None, step="", stage="", acting=-1, **_discarding(s, e.seat, e.card))


def _ev_hid(s: State, e: E.Hid) -> State:
    s = _replace(s, supply=_without(s.supply, e.card))
    if e.kept:
        return _replace(s, last_reveal=RANK.get(e.card, 0), hid=True,
                        travellers=_with_traveller(s, e.seat, satchel=_satchel(s, e.seat) + (e.card,)))
    return _replace(s, discard=s.discard + (e.card,), hide_blocked=True)


def _ev_braced(s: State, e: E.Braced) -> State:
    return _replace(s, step="")


def _ev_defeated(s: State, e: E.AdversaryDefeated) -> State:
    ts = s.travellers
    if e.wreckage and 0 <= e.seat < len(ts):
        ts = _with_traveller(s, e.seat, wreckage=ts[e.seat].wreckage + e.wreckage)
    return _replace(s, defeated=s.defeated + (e.card,), wrecks=s.wrecks + ((e.card,) if e.wreckage else ()),
                    travellers=ts, phase="travel", current=None, health=0, step="", stage="", acting=-1)


def _ev_counter(s: State, e: E.CounterStruck) -> State:
    return _replace(s, stage="counter", acting=-1, due=e.attack, step="")


def _ev_cover_demanded(s: State, e: E.CoverDemanded) -> State:
    return _replace(s, step="cover", acting=e.seat, due=e.due, paid=0, reason=e.reason)


def _ev_cover_paid(s: State, e: E.CoverCardPaid) -> State:
    if e.card != s.companion:
        return _replace(s, paid=s.paid + e.value, **_discarding(s, e.seat, e.card))
    return _replace(s, paid=s.paid + e.value)


def _ev_covered(s: State, e: E.Covered) -> State:
    ts = s.travellers
    if e.wreckage and 0 <= e.seat < len(ts):
        ts = _with_traveller(s, e.seat, wreckage=ts[e.seat].wreckage - e.wreckage)
    if e.reason == "ambush":
        return _replace(s, travellers=ts, step="fight", due=0, paid=0, reason="")
    return _replace(s, travellers=ts, step="", paid=0, reason="", due=s.due if s.stage == "counter" else 0)


def _ev_fell(s: State, e: E.TravellerFell) -> State:
    satchel = _satchel(s, e.seat)
    ts = _with_traveller(s, e.seat, satchel=(), standing=False)
    due = s.due if s.stage == "counter" else 0
    return _replace(s, travellers=ts, discard=s.discard + satchel, step="", acting=e.seat, paid=0, reason="",
                    due=due)


def _ev_shed_begun(s: State, e: E.BurdenShedBegun) -> State:
    return _replace(s, step="discard", queue=tuple(e.payers))


def _ev_discarded(s: State, e: E.CardDiscarded) -> State:
    queue = s.queue[1:]
    return _replace(s, queue=queue, step="discard" if queue else "fight", **_discarding(s, e.seat, e.card))


def _ev_deliverance(s: State, e: E.DeliveranceDiscarded) -> State:
    if s.phase == "return":
        return _replace(s, purse=_without(s.purse, e.card), discard=s.discard + (e.card,))
    return _to_discard(s, e.seat, e.card)


def _ev_destination(s: State, e: E.DestinationReached) -> State:
    return _replace(s, arrived=True, phase="arrived", current=e.card, step="")


def _ev_return_began(s: State, e: E.ReturnBegan) -> State:
    gone = set(e.removed)
    ts = tuple(replace_traveller(t, satchel=tuple(c for c in t.satchel if c not in gone)) for t in s.travellers)
    return _replace(s, phase="return", stage="prep", step="", travellers=ts, supply=tuple(e.supply), discard=(),
                    caches=tuple(c for c in s.caches if c[2] not in gone), current=None)


def _ev_purse(s: State, e: E.PurseFormed) -> State:
    walkers = set(e.walkers)
    ts = tuple(replace_traveller(t, satchel=(), walking=i in walkers) for i, t in enumerate(s.travellers))
    return _replace(s, purse=tuple(e.purse), travellers=ts, stops=tuple(reversed(s.route)), stage="arrive",
                    acting=-1)


def _ev_ruins(s: State, e: E.RuinsSeeded) -> State:
    placed = {card for _, card in e.ruins}
    return _replace(s, ruins=tuple((p, c, False, False) for p, c in e.ruins), wrecks=(),
                    defeated=tuple(c for c in s.defeated if c not in placed))


def _ev_stop(s: State, e: E.StopReached) -> State:
    purse = s.purse + ((e.cache,) if e.cache else ())
    front = _next_seat(s, -1, walking=True)
    return _replace(s, stops=_without(s.stops, e.place), place=e.place, purse=purse, stage="stop", step="stop",
                    acting=-1 if front is None else front, caches=tuple(c for c in s.caches if c[0] != e.place))


def _ev_ruin_revealed(s: State, e: E.RuinRevealed) -> State:
    return _replace(s, ruins=tuple((p, c, True if p == e.place else r, x) for p, c, r, x in s.ruins))


def _ev_joker_stole(s: State, e: E.JokerStole) -> State:
    return _replace(s, purse=_without(s.purse, e.card), stolen=s.stolen + 1)


def _ev_joker_shed(s: State, e: E.JokerShed) -> State:
    return _replace(s, purse=_without(_without(s.purse, e.card), DECK.joker))


def _ev_strip_begun(s: State, e: E.RuinStripBegun) -> State:
    return _replace(s, step="pay", reason="ruin", acting=e.seat, due=e.due, paid=0)


def _ev_tolls(s: State, e: E.TollsBegan) -> State:
    return _replace(s, stage="tolls", step="", acting=-1)


def _ev_toll_demanded(s: State, e: E.TollDemanded) -> State:
    return _replace(s, step="pay", reason="toll", acting=e.seat, due=e.due, paid=0)


def _ev_purse_paid(s: State, e: E.PurseCardPaid) -> State:
    return _replace(s, purse=_without(s.purse, e.card), paid=s.paid + e.value)


def _ev_salvaged(s: State, e: E.RuinSalvaged) -> State:
    ts = _with_traveller(s, e.seat, points=s.travellers[e.seat].points + e.points) \
        if 0 <= e.seat < s.seats else s.travellers
    ruins = tuple((p, c, r, True if p == e.place else x) for p, c, r, x in s.ruins)
    return _replace(s, travellers=ts, ruins=ruins, step="stop", reason="", due=0, paid=0)


def _ev_toll_paid(s: State, e: E.TollPaid) -> State:
    ts = _with_traveller(s, e.seat, points=s.travellers[e.seat].points + e.points) \
        if 0 <= e.seat < s.seats else s.travellers
    return _replace(s, travellers=ts, step="", reason="", due=0, paid=0)


def _ev_stopped(s: State, e: E.TravellerStopped) -> State:
    return _replace(s, travellers=_with_traveller(s, e.seat, walking=False), acting=e.seat, step="")


def _ev_return_ended(s: State, e: E.ReturnEnded) -> State:
    return _replace(s, step="", stage="", place=None)


def _ev_fork_dealt(s: State, e: E.ForkDealt) -> State:
    ts = s.travellers
    if len(e.satchels) == len(ts):
        ts = tuple(replace_traveller(t, satchel=tuple(h)) for t, h in zip(ts, e.satchels))
    caches = s.caches
    if len(e.caches) == len(caches):
        caches = tuple((place, seat, card) for (place, seat, _), card in zip(caches, e.caches))
    ruins = s.ruins
    if len(e.ruins) == len(ruins):
        ruins = tuple((place, card, up, stripped) for (place, _, up, stripped), card in zip(ruins, e.ruins))
    return _replace(s, journey=tuple(e.journey), supply=tuple(e.supply), travellers=ts, caches=caches, ruins=ruins)


def _ev_game_ended(s: State, e: E.GameEnded) -> State:
    return _replace(s, phase="over", step="", outcome="won" if e.won else "lost")


_EVOLVERS = {
    E.DecksShuffled: _ev_shuffled, E.Foraged: _ev_foraged, E.RefugeReached: _ev_refuge_reached,
    E.RefugeTurnBegan: _ev_refuge_turn, E.Recovered: _ev_recovered, E.Cached: _ev_cached,
    E.RefugeLeft: _ev_refuge_left, E.RefugeEnded: _ev_refuge_ended, E.CompanionJoined: _ev_companion_joined,
    E.CompanionLeft: _ev_companion_left, E.AdversaryRevealed: _ev_adversary, E.RoundBegan: _ev_round,
    E.FightTurnBegan: _ev_fight_turn, E.Struck: _ev_struck, E.ReckoningPlayed: _ev_reckoning,
    E.Regrouped: _ev_regrouped, E.RegroupTaken: _ev_taken, E.RetrievalOffered: _ev_retrieval,
    E.Retrieved: _ev_taken, E.Fled: _ev_fled, E.Hid: _ev_hid, E.Braced: _ev_braced,
    E.AdversaryDefeated: _ev_defeated, E.CounterStruck: _ev_counter, E.CoverDemanded: _ev_cover_demanded,
    E.CoverCardPaid: _ev_cover_paid, E.Covered: _ev_covered, E.TravellerFell: _ev_fell,
    E.BurdenShedBegun: _ev_shed_begun, E.CardDiscarded: _ev_discarded, E.DeliveranceDiscarded: _ev_deliverance,
    E.DestinationReached: _ev_destination, E.ReturnBegan: _ev_return_began, E.PurseFormed: _ev_purse,
    E.RuinsSeeded: _ev_ruins, E.StopReached: _ev_stop, E.RuinRevealed: _ev_ruin_revealed,
    E.JokerStole: _ev_joker_stole, E.JokerShed: _ev_joker_shed, E.RuinStripBegun: _ev_strip_begun,
    E.TollsBegan: _ev_tolls, E.TollDemanded: _ev_toll_demanded, E.PurseCardPaid: _ev_purse_paid,
    E.RuinSalvaged: _ev_salvaged, E.TollPaid: _ev_toll_paid, E.TravellerStopped: _ev_stopped,
    E.ReturnEnded: _ev_return_ended, E.GameEnded: _ev_game_ended, E.ForkDealt: _ev_fork_dealt,
}


def evolve(s: State, e: Event) -> State:
    fold = _EVOLVERS.get(type(e))
    return fold(s, e) if fold is not None else s
