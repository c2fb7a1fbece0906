"""What each seat may see of an expedition, the ids hidden from it, and words for events.

Public: the floor (face-up cards; face-down slots as blanks), the market row, the boss,
every adventurer's health, coins, discard pile and counts, votes, committed and supporting
cards. Private: an adventurer's hand and the contents of their draw pile (shown sorted,
never in order). Nobody sees face-down encounters, the market stock, the loot deck, or the
order of any deck.
"""

from __future__ import annotations

from typing import Any

from croupier.engine.contract import Event

from . import events as E
from .cards import CONTENT, SKILLS
from .rules import ENC, deadline, roll_plan, selectable, shown_in_hand, stairs_open, to_act
from .state import DESCEND, ROUTE, State

_ALL_ENCOUNTERS = frozenset(
    e.id for e in CONTENT.encounters.values() if e.kind in ("encounter", "market")
)


def hidden(st: State, seat: int | None) -> frozenset[str]:
    shown = shown_in_hand(st)
    out: set[str] = set()
    for s, p in enumerate(st.players):
        if s != seat:
            out.update(c for c in p.hand if c not in shown)
            out.update(p.draw)
    out.update(st.shop.stock)
    out.update(st.shop.loot)
    if not st.shop.diamond_found:
        out.add(CONTENT.diamond)
    # The floors left behind: the cards still face down when the party went down (no view
    # shows an earlier floor, and nothing turns them up later).
    out.update(st.unseen_below)
    dealt: set[str] = set()
    for i, cards in enumerate(st.dungeon.floors):
        dealt.update(cards)
        if i < st.dungeon.floor:
            continue
        if i == st.dungeon.floor:
            out.update(c for c, up in zip(cards, st.dungeon.face_up) if not up)
        else:
            out.update(cards)
    out.update(_ALL_ENCOUNTERS - dealt)
    return frozenset(out)


def view(st: State, seat: int | None) -> dict[str, Any]:
    me = seat if seat is not None and 0 <= seat < st.seats else None
    players = []
    for s, p in enumerate(st.players):
        entry: dict[str, Any] = {
            "seat": s, "health": p.health, "conscious": p.health > 0, "coins": p.coins,
            "hand_count": len(p.hand), "draw_count": len(p.draw), "discard": list(p.discard),
            "destroyed": p.destroyed,
        }
        if s == me:
            entry["hand"] = list(p.hand)
            entry["draw"] = sorted(p.draw)
        players.append(entry)
    out: dict[str, Any] = {
        "stage": st.stage,
        "you": me,
        "to_act": list(to_act(st)),
        "round": st.rounds,
        "players": players,
        "market": list(st.shop.market),
        "market_stock": len(st.shop.stock),
        "loot_deck": len(st.shop.loot),
        "diamond_found": st.shop.diamond_found,
        "boss": {"card": st.boss.card or None, "hp": st.boss.hp, "max_hp": st.boss.max_hp, "engaged": st.boss.engaged,
                 "round": st.boss.round},
        "floor": _floor_view(st),
        "vote": None,
        "facing": None,
        "support": None,
        "choice": None,
        "visit": None,
        "camp": list(st.queue) if st.stage == "camp" else None,
        "cleared": st.dungeon.cleared_total,
        "outcome": st.outcome or None,
        "reason": st.reason or None,
    }
    if st.stage == ROUTE:
        out["vote"] = {"session": st.ballot.session, "options": list(st.ballot.options), "votes": list(st.ballot.votes),
                       "deadline": deadline(st)}
    f = st.facing
    if f is not None:
        enc = ENC[f.card]
        cards = f.committed + (tuple(c for _, c in st.support.cards) if st.support else ())
        preview = {}
        for skill in SKILLS:
            mode, die, target = roll_plan(enc, skill, cards)
            preview[skill] = [mode, die, min(target, die)]  # the roll button: die and survival range
        out["facing"] = {
            "seat": f.seat, "card": f.card, "slot": f.slot, "switched": f.switched, "extra": f.extra,
            "committed": list(f.committed), "outcome": f.outcome or None, "preview": preview,
        }
    if st.support is not None:
        sp = st.support
        out["support"] = {"attacker": sp.attacker, "skill": sp.skill, "waiting": list(sp.queue),
                          "cards": [[s, c] for s, c in sp.cards]}
    if st.picker is not None:
        pk = st.picker
        choice: dict[str, Any] = {"seat": pk.seat, "mode": pk.mode, "count": pk.need, "target": pk.target,
                                  "chosen_count": len(pk.chosen)}
        if pk.seat == me:
            choice["chosen"] = list(pk.chosen)
        out["choice"] = choice
    if st.visit is not None:
        out["visit"] = {"seat": st.visit.seat, "bought": st.visit.bought, "rested": st.visit.rested,
                        "kind": st.market_kind}
    return out


def _floor_view(st: State) -> dict[str, Any] | None:
    d = st.dungeon
    if not d.floors:
        return None
    floor = CONTENT.floors[d.floor]
    cards = d.floors[d.floor]
    out = {
        "index": d.floor, "id": floor.id, "name": floor.name, "floors": len(CONTENT.floors),
        "final": [s for s in range(floor.size) if floor.final[s]],
        "cards": [c if up else None for c, up in zip(cards, d.face_up)],
        "cleared": [s for s, gone in enumerate(d.cleared) if gone],
        "selectable": list(selectable(st)),
        "route": st.route if st.route >= 0 else None,
    }
    if st.rules >= 3:
        # A final-row card is cleared, so a route vote may take the stairs down (Vote slot
        # -2). Only from version 3 on: a game of an earlier version shows what it showed.
        out["stairs_open"] = stairs_open(st)
    return out


def _name(card: str) -> str:
    if card in ENC:
        return ENC[card].name
    if card in CONTENT.design_of:
        return CONTENT.design(card).name
    return card


def _count(cards: tuple[str, ...]) -> str:
    return f"{len(cards)} card{'' if len(cards) == 1 else 's'}"


def _names(cards: tuple[str, ...]) -> str:
    return ", ".join(_name(c) for c in cards) or "nothing"


def describe(ev: Event) -> str:
    t = type(ev)
    if t is E.ExpeditionStarted:
        return f"The expedition sets out; {_name(ev.boss)} waits below ({ev.boss_hp} hit points)."
    if t is E.VoteOpened:
        timer = "no timer" if ev.deadline is None else f"until {ev.deadline} ms"
        slots = [s for s in ev.options if s != DESCEND]
        stairs = " or the stairs down" if DESCEND in ev.options else ""
        return f"Route vote {ev.session} opens on slots {slots}{stairs} ({timer})."
    if t is E.VoteCast:
        if ev.slot == DESCEND:
            return f"Seat {ev.seat} votes to take the stairs down."
        return f"Seat {ev.seat} votes for slot {ev.slot}."
    if t is E.VoteRestarted:
        return f"Nobody voted: vote {ev.session} starts (until {ev.deadline} ms)."
    if t is E.RouteChosen:
        how = {"only": "the only way on", "plurality": "most votes", "tiebreak": f"tie among {list(ev.tied)} broken at random",
               "random": "drawn at random after silent votes"}.get(ev.how, ev.how)
        if ev.slot == DESCEND:
            return f"The party takes the stairs down ({how})."
        return f"The party heads for {_name(ev.card)} (slot {ev.slot}, {how})."
    if t is E.EncounterStarted:
        return f"Encounter: {_name(ev.card)}; everyone draws a card."
    if t is E.BossEngaged:
        return f"The party faces {_name(ev.boss)} ({ev.hp} hit points)."
    if t is E.BossRoundStarted:
        return f"Boss round {ev.round}; everyone draws a card."
    if t is E.DeckReshuffled:
        return f"Seat {ev.seat} shuffles {len(ev.order)} discarded cards into a new draw pile."
    if t is E.CardsDrawn:
        return f"Seat {ev.seat} draws {len(ev.cards)} card(s)."
    if t is E.ChoiceOpened:
        what = {"limit": "discard down to the hand limit", "discard": "discard", "destroy": "destroy",
                "rescue": f"destroy from the piles to rescue seat {ev.target}"}.get(ev.mode, ev.mode)
        return f"Seat {ev.seat} must choose {ev.count} card(s) to {what}."
    if t is E.CardPicked:
        return f"Seat {ev.seat} picks a card."
    if t is E.CardUnpicked:
        return f"Seat {ev.seat} puts a card back."
    if t is E.ChoiceConfirmed:
        if ev.mode in ("limit", "discard"):
            return f"Seat {ev.seat} discards {_names(ev.cards)}."  # to the discard pile, which is public
        # Destroyed cards leave the game unseen (a view counts them): they came from a hand or
        # a draw pile, so the words count them too.
        return f"Seat {ev.seat} destroys {_count(ev.cards)}."
    if t is E.TurnStarted:
        return f"Seat {ev.seat} faces {_name(ev.card)}."
    if t is E.EncounterSwitched:
        return f"Seat {ev.seat} switches to the face-down slot {ev.slot}: {_name(ev.card)}."
    if t is E.CardCommitted:
        return f"Seat {ev.seat} commits {_name(ev.card)}."
    if t is E.AttackOffered:
        return f"Seat {ev.seat} offers a {ev.skill} attack for support."
    if t is E.SupportGiven:
        return f"Seat {ev.seat} supports with {_name(ev.card)}."
    if t is E.SupportEnded:
        return f"Seat {ev.seat} ends their support."
    if t is E.DiceRolled:
        verdict = "success" if ev.success else "failure"
        return f"Seat {ev.seat} rolls {ev.skill} on a d{ev.die} ({ev.mode}): {ev.roll} against 1-{ev.target}, {verdict}."
    if t is E.PenaltyAccepted:
        return f"Seat {ev.seat} accepts the penalty."
    if t is E.BribePaid:
        return f"Seat {ev.seat} bribes their way past for {ev.coins} coins."
    if t is E.CoinsGained:
        return f"Seat {ev.seat} gains {ev.amount} coin(s)."
    if t is E.CoinsLost:
        return f"Seat {ev.seat} loses {ev.amount} coin(s)."
    if t is E.HealthRestored:
        return f"Seat {ev.seat} heals {ev.amount} ({ev.reason}), now {ev.health}."
    if t is E.DamageTaken:
        return f"Seat {ev.seat} takes {ev.amount} damage, now {ev.health}."
    if t is E.KnockedOut:
        return f"Seat {ev.seat} falls unconscious."
    if t is E.EncountersRevealed:
        return f"Seat {ev.seat}'s knowledge reveals {_names(ev.cards)}."
    if t is E.LootGained:
        return f"Seat {ev.seat} finds {_names(ev.cards)}."
    if t is E.DiamondFound:
        return f"Seat {ev.seat} finds the Diamond!"
    if t is E.DiamondCut:
        # Not which rewards: they go face down into a draw pile, whose contents only its owner
        # sees (the replay's words reach other seats and spectators, and are blanked by card
        # id only, while these words would name the cards).
        return f"The Diamond of seat {ev.seat} shatters into {len(ev.loot)} reward cards, shuffled into the draw pile."
    if t is E.CardsDestroyed:
        return f"A hazard destroys the top of seat {ev.seat}'s draw pile: {_count(ev.cards)}."
    if t is E.ExtraEncounterStarted:
        return f"Extra encounter for seat {ev.seat}: {_name(ev.card)}."
    if t is E.TurnEnded:
        return f"Seat {ev.seat} is done."
    if t is E.BossDamaged:
        return f"Seat {ev.seat} wounds the boss: {ev.hp} hit points left."
    if t is E.RoundEnded:
        return f"Round over: slots {list(ev.cleared)} cleared, {_names(ev.cards)} uncovered."
    if t is E.BossRoundEnded:
        return f"Boss round {ev.round} is over."
    if t is E.MarketOpened:
        return "The bonus market opens." if ev.kind == "bonus" else "The party visits the market."
    if t is E.VisitStarted:
        return f"Seat {ev.seat} visits the market."
    if t is E.CardBought:
        return f"Seat {ev.seat} buys {_name(ev.card)} for {ev.cost}."
    if t is E.CardSold:
        return f"Seat {ev.seat} sells {_name(ev.card)} for {ev.value}."
    if t is E.Rested:
        return f"Seat {ev.seat} rests and heals {ev.amount}, now {ev.health}."
    if t is E.VisitEnded:
        return f"Seat {ev.seat} leaves the market."
    if t is E.MarketClosed:
        return "The market closes."
    if t is E.CampStarted:
        return f"Camp: seats {list(ev.order)} may rescue their unconscious teammates."
    if t is E.CampLeft:
        return f"Seat {ev.seat} breaks camp."
    if t is E.CampEnded:
        return "The party moves on."
    if t is E.FloorDescended:
        return f"The party descends to {CONTENT.floors[ev.floor].name}."
    if t is E.ExpeditionWon:
        return "The boss falls: the expedition succeeds!"
    if t is E.ForkDealt:
        # Never which cards: the words reach every seat and spectator.
        return ("The fork's hidden cards were dealt again: hands and draw piles, the face-down "
                "encounters, the market stock and the loot deck.")
    if t is E.ExpeditionLost:
        return "Everyone is unconscious: the expedition is lost." if ev.reason == "unconscious" else f"The expedition is lost ({ev.reason})."
    return t.__name__
