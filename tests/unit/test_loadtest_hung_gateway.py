"""A gateway that hangs (stopped, or wedged) after the run: the check of the sample and the
force-end of the tables left are bounded, rather than waiting out every request's timeout in
turn (10 games x a view per seat x 30 s, 1,000 tables / 32 at a time x 60 s)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import croupier_gateway.loadtest as loadtest
from croupier_gateway.loadtest import Config, check_games, force_end


def bounded(main, limit_s: float = 20.0):
    """asyncio.run(main) in a thread of its own: one that hangs fails the test, not hangs it."""
    outcome: dict = {}
    thread = threading.Thread(target=lambda: outcome.update(value=asyncio.run(main)), daemon=True)
    started = time.monotonic()
    thread.start()
    thread.join(limit_s)
    assert not thread.is_alive(), f"still at it after {limit_s:g} s"
    assert time.monotonic() - started < 10
    return outcome["value"]


class Hanging:
    async def view(self, game_id, token=None):
        await asyncio.Event().wait()

    async def close(self):
        pass


def test_the_check_of_a_hung_gateway_ends_within_its_budget(monkeypatch):
    async def hang(cfg, game_id, game_type):
        await asyncio.Event().wait()

    monkeypatch.setattr(loadtest, "make_client", lambda *a, **k: Hanging())
    monkeypatch.setattr(loadtest, "fetch_log", hang)
    monkeypatch.setattr(loadtest, "CHECK_BUDGET_S", 1.0, raising=False)
    cfg = Config(games=("journey",), tables=1, duration_s=1.0, operator_token="t")
    sample = [[f"journey-{i}", "journey", ["a", "b"]] for i in range(10)]
    result = bounded(check_games(cfg, sample))
    assert result["sampled"] == 10 and result["passed"] is False
    assert all(g["problem"].startswith("not checked") for g in result["games"])


def test_the_force_end_on_a_hung_gateway_ends_within_its_budget(monkeypatch):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1000)  # accepts connections, never answers
    monkeypatch.setattr(loadtest, "FORCE_END_BUDGET_S", 1.0, raising=False)
    cfg = Config(games=("journey",), tables=1, duration_s=1.0, operator_token="t",
                 http_target=f"127.0.0.1:{listener.getsockname()[1]}")
    try:
        ended, failed = bounded(force_end(cfg, [[f"journey-{i}", "journey"] for i in range(40)]))
    finally:
        listener.close()
    assert (ended, failed) == (0, 40)
