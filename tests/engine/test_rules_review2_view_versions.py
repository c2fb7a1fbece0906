"""A table's view and its seats to act are its own rules version's, as its moves are.

TableHost.view asked the current version's game for the view and to_act of every table, and
the rules service's answer to a move (want_next: the next seats to act and their actions)
the current version's to_act, while decide and legal_actions hand a table of an earlier
version to that version's host: a rules version that changes what a seat sees (a view that
showed too much, say) or who acts would have shown its older tables by the new rules, with
moves decided by the old (to_act naming a seat whose legal actions are none). No game's
versions differ there yet (latent); shown with a spec whose do."""

from __future__ import annotations

import dataclasses

from croupier.engine import registry
from croupier.engine.table import JoinSeat, TableHost

SEED = "cd" * 32


def _spec():
    base = registry.get("expeditions")
    current = dataclasses.replace(base, previous={})
    # Version 1 (kept) showed its games otherwise, and named its seats to act the other way round.
    old_view = lambda game, seat: {"old": True}  # noqa: E731
    old_to_act = lambda game: tuple(reversed(range(game.seats)))  # noqa: E731
    return current.keeping(1, view=old_view, to_act=old_to_act, clock_version=1)


def _table(host: TableHost, version: int):
    made = host.for_version(version)
    envs = made.create(f"v{version}", 2, {}, SEED, now=0, command_id="c")
    state = host.fold(envs)
    for seat in range(2):
        more = host.decide(state, JoinSeat(seat=seat, player=f"p{seat}", entropy="e"), now=0, command_id=f"j{seat}")
        state = host.fold(more, state)
    assert state.rules_version == version and state.status == "running"
    return state


def test_an_older_tables_view_and_seats_to_act_are_its_rules_versions():
    host = TableHost(_spec())
    old = _table(host, 1)
    view = host.view(old, 0)
    assert view["game"] == {"old": True}
    assert view["to_act"] == [1, 0] == list(host.to_act(old))
    current = _table(host, host.spec.rules_version)
    view = host.view(current, 0)
    assert "old" not in view["game"] and view["to_act"] == list(host.to_act(current)) == [current.game.current]
