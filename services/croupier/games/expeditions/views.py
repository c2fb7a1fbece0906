"""What each seat (or a spectator) sees, the card ids hidden from it, and the move list's words.

Public: the board and its tiles, every play area (cards laid face up, figures, artefact tiles
and artefact chips), the top card of each discard pile and the pile sizes, the supply's
size, hand sizes. Private: a seat's own hand and its own victory point chips (they lie face
down). Never shown: other hands, the supply's cards or order, the cards under a discard
pile's top, the cards removed for a two-player game.
"""

from __future__ import annotations

from typing import Any

from croupier.games.expeditions import events as ev
from croupier.games.expeditions.cards import CONTENT
from croupier.games.expeditions.state import OVER, State

COLORS = CONTENT.colors
RANK = CONTENT.card_rank


def _sorted(cards) -> list[str]:
    return sorted(cards, key=RANK.__getitem__)


def view(state: State, seat: int | None) -> dict[str, Any]:
    cfg = state.cfg
    board = cfg.board
    over = state.phase == OVER
    players = []
    for i, pl in enumerate(state.players):
        mine = seat == i
        paths = {}
        for p, step in enumerate(pl.steps):
            if step:
                paths[COLORS[p]] = {"cards": list(pl.piles[p]), "step": step, "researcher": pl.researchers[p]}
        researchers = sum(1 for p, s in enumerate(pl.steps) if s and pl.researchers[p])
        adventurers = sum(1 for p, s in enumerate(pl.steps) if s and not pl.researchers[p])
        players.append({
            "seat": i,
            "hand": _sorted(pl.hand) if mine else None,
            "hand_count": len(pl.hand),
            "paths": paths,
            "adventurers_left": CONTENT.adventurers - adventurers,
            "researchers_left": CONTENT.researchers - researchers,
            "chips": pl.chips if mine or over else None,
            "artefact_tiles": list(pl.artefacts),
            "artefact_chips": pl.artefact_chips,
        })
    # Per path, the tile id on each step (index step - 1) or null; a tile id begins with its
    # kind (artefact-, arrow-, points-); points tiles' values are in tile_points.
    tiles = {COLORS[p]: list(row) for p, row in enumerate(state.tiles)}
    tile_points = {t: CONTENT.tile_points[t] for row in state.tiles for t in row if t in CONTENT.tile_points}
    discards = {
        COLORS[p]: {"top": pile[-1] if pile else None, "count": len(pile)} for p, pile in enumerate(state.discards)
    }
    pending = None
    if state.pending:
        pending = {
            "kind": state.pending,
            "excluded": COLORS[state.pending_exclude] if state.pending_exclude >= 0 else None,
        }
    return {
        "you": seat,
        "expedition": state.expedition,
        "expeditions": CONTENT.expeditions,
        "phase": state.phase,
        "current": state.current,
        "board": {
            "name": board.name,
            "paths": list(board.paths),
            "values": list(board.values),
            "bridge_after": board.bridge_after,
            "crossings_to_end": board.crossings_to_end,
            "tile_steps": list(cfg.tile_steps),
        },
        "crossings": state.crossings,
        "tiles": tiles,
        "tile_points": tile_points,
        # the points tiles that pay no more this expedition: none unless first arrival only
        "spent": sorted(state.spent) if cfg.vp_first_arrival_only else [],
        "supply_count": len(state.supply),
        "removed_count": len(state.removed),
        "discards": discards,
        "turn_discard": state.turn_discard,
        "pending": pending,
        "players": players,
        "last_expedition_points": list(state.last_points),
        "result": {
            "scores": list(state.scores),
            "winners": list(state.winners),
            "artefact_points": list(state.artefact_points),
        } if over else None,
    }


def hidden(state: State, seat: int | None) -> frozenset[str]:
    out: set[str] = set(state.supply)
    out.update(state.removed)
    for pile in state.discards:
        out.update(pile[:-1])
    for i, pl in enumerate(state.players):
        if i != seat:
            out.update(pl.hand)
    return frozenset(out)


def _seat(n: int) -> str:
    return f"seat {n}"


def describe(event: Any) -> str:
    t = type(event)
    if t is ev.ExpeditionDealt:
        removed = f", {len(event.removed)} cards back in the box" if event.removed else ""
        return (f"Expedition {event.expedition}: {len(event.hands[0]) if event.hands else 0} cards dealt to each "
                f"player{removed}, tiles placed; {_seat(event.first)} begins")
    if t is ev.PathBegun:
        who = "the researcher" if event.researcher else "an adventurer"
        return f"{_seat(event.seat)} begins the {event.card.split('-')[0]} path with {event.card} ({who})"
    if t is ev.CardPlayed:
        return f"{_seat(event.seat)} plays {event.card}"
    if t is ev.FigureMoved:
        return f"{_seat(event.seat)} moves the {event.color} figure to step {event.step}"
    if t is ev.ArtefactFound:
        return f"{_seat(event.seat)} finds an artefact ({event.tile}) on {event.color} step {event.step}"
    if t is ev.PointsFound:
        # The chip's value is its finder's until the end (a view shows others only the count).
        return f"{_seat(event.seat)} finds a victory-point chip on {event.color} step {event.step}"
    if t is ev.ArrowFound:
        tail = "may move a figure one step" if event.choice else "has no figure to move"
        return f"{_seat(event.seat)} finds an arrow on {event.color} step {event.step} and {tail}"
    if t is ev.LastStepPlayed:
        return f"{_seat(event.seat)} plays on the {event.color} path at its last step and may move another figure"
    if t is ev.MoveSkipped:
        return f"{_seat(event.seat)} does not use the move"
    if t is ev.CardDiscarded:
        return f"{_seat(event.seat)} discards {event.card}"
    if t is ev.CardDrawn:
        if event.source == "supply":
            return f"{_seat(event.seat)} draws from the supply"
        return f"{_seat(event.seat)} takes {event.card} from the {event.source} discard pile"
    if t is ev.ExpeditionEnded:
        why = "the deciding bridge crossing" if event.reason == "bridge" else "the last supply card"
        pts = ", ".join(f"{_seat(i)} {p:+d}" for i, p in enumerate(event.points))
        return f"Expedition {event.expedition} ends with {why}; figures score {pts}"
    if t is ev.ForkDealt:
        # No card named: the new hands and the supply's order are the fork's secrets.
        box = f", {len(event.removed)} in the box" if event.removed else ""
        return (f"The fork's hidden cards were dealt again: the hands ({', '.join(str(len(h)) for h in event.hands)} "
                f"cards), the supply ({len(event.supply)}){box}")
    if t is ev.GameEnded:
        scores = ", ".join(f"{_seat(i)} {s}" for i, s in enumerate(event.scores))
        return f"Game over: {scores}; winner {', '.join(_seat(w) for w in event.winners)}"
    return t.__name__
