"""The live progress line goes on when one worker process is gone mid-run (killed, say by the
OOM killer, or sent SIGTERM alone): a second is shown once every worker still running has
reported it, not every worker there was. The workers play loadtest_fakes' in-process fake
of the gateway, in processes of their own as in a real run."""

from __future__ import annotations

import os
import re
import signal
import threading
import time

import pytest

from croupier_gateway import loadtest
from croupier_gateway.loadtest import Config, run_workers

RUN_S = 5.0
GONE_AFTER_S = 1.5  # into the measured run


def _worker_gone_midway(how: str, index: int, cfg, start_value, go, out, abort, stop=None) -> None:
    """Worker 1 is gone GONE_AFTER_S into the run (`how`: killed, or sent SIGTERM alone); the
    others play on."""
    import loadtest_fakes

    if index == 1:
        def later() -> None:
            go.wait()
            time.sleep(max(0.0, start_value.value - time.monotonic()) + GONE_AFTER_S)
            if how == "killed":
                os._exit(9)
            os.kill(os.getpid(), signal.SIGTERM)

        threading.Thread(target=later, daemon=True).start()
    loadtest_fakes.fake_worker(index, cfg, start_value, go, out, abort, stop)


def worker_killed(index, cfg, start_value, go, out, abort, stop=None) -> None:
    _worker_gone_midway("killed", index, cfg, start_value, go, out, abort, stop)


def worker_terminated(index, cfg, start_value, go, out, abort, stop=None) -> None:
    _worker_gone_midway("sigterm", index, cfg, start_value, go, out, abort, stop)


@pytest.mark.parametrize("worker", [worker_killed, worker_terminated], ids=["killed", "sigterm-alone"])
def test_the_progress_line_goes_on_when_a_worker_is_gone(monkeypatch, capsys, worker):
    monkeypatch.setattr(loadtest, "worker_main", worker)
    cfg = Config(games=("journey",), tables=4, duration_s=RUN_S, workers=2, think_ms=50.0, seats=2, bot="random",
                 stagger=False, progress=True, check=0)
    finals, timeline, _ = run_workers(cfg)
    shown = [int(t) for t in re.findall(r"^t=\s*(\d+)s", capsys.readouterr().err, re.MULTILINE)]
    # Every second of the run, the ones after the worker was gone included (before: only those
    # before it, the line stood still for the rest of the run).
    assert shown == list(range(1, int(RUN_S) + 1)), shown
    assert len(finals) == 2
    if worker is worker_killed:
        (gone,) = [f for f in finals if f["type"] == "failed"]
        assert "exit code 9" in gone["error"]  # what became of it, not only that it said nothing


def slow_warm_up(index: int, cfg, start_value, go, out, abort, stop=None) -> None:
    """A worker whose gateway takes 0.1 s a move: a warm-up of a few seconds."""
    import asyncio

    import loadtest_fakes

    from croupier_gateway import loadtest as lt

    fake = loadtest_fakes.FakeGateway(moves=10**9)
    submit = fake.submit

    async def slow(*args, **kwargs):
        await asyncio.sleep(0.1)
        return await submit(*args, **kwargs)

    fake.submit = slow
    lt.make_client = lambda *a, **k: fake
    lt.Worker.mean_moves = lambda self, game, games=3: 60.0
    lt.worker_main(index, cfg, start_value, go, out, abort, stop)


def test_the_warm_up_shows_how_far_it_is(monkeypatch, capsys):
    """--stagger's warm-up (minutes at a thousand tables) said nothing from "playing each
    table to a random point" to "the measured run starts now": a load test that hung looked
    the same. It now says how many tables are at their starting point, and the moves so far."""
    monkeypatch.setattr(loadtest, "worker_main", slow_warm_up)
    monkeypatch.setattr(loadtest, "WARM_LINE_S", 0.5)
    cfg = Config(games=("journey",), tables=6, duration_s=1.0, workers=2, think_ms=50.0, seats=2, bot="random",
                 stagger=True, progress=True, check=0)
    run_workers(cfg)
    err = capsys.readouterr().err
    lines = re.findall(r"^stagger: ([\d,]+) of 6 tables at their starting point, ([\d,]+) warm-up moves", err,
                       re.MULTILINE)
    assert len(lines) >= 2, err
    moves = [int(m.replace(",", "")) for _, m in lines]
    assert moves == sorted(moves) and moves[-1] > 0
    assert all(int(w) <= 6 for w, _ in lines)
    assert err.index("at their starting point") < err.index("the measured run starts now")
