"""Operators: health of every service, search, any game's full state, force-ending a table."""

from __future__ import annotations

import asyncio
import json

import httpx

from e2e_helpers import OPERATOR_TOKEN, run

OP = {"authorization": f"Bearer {OPERATOR_TOKEN}"}


def test_health_reports_every_service(stack_services):
    report = httpx.get(f"{stack_services.http_url}/v1/operator/health", headers=OP, timeout=30).json()
    assert report["ok"] is True, report
    assert report["redis"]["ok"] and report["projector"]["partitions"] > 0
    for game in stack_services.games:
        rules = report["rules"][game]
        assert rules["owned"] == rules["partitions"] > 0
        assert set(rules["replica_health"].values()) == {"SERVING"}
    assert httpx.get(f"{stack_services.http_url}/v1/operator/health").status_code == 401
    assert httpx.get(f"{stack_services.http_url}/healthz").json() == {"ok": True}
    metrics = httpx.get(f"{stack_services.http_url}/metrics").text
    assert "croupier_gateway_requests_total" in metrics


def test_every_rules_replica_serves_its_metrics(stack_services):
    """The replicas the launcher (`croupier demo`, bench/loadtest.py) starts each serve
    Prometheus metrics on a port of their own: their partitions, commands and transactions."""
    from prometheus_client.parser import text_string_to_metric_families

    ports = stack_services.launcher.metrics_ports
    assert set(ports) == {f"rules-{game}" for game in stack_services.games}
    for name, port in ports.items():
        text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
        samples = {s.name: s.value for family in text_string_to_metric_families(text) for s in family.samples}
        assert samples["croupier_rules_owned_partitions"] > 0, name
        assert "croupier_rules_append_seconds_count" in samples, name


def test_force_end_a_running_table(stack_services):
    from croupier_gateway.bots import SeatRecord, create_and_seat, follow
    from croupier_gateway.client import HttpGateway

    game = stack_services.games[0]

    async def main():
        client = HttpGateway(stack_services.http_url)
        try:
            game_id, tokens = await create_and_seat(client, game, ["random", "random"])
            watcher = SeatRecord(None)
            watching = asyncio.create_task(follow(client, game_id, None, watcher))
            full = (await client.http.get(f"/v1/operator/games/{game_id}", headers=OP)).json()
            found = (await client.http.get("/v1/operator/games", params={"q": game_id[-8:]}, headers=OP)).json()
            ended = await client.http.post(f"/v1/operator/games/{game_id}/force-end", json={"reason": "e2e"},
                                           headers=OP)
            await asyncio.wait_for(watching, 30)
            return game_id, full, found, ended, watcher
        finally:
            await client.close()

    game_id, full, found, ended, watcher = run(main())
    assert full["table"]["status"] == "running" and set(full["views"]) == {"spectator", "0", "1"}
    assert full["owner"]
    assert [g["game_id"] for g in found["games"]] == [game_id]
    assert ended.status_code == 200, ended.text
    final = watcher.final.view
    assert final["status"] == "over" and final["end_reason"] == "forced" and final["seed"]
    table = httpx.get(f"{stack_services.http_url}/v1/tables/{game_id}").json()
    assert table["status"] == "over"


def test_export_audit_and_replay_over_http(stack_services):
    from croupier_gateway.bots import create_and_seat
    from croupier_gateway.client import HttpGateway

    game = stack_services.games[0]
    url = stack_services.http_url

    async def main():
        client = HttpGateway(url)
        try:
            game_id, tokens = await create_and_seat(client, game, ["random", "random"])
            own = (await client.http.get(f"/v1/tables/{game_id}/replay",
                                         headers={"authorization": f"Bearer {tokens[0]}"})).json()
            peek = await client.http.get(f"/v1/tables/{game_id}/replay", params={"as": "1"},
                                         headers={"authorization": f"Bearer {tokens[0]}"})
            await client.http.post(f"/v1/operator/games/{game_id}/force-end", json={"reason": "e2e replay"}, headers=OP)
            return game_id, tokens, own, peek
        finally:
            await client.close()

    game_id, tokens, own, peek = run(main())
    assert own["view"]["you"] == 0 and own["as"] == "0"
    assert peek.status_code == 403
    exported = httpx.get(f"{url}/v1/operator/games/{game_id}/export", headers=OP, timeout=30)
    assert exported.status_code == 200
    lines = exported.text.splitlines()
    assert lines and all(f'"game_id":"{game_id}"' in line for line in lines)
    report = httpx.get(f"{url}/v1/operator/games/{game_id}/audit", headers=OP, timeout=60).json()
    assert report["ok"] is True and report["events"] == len(lines)
    replay = httpx.get(f"{url}/v1/operator/games/{game_id}/replay", params={"to": 3, "as": "spectator"},
                       headers=OP, timeout=30).json()
    # Seq 3 may fall inside a command's events: the replay shows the game after that command.
    starts = [e for e in map(json.loads, lines) if e["cause"] and e["seq"] <= 3]
    end = starts[-1]["seq"] + starts[-1]["cause"]["events"] - 1
    assert end >= 3 and replay["to"] == end and replay["view"]["version"] == end and replay["moves"]
    # Once over, a player may replay as any seat; nobody without the credential reaches the operator routes.
    after = httpx.get(f"{url}/v1/tables/{game_id}/replay", params={"as": "1"},
                      headers={"authorization": f"Bearer {tokens[0]}"}, timeout=30)
    assert after.status_code == 200 and after.json()["view"]["you"] == 1
    assert httpx.get(f"{url}/v1/operator/games/{game_id}/audit", timeout=30).status_code == 401


def test_a_long_poll_whose_client_hangs_up_lets_go_of_its_stream_at_once(stack_services):
    """GET /view with min_version waits up to 30 s and holds one of its address's stream
    slots meanwhile: a client that hung up held both for the whole wait, and one that polls,
    gives up and polls again ran out of slots. The real gateway process ends the wait when the
    connection closes."""
    import socket
    import time
    from urllib.parse import urlparse

    base = stack_services.http_url
    op = {"authorization": f"Bearer {OPERATOR_TOKEN}"}
    gid = httpx.post(f"{base}/v1/tables", json={"game_type": "journey", "seats": 2}, timeout=30).json()["game_id"]

    def streams() -> int:
        return httpx.get(f"{base}/v1/operator/health", headers=op, timeout=30).json()["gateway"]["streams"]

    before = streams()
    url = urlparse(base)
    conn = socket.create_connection((url.hostname, url.port))
    conn.sendall(f"GET /v1/tables/{gid}/view?min_version=1000000&timeout_s=30 HTTP/1.1\r\n"
                 f"Host: {url.hostname}\r\n\r\n".encode())
    deadline = time.monotonic() + 10
    while streams() < before + 1:
        assert time.monotonic() < deadline, "the long poll never started waiting"
        time.sleep(0.1)
    conn.close()
    deadline = time.monotonic() + 10
    while streams() > before:
        assert time.monotonic() < deadline, "the long poll still holds its stream 10 s after its client left"
        time.sleep(0.1)
