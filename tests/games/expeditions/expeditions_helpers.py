"""Shared builders for the expeditions tests: a hand-made deal and quick positions."""

from __future__ import annotations

from croupier.engine.contract import Context
from croupier.engine.testing import ScriptedRng
from croupier.games.expeditions import SPEC
from croupier.games.expeditions.cards import CONTENT
from croupier.games.expeditions.events import ExpeditionDealt, FigureMoved, PathBegun

COLORS = CONTENT.colors
STEPS = 9


def tiles(placed: dict[tuple[str, int], str] | None = None) -> tuple[tuple[str | None, ...], ...]:
    """A tile grid with only the given (colour, step) -> tile id spaces filled."""
    placed = placed or {}
    return tuple(tuple(placed.get((c, s)) for s in range(1, STEPS + 1)) for c in COLORS)


def dealt(
    hands,
    supply=("blue-0-a", "blue-0-b", "blue-1-a", "blue-1-b"),
    *,
    tile_map=None,
    first: int = 0,
    expedition: int = 1,
    removed=(),
) -> ExpeditionDealt:
    return ExpeditionDealt(
        expedition=expedition, first=first, removed=tuple(removed), hands=tuple(tuple(h) for h in hands),
        supply=tuple(supply), tiles=tiles(tile_map),
    )


def on_path(seat: int, card: str, step: int, researcher: bool = False) -> list:
    """Events that put the seat's figure of the card's colour on `step` (no rules applied)."""
    color = card.split("-")[0]
    events = [PathBegun(seat=seat, card=card, researcher=researcher)]
    if step > 1:
        events.append(FigureMoved(seat=seat, color=color, step=step))
    return events


def fold(state, events):
    for event in events:
        state = SPEC.evolve(state, event)
    return state


def run(state, command, outcomes=()):
    """decide + evolve; returns (state, events)."""
    events = SPEC.decide(command, state, Context(rng=ScriptedRng(outcomes)))
    return fold(state, events), events


def position(seats, hands, *setup, current=0, phase="play", options=None, **deal):
    """A scenario after a hand-made deal and setup events, with `current` to act in `phase`.
    Setup events are folded without rule checks (they only place figures, tiles, chips)."""
    from dataclasses import replace

    from croupier.engine.testing import scenario

    sc = scenario(SPEC, seats, options).given(dealt(hands, **deal), *setup)
    return sc.given_state(replace(sc.state, phase=phase, current=current, pending="", pending_exclude=-1))
