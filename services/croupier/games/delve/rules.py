"""The rules of delve: decide, evolve, legal actions, who acts, the end.

decide applies the command's events and then moves the expedition on by itself (`_advance`)
until a decision is pending: a vote, a choice of cards, an adventurer facing an encounter,
a supporter, a market visitor, or a camper. `_check` is the one rule check: decide runs it
before anything else, and legal_actions keeps exactly the candidate commands it accepts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from croupier.engine.contract import (
    ILLEGAL,
    MALFORMED,
    Command,
    Context,
    Emitter,
    Event,
    Rejection,
    Start,
    Tick,
)

from . import commands as C
from . import events as E
from .cards import (
    BASE_RANGE,
    CONTENT,
    DICE,
    MARKET_ROW,
    SKILLS,
    Encounter,
    Penalty,
    Reward,
)
from .state import (
    CAMP,
    CHOSEN,
    DESCEND,
    ENDED,
    FACE,
    HAND_LIMIT,
    LIMIT,
    MARKET,
    MAX_HEALTH,
    NO_VOTE,
    OVER,
    ROUTE,
    SETUP,
    Ballot,
    Boss,
    Dungeon,
    Facing,
    Picker,
    Player,
    Shop,
    State,
    Support,
    Visit,
    update_ballot,
    update_boss,
    update_dungeon,
    update_facing,
    update_picker,
    update_player,
    update_shop,
    update_state,
    update_support,
    update_visit,
)

# Caps that keep every game finite (see docs/games/delve.md): rounds of any kind (encounter,
# market or boss) after which the expedition is lost, and vote sessions in a row without a
# single vote after which the route is drawn at random.
ROUND_CAP = 100
SILENT_CAP = 10
REST_HEAL = 2
RESCUE_CARDS = 2
DIAMOND_LOOT = 2
DIAMOND_TAKEN_COINS = 2  # a Diamond reward once the Diamond is found gives coins instead

ENC = CONTENT.encounters
HAND_MODES = ("limit", "discard", "destroy")


def initial_state(options: Mapping[str, Any], seats: int) -> State:
    return State(seats=seats, vote_ms=int(options.get("vote_seconds", 30)) * 1000, rules=4)


def initial_state_v3(options: Mapping[str, Any], seats: int) -> State:
    """Rules version 3: a fork made during a route vote kept the origin's deadline."""
    return State(seats=seats, vote_ms=int(options.get("vote_seconds", 30)) * 1000, rules=3)


def initial_state_v2(options: Mapping[str, Any], seats: int) -> State:
    """Rules versions 1 and 2: the floor ends when a card of its final row is cleared."""
    return State(seats=seats, vote_ms=int(options.get("vote_seconds", 30)) * 1000, rules=2)


# --- small reads ------------------------------------------------------------------------


def conscious(st: State) -> tuple[int, ...]:
    return tuple(s for s, p in enumerate(st.players) if p.health > 0)


def selectable(st: State) -> tuple[int, ...]:
    if not st.dungeon.floors:
        return ()
    floor = CONTENT.floors[st.dungeon.floor]
    cleared = st.dungeon.cleared
    return tuple(
        s for s in range(floor.size)
        if not cleared[s] and all(cleared[c] for c in floor.covered_by[s])
    )


def stairs_open(st: State) -> bool:
    """Version 3: a card of the final row has been cleared, so the party may go down."""
    if st.rules < 3 or not st.dungeon.floors or st.boss.engaged:
        return False
    floor = CONTENT.floors[st.dungeon.floor]
    return any(gone and floor.final[s] for s, gone in enumerate(st.dungeon.cleared))


def facing_encounter(st: State) -> Encounter | None:
    return ENC[st.facing.card] if st.facing is not None else None


def supporters(st: State, seat: int) -> tuple[int, ...]:
    """Teammates who may support `seat`'s attack, in seat order after it."""
    n = st.seats
    out = []
    for k in range(1, n):
        s = (seat + k) % n
        p = st.players[s]
        if p.health > 0 and p.hand:
            out.append(s)
    return tuple(out)


def roll_plan(enc: Encounter, skill: str, cards: tuple[str, ...]) -> tuple[str, int, int]:
    """(mode, die, target) of a roll with `skill` and these committed cards."""
    icons = 0
    adv = enc.skills[skill].roll
    for card in cards:
        d = CONTENT.design(card)
        icons += d.matches(skill)
        adv += d.advantage
    dice = DICE[enc.dice]
    if adv > 0:
        mode, die = "advantage", dice[0]
    elif adv < 0:
        mode, die = "disadvantage", dice[2]
    else:
        mode, die = "normal", dice[1]
    return mode, die, BASE_RANGE[enc.dice] + icons


def camp_order(st: State) -> tuple[int, ...]:
    if all(p.health > 0 for p in st.players):
        return ()
    return tuple(
        s for s, p in enumerate(st.players)
        if p.health > 0 and len(p.draw) + len(p.discard) >= RESCUE_CARDS
    )


def to_act(st: State) -> tuple[int, ...]:
    if st.stage == OVER or st.stage == SETUP:
        return ()
    pending = decision(st)
    if pending is None:
        return ()
    if pending[0] == VOTE:
        # Every conscious adventurer may vote, and change a vote, until all have voted
        # (then the vote closes at once) or the deadline passes.
        return conscious(st)
    return (pending[1],)


def deadline(st: State) -> int | None:
    return st.ballot.deadline if st.stage == ROUTE else None


def forked(st: State, now: int) -> State:
    """A fork made at `now` of a game in a timed route vote (rules version 4): the vote runs
    its whole time again from the fork, with the votes cast so far. Before, the fork kept the
    origin's deadline, long past when the fork was made, so its vote closed at once."""
    if st.rules < 4 or st.stage != ROUTE or st.ballot.deadline is None:
        return st
    return update_state(st, ballot=update_ballot(st.ballot, deadline=now + st.vote_ms))


def shown_in_hand(st: State) -> frozenset[str]:
    """Hand cards laid on the table for everyone to see: committed to a roll or given in
    support (they stay in their owners' hands until the roll)."""
    out: set[str] = set()
    if st.facing is not None:
        out.update(st.facing.committed)
    if st.support is not None:
        out.update(c for _, c in st.support.cards)
    return frozenset(out)


def redeal(st: State, ctx: Context) -> list[Event]:
    """A fork's new deal (GameSpec.redeal): every card some seat may not see at the fork's
    step, dealt again with the fork's randomness from a pool of the cards that may stand for
    it, each pool sorted before it is shuffled, so that nothing of where the origin had its
    hidden cards survives (docs/games/delve.md, "Forks: the hidden cards dealt again"):

    - each adventurer's hand (but the cards committed or given in support, which everyone
      sees) and draw pile together, in the same numbers: the adventurer's own cards, which
      never go to another deck. A pending choice of cards keeps its count and where its
      cards are (hand, draw pile, or discard pile, which is public): the ones in the hand or
      draw pile become as many of the newly dealt ones;
    - the encounters of each tier that nobody has seen: face down on the floor being
      explored, on the floors below, left face down on the floors above, and in the box
      (dealt to no floor), laid back only in the slots nobody has seen; likewise the market
      cards of each tier on the floors below and in the box. A floor below, entirely unseen,
      is dealt as the setup deals it: its encounters and markets in a shuffled order;
    - the market stock and the loot deck, each by itself (neither has cards in the box).

    What everyone sees stays: face-up and cleared cards, the market row, the boss (named at
    the setup), discard piles, every count."""
    if st.stage == SETUP or not st.dungeon.floors:
        return []
    rng = ctx.rng

    def dealt(cards: Any) -> list[str]:
        pool = sorted(cards)
        return rng.shuffle(pool) if len(pool) > 1 else pool

    shown = shown_in_hand(st)
    pk = st.picker
    hands: list[tuple[str, ...]] = []
    draws: list[tuple[str, ...]] = []
    chosen: tuple[str, ...] = ()
    for s, p in enumerate(st.players):
        loose = [c for c in p.hand if c not in shown]
        cards = dealt(loose + list(p.draw))
        hand, draw = tuple(cards[: len(loose)]), tuple(cards[len(loose):])
        hands.append(tuple(sorted(c for c in p.hand if c in shown)) + hand)
        draws.append(draw)
        if pk is not None and pk.seat == s:
            in_hand, in_draw = set(loose), set(p.draw)
            kept = tuple(c for c in pk.chosen if c not in in_hand and c not in in_draw)
            chosen = (kept + hand[: sum(c in in_hand for c in pk.chosen)]
                      + draw[: sum(c in in_draw for c in pk.chosen)])

    d = st.dungeon
    left = set(st.unseen_below)
    on_floors = {c for cards in d.floors for c in cards}
    pools: dict[tuple[str, int], list[str]] = {}
    for t, ids in CONTENT.tier_encounters.items():
        pools[("encounter", t)] = [c for c in ids if c not in on_floors]
    for t, ids in CONTENT.tier_markets.items():
        pools[("market", t)] = [c for c in ids if c not in on_floors]
    unseen: list[list[bool]] = []
    for i, cards in enumerate(d.floors):
        if i < d.floor:
            unseen.append([c in left for c in cards])
        elif i == d.floor:
            unseen.append([not up for up in d.face_up])
        else:
            unseen.append([True] * len(cards))
        for c, hidden in zip(cards, unseen[-1]):
            if hidden:
                pools.setdefault((ENC[c].kind, ENC[c].tier), []).append(c)
    deals = {key: dealt(pools[key]) for key in sorted(pools)}

    def take(key: tuple[str, int], n: int) -> list[str]:
        cards = deals[key]
        out, deals[key] = cards[:n], cards[n:]
        return out

    floors: list[tuple[str, ...]] = []
    below: list[str] = []
    for i, cards in enumerate(d.floors):
        if i > d.floor:
            markets = sum(ENC[c].kind == "market" for c in cards)
            tier = CONTENT.floors[i].tier
            laid = take(("encounter", tier), len(cards) - markets) + take(("market", tier), markets)
            floors.append(tuple(rng.shuffle(laid)))
            continue
        new = list(cards)
        for slot, c in enumerate(cards):
            if unseen[i][slot]:
                new[slot] = take((ENC[c].kind, ENC[c].tier), 1)[0]
                if i < d.floor:
                    below.append(new[slot])
        floors.append(tuple(new))

    return [E.ForkDealt(
        floors=tuple(floors), unseen_below=tuple(below), hands=tuple(hands), draws=tuple(draws),
        stock=tuple(dealt(st.shop.stock)), loot=tuple(dealt(st.shop.loot)), chosen=chosen,
    )]


def is_over(st: State) -> bool:
    return st.stage == OVER


def score(st: State) -> int:
    return st.dungeon.cleared_total + 3 * st.boss.damage + (20 if st.outcome == "won" else 0)


def result(st: State) -> dict[str, Any]:
    won = st.outcome == "won"
    return {
        "winners": list(range(st.seats)) if won else [],
        "scores": [score(st)] * st.seats,
        "outcome": st.outcome,
        "reason": st.reason,
        "floor": st.dungeon.floor + 1,
        "cleared": st.dungeon.cleared_total,
        "boss": st.boss.card,
        "boss_damage": st.boss.damage,
        "boss_hp": st.boss.hp,
        "health": [p.health for p in st.players],
    }


# --- the one rule check ---------------------------------------------------------------


Problem = tuple[str, str, str]


def _no(code: str, message: str, kind: str = ILLEGAL) -> Problem:
    return (code, message, kind)


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


# The decision pending now: which sub-check applies, and who may act (None: the route vote,
# where every conscious adventurer may).
PICK, SUPPORT, FACING, VISIT, CAMPER, VOTE = "pick", "support", "facing", "visit", "camper", "vote"


def decision(st: State) -> tuple[str, int | None] | None:
    if st.picker is not None:
        return PICK, st.picker.seat
    if st.support is not None:
        return SUPPORT, st.support.queue[0]
    if st.facing is not None and not st.facing.outcome:
        return FACING, st.facing.seat
    if st.visit is not None:
        return VISIT, st.visit.seat
    if st.stage == CAMP and st.queue:
        return CAMPER, st.queue[0]
    if st.stage == ROUTE:
        return VOTE, None
    return None


def _check(st: State, cmd: Command) -> Problem | None:
    """Why decide rejects `cmd` (code, message, kind), or None if it is legal."""
    if st.stage == OVER:
        return _no("game_over", "the expedition is over")
    if st.stage == SETUP:
        return _no("not_started", "the expedition has not started")
    if type(cmd) not in _COMMAND_TYPES:
        return _no("unknown_command", f"{cmd.TYPE} is not a move of delve", MALFORMED)
    pending = decision(st)
    if pending is None:
        return _no("not_your_turn", "nobody may act now")
    what, actor = pending
    seat = cmd.seat
    if what == VOTE:
        if not (_is_int(seat) and 0 <= seat < st.seats):
            return _no("no_such_seat", f"seat {seat!r} is not at this table", MALFORMED)
        if st.players[seat].health <= 0:
            return _no("unconscious", "an unconscious adventurer does not vote")
    elif seat != actor:
        return _no("not_your_turn", f"seat {actor} is to act")
    return _SUBCHECKS[what](st, cmd)


def _not_now(cmd: Command, expected: str) -> Problem:
    if isinstance(cmd, (C.PickCard, C.ConfirmPick)):
        return _no("no_choice", "no choice of cards is pending")
    return _no("wrong_phase", expected)


def _check_pick(st: State, cmd: Command) -> Problem | None:
    pk = st.picker
    kind = type(cmd)
    if kind is C.PickCard:
        if cmd.card in pk.chosen:
            return None
        p = st.players[pk.seat]
        if cmd.card not in (p.hand if pk.mode in HAND_MODES else p.draw + p.discard):
            return _no("card_not_available", f"{cmd.card!r} cannot be chosen now")
        if len(pk.chosen) >= pk.need:
            return _no("choice_full", f"{pk.need} card(s) are chosen already; unpick one first")
        return None
    if kind is C.ConfirmPick:
        if len(pk.chosen) != pk.need:
            return _no("choice_incomplete", f"choose {pk.need} card(s), {len(pk.chosen)} chosen")
        return None
    return _no("choice_pending", "finish choosing cards first (PickCard, ConfirmPick)")


def _check_support(st: State, cmd: Command) -> Problem | None:
    sp = st.support
    kind = type(cmd)
    if kind is C.SupportAttack:
        seat = sp.queue[0]
        if cmd.card not in st.players[seat].hand:
            return _no("card_not_in_hand", f"{cmd.card!r} is not in your hand")
        if (seat, cmd.card) in sp.cards:
            return _no("already_given", f"{cmd.card!r} already supports this attack")
        return None
    if kind is C.EndSupport:
        return None
    return _not_now(cmd, "support the offered attack or end your support")


def _check_camper(st: State, cmd: Command) -> Problem | None:
    kind = type(cmd)
    seat = st.queue[0]
    if kind is C.RescueTeammate:
        t = cmd.target
        if not _is_int(t) or not 0 <= t < st.seats or t == seat:
            return _no("invalid_target", f"{t!r} is not a teammate")
        if st.players[t].health > 0:
            return _no("not_unconscious", f"seat {t} is conscious")
        p = st.players[seat]
        if len(p.draw) + len(p.discard) < RESCUE_CARDS:
            return _no("not_enough_cards", "a rescue destroys two cards of your draw and discard piles")
        return None
    if kind is C.BreakCamp:
        return None
    return _not_now(cmd, "at the camp: rescue a teammate or break camp")


def _check_vote(st: State, cmd: Command) -> Problem | None:
    if type(cmd) is not C.Vote:
        return _not_now(cmd, "the party is choosing its route: Vote")
    if not _is_int(cmd.slot) or cmd.slot not in st.ballot.options:
        if cmd.slot == DESCEND and _is_int(cmd.slot) and st.rules >= 3:
            return _no("stairs_closed", "the way down opens once a card of the final row is cleared")
        return _no("not_selectable", f"slot {cmd.slot!r} is not an uncovered encounter")
    return None


def _check_facing(st: State, cmd: Command) -> Problem | None:
    f = st.facing
    kind = type(cmd)
    enc = ENC[f.card]
    p = st.players[f.seat]
    if kind is C.SwitchEncounter:
        if f.extra or st.boss.engaged:
            return _no("cannot_switch", "only an encounter of the floor can be switched")
        if f.switched:
            return _no("already_switched", "you cannot switch again")
        if f.committed:
            return _no("cards_committed", "switch before committing cards")
        slot = cmd.slot
        if not _is_int(slot) or not 0 <= slot < len(st.dungeon.cleared):
            return _no("no_such_slot", f"slot {slot!r} is not on this floor")
        if st.dungeon.cleared[slot] or st.dungeon.face_up[slot]:
            return _no("not_face_down", f"slot {slot} is not a face-down encounter")
        if st.rules >= 3 and CONTENT.floors[st.dungeon.floor].final[slot]:
            return _no("final_row", "the final row is reached by the route, not by a switch")
        return None
    if kind is C.CommitCard:
        if cmd.card not in p.hand:
            return _no("card_not_in_hand", f"{cmd.card!r} is not in your hand")
        if cmd.card in f.committed:
            return _no("already_committed", f"{cmd.card!r} is committed already")
        return None
    if kind is C.RollDice or kind is C.OfferAttack:
        if cmd.skill not in SKILLS:
            return _no("unknown_skill", f"{cmd.skill!r} is not one of {', '.join(SKILLS)}")
        if kind is C.OfferAttack and not supporters(st, f.seat):
            return _no("no_supporter", "no conscious teammate holds a card to support you")
        return None
    if kind is C.PayBribe:
        if enc.bribe is None:
            return _no("no_bribe", f"{enc.name} cannot be bribed")
        if f.switched:
            return _no("cannot_bribe_switched", "a switched-to encounter cannot be bribed")
        if p.coins < enc.bribe:
            return _no("not_enough_coins", f"the bribe is {enc.bribe} coins, you have {p.coins}")
        return None
    if kind is C.AcceptPenalty:
        return None
    return _not_now(cmd, "you are facing an encounter")


def _check_visit(st: State, cmd: Command) -> Problem | None:
    kind = type(cmd)
    v = st.visit
    p = st.players[v.seat]
    if kind is C.BuyCard:
        if cmd.card not in st.shop.market:
            return _no("not_in_market", f"{cmd.card!r} is not offered")
        if v.rested:
            return _no("already_rested", "you rested instead of buying")
        cost = CONTENT.design(cmd.card).cost
        if p.coins < cost:
            return _no("not_enough_coins", f"it costs {cost}, you have {p.coins}")
        return None
    if kind is C.SellCard:
        card = cmd.card
        if card not in p.hand and card not in p.draw and card not in p.discard:
            return _no("card_not_owned", f"{card!r} is not in your hand, draw pile or discard pile")
        if CONTENT.design(card).value is None:
            return _no("basic_not_sellable", "basic cards cannot be sold")
        return None
    if kind is C.Rest:
        if v.rested:
            return _no("already_rested", "you rested already")
        if v.bought:
            return _no("already_bought", "you bought instead of resting")
        if p.health >= MAX_HEALTH:
            return _no("full_health", "you have no damage to heal")
        return None
    if kind is C.LeaveMarket:
        return None
    return _not_now(cmd, "you are visiting the market")


_SUBCHECKS: dict[str, Callable[[State, Command], Problem | None]] = {
    PICK: _check_pick, SUPPORT: _check_support, FACING: _check_facing, VISIT: _check_visit,
    CAMPER: _check_camper, VOTE: _check_vote,
}


# --- legal actions ----------------------------------------------------------------------


# Candidates are built in the order of sort_actions (command type, then its one argument;
# every candidate has this seat), so the legal ones need no sorting; each command is built
# once per (type, seat, argument) and kept: commands are immutable.

_MADE: dict[tuple, Command] = {}
_SORTED_SKILLS = tuple(sorted(SKILLS))


def _made(cls: type, seat: int, **argument: Any) -> Command:
    key = (cls, seat, *argument.values())
    cmd = _MADE.get(key)
    if cmd is None:
        cmd = _MADE[key] = cls(seat=seat, **argument)
    return cmd


def _cards(cls: type, seat: int, cards: Any) -> list[Command]:
    made = _MADE
    out = []
    for card in sorted(cards):
        cmd = made.get((cls, seat, card))
        if cmd is None:
            cmd = made[(cls, seat, card)] = cls(seat=seat, card=card)
        out.append(cmd)
    return out


def _candidates(st: State, seat: int) -> list[Command]:
    p = st.players[seat]
    if st.picker is not None:
        pool = p.hand if st.picker.mode in HAND_MODES else p.draw + p.discard
        return [_made(C.ConfirmPick, seat), *_cards(C.PickCard, seat, pool)]
    if st.support is not None:
        return [_made(C.EndSupport, seat), *_cards(C.SupportAttack, seat, p.hand)]
    if st.facing is not None and not st.facing.outcome:
        out: list[Command] = [_made(C.AcceptPenalty, seat), *_cards(C.CommitCard, seat, p.hand)]
        out += [_made(C.OfferAttack, seat, skill=s) for s in _SORTED_SKILLS]
        out.append(_made(C.PayBribe, seat))
        out += [_made(C.RollDice, seat, skill=s) for s in _SORTED_SKILLS]
        out += [_made(C.SwitchEncounter, seat, slot=s) for s in range(len(st.dungeon.cleared))]
        return out
    if st.visit is not None:
        out = _cards(C.BuyCard, seat, st.shop.market)
        out += [_made(C.LeaveMarket, seat), _made(C.Rest, seat)]
        return out + _cards(C.SellCard, seat, p.hand + p.draw + p.discard)
    if st.stage == CAMP:
        return [_made(C.BreakCamp, seat), *(_made(C.RescueTeammate, seat, target=t) for t in range(st.seats))]
    if st.stage == ROUTE:
        return [_made(C.Vote, seat, slot=s) for s in sorted(st.ballot.options)]
    return []


def legal_actions(st: State, seat: int) -> list[Command]:
    if seat not in to_act(st):
        return []
    # Every candidate is this seat's, at the pending decision: _check would route each one
    # to this same sub-check.
    check = _SUBCHECKS[decision(st)[0]]
    return [cmd for cmd in _candidates(st, seat) if check(st, cmd) is None]


# --- decide -----------------------------------------------------------------------------


def _Out(state: State, ctx: Context | None = None) -> Emitter:
    """The events of one decide, each seen by the rules after it (engine.Emitter)."""
    return Emitter(state, evolve, ctx)


def decide(cmd: Command, st: State, ctx: Context) -> list[Event]:
    if isinstance(cmd, Start):
        if st.stage != SETUP:
            raise Rejection("already_started", "the expedition has started")
        out = _Out(st)
        _start(out, ctx)
        _advance(out, ctx)
        return out.events
    if isinstance(cmd, Tick):
        _check_tick(st, cmd, ctx)
        out = _Out(st)
        _close_vote(out, ctx, max(cmd.now, ctx.now))
        _advance(out, ctx)
        return out.events
    problem = _check(st, cmd)
    if problem is not None:
        raise Rejection(*problem)
    out = _Out(st)
    _HANDLERS[type(cmd)](out, cmd, ctx)
    _advance(out, ctx)
    return out.events


def _check_tick(st: State, cmd: Tick, ctx: Context) -> None:
    if st.stage == OVER:
        raise Rejection("game_over", "the expedition is over")
    if st.stage != ROUTE or st.ballot.deadline is None:
        raise Rejection("no_deadline", "no vote deadline is pending")
    if max(cmd.now, ctx.now) < st.ballot.deadline:
        raise Rejection("too_early", f"the vote runs until {st.ballot.deadline}")


def _start(out: _Out, ctx: Context) -> None:
    st = out.state
    rng = ctx.rng
    decks = tuple(tuple(rng.shuffle(list(CONTENT.starting_cards(s)))) for s in range(st.seats))
    floors = []
    for floor in CONTENT.floors:
        dealt = rng.shuffle(list(CONTENT.tier_encounters[floor.tier]))[: floor.size - floor.markets]
        markets = rng.shuffle(list(CONTENT.tier_markets.get(floor.tier, ())))[: floor.markets]
        floors.append(tuple(rng.shuffle(dealt + markets)))
    stock = rng.shuffle(list(CONTENT.market_cards))
    loot = rng.shuffle(list(CONTENT.loot_cards))
    boss = rng.choice(list(CONTENT.bosses))
    out.emit(E.ExpeditionStarted(
        boss=boss, boss_hp=ENC[boss].hp[st.seats - 1], floors=tuple(floors), market=tuple(stock[:MARKET_ROW]),
        stock=tuple(stock[MARKET_ROW:]), loot=tuple(loot), decks=decks,
    ))
    for s in range(st.seats):
        _draw(out, ctx, s, HAND_LIMIT)


def _vote(out: _Out, cmd: C.Vote, ctx: Context) -> None:
    out.emit(E.VoteCast(seat=cmd.seat, slot=cmd.slot))
    st = out.state
    if all(st.ballot.votes[s] != NO_VOTE for s in conscious(st)):
        _close_vote(out, ctx, ctx.now)


def _close_vote(out: _Out, ctx: Context, now: int) -> None:
    st = out.state
    counts: dict[int, int] = {}
    for v in st.ballot.votes:
        if v != NO_VOTE:
            counts[v] = counts.get(v, 0) + 1
    cards = st.dungeon.floors[st.dungeon.floor]

    def card(slot: int) -> str:
        return "" if slot == DESCEND else cards[slot]

    if not counts:
        if st.ballot.silent + 1 >= SILENT_CAP:
            slot = ctx.rng.choice(list(st.ballot.options))
            out.emit(E.RouteChosen(slot=slot, card=card(slot), votes=st.ballot.votes, tied=st.ballot.options, how="random"))
        else:
            out.emit(E.VoteRestarted(session=st.ballot.session + 1, deadline=now + st.vote_ms))
        return
    best = max(counts.values())
    tied = tuple(sorted(s for s, n in counts.items() if n == best))
    if len(tied) == 1:
        out.emit(E.RouteChosen(slot=tied[0], card=card(tied[0]), votes=st.ballot.votes, tied=(), how="plurality"))
    else:
        slot = ctx.rng.choice(list(tied))
        out.emit(E.RouteChosen(slot=slot, card=card(slot), votes=st.ballot.votes, tied=tied, how="tiebreak"))


def _pick(out: _Out, cmd: C.PickCard, ctx: Context) -> None:
    if cmd.card in out.state.picker.chosen:
        out.emit(E.CardUnpicked(seat=cmd.seat, card=cmd.card))
    else:
        out.emit(E.CardPicked(seat=cmd.seat, card=cmd.card))


def _confirm(out: _Out, cmd: C.ConfirmPick, ctx: Context) -> None:
    pk = out.state.picker
    out.emit(E.ChoiceConfirmed(seat=pk.seat, mode=pk.mode, cards=pk.chosen))
    if pk.mode == "rescue":
        health = out.state.players[pk.target].health + 1
        out.emit(E.HealthRestored(seat=pk.target, amount=1, health=health, reason="rescue"))


def _switch(out: _Out, cmd: C.SwitchEncounter, ctx: Context) -> None:
    st = out.state
    out.emit(E.EncounterSwitched(seat=cmd.seat, slot=cmd.slot, card=st.dungeon.floors[st.dungeon.floor][cmd.slot]))


def _commit(out: _Out, cmd: C.CommitCard, ctx: Context) -> None:
    out.emit(E.CardCommitted(seat=cmd.seat, card=cmd.card))


def _roll_cmd(out: _Out, cmd: C.RollDice, ctx: Context) -> None:
    _roll(out, ctx, cmd.seat, cmd.skill)


def _offer(out: _Out, cmd: C.OfferAttack, ctx: Context) -> None:
    out.emit(E.AttackOffered(seat=cmd.seat, skill=cmd.skill, supporters=supporters(out.state, cmd.seat)))


def _support(out: _Out, cmd: C.SupportAttack, ctx: Context) -> None:
    out.emit(E.SupportGiven(seat=cmd.seat, card=cmd.card))


def _end_support(out: _Out, cmd: C.EndSupport, ctx: Context) -> None:
    out.emit(E.SupportEnded(seat=cmd.seat))
    sp = out.state.support
    if not sp.queue:
        _roll(out, ctx, sp.attacker, sp.skill)


def _bribe(out: _Out, cmd: C.PayBribe, ctx: Context) -> None:
    out.emit(E.BribePaid(seat=cmd.seat, coins=ENC[out.state.facing.card].bribe))


def _accept(out: _Out, cmd: C.AcceptPenalty, ctx: Context) -> None:
    enc = ENC[out.state.facing.card]
    out.emit(E.PenaltyAccepted(seat=cmd.seat))
    _penalty(out, ctx, cmd.seat, enc.penalty)


def _buy(out: _Out, cmd: C.BuyCard, ctx: Context) -> None:
    st = out.state
    refill = st.shop.stock[0] if st.shop.stock else None
    out.emit(E.CardBought(seat=cmd.seat, card=cmd.card, cost=CONTENT.design(cmd.card).cost, refill=refill))


def _sell(out: _Out, cmd: C.SellCard, ctx: Context) -> None:
    out.emit(E.CardSold(seat=cmd.seat, card=cmd.card, value=CONTENT.design(cmd.card).value))


def _rest(out: _Out, cmd: C.Rest, ctx: Context) -> None:
    health = out.state.players[cmd.seat].health
    healed = min(REST_HEAL, MAX_HEALTH - health)
    out.emit(E.Rested(seat=cmd.seat, amount=healed, health=health + healed))


def _leave(out: _Out, cmd: C.LeaveMarket, ctx: Context) -> None:
    out.emit(E.VisitEnded(seat=cmd.seat))


def _rescue(out: _Out, cmd: C.RescueTeammate, ctx: Context) -> None:
    out.emit(E.ChoiceOpened(seat=cmd.seat, mode="rescue", count=RESCUE_CARDS, target=cmd.target))


def _break_camp(out: _Out, cmd: C.BreakCamp, ctx: Context) -> None:
    out.emit(E.CampLeft(seat=cmd.seat))


_HANDLERS: dict[type, Callable[[_Out, Any, Context], None]] = {
    C.Vote: _vote, C.PickCard: _pick, C.ConfirmPick: _confirm, C.SwitchEncounter: _switch,
    C.CommitCard: _commit, C.RollDice: _roll_cmd, C.OfferAttack: _offer, C.SupportAttack: _support,
    C.EndSupport: _end_support, C.PayBribe: _bribe, C.AcceptPenalty: _accept, C.BuyCard: _buy,
    C.SellCard: _sell, C.Rest: _rest, C.LeaveMarket: _leave, C.RescueTeammate: _rescue,
    C.BreakCamp: _break_camp,
}
_COMMAND_TYPES = frozenset(_HANDLERS)


# --- resolution ---------------------------------------------------------------------------


def _roll(out: _Out, ctx: Context, seat: int, skill: str) -> None:
    st = out.state
    f = st.facing
    enc = ENC[f.card]
    support = st.support.cards if st.support is not None else ()
    mode, die, target = roll_plan(enc, skill, f.committed + tuple(c for _, c in support))
    roll = ctx.rng.randint(1, die)
    success = roll <= target
    out.emit(E.DiceRolled(
        seat=seat, skill=skill, dice=DICE[enc.dice], mode=mode, die=die, target=target, roll=roll,
        success=success, cards=f.committed, support=support,
    ))
    for owner, card in [(seat, c) for c in f.committed] + list(support):
        if card == CONTENT.diamond:
            _cut_diamond(out, ctx, owner, card)
    if success:
        if enc.kind == "boss":
            hp = out.state.boss.hp - 1
            out.emit(E.BossDamaged(seat=seat, hp=hp))
            if hp <= 0:
                if st.rules >= 3:  # "each successful boss attack ... applies its skill reward"
                    _reward(out, seat, enc.skills[skill].reward)
                out.emit(E.ExpeditionWon())
                return
        _reward(out, seat, enc.skills[skill].reward)
    else:
        _penalty(out, ctx, seat, enc.penalty)


def _cut_diamond(out: _Out, ctx: Context, seat: int, card: str) -> None:
    st = out.state
    loot = st.shop.loot[:DIAMOND_LOOT]
    order = tuple(ctx.rng.shuffle(list(st.players[seat].draw + loot)))
    out.emit(E.DiamondCut(seat=seat, card=card, loot=loot, order=order))


def _reward(out: _Out, seat: int, reward: Reward) -> None:
    if reward.coins:
        out.emit(E.CoinsGained(seat=seat, amount=reward.coins))
    if reward.heal:
        health = out.state.players[seat].health
        healed = min(reward.heal, MAX_HEALTH - health)
        if healed:
            out.emit(E.HealthRestored(seat=seat, amount=healed, health=health + healed, reason="reward"))
    if reward.knowledge and not out.state.boss.engaged:
        st = out.state
        slots = tuple(s for s in range(len(st.dungeon.cleared)) if not st.dungeon.cleared[s] and not st.dungeon.face_up[s])[: reward.knowledge]
        if slots:
            cards = st.dungeon.floors[st.dungeon.floor]
            out.emit(E.EncountersRevealed(seat=seat, slots=slots, cards=tuple(cards[s] for s in slots)))
    if reward.cards:
        loot = out.state.shop.loot[: reward.cards]
        if loot:
            out.emit(E.LootGained(seat=seat, cards=loot))
    if reward.diamond:
        if out.state.shop.diamond_found:
            out.emit(E.CoinsGained(seat=seat, amount=DIAMOND_TAKEN_COINS))
        else:
            out.emit(E.DiamondFound(seat=seat, card=CONTENT.diamond))


def _penalty(out: _Out, ctx: Context, seat: int, pen: Penalty) -> None:
    p = out.state.players[seat]
    if pen.damage:
        amount = min(pen.damage, p.health)
        out.emit(E.DamageTaken(seat=seat, amount=amount, health=p.health - amount))
        if p.health - amount <= 0:
            out.emit(E.KnockedOut(seat=seat))
            if not conscious(out.state):
                out.emit(E.ExpeditionLost(reason="unconscious"))
                return
    p = out.state.players[seat]
    if pen.coins and p.coins:
        out.emit(E.CoinsLost(seat=seat, amount=min(pen.coins, p.coins)))
    if p.health <= 0:
        return  # an unconscious adventurer no longer loses cards
    if pen.destroy_top:
        _destroy_top(out, ctx, seat, pen.destroy_top)
    for mode, count in (("discard", pen.discard), ("destroy", pen.destroy)):
        n = min(count, len(out.state.players[seat].hand))
        if n:
            out.emit(E.ChoiceOpened(seat=seat, mode=mode, count=n, target=-1))


def _reshuffle_if_empty(out: _Out, ctx: Context, seat: int) -> bool:
    """True if there is a draw pile to take from (reshuffling the discard pile if needed)."""
    p = out.state.players[seat]
    if p.draw:
        return True
    if not p.discard:
        return False
    out.emit(E.DeckReshuffled(seat=seat, order=tuple(ctx.rng.shuffle(list(p.discard)))))
    return True


def _draw(out: _Out, ctx: Context, seat: int, n: int) -> None:
    while n > 0 and _reshuffle_if_empty(out, ctx, seat):
        cards = out.state.players[seat].draw[:n]
        out.emit(E.CardsDrawn(seat=seat, cards=cards))
        n -= len(cards)


def _destroy_top(out: _Out, ctx: Context, seat: int, n: int) -> None:
    while n > 0 and _reshuffle_if_empty(out, ctx, seat):
        cards = out.state.players[seat].draw[:n]
        out.emit(E.CardsDestroyed(seat=seat, cards=cards))
        n -= len(cards)


def _triggers(when: str, outcome: str) -> bool:
    if outcome == "bribed" or not outcome:
        return False
    return when == "always" or (when == "success") == (outcome == "success")


# --- moving on ----------------------------------------------------------------------------


def _advance(out: _Out, ctx: Context) -> None:
    """Emit the automatic steps until a decision is pending or the expedition is over."""
    while True:
        st = out.state
        if st.stage == OVER or st.picker is not None or st.support is not None or st.visit is not None:
            return
        f = st.facing
        if f is not None:
            if not f.outcome:
                return
            enc = ENC[f.card]
            if enc.extra and st.players[f.seat].health > 0 and _triggers(enc.extra_when, f.outcome):
                out.emit(E.ExtraEncounterStarted(seat=f.seat, card=enc.extra))
            else:
                out.emit(E.TurnEnded(seat=f.seat))
            continue
        stage = st.stage
        if stage == ROUTE:
            return
        if stage == CAMP:
            if st.queue and camp_order(st):
                return
            out.emit(E.CampEnded())
        elif stage == CHOSEN:
            if st.route == DESCEND:
                _descend(out)  # not a round: the cap counts rounds of play
                continue
            if not _within_cap(out):
                return
            card = st.dungeon.floors[st.dungeon.floor][st.route]
            order = conscious(st)
            if ENC[card].kind == "market":
                out.emit(E.MarketOpened(kind="floor", slot=st.route, order=order))
            else:
                out.emit(E.EncounterStarted(slot=st.route, card=card, order=order))
                for s in order:
                    _draw(out, ctx, s, 1)
        elif stage == LIMIT:
            over = [s for s in st.queue if st.players[s].health > 0 and len(st.players[s].hand) > HAND_LIMIT]
            if over:
                s = over[0]
                out.emit(E.ChoiceOpened(seat=s, mode="limit", count=len(st.players[s].hand) - HAND_LIMIT, target=-1))
            else:
                _next_turn(out)
        elif stage == FACE:
            _next_turn(out)
        elif stage == MARKET:
            waiting = [s for s in st.queue if st.players[s].health > 0]
            if waiting:
                out.emit(E.VisitStarted(seat=waiting[0]))
            else:
                kind = st.market_kind
                out.emit(E.MarketClosed(kind=kind))
                if kind == "floor":
                    _end_round(out)
        elif stage == ENDED:
            if not st.camp_done and camp_order(st):
                out.emit(E.CampStarted(order=camp_order(st)))
            else:
                _after_round(out, ctx)
        else:
            return


def _within_cap(out: _Out) -> bool:
    if out.state.rounds >= ROUND_CAP:
        out.emit(E.ExpeditionLost(reason="exhausted"))
        return False
    return True


def _next_turn(out: _Out) -> None:
    st = out.state
    waiting = [s for s in st.queue if st.players[s].health > 0]
    if waiting:
        if st.boss.engaged:
            out.emit(E.TurnStarted(seat=waiting[0], card=st.boss.card, slot=-1))
        else:
            out.emit(E.TurnStarted(seat=waiting[0], card=st.dungeon.floors[st.dungeon.floor][st.route], slot=st.route))
    elif st.boss.engaged:
        out.emit(E.BossRoundEnded(round=st.boss.round))
    else:
        _end_round(out)


def _end_round(out: _Out) -> None:
    st = out.state
    floor = CONTENT.floors[st.dungeon.floor]
    gone = set(st.switched)
    if st.faced_route:
        gone.add(st.route)
    cleared = list(st.dungeon.cleared)
    for s in gone:
        cleared[s] = True
    revealed = tuple(
        s for s in range(floor.size)
        if not cleared[s] and not st.dungeon.face_up[s] and all(cleared[c] for c in floor.covered_by[s])
    )
    cards = st.dungeon.floors[st.dungeon.floor]
    # Version 3: the floor goes on until the party takes the stairs (a route vote's
    # DESCEND, open once a final-row card is cleared) or has cleared every card.
    done = all(cleared) if st.rules >= 3 else any(floor.final[s] for s in gone)
    out.emit(E.RoundEnded(
        cleared=tuple(sorted(gone)), revealed=revealed, cards=tuple(cards[s] for s in revealed),
        floor_done=done, floor_clear=all(cleared),
    ))


def _after_round(out: _Out, ctx: Context) -> None:
    st = out.state
    if st.boss.engaged:
        if _within_cap(out):
            order = conscious(st)
            out.emit(E.BossRoundStarted(round=st.boss.round + 1, order=order))
            for s in order:
                _draw(out, ctx, s, 1)
        return
    if st.dungeon.floor_done:
        if st.dungeon.floor_clear and not st.dungeon.bonus_done:
            out.emit(E.MarketOpened(kind="bonus", slot=-1, order=conscious(st)))
        else:
            _descend(out)
        return
    options = selectable(st) + ((DESCEND,) if stairs_open(st) else ())
    cards = st.dungeon.floors[st.dungeon.floor]
    if len(options) == 1:  # never the stairs alone: a floor not cleared has an uncovered card
        only = options[0]
        out.emit(E.RouteChosen(slot=only, card="" if only == DESCEND else cards[only], votes=(), tied=(), how="only"))
    elif st.seats == 1:
        out.emit(E.VoteOpened(session=st.ballot.session + 1, options=options, deadline=None))
    else:
        out.emit(E.VoteOpened(session=st.ballot.session + 1, options=options, deadline=ctx.now + st.vote_ms))


def _descend(out: _Out) -> None:
    """Down to the next floor (its first row and markets turned face up), or to the boss."""
    st = out.state
    if st.dungeon.floor + 1 < len(CONTENT.floors):
        nxt = st.dungeon.floor + 1
        revealed = _initially_face_up(nxt, st.dungeon.floors[nxt])
        out.emit(E.FloorDescended(floor=nxt, revealed=revealed, cards=tuple(st.dungeon.floors[nxt][s] for s in revealed)))
    else:
        out.emit(E.BossEngaged(boss=st.boss.card, hp=st.boss.hp))


def _initially_face_up(floor_index: int, cards: tuple[str, ...]) -> tuple[int, ...]:
    """The first row and the markets (dealt face up) of a floor."""
    floor = CONTENT.floors[floor_index]
    return tuple(s for s in range(floor.size) if floor.rows[s] == 0 or ENC[cards[s]].kind == "market")


# --- evolve -------------------------------------------------------------------------------


def _with_player(st: State, seat: int, player: Player) -> tuple[Player, ...]:
    players = st.players
    return players[:seat] + (player,) + players[seat + 1:]


def _without(cards: tuple[str, ...], gone: tuple[str, ...] | set[str]) -> tuple[str, ...]:
    return tuple(c for c in cards if c not in gone)


def _faced(st: State) -> bool:
    f = st.facing
    return st.faced_route or (f is not None and not f.extra and not f.switched and f.slot == st.route and f.slot >= 0)


def _ev_started(st: State, ev: E.ExpeditionStarted) -> State:
    face_up = [False] * len(ev.floors[0])
    for s in _initially_face_up(0, ev.floors[0]):
        face_up[s] = True
    return update_state(
        st, stage=ENDED, camp_done=True, players=tuple(Player(draw=d) for d in ev.decks),
        dungeon=Dungeon(floors=ev.floors, face_up=tuple(face_up), cleared=(False,) * len(ev.floors[0])),
        shop=Shop(market=ev.market, stock=ev.stock, loot=ev.loot),
        boss=Boss(card=ev.boss, hp=ev.boss_hp, max_hp=ev.boss_hp), ballot=Ballot(votes=(NO_VOTE,) * st.seats),
    )


def _ev_vote_opened(st: State, ev: E.VoteOpened) -> State:
    ballot = update_ballot(st.ballot, options=ev.options, session=ev.session, deadline=ev.deadline, votes=(NO_VOTE,) * st.seats)
    return update_state(st, stage=ROUTE, ballot=ballot)


def _ev_vote_cast(st: State, ev: E.VoteCast) -> State:
    votes = st.ballot.votes
    return update_state(st, ballot=update_ballot(st.ballot, votes=votes[: ev.seat] + (ev.slot,) + votes[ev.seat + 1:]))


def _ev_vote_restarted(st: State, ev: E.VoteRestarted) -> State:
    b = st.ballot
    return update_state(
        st, ballot=update_ballot(b, session=ev.session, deadline=ev.deadline, silent=b.silent + 1, votes=(NO_VOTE,) * st.seats)
    )


def _ev_route_chosen(st: State, ev: E.RouteChosen) -> State:
    ballot = update_ballot(st.ballot, options=(), deadline=None, silent=0, votes=(NO_VOTE,) * st.seats)
    return update_state(st, stage=CHOSEN, route=ev.slot, ballot=ballot)


def _ev_encounter_started(st: State, ev: E.EncounterStarted) -> State:
    return update_state(st, stage=LIMIT, queue=ev.order, rounds=st.rounds + 1, faced_route=False, switched=())


def _ev_boss_engaged(st: State, ev: E.BossEngaged) -> State:
    return update_state(st, stage=ENDED, camp_done=True, boss=update_boss(st.boss, engaged=True, hp=ev.hp), route=-1)


def _ev_boss_round_started(st: State, ev: E.BossRoundStarted) -> State:
    return update_state(st, stage=LIMIT, queue=ev.order, boss=update_boss(st.boss, round=ev.round), rounds=st.rounds + 1)


def _ev_reshuffled(st: State, ev: E.DeckReshuffled) -> State:
    p = st.players[ev.seat]
    return update_state(st, players=_with_player(st, ev.seat, update_player(p, draw=ev.order, discard=())))


def _ev_drawn(st: State, ev: E.CardsDrawn) -> State:
    p = st.players[ev.seat]
    return update_state(st, players=_with_player(st, ev.seat, update_player(p, hand=p.hand + ev.cards, draw=p.draw[len(ev.cards):])))


def _ev_choice_opened(st: State, ev: E.ChoiceOpened) -> State:
    return update_state(st, picker=Picker(seat=ev.seat, mode=ev.mode, need=ev.count, target=ev.target))


def _ev_picked(st: State, ev: E.CardPicked) -> State:
    pk = st.picker
    return update_state(st, picker=update_picker(pk, chosen=pk.chosen + (ev.card,))) if pk else st


def _ev_unpicked(st: State, ev: E.CardUnpicked) -> State:
    pk = st.picker
    return update_state(st, picker=update_picker(pk, chosen=_without(pk.chosen, (ev.card,)))) if pk else st


def _ev_choice_confirmed(st: State, ev: E.ChoiceConfirmed) -> State:
    p = st.players[ev.seat]
    gone = set(ev.cards)
    if ev.mode in ("limit", "discard"):
        p = update_player(p, hand=_without(p.hand, gone), discard=p.discard + ev.cards)
    elif ev.mode == "destroy":
        p = update_player(p, hand=_without(p.hand, gone), destroyed=p.destroyed + len(ev.cards))
    else:
        p = update_player(p, draw=_without(p.draw, gone), discard=_without(p.discard, gone), destroyed=p.destroyed + len(ev.cards))
    return update_state(st, picker=None, players=_with_player(st, ev.seat, p))


def _ev_turn_started(st: State, ev: E.TurnStarted) -> State:
    return update_state(
        st, stage=FACE, facing=Facing(seat=ev.seat, card=ev.card, slot=ev.slot),
        queue=tuple(s for s in st.queue if s != ev.seat),
    )


def _ev_switched(st: State, ev: E.EncounterSwitched) -> State:
    face_up = st.dungeon.face_up[: ev.slot] + (True,) + st.dungeon.face_up[ev.slot + 1:]
    return update_state(
        st, facing=Facing(seat=ev.seat, card=ev.card, slot=ev.slot, switched=True),
        dungeon=update_dungeon(st.dungeon, face_up=face_up), switched=st.switched + (ev.slot,),
    )


def _ev_committed(st: State, ev: E.CardCommitted) -> State:
    f = st.facing
    return update_state(st, facing=update_facing(f, committed=f.committed + (ev.card,))) if f else st


def _ev_offered(st: State, ev: E.AttackOffered) -> State:
    return update_state(st, support=Support(attacker=ev.seat, skill=ev.skill, queue=ev.supporters))


def _ev_support_given(st: State, ev: E.SupportGiven) -> State:
    sp = st.support
    return update_state(st, support=update_support(sp, cards=sp.cards + ((ev.seat, ev.card),))) if sp else st


def _ev_support_ended(st: State, ev: E.SupportEnded) -> State:
    sp = st.support
    return update_state(st, support=update_support(sp, queue=sp.queue[1:])) if sp else st


def _spend(p: Player, cards: tuple[str, ...]) -> Player:
    """Cards used in a roll leave the hand: discarded, or destroyed if one-use."""
    if not cards:
        return p
    kept = tuple(c for c in cards if not CONTENT.design(c).one_use)
    return update_player(
        p, hand=_without(p.hand, set(cards)), discard=p.discard + kept, destroyed=p.destroyed + len(cards) - len(kept)
    )


def _ev_dice_rolled(st: State, ev: E.DiceRolled) -> State:
    players = list(st.players)
    players[ev.seat] = _spend(players[ev.seat], ev.cards)
    for owner, card in ev.support:
        players[owner] = _spend(players[owner], (card,))
    f = st.facing
    return update_state(
        st, players=tuple(players), support=None, faced_route=_faced(st),
        facing=update_facing(f, committed=(), outcome="success" if ev.success else "failure") if f else None,
    )


def _ev_penalty_accepted(st: State, ev: E.PenaltyAccepted) -> State:
    f = st.facing
    return update_state(st, faced_route=_faced(st), facing=update_facing(f, committed=(), outcome="accepted") if f else None)


def _ev_bribe_paid(st: State, ev: E.BribePaid) -> State:
    p = st.players[ev.seat]
    f = st.facing
    return update_state(
        st, players=_with_player(st, ev.seat, update_player(p, coins=p.coins - ev.coins)), faced_route=_faced(st),
        facing=update_facing(f, committed=(), outcome="bribed") if f else None,
    )


def _ev_coins_gained(st: State, ev: E.CoinsGained) -> State:
    p = st.players[ev.seat]
    return update_state(st, players=_with_player(st, ev.seat, update_player(p, coins=p.coins + ev.amount)))


def _ev_coins_lost(st: State, ev: E.CoinsLost) -> State:
    p = st.players[ev.seat]
    return update_state(st, players=_with_player(st, ev.seat, update_player(p, coins=max(0, p.coins - ev.amount))))


def _ev_health(st: State, ev: E.HealthRestored | E.DamageTaken) -> State:
    p = st.players[ev.seat]
    return update_state(st, players=_with_player(st, ev.seat, update_player(p, health=ev.health)))


def _ev_noop(st: State, ev: Event) -> State:
    return st


def _ev_revealed(st: State, ev: E.EncountersRevealed) -> State:
    face_up = list(st.dungeon.face_up)
    for s in ev.slots:
        if 0 <= s < len(face_up):
            face_up[s] = True
    return update_state(st, dungeon=update_dungeon(st.dungeon, face_up=tuple(face_up)))


def _ev_loot_gained(st: State, ev: E.LootGained) -> State:
    p = st.players[ev.seat]
    return update_state(
        st, shop=update_shop(st.shop, loot=_without(st.shop.loot, set(ev.cards))),
        players=_with_player(st, ev.seat, update_player(p, discard=p.discard + ev.cards)),
    )


def _ev_diamond_found(st: State, ev: E.DiamondFound) -> State:
    p = st.players[ev.seat]
    return update_state(
        st, shop=update_shop(st.shop, diamond_found=True),
        players=_with_player(st, ev.seat, update_player(p, discard=p.discard + (ev.card,))),
    )


def _ev_diamond_cut(st: State, ev: E.DiamondCut) -> State:
    p = st.players[ev.seat]
    return update_state(
        st, shop=update_shop(st.shop, loot=_without(st.shop.loot, set(ev.loot))),
        players=_with_player(st, ev.seat, update_player(p, draw=ev.order)),
    )


def _ev_destroyed(st: State, ev: E.CardsDestroyed) -> State:
    p = st.players[ev.seat]
    p = update_player(p, draw=_without(p.draw, set(ev.cards)), destroyed=p.destroyed + len(ev.cards))
    return update_state(st, players=_with_player(st, ev.seat, p))


def _ev_extra_started(st: State, ev: E.ExtraEncounterStarted) -> State:
    return update_state(st, facing=Facing(seat=ev.seat, card=ev.card, slot=-1, extra=True))


def _ev_turn_ended(st: State, ev: E.TurnEnded) -> State:
    return update_state(st, facing=None)


def _ev_boss_damaged(st: State, ev: E.BossDamaged) -> State:
    return update_state(st, boss=update_boss(st.boss, hp=ev.hp, damage=st.boss.damage + 1))


def _ev_round_ended(st: State, ev: E.RoundEnded) -> State:
    cleared = list(st.dungeon.cleared)
    for s in ev.cleared:
        cleared[s] = True
    face_up = list(st.dungeon.face_up)
    for s in ev.revealed:
        face_up[s] = True
    dungeon = update_dungeon(
        st.dungeon, cleared=tuple(cleared), face_up=tuple(face_up), floor_done=ev.floor_done,
        floor_clear=ev.floor_clear, cleared_total=st.dungeon.cleared_total + len(ev.cleared),
    )
    return update_state(
        st, stage=ENDED, camp_done=False, dungeon=dungeon, route=-1, queue=(), switched=(), faced_route=False
    )


def _ev_boss_round_ended(st: State, ev: E.BossRoundEnded) -> State:
    return update_state(st, stage=ENDED, camp_done=False, queue=())


def _ev_market_opened(st: State, ev: E.MarketOpened) -> State:
    if ev.kind == "floor":
        return update_state(
            st, stage=MARKET, market_kind=ev.kind, queue=ev.order, rounds=st.rounds + 1, faced_route=True, switched=()
        )
    return update_state(st, stage=MARKET, market_kind=ev.kind, queue=ev.order)


def _ev_visit_started(st: State, ev: E.VisitStarted) -> State:
    return update_state(st, visit=Visit(seat=ev.seat), queue=tuple(s for s in st.queue if s != ev.seat))


def _ev_card_bought(st: State, ev: E.CardBought) -> State:
    p = st.players[ev.seat]
    if ev.refill is None:
        market = _without(st.shop.market, (ev.card,))
        stock = st.shop.stock
    else:
        market = tuple(ev.refill if c == ev.card else c for c in st.shop.market)
        stock = _without(st.shop.stock, (ev.refill,))
    v = st.visit
    return update_state(
        st, shop=update_shop(st.shop, market=market, stock=stock), visit=update_visit(v, bought=True) if v else None,
        players=_with_player(st, ev.seat, update_player(p, coins=p.coins - ev.cost, discard=p.discard + (ev.card,))),
    )


def _ev_card_sold(st: State, ev: E.CardSold) -> State:
    p = st.players[ev.seat]
    gone = (ev.card,)
    p = update_player(
        p, hand=_without(p.hand, gone), draw=_without(p.draw, gone), discard=_without(p.discard, gone),
        coins=p.coins + ev.value,
    )
    return update_state(st, players=_with_player(st, ev.seat, p))


def _ev_rested(st: State, ev: E.Rested) -> State:
    p = st.players[ev.seat]
    v = st.visit
    return update_state(
        st, visit=update_visit(v, rested=True) if v else None,
        players=_with_player(st, ev.seat, update_player(p, health=ev.health)),
    )


def _ev_visit_ended(st: State, ev: E.VisitEnded) -> State:
    return update_state(st, visit=None)


def _ev_market_closed(st: State, ev: E.MarketClosed) -> State:
    if ev.kind == "bonus":
        return update_state(
            st, stage=ENDED, market_kind="", dungeon=update_dungeon(st.dungeon, bonus_done=True), camp_done=True, queue=()
        )
    return update_state(st, market_kind="")


def _ev_camp_started(st: State, ev: E.CampStarted) -> State:
    return update_state(st, stage=CAMP, queue=ev.order)


def _ev_camp_left(st: State, ev: E.CampLeft) -> State:
    return update_state(st, queue=tuple(s for s in st.queue if s != ev.seat))


def _ev_camp_ended(st: State, ev: E.CampEnded) -> State:
    return update_state(st, stage=ENDED, camp_done=True, queue=())


def _ev_floor_descended(st: State, ev: E.FloorDescended) -> State:
    d = st.dungeon
    left = tuple(c for c, up in zip(d.floors[d.floor], d.face_up) if not up)
    size = len(st.dungeon.floors[ev.floor])
    face_up = [False] * size
    for s in ev.revealed:
        face_up[s] = True
    dungeon = update_dungeon(
        st.dungeon, floor=ev.floor, face_up=tuple(face_up), cleared=(False,) * size, floor_done=False,
        floor_clear=False, bonus_done=False,
    )
    return update_state(st, stage=ENDED, camp_done=True, dungeon=dungeon, route=-1, unseen_below=st.unseen_below + left)


def _ev_fork_dealt(st: State, ev: E.ForkDealt) -> State:
    players = tuple(update_player(p, hand=h, draw=d) for p, h, d in zip(st.players, ev.hands, ev.draws, strict=True))
    pk = st.picker
    return update_state(
        st, players=players, dungeon=update_dungeon(st.dungeon, floors=ev.floors), unseen_below=ev.unseen_below,
        shop=update_shop(st.shop, stock=ev.stock, loot=ev.loot),
        picker=update_picker(pk, chosen=ev.chosen) if pk is not None else None,
    )


def _ev_won(st: State, ev: E.ExpeditionWon) -> State:
    return update_state(st, stage=OVER, outcome="won", reason="boss defeated", facing=None, picker=None, support=None)


def _ev_lost(st: State, ev: E.ExpeditionLost) -> State:
    return update_state(st, stage=OVER, outcome="lost", reason=ev.reason, facing=None, picker=None, support=None)


_EVOLVE: dict[type, Callable[[State, Any], State]] = {
    E.ExpeditionStarted: _ev_started, E.VoteOpened: _ev_vote_opened, E.VoteCast: _ev_vote_cast,
    E.VoteRestarted: _ev_vote_restarted, E.RouteChosen: _ev_route_chosen, E.EncounterStarted: _ev_encounter_started,
    E.BossEngaged: _ev_boss_engaged, E.BossRoundStarted: _ev_boss_round_started, E.DeckReshuffled: _ev_reshuffled,
    E.CardsDrawn: _ev_drawn, E.ChoiceOpened: _ev_choice_opened, E.CardPicked: _ev_picked,
    E.CardUnpicked: _ev_unpicked, E.ChoiceConfirmed: _ev_choice_confirmed, E.TurnStarted: _ev_turn_started,
    E.EncounterSwitched: _ev_switched, E.CardCommitted: _ev_committed, E.AttackOffered: _ev_offered,
    E.SupportGiven: _ev_support_given, E.SupportEnded: _ev_support_ended, E.DiceRolled: _ev_dice_rolled,
    E.PenaltyAccepted: _ev_penalty_accepted, E.BribePaid: _ev_bribe_paid, E.CoinsGained: _ev_coins_gained,
    E.CoinsLost: _ev_coins_lost, E.HealthRestored: _ev_health, E.DamageTaken: _ev_health, E.KnockedOut: _ev_noop,
    E.EncountersRevealed: _ev_revealed, E.LootGained: _ev_loot_gained, E.DiamondFound: _ev_diamond_found,
    E.DiamondCut: _ev_diamond_cut, E.CardsDestroyed: _ev_destroyed, E.ExtraEncounterStarted: _ev_extra_started,
    E.TurnEnded: _ev_turn_ended, E.BossDamaged: _ev_boss_damaged, E.RoundEnded: _ev_round_ended,
    E.BossRoundEnded: _ev_boss_round_ended, E.MarketOpened: _ev_market_opened, E.VisitStarted: _ev_visit_started,
    E.CardBought: _ev_card_bought, E.CardSold: _ev_card_sold, E.Rested: _ev_rested, E.VisitEnded: _ev_visit_ended,
    E.MarketClosed: _ev_market_closed, E.CampStarted: _ev_camp_started, E.CampLeft: _ev_camp_left,
    E.CampEnded: _ev_camp_ended, E.FloorDescended: _ev_floor_descended, E.ExpeditionWon: _ev_won,
    E.ExpeditionLost: _ev_lost, E.ForkDealt: _ev_fork_dealt,
}


def evolve(st: State, ev: Event) -> State:
    """Total: an event this game did not make leaves the state as it is."""
    fn = _EVOLVE.get(type(ev))
    if fn is None:
        return st
    try:
        return fn(st, ev)
    except (IndexError, KeyError, TypeError, AttributeError, ValueError):
        return st
