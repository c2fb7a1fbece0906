"""Ctrl-C after the run, while its sample is checked."""

from __future__ import annotations


def test_ctrl_c_during_the_check_gives_it_up_and_still_force_ends(monkeypatch, capsys):
    """The run is over and its sample is being checked (which may read Kafka for a while):
    Ctrl-C stops the check at once, the tables left are still force-ended, exit 130."""
    import asyncio
    import os
    import signal
    import time

    import croupier_gateway.loadtest as loadtest
    from croupier_gateway.loadtest import Config, Timeline, run

    async def fine(cfg):
        return None

    async def slow_check(cfg, sample):
        os.kill(os.getpid(), signal.SIGINT)
        await asyncio.sleep(60)

    ended = []

    async def force_end(cfg, unfinished):
        ended.extend(unfinished)
        return len(unfinished), 0

    final = {"type": "final", "kinds": {}, "games": {}, "errors": {}, "refusals": {}, "rate_limited": 0,
             "opened": 2, "finished": {"journey": 1}, "failed": 0, "unfinished": [["journey-a", "journey"]],
             "samples": [["journey-b", "journey", ["t0", "t1"]]]}
    monkeypatch.setattr(loadtest, "preflight", fine)
    monkeypatch.setattr(loadtest, "operator_token_refused", fine)
    monkeypatch.setattr(loadtest, "run_workers", lambda cfg, **k: ([final], Timeline(), 1.0))
    monkeypatch.setattr(loadtest, "check_games", slow_check)
    monkeypatch.setattr(loadtest, "force_end", force_end)
    cfg = Config(games=("journey",), tables=2, duration_s=1.0, workers=1, progress=False, operator_token="t")
    started = time.monotonic()
    code, report = run(cfg)
    assert time.monotonic() - started < 30
    assert code == 130 and report["interrupted"] == "SIGINT"
    assert report["check"]["passed"] is None and ended == [["journey-a", "journey"]]
