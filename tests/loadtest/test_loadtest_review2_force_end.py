"""The force-end of the tables a run leaves goes through the operator's rate limit: a table
whose force-end is answered 429 (or 503) is tried again, not left running. Against an
in-process stand-in for the gateway's operator API (httpx.MockTransport)."""

from __future__ import annotations

import asyncio

import httpx

from croupier_gateway import loadtest
from croupier_gateway.loadtest import Config, force_end


def serve(monkeypatch, answer):
    """force_end's HTTP client talks to `answer(game_id, tries)` -> (status, headers)."""
    tries: dict[str, int] = {}

    def handler(request: httpx.Request) -> httpx.Response:
        game_id = request.url.path.split("/")[4]
        tries[game_id] = tries.get(game_id, 0) + 1
        status, headers = answer(game_id, tries[game_id])
        return httpx.Response(status, headers=headers, json={} if status < 300 else {"error": {"code": str(status)}})

    real = httpx.AsyncClient

    class Client(real):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, transport=httpx.MockTransport(handler), **kwargs)

    monkeypatch.setattr(httpx, "AsyncClient", Client)
    return tries


def test_force_ends_refused_by_the_rate_limit_are_tried_again(monkeypatch):
    """With the gateway's default limits (50/s, a burst of 100), force-ending a thousand tables
    met 429s, and each one was counted force_end_failed at once: the tables left running and
    the run's exit code 1, though every one of them could have been ended a second later."""
    def answer(game_id, tries):
        if game_id == "journey-gone":
            return 404, {}  # not a refusal to wait out: failed at once
        if game_id == "journey-busy" and tries == 1:
            return 503, {}  # a replica away a moment
        return (429, {"retry-after": "0"}) if tries <= 2 else (200, {})

    tries = serve(monkeypatch, answer)
    unfinished = [[f"journey-{i}", "journey"] for i in range(40)] + [["journey-busy", "journey"],
                                                                     ["journey-gone", "journey"]]
    cfg = Config(games=("journey",), tables=1, duration_s=1.0, operator_token="a-token", http_target="gw:1")
    ended, failed = asyncio.run(force_end(cfg, unfinished))
    assert (ended, failed) == (41, 1)
    assert tries["journey-0"] == 3 and tries["journey-gone"] == 1


def test_a_force_end_refused_for_ever_is_given_up_within_the_budget(monkeypatch):
    monkeypatch.setattr(loadtest, "FORCE_END_BUDGET_S", 1.0)
    serve(monkeypatch, lambda game_id, tries: (429, {"retry-after": "0.1"}))
    cfg = Config(games=("journey",), tables=1, duration_s=1.0, operator_token="a-token", http_target="gw:1")
    assert asyncio.run(force_end(cfg, [["journey-a", "journey"]])) == (0, 1)
