"""The turn clock when its seat to act has no legal action: it plays the next seat to act
that has one, and ends a table where none has (and the game has no timer of its own).
Before, the clock's Tick was refused, and the owner sent it again every second until the
table's idle end, a day later by default. No game leads there (selfplay now checks every
seat to act, not only the one it picks), so no log holds such a Tick: a refused Tick leaves
nothing in the log, and no table replays otherwise."""

from __future__ import annotations

import dataclasses

from croupier.engine import registry
from croupier.engine.contract import Tick
from croupier.engine.local import LocalTable
from croupier.engine.selfplay import selfplay

SEED = "cd" * 32


def _without_moves_for(spec, seats: set[int]):
    """`spec` whose legal_actions gives nothing to `seats` (a game that led a seat to act
    into having no move)."""
    legal = spec.legal_actions

    def legal_actions(game, seat):
        return [] if seat in seats else legal(game, seat)

    return dataclasses.replace(spec, legal_actions=legal_actions, previous={})


def test_the_clock_plays_the_next_seat_to_act_with_a_move_when_the_first_has_none():
    # Nightfall's opening: both seats to act, each choosing its first Location.
    spec = _without_moves_for(registry.get("nightfall"), {0})
    table = LocalTable(spec, "clock-next", 2, {"turn_clock_ms": 1000}, SEED)
    table.join_all(now=0)
    assert list(spec.to_act(table.state.game)) == [0, 1]
    due = table.host.deadline(table.state)
    envs = table.handle(Tick(now=due), now=due)  # before: refused, and sent again every second
    assert envs and table.state.status == "running"
    assert table.state.game.opening[1] is not None and table.state.game.opening[0] is None


def test_the_clock_ends_a_table_where_no_seat_to_act_has_a_move():
    spec = _without_moves_for(registry.get("expeditions"), {0, 1})
    table = LocalTable(spec, "clock-stuck", 2, {"turn_clock_ms": 1000}, SEED)
    table.join_all(now=0)
    due = table.host.deadline(table.state)
    table.handle(Tick(now=due), now=due)
    state = table.state
    assert state.status == "over" and state.end_reason == "forced"
    assert state.result["aborted"] and state.result["why"].startswith("stuck:")


def test_selfplay_finds_a_seat_to_act_without_a_move_even_when_another_seat_is_picked():
    """Every seat to act is checked, not only the one selfplay picks to move: with two seats
    to act (nightfall's opening) a seat without moves while the other is still to act was
    found only when it was the one picked."""
    import random

    spec = registry.get("nightfall")
    legal = spec.legal_actions

    def legal_actions(game, seat):
        # Seat 1 has no move while seat 0 has not opened yet (both are to act then).
        return [] if seat == 1 and game.opening[0] is None else legal(game, seat)

    broken = dataclasses.replace(spec, legal_actions=legal_actions, previous={})
    # A seed whose selfplay picks seat 0 first (so seat 1 is never the one picked then).
    seed = next(s for s in range(100) if random.Random(f"{s}/0").choice([0, 1]) == 0)
    report = selfplay(broken, games=1, seed=seed)
    assert any("seat 1 is to act but has no legal action" in e for e in report.errors), report.errors
