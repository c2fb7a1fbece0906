"""No table left behind unknown: a table the gateway opens while the load test's time runs out
(or it is told to stop) is still one the run knows of, counts and force-ends. Against the
in-process fake of the gateway client (loadtest_fakes.FakeGateway), whose `create_table` here
opens the table at once and answers only later, as a gateway waiting for its projection does."""

from __future__ import annotations

import asyncio
import time

from loadtest_fakes import FakeGateway, Out, run_guarded

from croupier_gateway import loadtest
from croupier_gateway.loadtest import Config, Worker


class SlowToAnswer(FakeGateway):
    """Every table is opened when asked (the gateway has committed it), its answer comes
    `answer_s` seconds later (the projection wait), whether or not the caller still waits."""

    def __init__(self, answer_s: float, **kwargs):
        super().__init__(**kwargs)
        self.answer_s = answer_s

    async def create_table(self, game_type, seats=None, options=None, command_id=None, *, retry=True):
        created = await super().create_table(game_type, seats, options, command_id, retry=retry)
        await asyncio.sleep(self.answer_s)
        return created


def run_worker(fake: FakeGateway, monkeypatch, *, duration_s: float, tables: int = 1, stop=None):
    cfg = Config(games=("journey",), tables=tables, duration_s=duration_s, bot="random", workers=1, seats=2)
    monkeypatch.setattr(loadtest, "make_client", lambda *a, **k: fake)
    out = Out()
    worker = Worker(0, cfg, time.monotonic(), out)
    fake.worker = worker
    run_guarded(lambda: worker.run(stop=stop))
    return worker, out


def over(fake: FakeGateway) -> set[str]:
    return {g for g, t in fake.tables.items() if t["over"]}


def test_a_table_opened_as_the_time_runs_out_is_counted_and_force_ended(monkeypatch):
    """The time is up (0.3 s) while the gateway is still answering the first create (1 s):
    the table exists all the same, so it is in the run's tables, opened and not finished, and
    among those to force-end. Before, the slot was cancelled with the call, the answer never
    read, and the table was left open with no one to play or end it."""
    fake = SlowToAnswer(1.0, moves=4)
    worker, out = run_worker(fake, monkeypatch, duration_s=0.3)
    assert fake.created, "the test needs a table opened"
    (final,) = out.of("final")
    unfinished = {gid for gid, _ in final["unfinished"]}
    assert set(fake.created) - over(fake) <= unfinished
    assert final["opened"] == len(fake.created)
    assert final["opened"] == sum(final["finished"].values()) + len(final["unfinished"])
    # Its create is a command the gateway answered: timed and counted like any other.
    assert final["kinds"]["create_table"]["n"] == len(fake.created)


def test_a_table_opened_as_the_run_is_stopped_is_force_ended(monkeypatch):
    """The same when the load test is interrupted (its `stop` set) rather than timed out."""
    import threading

    stop = threading.Event()
    fake = SlowToAnswer(1.0, moves=4, on_create=lambda game_id: stop.set())
    worker, out = run_worker(fake, monkeypatch, duration_s=600.0, stop=stop)
    (final,) = out.of("final")
    assert fake.created and set(fake.created) <= {gid for gid, _ in final["unfinished"]}
    assert final["opened"] == len(fake.created)


def test_a_create_that_never_answers_does_not_hold_the_end(monkeypatch):
    """A gateway that never answers the create: the run still ends (the answer is waited for
    a bounded time, then given up)."""
    monkeypatch.setattr(loadtest, "CREATE_ANSWER_GRACE_S", 0.5, raising=False)
    fake = SlowToAnswer(3600.0, moves=4)
    t0 = time.monotonic()
    worker, out = run_worker(fake, monkeypatch, duration_s=0.3)
    assert time.monotonic() - t0 < 30
    (final,) = out.of("final")
    assert final["unfinished"] == []  # never answered: its id is not known


class DoneButUnavailable(FakeGateway):
    """The first try of every create opens the table (the rules committed it) and is answered
    503 all the same (the answer lost on the way); a try again with the same command id is
    answered with that table, as the gateway does."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.by_command: dict[str, dict] = {}

    async def create_table(self, game_type, seats=None, options=None, command_id=None, *, retry=True):
        if command_id in self.by_command:
            await asyncio.sleep(0)
            return self.by_command[command_id]
        self.by_command[command_id] = await super().create_table(game_type, seats, options, command_id)
        raise loadtest.GatewayError(503, "unavailable", "the answer was lost")


def test_a_create_answered_503_but_done_is_not_left_open(monkeypatch, quick_backoff):
    """A create answered 503 was given up at once (the slot opened another table), though the
    gateway had made the table: left open, seatless, known to nobody, for a day. It is now
    tried again with its command id (as a move is), which gets that table, and played; the
    503 is still an error of the run."""
    fake = DoneButUnavailable(moves=4)
    worker, out = run_worker(fake, monkeypatch, duration_s=0.5)
    (final,) = out.of("final")
    unfinished = {gid for gid, _ in final["unfinished"]}
    assert fake.created
    assert set(fake.created) <= over(fake) | unfinished  # every table made is played or force-ended
    assert final["errors"]["503:unavailable"] == len(fake.created)
    assert final["opened"] == len(fake.created)


class DoneButDropped(DoneButUnavailable):
    """The same over HTTP: the first try's connection drops (or times out) after the table
    was made, so no answer comes at all."""

    async def create_table(self, game_type, seats=None, options=None, command_id=None, *, retry=True):
        import httpx

        try:
            return await super().create_table(game_type, seats, options, command_id, retry=retry)
        except loadtest.GatewayError:
            raise httpx.ReadTimeout("timed out") from None


def test_a_create_whose_answer_never_came_but_done_is_not_left_open(monkeypatch, quick_backoff):
    fake = DoneButDropped(moves=4)
    worker, out = run_worker(fake, monkeypatch, duration_s=0.5)
    (final,) = out.of("final")
    unfinished = {gid for gid, _ in final["unfinished"]}
    assert fake.created
    assert set(fake.created) <= over(fake) | unfinished
    assert final["errors"]["exception:ReadTimeout"] == len(fake.created)
    assert final["opened"] == len(fake.created)
