"""A fork made during delve's timed route vote gives the vote its whole time again (delve
rules version 4). Before, the fork's game was its origin's, whose vote deadline is an
absolute time, long past by the time anyone forks the game, so the fork's vote closed at its
first timer with whatever votes it held. Forks of tables of earlier versions keep the
origin's deadline (they fold by the origin's version), and audit clean."""

from __future__ import annotations

from croupier.engine import registry
from croupier.engine.audit import audit
from croupier.engine.contract import Rejection, Tick
from croupier.engine.local import LocalTable
from croupier.engine.table import TableHost
from croupier.games.delve import commands as DC
from croupier.games.delve.state import ROUTE

SEED = "cd" * 32
VOTE_MS = 30_000
LATER = 50_000_000  # the fork is made long after its origin's vote opened


def _delve_in_a_vote(spec) -> LocalTable:
    """A two-seat delve table at its first route vote (opened at 0), seat 0 has voted."""
    table = LocalTable(spec, "delve-origin", 2, {"vote_seconds": VOTE_MS // 1000}, SEED)
    table.join_all(now=0)
    game = table.state.game
    assert game.stage == ROUTE and game.ballot.deadline == VOTE_MS
    table.handle(DC.Vote(seat=0, slot=game.ballot.options[0]), now=1000)
    return table


def test_a_fork_made_during_a_route_vote_gives_the_vote_its_whole_time_again():
    spec = registry.get("delve")
    assert spec.rules_version == 4
    origin = _delve_in_a_vote(spec)
    host = TableHost(spec)
    fork = host.fork("delve-fork", origin.envelopes, "ef" * 32, now=LATER)
    state = host.fold(fork)
    ballot = state.game.ballot
    assert ballot.deadline == LATER + VOTE_MS
    assert host.deadline(state) == LATER + VOTE_MS  # what the owner schedules its timer by
    assert ballot.votes == origin.state.game.ballot.votes  # the votes cast so far stay
    view = host.view(state, 1)
    assert view["game"]["vote"]["deadline"] == LATER + VOTE_MS
    # The fork's first timer a second in is not due: its vote runs on.
    try:
        host.decide(state, Tick(now=LATER + 1000), now=LATER + 1000)
        raise AssertionError("the fork's vote closed at once")
    except Rejection as exc:
        assert exc.code in ("not_due", "too_early")
    # Seat 1 votes in the fork, and the vote closes as a whole vote does.
    options = state.game.ballot.options
    envs = host.decide(state, DC.Vote(seat=1, slot=options[-1]), now=LATER + 2000)
    assert "RouteChosen" in [e.type for e in envs]
    assert audit(fork + envs).ok  # the fork and what follows re-run from the log


def test_a_fork_of_a_table_of_an_earlier_rules_version_keeps_its_origins_deadline_and_audits_clean():
    """A fork folds by its origin's rules version: a fork of a version 3 table, made by the
    current host, keeps the deadline as version 3 did, so forks in the log replay as they
    were played. Its audit is clean: the fork's first events are sealed under the current
    rules version and its moves under its origin's, and audit took every command to be
    sealed under the first event's version, so a fork of a table from before an upgrade
    failed its audit at its first move."""
    spec = registry.get("delve")
    origin = _delve_in_a_vote(spec.for_version(3))
    host = TableHost(spec)
    fork = host.fork("delve-fork-v3", origin.envelopes, "ef" * 32, now=LATER)
    state = host.fold(fork)
    assert state.rules_version == 3
    assert state.game.ballot.deadline == VOTE_MS
    envs = host.decide(state, Tick(now=LATER + 1000), now=LATER + 1000)  # closes at once, as it did
    assert "RouteChosen" in [e.type for e in envs]
    assert audit(fork + envs).ok
