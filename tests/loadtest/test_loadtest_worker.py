"""A load-generator worker's bookkeeping and the parent's, against an in-process fake of the
gateway client (loadtest_fakes.FakeGateway; nothing here touches Kafka or Redis): what a game
that ends in the warm-up and a table that fails count for in the report, and what becomes of
their tables."""

from __future__ import annotations

import time

import pytest
from loadtest_fakes import FakeGateway, Out, run_guarded

from croupier_gateway import loadtest
from croupier_gateway.client import GatewayError
from croupier_gateway.loadtest import Config, Worker


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
