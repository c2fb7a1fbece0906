"""Where a bot's think time counts from (`--think-from`), on a clock the test sets: nothing
here runs a gateway, and no figure is timed.

The offered load of a think run is tables / think time (500 moves/s for 1,000 tables at
2 s). With `--think-from move` (the default) a table makes one move per think time whatever
the lag of its views, so the stack is offered that load and `served_ratio` says how much of
it it served. With `--think-from view` every lag adds to the pause: the load offered falls
as the stack slows, and even an idle stack served ~98 % (measured 2026-12-03)."""

from __future__ import annotations

import asyncio
import statistics

import pytest

from croupier_gateway import loadtest
from croupier_gateway.loadtest import Config, TimedClient, Worker

START = 1000.0  # the measured run's start, on the test's clock


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    c = Clock(START + 10.0)
    monkeypatch.setattr(loadtest.time, "monotonic", c)
    return c


def worker(think_from: str = "move", think_ms: float = 2000.0, seed: int = 0) -> Worker:
    cfg = Config(games=("journey",), tables=1, duration_s=60, think_ms=think_ms, workers=1, think_from=think_from,
                 seed=seed)
    return Worker(0, cfg, START, out=None)


def table() -> TimedClient:
    return TimedClient(client=None, owner=None, game="journey")


def fixed_think(w: Worker, seconds: float) -> None:
    w.think = lambda: seconds  # type: ignore[method-assign]


def test_a_think_counts_from_the_tables_last_move_so_a_late_view_shortens_it(clock):
    w, t = worker(), table()
    fixed_think(w, 2.0)
    t.last_move = clock.now - 0.3  # the view that gives this seat the turn took 0.3 s to come
    assert w.pause(t) == pytest.approx(1.7)
    clock.now += 2.5  # a view later than a whole think: the move is due at once, never below zero
    t.last_move = clock.now - 2.5
    t.due = None
    assert w.pause(t) == 0.0


def test_with_think_from_view_the_whole_think_is_paused_whatever_the_lag(clock):
    w, t = worker("view"), table()
    fixed_think(w, 2.0)
    t.last_move = clock.now - 0.3
    assert w.pause(t) == 2.0


def test_a_move_sent_and_not_yet_answered_is_the_last_move(clock):
    # The view a move brings can come before the move's answer: counted from the last
    # accepted move alone, the next seat would start its think before the move that gave it
    # the turn (measured: 101.9 % of the offered moves "served" at 1,000 tables).
    w, t = worker(), table()
    fixed_think(w, 2.0)
    t.last_move = clock.now - 1.9
    t.first_try["m1"] = (0.0, clock.now - 0.1)  # (the latency clock, the pacing clock)
    assert t.since() == clock.now - 0.1
    assert w.pause(t) == pytest.approx(1.9)


def test_an_answered_move_is_no_longer_unanswered_and_becomes_the_last_move(clock):
    class Gateway:
        async def submit(self, *args, **kwargs):
            clock.now += 0.05  # the answer comes 50 ms after the move was sent
            return {"ok": True}

    class Owner:
        tally = loadtest.Tally()

    t = TimedClient(Gateway(), Owner(), "journey")
    sent = clock.now
    asyncio.run(t.submit("journey-1", "token", "m1", {"type": "Pass"}, wait=False))
    assert t.first_try == {}
    assert t.last_move == sent  # when it was sent, not when it was answered


def test_a_refused_move_is_not_the_last_move(clock):
    from croupier_gateway.client import GatewayError

    class Gateway:
        async def submit(self, *args, **kwargs):
            raise GatewayError(409, "version_conflict", "another seat moved first")

    class Owner:
        tally = loadtest.Tally()

    t = TimedClient(Gateway(), Owner(), "journey")
    t.last_move = clock.now - 1.0
    with pytest.raises(GatewayError):
        asyncio.run(t.submit("journey-1", "token", "m1", {"type": "Pass"}, wait=False))
    assert t.first_try == {} and t.last_move == clock.now - 1.0


def test_seats_that_can_act_from_the_same_move_share_one_think(clock):
    # A draw each, the first of two thinks would win: tables whose seats can act at once
    # would move faster than offered.
    w, t = worker(), table()
    draws = iter([1.2, 0.6])
    w.think = lambda: next(draws)  # type: ignore[method-assign]
    t.last_move = clock.now - 0.2
    assert w.pause(t) == pytest.approx(1.0)  # the first seat draws the table's think: 1.2 s
    assert w.pause(t) == pytest.approx(1.0)  # the second races to the same moment, not 0.4 s
    t.last_move = clock.now + 1.0  # the winner's move: a new think from it
    clock.now += 1.05
    assert w.pause(t) == pytest.approx(0.6 - 0.05)


def test_a_new_table_thinks_from_its_seating_and_no_think_time_is_no_pause(clock):
    w, t = worker(), table()
    fixed_think(w, 2.0)
    assert w.pause(t) == 2.0  # nothing to count from yet (seating sets last_move in a run)
    t.last_move = clock.now
    assert w.pause(t) == 2.0
    w0 = worker(think_ms=0.0)
    assert w0.pause(t) == 0.0


def test_the_first_move_of_the_measured_run_comes_at_a_steady_streams_random_moment(clock):
    # After a warm-up at full speed every table's last move is just before the start. Waited
    # a whole think from the start, the first ~2 s would offer half the load: the first
    # move comes as far into a think as a steady stream of moves is at a random moment, whose
    # mean is E[X^2] / 2E[X] = 13/24 T for X uniform on [0.5, 1.5] T, and never past 1.5 T.
    clock.now = START
    w = worker(seed=7)
    pauses = []
    for _ in range(20_000):
        t = table()
        t.last_move = START - 0.01
        pauses.append(w.pause(t))
    assert 0.0 <= min(pauses) and max(pauses) <= 1.5 * 2.0
    assert statistics.fmean(pauses) == pytest.approx(13 / 24 * 2.0, rel=0.02)
    assert statistics.fmean(pauses) > 0.5 * 2.0 * 1.04  # not a plain uniform phase (mean T/2)
