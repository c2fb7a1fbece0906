"""The turn clock (a table option): a seat that lets it run out gets its first legal action
played for it (or forfeits); a table whose seats all stopped moving is ended as abandoned
after CLOCK_IDLE_MOVES_PER_SEAT clock moves a seat, rather than played by the clock for good;
while a game's own deadline runs (delve's route vote) the game's timer decides; and tables
already in the log keep the clock's rules they were created with."""

from __future__ import annotations

import pytest

from croupier.engine import registry
from croupier.engine.audit import audit
from croupier.engine.contract import Rejection, Tick
from croupier.engine.local import LocalTable
from croupier.engine.table import CLOCK_IDLE_MOVES_PER_SEAT, TableHost

SEED = "cd" * 32


def _table(game: str, seats: int, **options) -> LocalTable:
    table = LocalTable(registry.get(game), f"{game}-clock", seats, options, SEED)
    table.join_all()
    return table


def _tick(table: LocalTable) -> list:
    """The clock runs out: a Tick at the moment it is due."""
    due = table.host.deadline(table.state)
    assert due is not None, "no deadline"
    return table.handle(Tick(now=due), now=due)


@pytest.mark.parametrize("raw", [True, 1.9, "1.5", "²", 500, -1, 86_400_001, None])
def test_a_turn_clock_is_zero_or_a_whole_number_of_ms_from_a_second_to_a_day(raw):
    host = TableHost(registry.get("expeditions"))
    with pytest.raises(Rejection) as refused:
        host.parse_options({"turn_clock_ms": raw})
    assert refused.value.code == "invalid_option"


def test_the_clock_rules_go_with_the_games_rules_version():
    for game in registry.GAME_IDS:
        spec = registry.get(game)
        assert spec.clock_version == 2 and spec.for_version(1).clock_version == 1, game


def test_an_abandoned_table_with_a_clock_ends_instead_of_being_played_by_the_clock_for_good():
    """Expeditions' first legal action can go round in circles (discard a card, take it back),
    so a table nobody plays would be played by the clock for ever, one event a clock period."""
    table = _table("expeditions", 2, turn_clock_ms=1000)
    limit = CLOCK_IDLE_MOVES_PER_SEAT * 2
    moves = 0
    while table.state.status == "running" and moves < 10 * limit:
        _tick(table)
        moves += 1
    assert table.state.status == "over"
    assert moves == limit + 1  # limit clock moves, then the end
    assert table.state.result["aborted"] and "abandoned" in table.state.result["why"]
    assert audit(table.envelopes).ok  # the log re-runs to the same end


def test_a_seat_that_moves_starts_the_count_again():
    table = _table("expeditions", 2, turn_clock_ms=1000)
    limit = CLOCK_IDLE_MOVES_PER_SEAT * 2
    for _ in range(limit - 1):
        _tick(table)
    seat = table.host.spec.to_act(table.state.game)[0]
    table.handle(table.host.legal_actions(table.state, seat)[0], now=table.state.last_time + 10)
    assert table.state.idle_moves == 0
    for _ in range(limit):
        _tick(table)
    assert table.state.status == "running"
    _tick(table)
    assert table.state.status == "over"


def test_the_clock_waits_while_the_games_own_deadline_runs():
    """Delve's route vote waits on every conscious seat until its deadline: the clock must not
    play (or forfeit) for to_act[0], who may have voted already."""
    table = _table("delve", 3, turn_clock_ms=1000, vote_seconds=30)
    game = table.host.spec
    while game.deadline(table.state.game) is None:  # play on to the first vote
        seat = game.to_act(table.state.game)[0]
        table.handle(table.host.legal_actions(table.state, seat)[0], now=table.state.last_time + 10)
    vote_ends = game.deadline(table.state.game)
    assert table.host.deadline(table.state) == vote_ends  # not the clock's last_time + 1000
    early = table.state.last_time + 1000
    with pytest.raises(Rejection) as refused:
        table.handle(Tick(now=early), now=early)
    assert refused.value.code == "not_due"


def test_a_table_created_before_the_clock_rules_changed_keeps_the_old_ones():
    """A table of rules version 1 (in the log before 2026-12-02): the clock plays on as it
    did, and the audit of its log re-runs the same way."""
    table = LocalTable(registry.get("expeditions").for_version(1), "old", 2, {"turn_clock_ms": 1000}, SEED)
    table.join_all()
    assert table.state.clock_version == 1
    for _ in range(CLOCK_IDLE_MOVES_PER_SEAT * 2 + 5):
        _tick(table)
    assert table.state.status == "running"
    assert audit(table.envelopes).ok


def test_a_delve_seat_that_forfeits_loses_the_table_for_everyone():
    """Delve is co-operative ("everyone wins together or loses together"), from its rules
    version 2; version 1's tables gave the other seats the win, and keep that."""
    options = {"turn_clock_ms": 1000, "turn_clock_action": "forfeit"}
    for spec in (registry.get("delve"), registry.get("delve").for_version(1)):
        table = LocalTable(spec, "coop", 2, options, SEED)
        table.join_all()
        if spec.clock_version >= 2:
            for _ in range(20):  # past any vote (its own timer ends it): the clock's phase
                due = spec.deadline(table.state.game)
                if due is None:
                    break
                table.handle(Tick(now=due), now=due)
        forfeited = spec.to_act(table.state.game)[0]
        _tick(table)
        result = table.state.result
        assert result["forfeited"] == forfeited
        expected = [] if spec.rules_version >= 2 else [1 - forfeited]
        assert list(result["winners"]) == expected, spec.rules_version


def test_a_fork_gives_its_seats_the_whole_clock_allowance_again():
    """A fork made to resume a table the clock had been playing starts its count of clock
    moves in a row at 0 (before, it took its origin's and could be ended as abandoned at its
    first deadline); a fork logged before this (no count in its TableForked) keeps the
    origin's, so it folds and audits as it did."""
    from croupier.engine.envelope import Envelope

    table = _table("expeditions", 2, turn_clock_ms=1000)
    limit = CLOCK_IDLE_MOVES_PER_SEAT * 2
    for _ in range(limit - 1):
        _tick(table)
    assert table.state.idle_moves == limit - 1
    host = table.host
    fork = host.fork("fork-1", table.envelopes, "ef" * 32, now=table.state.last_time)
    state = host.fold(fork)
    assert fork[1].payload["idle_moves"] == 0 and state.idle_moves == 0
    for _ in range(limit - 1):  # the fork's seats get the whole allowance
        due = host.deadline(state)
        state = host.fold(host.decide(state, Tick(now=due), now=due), state)
    assert state.status == "running"
    assert audit(fork).ok
    # A fork logged before the count was recorded: its payload has none.
    old = dict(fork[1].to_dict())
    old["payload"] = {k: v for k, v in old["payload"].items() if k != "idle_moves"}
    before = host.fold([fork[0], Envelope.from_dict(old)])
    assert before.idle_moves == limit - 1
