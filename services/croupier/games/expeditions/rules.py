"""decide, evolve and legal_actions of expeditions (Lost Cities: The Board Game).

One rule check per kind of move (`_begin_error`, `_play_error`, ...) returns None or the
(code, message) of why the move is illegal; `decide` raises it as a Rejection and
`legal_actions` keeps the candidates it accepts, so the two cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from croupier.engine.contract import MALFORMED, Command, Context, Emitter, Event, Rejection, Start, Tick, sort_actions
from croupier.games.expeditions.cards import ARROW, ARTEFACT, CONTENT, config
from croupier.games.expeditions.commands import (
    BeginPath,
    DiscardCard,
    DrawFromDiscard,
    DrawFromSupply,
    MoveFigure,
    PlayOnPath,
    SkipMove,
)
from croupier.games.expeditions.events import (
    ArrowFound,
    ArtefactFound,
    CardDiscarded,
    CardDrawn,
    CardPlayed,
    ExpeditionDealt,
    ExpeditionEnded,
    FigureMoved,
    ForkDealt,
    GameEnded,
    LastStepPlayed,
    MoveSkipped,
    PathBegun,
    PointsFound,
)
from croupier.games.expeditions.state import (
    ARROW_MOVE,
    DRAW,
    LAST_STEP_MOVE,
    MOVE,
    OVER,
    PLAY,
    SCORED,
    SETUP,
    Player,
    State,
    replace_player,
    replace_state,
)

COLORS = CONTENT.colors
COLOR_INDEX = {c: i for i, c in enumerate(COLORS)}
CARD_COLOR = CONTENT.card_color
CARD_VALUE = CONTENT.card_value
SUPPLY = "supply"

Error = tuple[str, str] | None


# --- setup ----------------------------------------------------------------------------


def initial_state(options: Mapping[str, Any], seats: int) -> State:
    cfg = config(
        options.get("board", "standard"),
        options.get("tile_spaces", "2,4,6,7,9"),
        options.get("artefact_table", "standard"),
        bool(options.get("vp_first_arrival_only", False)),
        bool(options.get("strict_start", False)),
    )
    return State(cfg=cfg, seats=seats)


def _deal(state: State, rng: Any, expedition: int, first: int) -> ExpeditionDealt:
    """Shuffle the cards (two players: the first ones shuffled go back to the box), deal the
    hands, and shuffle the tiles onto the tile spaces (path by path, step by step)."""
    deck = list(rng.shuffle(list(CONTENT.cards)))
    removed = deck[: CONTENT.removed_with_two] if state.seats == 2 else []
    rest = deck[len(removed):]
    size = CONTENT.hand_size
    hands = tuple(tuple(rest[i * size:(i + 1) * size]) for i in range(state.seats))
    supply = tuple(rest[state.seats * size:])
    steps = state.cfg.tile_steps
    spaces = len(COLORS) * len(steps)
    slots: list[str | None] = list(CONTENT.tiles) + [None] * max(0, spaces - len(CONTENT.tiles))
    placed = list(rng.shuffle(slots))[:spaces]
    n = state.cfg.board.steps
    tiles = []
    for p in range(len(COLORS)):
        row: list[str | None] = [None] * n
        for k, step in enumerate(steps):
            row[step - 1] = placed[p * len(steps) + k]
        tiles.append(tuple(row))
    return ExpeditionDealt(
        expedition=expedition, first=first, removed=tuple(removed), hands=hands, supply=supply, tiles=tuple(tiles)
    )


def redeal(state: State, ctx: Context) -> list[Event]:
    """A fork's new deal (GameSpec.redeal). One pool: every card in a hand, in the supply or
    back in the box (two players). The deal shuffles all of these together, so any of them
    could be in any of these places; the pool is put in the canonical card order, shuffled
    with the fork's randomness and laid back seat by seat, then the supply, then the box, in
    the same numbers. The cards of the discard piles (each was laid face up, in the record)
    and every card laid on a path stay. Nothing is dealt before the first deal."""
    if not state.players:
        return []
    hands = [pl.hand for pl in state.players]
    pool = sorted((c for zone in (*hands, state.supply, state.removed) for c in zone), key=CONTENT.card_rank.__getitem__)
    if not pool:
        return []
    cards = list(ctx.rng.shuffle(pool))
    dealt = []
    at = 0
    for hand in hands:
        dealt.append(tuple(cards[at:at + len(hand)]))
        at += len(hand)
    supply = tuple(cards[at:at + len(state.supply)])
    removed = tuple(cards[at + len(state.supply):])
    return [ForkDealt(hands=tuple(dealt), supply=supply, removed=removed)]


# --- the rule checks shared by decide and legal_actions -------------------------------


def _turn_error(state: State, seat: Any, phase: str) -> Error:
    if state.phase == SETUP:
        return ("not_started", "the game has not been dealt yet")
    if state.phase == OVER:
        return ("game_over", "the game is over")
    if seat != state.current:
        return ("not_your_turn", f"it is seat {state.current}'s turn")
    if state.phase != phase:
        return ("wrong_phase", f"this move belongs to the {phase} phase; the turn is in its {state.phase} phase")
    return None


def _hand_error(player: Player, card: Any) -> Error:
    if not isinstance(card, str) or card not in player.hand:
        return ("card_not_in_hand", f"{card!r} is not in your hand")
    return None


def _begin_error(state: State, seat: Any, card: Any, researcher: Any) -> Error:
    err = _turn_error(state, seat, PLAY)
    if err:
        return err
    if not isinstance(researcher, bool):
        return ("malformed_command", "researcher must be true or false")
    player = state.players[seat]
    err = _hand_error(player, card)
    if err:
        return err
    p = CARD_COLOR[card]
    if player.steps[p]:
        return ("path_already_begun", f"you are already on the {COLORS[p]} path; play on it instead")
    if state.cfg.strict_start:
        value = CARD_VALUE[card]
        if any(CARD_COLOR[c] == p and CARD_VALUE[c] < value for c in player.hand):
            return ("not_lowest_card", f"a path begins with your lowest {COLORS[p]} card")
    placed = sum(1 for i, s in enumerate(player.steps) if s and player.researchers[i] == researcher)
    if researcher and placed >= CONTENT.researchers:
        return ("no_researcher_left", "your researcher is already on a path")
    if not researcher and placed >= CONTENT.adventurers:
        return ("no_adventurer_left", "all your adventurers are on paths")
    return None


def _play_error(state: State, seat: Any, card: Any) -> Error:
    err = _turn_error(state, seat, PLAY)
    if err:
        return err
    player = state.players[seat]
    err = _hand_error(player, card)
    if err:
        return err
    p = CARD_COLOR[card]
    if not player.steps[p]:
        return ("path_not_begun", f"you have not begun the {COLORS[p]} path")
    top = player.piles[p][-1]
    if CARD_VALUE[card] < CARD_VALUE[top]:
        return ("card_too_low", f"{card} is lower than {top}, the top of your {COLORS[p]} cards")
    return None


def _discard_error(state: State, seat: Any, card: Any) -> Error:
    return _turn_error(state, seat, PLAY) or _hand_error(state.players[seat], card)


def _color_error(color: Any) -> Error:
    if not isinstance(color, str) or color not in COLOR_INDEX:
        return ("unknown_color", f"{color!r} is not one of {', '.join(COLORS)}")
    return None


def _movable(player: Player, p: int, last: int) -> bool:
    return 0 < player.steps[p] < last


def _move_error(state: State, seat: Any, color: Any) -> Error:
    err = _turn_error(state, seat, MOVE) or _color_error(color)
    if err:
        return err
    p = COLOR_INDEX[color]
    player = state.players[seat]
    if not player.steps[p]:
        return ("no_figure_on_path", f"you have no figure on the {color} path")
    if p == state.pending_exclude:
        return ("same_figure", "the last-step rule moves one of your other figures")
    if player.steps[p] >= state.cfg.board.steps:
        return ("figure_at_last_step", f"your {color} figure is on the last step")
    return None


def _skip_error(state: State, seat: Any) -> Error:
    return _turn_error(state, seat, MOVE)


def _supply_error(state: State, seat: Any) -> Error:
    return _turn_error(state, seat, DRAW)


def _take_error(state: State, seat: Any, color: Any) -> Error:
    err = _turn_error(state, seat, DRAW) or _color_error(color)
    if err:
        return err
    if not state.discards[COLOR_INDEX[color]]:
        return ("discard_pile_empty", f"the {color} discard pile is empty")
    return None


def _check(state: State, command: Command) -> Error:
    seat = command.seat
    t = type(command)
    if t is BeginPath:
        return _begin_error(state, seat, command.card, command.researcher)
    if t is PlayOnPath:
        return _play_error(state, seat, command.card)
    if t is DiscardCard:
        return _discard_error(state, seat, command.card)
    if t is MoveFigure:
        return _move_error(state, seat, command.color)
    if t is SkipMove:
        return _skip_error(state, seat)
    if t is DrawFromSupply:
        return _supply_error(state, seat)
    if t is DrawFromDiscard:
        return _take_error(state, seat, command.color)
    return ("unknown_command", f"{command.TYPE or t.__name__} is not a move of expeditions")


def legal_actions(state: State, seat: int) -> list[Command]:
    if state.phase not in (PLAY, MOVE, DRAW) or seat != state.current:
        return []
    out: list[Command] = []
    if state.phase == PLAY:
        player = state.players[seat]
        for card in player.hand:
            out.append(DiscardCard(seat=seat, card=card))
            if player.steps[CARD_COLOR[card]]:
                if _play_error(state, seat, card) is None:
                    out.append(PlayOnPath(seat=seat, card=card))
            else:
                for researcher in (False, True):
                    if _begin_error(state, seat, card, researcher) is None:
                        out.append(BeginPath(seat=seat, card=card, researcher=researcher))
    elif state.phase == MOVE:
        out.append(SkipMove(seat=seat))
        for color in COLORS:
            if _move_error(state, seat, color) is None:
                out.append(MoveFigure(seat=seat, color=color))
    else:
        out.append(DrawFromSupply(seat=seat))
        for color in COLORS:
            if _take_error(state, seat, color) is None:
                out.append(DrawFromDiscard(seat=seat, color=color))
    return sort_actions(out)


# --- decide ---------------------------------------------------------------------------


def _Out(state: State, ctx: Context | None = None) -> Emitter:
    """The events of one decide, each seen by the rules after it (engine.Emitter)."""
    return Emitter(state, evolve, ctx)


def decide(command: Command, state: State, ctx: Context) -> list[Event]:
    if isinstance(command, Start):
        if state.phase != SETUP:
            raise Rejection("already_started", "the game has already been dealt")
        first = ctx.rng.below(state.seats)
        return [_deal(state, ctx.rng, 1, first)]
    if isinstance(command, Tick):
        raise Rejection("no_deadline", "expeditions has no deadlines")
    err = _check(state, command)
    if err:
        code, message = err
        raise Rejection(code, message, MALFORMED if code in ("malformed_command", "unknown_command") else "illegal")
    seat = command.seat
    out = _Out(state, ctx)
    t = type(command)
    if t is BeginPath:
        out.emit(PathBegun(seat=seat, card=command.card, researcher=command.researcher))
    elif t is PlayOnPath:
        p = CARD_COLOR[command.card]
        out.emit(CardPlayed(seat=seat, card=command.card))
        last = state.cfg.board.steps
        player = state.players[seat]
        if player.steps[p] < last:
            _advance(out, seat, p)
        elif any(_movable(player, q, last) for q in range(len(COLORS)) if q != p):
            out.emit(LastStepPlayed(seat=seat, color=COLORS[p]))
    elif t is DiscardCard:
        out.emit(CardDiscarded(seat=seat, card=command.card))
    elif t is MoveFigure:
        _advance(out, seat, COLOR_INDEX[command.color])
    elif t is SkipMove:
        out.emit(MoveSkipped(seat=seat))
    elif t is DrawFromSupply:
        out.emit(CardDrawn(seat=seat, card=state.supply[0], source=SUPPLY))
        if not out.state.supply:
            _end_expedition(out, "supply", seat)
    elif t is DrawFromDiscard:
        out.emit(CardDrawn(seat=seat, card=state.discards[COLOR_INDEX[command.color]][-1], source=command.color))
    return out.events


def _advance(out: _Out, seat: int, p: int) -> None:
    """Move the seat's figure on path p one step; end the expedition at the deciding bridge
    crossing (its tile unresolved), else find the tile of the new step."""
    state = out.state
    board = state.cfg.board
    old = state.players[seat].steps[p]
    out.emit(FigureMoved(seat=seat, color=COLORS[p], step=old + 1))
    if old == board.bridge_after and out.state.crossings >= board.crossings_to_end:
        _end_expedition(out, "bridge", seat)
        return
    tile = state.tiles[p][old]
    if tile is None:
        return
    kind = CONTENT.tile_kind[tile]
    if kind == ARTEFACT:
        out.emit(ArtefactFound(seat=seat, color=COLORS[p], step=old + 1, tile=tile))
    elif kind == ARROW:
        player = out.state.players[seat]
        choice = any(_movable(player, q, board.steps) for q in range(len(COLORS)))
        out.emit(ArrowFound(seat=seat, color=COLORS[p], step=old + 1, tile=tile, choice=choice))
    elif not (state.cfg.vp_first_arrival_only and tile in state.spent):
        out.emit(PointsFound(seat=seat, color=COLORS[p], step=old + 1, tile=tile, points=CONTENT.tile_points[tile]))


def figure_points(state: State, player: Player) -> int:
    values = state.cfg.board.values
    return sum(values[s - 1] * (2 if player.researchers[p] else 1) for p, s in enumerate(player.steps) if s)


def _end_expedition(out: _Out, reason: str, last_player: int) -> None:
    state = out.state
    points = tuple(figure_points(state, pl) for pl in state.players)
    chips = tuple(max(0, pl.chips + pts) for pl, pts in zip(state.players, points))
    artefacts = tuple(pl.artefact_chips + len(pl.artefacts) for pl in state.players)
    out.emit(ExpeditionEnded(
        expedition=state.expedition, reason=reason, last_player=last_player,
        points=points, chips=chips, artefact_chips=artefacts,
    ))
    if state.expedition >= CONTENT.expeditions:
        bonus = tuple(state.cfg.artefact_points(a) for a in artefacts)
        scores = tuple(max(0, c + b) for c, b in zip(chips, bonus))
        best = max(scores)
        tied = [s for s in range(state.seats) if scores[s] == best]
        most = max(artefacts[s] for s in tied)
        winners = tuple(s for s in tied if artefacts[s] == most)
        out.emit(GameEnded(artefact_points=bonus, scores=scores, winners=winners))
    else:
        out.emit(_deal(out.state, out.ctx.rng, state.expedition + 1, (last_player + 1) % state.seats))


# --- evolve ---------------------------------------------------------------------------


def _without(cards: tuple[str, ...], card: str) -> tuple[str, ...]:
    i = cards.index(card) if card in cards else -1
    return cards if i < 0 else cards[:i] + cards[i + 1:]


def _set(items: tuple, i: int, value: Any) -> tuple:
    return items[:i] + (value,) + items[i + 1:]


def _with_player(state: State, seat: int, player: Player, **changes: Any) -> State:
    return replace_state(state, players=_set(state.players, seat, player), **changes)


def evolve(state: State, event: Event) -> State:
    t = type(event)
    if t is CardDrawn:
        seat = event.seat
        player = state.players[seat]
        player = replace_player(player, hand=player.hand + (event.card,))
        if event.source == SUPPLY:
            changes: dict[str, Any] = {"supply": state.supply[1:]}
        else:
            p = COLOR_INDEX.get(event.source, 0)
            changes = {"discards": _set(state.discards, p, state.discards[p][:-1])}
        return _with_player(state, seat, player, current=(seat + 1) % state.seats, phase=PLAY,
                            turn_discard=None, **changes)
    if t is CardDiscarded:
        player = state.players[event.seat]
        p = CARD_COLOR.get(event.card, 0)
        return _with_player(
            state, event.seat, replace_player(player, hand=_without(player.hand, event.card)),
            discards=_set(state.discards, p, state.discards[p] + (event.card,)), turn_discard=event.card, phase=DRAW,
        )
    if t is CardPlayed:
        player = state.players[event.seat]
        p = CARD_COLOR.get(event.card, 0)
        player = replace_player(player, hand=_without(player.hand, event.card), piles=_set(player.piles, p, player.piles[p] + (event.card,)))
        return _with_player(state, event.seat, player, phase=DRAW)
    if t is FigureMoved:
        player = state.players[event.seat]
        p = COLOR_INDEX.get(event.color, 0)
        crossed = player.steps[p] <= state.cfg.board.bridge_after < event.step
        player = replace_player(player, steps=_set(player.steps, p, event.step))
        return _with_player(state, event.seat, player, phase=DRAW, pending="", pending_exclude=-1,
                            crossings=state.crossings + crossed)
    if t is PathBegun:
        player = state.players[event.seat]
        p = CARD_COLOR.get(event.card, 0)
        player = replace_player(
            player, hand=_without(player.hand, event.card), piles=_set(player.piles, p, (event.card,)),
            steps=_set(player.steps, p, 1), researchers=_set(player.researchers, p, event.researcher),
        )
        return _with_player(state, event.seat, player, phase=DRAW)
    if t is ArrowFound:
        if not event.choice:
            return state
        return replace_state(state, phase=MOVE, pending=ARROW_MOVE, pending_exclude=-1)
    if t is LastStepPlayed:
        return replace_state(state, phase=MOVE, pending=LAST_STEP_MOVE, pending_exclude=COLOR_INDEX.get(event.color, -1))
    if t is MoveSkipped:
        return replace_state(state, phase=DRAW, pending="", pending_exclude=-1)
    if t is ArtefactFound:
        player = state.players[event.seat]
        p = COLOR_INDEX.get(event.color, 0)
        player = replace_player(player, artefacts=player.artefacts + (event.tile,))
        return _with_player(state, event.seat, player, tiles=_set(state.tiles, p, _set(state.tiles[p], event.step - 1, None)))
    if t is PointsFound:
        player = state.players[event.seat]
        return _with_player(state, event.seat, replace_player(player, chips=player.chips + event.points),
                            spent=state.spent | {event.tile})
    if t is ExpeditionDealt:
        return _dealt(state, event)
    if t is ForkDealt:
        players = tuple(
            replace_player(pl, hand=tuple(event.hands[i])) if i < len(event.hands) else pl
            for i, pl in enumerate(state.players)
        )
        return replace_state(state, players=players, supply=tuple(event.supply), removed=tuple(event.removed))
    if t is ExpeditionEnded:
        players = tuple(
            replace_player(pl, chips=event.chips[i], artefact_chips=event.artefact_chips[i], artefacts=())
            for i, pl in enumerate(state.players)
        )
        return replace_state(state, players=players, phase=SCORED, current=event.last_player,
                       pending="", pending_exclude=-1, turn_discard=None, last_points=tuple(event.points))
    if t is GameEnded:
        return replace_state(state, phase=OVER, artefact_points=tuple(event.artefact_points), scores=tuple(event.scores),
                       winners=tuple(event.winners))
    return state


def _dealt(state: State, event: ExpeditionDealt) -> State:
    n = len(COLORS)
    empty = tuple(() for _ in range(n))
    old = state.players or tuple(Player() for _ in range(state.seats))
    players = tuple(
        replace_player(
            old[i] if i < len(old) else Player(),
            hand=tuple(hand), piles=empty, steps=(0,) * n, researchers=(False,) * n, artefacts=(),
        )
        for i, hand in enumerate(event.hands)
    )
    return replace_state(
        state, phase=PLAY, expedition=event.expedition, current=event.first, players=players,
        supply=tuple(event.supply), discards=empty, removed=tuple(event.removed),
        tiles=tuple(tuple(row) for row in event.tiles), spent=frozenset(), crossings=0, pending="",
        pending_exclude=-1, turn_discard=None,
    )


# --- reads ----------------------------------------------------------------------------


def is_over(state: State) -> bool:
    return state.phase == OVER


def to_act(state: State) -> tuple[int, ...]:
    return (state.current,) if state.phase in (PLAY, MOVE, DRAW) else ()


def result(state: State) -> dict[str, Any]:
    return {
        "winners": list(state.winners),
        "scores": list(state.scores),
        "chips": [pl.chips for pl in state.players],
        "artefact_chips": [pl.artefact_chips for pl in state.players],
        "artefact_points": list(state.artefact_points),
    }
