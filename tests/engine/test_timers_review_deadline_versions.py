"""A table's deadline is its own rules version's, as its decide is.

TableHost.decide, legal_actions and evolve hand a table of an earlier rules version to that
version's host; deadline (what the rules service's timers schedule) and clock_deadline asked
the current version's game. A rules version that changes a game's deadline or to_act would
then time its older tables by the new rules, while their Ticks are decided by the old: a
deadline never scheduled (never fired), or one scheduled that the old rules refuse, again
every second. No game's versions differ there yet (latent); shown with a spec whose do."""

from __future__ import annotations

import dataclasses

from croupier.engine import registry
from croupier.engine.table import JoinSeat, TableHost

SEED = "cd" * 32
OLD_DUE = 5_000


def _spec():
    base = registry.get("expeditions")
    # Version 2 has no deadline of its own; version 1 had one, at OLD_DUE (a vote, say).
    current = dataclasses.replace(base, deadline=lambda game: None, previous={})
    return current.keeping(1, deadline=lambda game: OLD_DUE, clock_version=1)


def _v1_table(host: TableHost, options: dict):
    v1 = host.for_version(1)
    envs = v1.create("old", 2, options, SEED, now=0, command_id="c")
    state = host.fold(envs)
    for seat in range(2):
        more = host.decide(state, JoinSeat(seat=seat, player=f"p{seat}", entropy="e"), now=0, command_id=f"j{seat}")
        state = host.fold(more, state)
    assert state.rules_version == 1 and state.status == "running"
    return state


def test_an_older_tables_deadline_is_its_rules_versions():
    host = TableHost(_spec())
    state = _v1_table(host, {})
    assert host.deadline(state) == host.for_version(1).deadline(state) == OLD_DUE


def test_an_older_tables_clock_waits_as_its_rules_say():
    # Clock version 2 waits while the game's deadline runs: asked of the current rules (no
    # deadline), the clock of a version 2 table under a later version 3 would not wait.
    base = registry.get("expeditions")
    current = dataclasses.replace(base, rules_version=3, deadline=lambda game: None, previous={})
    spec = current.keeping(2, deadline=lambda game: OLD_DUE, clock_version=2)
    host = TableHost(spec)
    v2 = host.for_version(2)
    envs = v2.create("old", 2, {"turn_clock_ms": 1000}, SEED, now=0, command_id="c")
    state = host.fold(envs)
    for seat in range(2):
        more = host.decide(state, JoinSeat(seat=seat, player=f"p{seat}", entropy="e"), now=0, command_id=f"j{seat}")
        state = host.fold(more, state)
    assert v2.clock_deadline(state) is None  # its game's own deadline runs
    assert host.clock_deadline(state) is None
    assert host.deadline(state) == OLD_DUE  # not the clock's 1000, a Tick its rules refuse
