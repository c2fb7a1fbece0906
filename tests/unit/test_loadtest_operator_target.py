"""`croupier loadtest` with an operator token and an --http-target that answers HTTP but is not
a Croupier gateway (a plain web server): told before the run (exit 75), not found after it when
the tables it leaves cannot be force-ended. And a run whose tables the operator API did not
force-end is not a clean run (exit 1): they are left running."""

from __future__ import annotations

import asyncio
import http.server
import json
import threading

import pytest

import croupier_gateway.loadtest as loadtest
from croupier_gateway.loadtest import Config, Timeline, operator_token_refused, run


def serve(status: int, body: bytes, content_type: str = "application/json"):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_POST = do_GET  # noqa: N815

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def no_preflight(monkeypatch):
    async def fine(cfg):
        return None

    monkeypatch.setattr(loadtest, "preflight", fine)


def test_a_web_server_that_is_not_the_gateway_at_the_http_target_stops_the_run_before_it(monkeypatch, capsys,
                                                                                         no_preflight):
    server = serve(404, b"<!DOCTYPE HTML><html><body>Error code: 404</body></html>", "text/html")
    started = []
    monkeypatch.setattr(loadtest, "run_workers", lambda cfg, **k: started.append(cfg))
    try:
        cfg = Config(games=("journey",), tables=1, duration_s=1.0, operator_token="a-token",
                     http_target=f"127.0.0.1:{server.server_address[1]}")
        code, report = run(cfg)
    finally:
        server.shutdown()
    assert (code, report) == (75, None) and not started
    err = capsys.readouterr().err
    assert "no Croupier gateway answers HTTP at 127.0.0.1:" in err and "404" in err and "<html>" not in err


@pytest.mark.parametrize("status", [200, 503])
def test_the_gateways_health_report_passes_even_with_a_part_of_the_stack_down(status):
    server = serve(status, json.dumps({"gateway": {"ok": True}, "ok": status == 200}).encode())
    try:
        cfg = Config(games=("journey",), tables=1, duration_s=1.0, operator_token="a-token",
                     http_target=f"127.0.0.1:{server.server_address[1]}")
        assert asyncio.run(operator_token_refused(cfg)) is None
    finally:
        server.shutdown()


def test_tables_the_operator_api_did_not_force_end_make_the_run_fail(monkeypatch, no_preflight):
    async def fine(cfg):
        return None

    async def cannot(cfg, unfinished):
        return 0, len(unfinished)

    final = {"type": "final", "kinds": {}, "games": {}, "errors": {}, "refusals": {}, "rate_limited": 0,
             "opened": 1, "finished": {}, "failed": 0, "unfinished": [["journey-a", "journey"]], "samples": []}
    monkeypatch.setattr(loadtest, "operator_token_refused", fine)
    monkeypatch.setattr(loadtest, "run_workers", lambda cfg, **k: ([final], Timeline(), 1.0))
    monkeypatch.setattr(loadtest, "force_end", cannot)
    cfg = Config(games=("journey",), tables=1, duration_s=1.0, workers=1, progress=False, check=0,
                 operator_token="a-token")
    code, report = run(cfg)
    assert report["tables"]["force_end_failed"] == 1 and report["errors"] == 0
    assert code == 1
