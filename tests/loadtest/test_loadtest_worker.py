"""A load-generator worker's bookkeeping and the parent's, against an in-process fake of the
gateway client (loadtest_fakes.FakeGateway; nothing here touches Kafka or Redis): what a game
that ends in the warm-up, a table that fails and a worker that fails before it is ready count
for in the report, and what becomes of their tables."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from loadtest_fakes import FakeGateway, Out, die_or_hang, run_guarded

from croupier_gateway import loadtest
from croupier_gateway.client import GatewayError
from croupier_gateway.loadtest import Config, Worker, run


def run_worker(fake: FakeGateway, monkeypatch, *, stagger: bool, tables: int = 2, duration_s: float = 0.5,
               mean_moves: float = 40.0, abort=None) -> tuple[Worker, Out]:
    cfg = Config(games=("journey",), tables=tables, duration_s=duration_s, bot="random", workers=1, seats=2,
                 stagger=stagger, check=10**6)
    monkeypatch.setattr(loadtest, "make_client", lambda *a, **k: fake)
    # The bots' mean game length, which a worker measures by self-play: here the fake's is known.
    monkeypatch.setattr(Worker, "mean_moves", lambda self, game, games=3: mean_moves)
    out = Out()
    worker = Worker(0, cfg, time.monotonic(), out)
    fake.worker = worker
    run_guarded(lambda: worker.run() if abort is None else worker.run(abort=abort))
    return worker, out


# -- a game that ends within the warm-up is not in the measured run ------------------------


def test_games_that_end_in_the_warm_up_are_counted_there_not_in_the_run(monkeypatch):
    """Targets drawn up to 40 moves, games of 4: most tables end their first game in the
    warm-up. Those endings are in the warm-up's figures, never in `finished` (nor sampled for
    the check); the measured run's tables still add up: opened = finished + unfinished."""
    fake = FakeGateway(moves=4)
    worker, out = run_worker(fake, monkeypatch, stagger=True, tables=6)
    ended_in_warm_up = {g for g, in_run in fake.ended_in_run.items() if not in_run}
    assert ended_in_warm_up, "the test needs games that end within the warm-up"
    (final,) = out.of("final")
    sampled = {s[0] for s in final["samples"]}
    assert not sampled & ended_in_warm_up
    (ready,) = out.of("ready")
    assert ready["warm"]["finished"] == len(ended_in_warm_up)
    unfinished = {u[0] for u in final["unfinished"]}
    in_run = {g for g, in_run in fake.ended_in_run.items() if in_run} - unfinished
    assert sum(final["finished"].values()) == len(in_run) == len(sampled)
    assert final["opened"] == sum(final["finished"].values()) + len(unfinished)
    # The tables of the run: those open at its start and those opened in it.
    assert final["opened"] == len(set(fake.created) - ended_in_warm_up)
    assert out.of("tick")[-1]["finished"] == len(in_run)


# -- a table whose move is given up on fails, and its slot goes on ---------------------------------


def refuse_the_first_table(fake_of):
    def refuse(kind, game_id, tries):
        if kind == "move" and game_id == fake_of().created[0]:
            return GatewayError(503, "unavailable", "no replica")
        return None
    return refuse


@pytest.mark.parametrize("stagger", [False, True], ids=["cold", "stagger"])
def test_a_table_that_gives_up_is_a_failure_and_its_slot_opens_another(monkeypatch, quick_backoff, stagger):
    """The table is counted failed (an error, `tables.failed`), is no longer `running` (so
    tables_running never exceeds --tables), is still force-ended at the end (it is in
    `unfinished`), and its slot goes on with a new table. Staggered, it ends the table's
    warm-up rather than hanging it."""
    fake = FakeGateway(moves=4)
    fake.refuse = refuse_the_first_table(lambda: fake)
    worker, out = run_worker(fake, monkeypatch, stagger=stagger, tables=1)
    first = fake.created[0]
    (final,) = out.of("final")
    assert first in {u[0] for u in final["unfinished"]}
    assert final["failed"] == 1
    assert first not in worker.running and worker.failed == {first: "journey"}
    assert all(tick["running"] <= 1 for tick in out.of("tick"))
    assert len(fake.created) > 1  # the slot went on
    failure = {"0:gave_up": 1}
    if stagger:  # it failed in the warm-up: its errors are the warm-up's
        assert out.of("ready")[0]["warm"]["errors_by_kind"] == {**failure, "503:unavailable": 20}
        assert final["errors"] == {}
    else:
        assert final["errors"] == {**failure, "503:unavailable": 20}
    assert final["opened"] == sum(final["finished"].values()) + len(final["unfinished"])


def test_a_worker_aborted_in_its_warm_up_reports_its_tables(monkeypatch):
    """Told to give up its warm-up (the parent's wait is over), a worker stops and says which
    tables it had open, so that they are force-ended."""
    abort = threading.Event()
    stuck = asyncio.Event()  # never set: every move waits for ever

    async def never(*args, **kwargs):
        await stuck.wait()

    fake = FakeGateway(on_create=lambda game_id: abort.set())
    fake.submit = never
    with pytest.raises(loadtest.WarmUpAborted):
        run_worker(fake, monkeypatch, stagger=True, tables=2, abort=abort, mean_moves=1000)
    worker = fake.worker
    assert {g for g, _ in worker.unfinished()} == set(fake.created) and fake.created


# -- a worker that never gets ready --------------------------------------------------------


def test_a_worker_that_dies_or_hangs_before_it_is_ready_is_a_failure_in_a_report(monkeypatch, capsys):
    """Worker 0 dies at once, worker 1 never gets ready: no long wait on a dead process, no
    queue.Empty traceback, but a report with a worker_failed error each and exit 1."""
    monkeypatch.setattr(loadtest, "worker_main", die_or_hang)
    monkeypatch.setattr(loadtest, "READY_TIMEOUT_S", 1.0)
    monkeypatch.setattr(loadtest, "ABORT_GRACE_S", 1.0)

    async def fine(cfg):
        return None

    monkeypatch.setattr(loadtest, "preflight", fine)
    monkeypatch.setattr(loadtest, "operator_token_refused", fine)
    cfg = Config(games=("journey",), tables=2, duration_s=1.0, workers=2, progress=False)
    code, report = run(cfg)
    assert code == 1
    errors = report["errors_by_kind"]
    assert report["errors"] == 2
    assert "worker_failed:the worker died before it was ready (exit code 3)" in errors
    assert "worker_failed:it was not ready after 1 s" in errors
    assert report["commands"] == 0 and report["check"]["passed"] is None
    assert "worker_failed" in capsys.readouterr().out


# -- the tables a failed worker left, and force-end failures ----------------------------------


def test_force_end_failures_are_reported(monkeypatch, capsys):
    """An operator API that cannot be reached: the tables it could not end are counted, and
    the report does not tell to give an operator token that was given."""
    from croupier_gateway.launcher import free_port

    final = {"type": "final", "kinds": {}, "games": {}, "errors": {}, "refusals": {}, "rate_limited": 0,
             "opened": 3, "finished": {"journey": 1}, "failed": 1,
             "unfinished": [["journey-a", "journey"], ["journey-b", "journey"]], "samples": []}
    failed = {"type": "failed", "worker": 1, "error": "WarmUpAborted: ...", "unfinished": [["journey-c", "journey"]]}
    monkeypatch.setattr(loadtest, "run_workers", lambda cfg, **k: ([final, failed], loadtest.Timeline(), 1.0))

    async def fine(cfg):
        return None

    monkeypatch.setattr(loadtest, "preflight", fine)
    monkeypatch.setattr(loadtest, "operator_token_refused", fine)
    cfg = Config(games=("journey",), tables=2, duration_s=1.0, workers=2, progress=False, check=0,
                 operator_token="a-token", http_target=f"127.0.0.1:{free_port()}")
    code, report = run(cfg)
    assert code == 1
    assert report["tables"] == {"opened": 4, "finished": 1, "unfinished": 3, "failed": 2, "force_ended": 0,
                                "force_end_failed": 3}
    printed = capsys.readouterr().out
    assert "3 of them could not be force-ended" in printed
    assert "give --operator-token" not in printed
