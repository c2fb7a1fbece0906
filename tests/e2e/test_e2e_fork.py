"""Forks are playable: an operator forks a game at a step over HTTP, gets a seat token for
each of the fork's seats (a fork's seats are filled from its origin's players, and nobody
joined them), and the fork is played to its end by bots holding those tokens. A table that
players joined never gives an operator its seats. A fork starts from its origin's public
position with the hidden cards dealt again (so the origin's record gives none of them away),
and it shows nobody but its seats while its origin is still played: its record stays closed to
other seats, and spectators, listings and spectator replays do not see it."""

from __future__ import annotations

import asyncio

import httpx

from croupier_gateway.bots import create_and_seat, default_bot, play_seat
from croupier_gateway.client import HttpGateway
from e2e_helpers import OPERATOR_TOKEN, run

OP = {"authorization": f"Bearer {OPERATOR_TOKEN}"}
GAME = "expeditions"


async def _moves(client: HttpGateway, game_id: str, tokens: list[str], count: int) -> int:
    """`count` moves by whoever is to act (the first legal action each time); the version after."""
    version = 0
    for i in range(count):
        for token in tokens:
            actions = await client.actions(game_id, token)
            if actions["actions"]:
                version = (await client.submit(game_id, token, f"opening-{i}", actions["actions"][0]))["version"]
                break
    return version


def test_an_operator_forks_a_game_and_plays_the_fork_to_its_end(stack_services):
    url = stack_services.http_url

    async def main():
        client = HttpGateway(url)
        http = client.http
        try:
            origin, tokens = await create_and_seat(client, GAME, ["heuristic", "heuristic"])
            at = await _moves(client, origin, tokens, 4)
            origin_views = (await http.get(f"/v1/operator/games/{origin}", headers=OP)).json()["views"]
            out = {
                "unauthorised": (await http.post(f"/v1/operator/games/{origin}/fork", json={"at": at})).status_code,
                "bad_at": await http.post(f"/v1/operator/games/{origin}/fork", json={"at": 0}, headers=OP),
                "past_end": await http.post(f"/v1/operator/games/{origin}/fork", json={"at": at + 1000}, headers=OP),
                "not_a_fork": await http.post(f"/v1/operator/games/{origin}/seats/0/token", headers=OP),
            }
            forked = await http.post(f"/v1/operator/games/{origin}/fork", json={"at": at, "command_id": "f1"},
                                     headers=OP)
            again = await http.post(f"/v1/operator/games/{origin}/fork", json={"at": at, "command_id": "f1"},
                                    headers=OP)
            fork = forked.json()["game_id"]
            full = (await http.get(f"/v1/operator/games/{fork}", headers=OP)).json()
            # keep_cards: another fork, with the origin's hidden cards as they lay.
            out["bad_keep"] = await http.post(f"/v1/operator/games/{origin}/fork", headers=OP,
                                              json={"at": at, "keep_cards": "yes"})
            out["kept"] = await http.post(f"/v1/operator/games/{origin}/fork", headers=OP,
                                          json={"at": at, "command_id": "f1", "keep_cards": True})
            kept_id = out["kept"].json()["game_id"]
            out["kept_views"] = (await http.get(f"/v1/operator/games/{kept_id}", headers=OP)).json()["views"]
            await http.post(f"/v1/operator/games/{kept_id}/force-end", json={"reason": "e2e"}, headers=OP)
            # While its origin is played, the fork shows nobody but its seats and operators: the
            # cards laid in it come from the origin's hands (and its clock may lay them alone).
            out["spectator_view"] = await http.get(f"/v1/tables/{fork}/view")
            running = (await http.get("/v1/tables", params={"status": "running", "game_type": GAME,
                                                             "limit": 200})).json()["tables"]
            out["listed_running"] = [t["game_id"] for t in running]
            out["origin"], out["fork"] = origin, fork
            out["no_such_seat"] = await http.post(f"/v1/operator/games/{fork}/seats/2/token", headers=OP)
            first = (await http.post(f"/v1/operator/games/{fork}/seats/0/token", headers=OP)).json()
            issued = [await http.post(f"/v1/operator/games/{fork}/seats/{s}/token", headers=OP) for s in (0, 1)]
            # The token issued first for seat 0 was replaced by the second.
            out["replaced"] = (await http.get(f"/v1/tables/{fork}/actions", headers={
                "authorization": f"Bearer {first['token']}"})).status_code
            fork_tokens = [r.json()["token"] for r in issued]
            bot = default_bot(GAME)
            seats = await asyncio.wait_for(asyncio.gather(
                *(play_seat(client, fork, seat, token, bot, seed=7) for seat, token in enumerate(fork_tokens))), 300)
            audit = (await http.get(f"/v1/operator/games/{fork}/audit", headers=OP)).json()
            table = (await http.get(f"/v1/tables/{fork}")).json()
            origin_after = (await http.get(f"/v1/tables/{origin}")).json()
            # The fork is over, its origin is not: the fork's record (the origin's hands at the
            # fork's step) stays closed to other seats until the origin is over too.
            replays = {"closed": await http.get(f"/v1/tables/{fork}/replay", params={"as": "1", "to": 2}),
                       "spectator": await http.get(f"/v1/tables/{fork}/replay", params={"to": 2})}
            await http.post(f"/v1/operator/games/{origin}/force-end", json={"reason": "e2e"}, headers=OP)
            replays["open"] = await http.get(f"/v1/tables/{fork}/replay", params={"as": "1", "to": 2})
            replays["spectator_open"] = await http.get(f"/v1/tables/{fork}/replay", params={"to": 2})
            out["spectator_view_open"] = await http.get(f"/v1/tables/{fork}/view")
            over = (await http.get("/v1/tables", params={"status": "over", "game_type": GAME,
                                                          "limit": 200})).json()["tables"]
            out["listed_over"] = [t["game_id"] for t in over]
            return out, at, origin_views, forked, again, full, issued, seats, audit, table, origin_after, replays
        finally:
            await client.close()

    out, at, origin_views, forked, again, full, issued, seats, audit, table, origin_after, replays = run(main())
    assert out["unauthorised"] == 401
    assert (out["bad_at"].status_code, out["bad_at"].json()["error"]["field"]) == (400, "at")
    # Past the log's end: the rules service's refusal, answered as one of `at` too.
    past_end = out["past_end"].json()["error"]
    assert (out["past_end"].status_code, past_end["code"], past_end["field"]) == (400, "bad_seq", "at")
    assert (out["not_a_fork"].status_code, out["not_a_fork"].json()["error"]["code"]) == (422, "not_a_fork")
    assert forked.status_code == 201, forked.text
    body = forked.json()
    assert body["origin"] == {"game_id": full["table"]["origin"]["game_id"], "seq": at} and body["seats"] == 2
    # A retry of the fork (same command_id) names the same table.
    assert again.status_code == 201 and again.json()["game_id"] == body["game_id"]
    # The fork starts where the origin was at that step: what a spectator sees is the same;
    # the hands are dealt again from the cards nobody sees (the same number to each seat).
    assert full["table"]["origin"]["seq"] == at and full["table"]["status"] == "running"
    assert full["views"]["spectator"]["game"] == origin_views["spectator"]["game"]
    assert forked.json()["keep_cards"] is False
    hands = {s: full["views"][s]["game"]["players"][int(s)]["hand"] for s in ("0", "1")}
    assert {s: len(h) for s, h in hands.items()} == {
        s: len(origin_views[s]["game"]["players"][int(s)]["hand"]) for s in ("0", "1")}
    assert hands != {s: origin_views[s]["game"]["players"][int(s)]["hand"] for s in ("0", "1")}
    # A fork asked to keep the cards is another table, where every seat sees what it saw.
    bad = out["bad_keep"]
    assert (bad.status_code, bad.json()["error"]["field"]) == (400, "keep_cards"), bad.text
    kept = out["kept"]
    assert kept.status_code == 201 and kept.json()["keep_cards"] is True, kept.text
    assert kept.json()["game_id"] != body["game_id"]
    for viewer in ("spectator", "0", "1"):
        assert out["kept_views"][viewer]["game"] == origin_views[viewer]["game"], viewer
    assert (out["no_such_seat"].status_code, out["no_such_seat"].json()["error"]["code"]) == (400, "no_such_seat")
    assert [r.status_code for r in issued] == [200, 200]
    assert out["replaced"] == 401
    # Played to its end through the gateway, and its log (the origin's steps included) audits clean.
    assert table["status"] == "over" and table["end_reason"] == "finished"
    assert sum(s.moves for s in seats) > 0
    assert audit["ok"] is True and audit["origin_checked"] is True, audit  # checked against the origin's own log
    # The origin is untouched by its fork.
    assert origin_after["status"] == "running" and origin_after["version"] == at
    closed = replays["closed"]
    assert (closed.status_code, closed.json()["error"]["code"]) == (403, "replay_while_origin_runs")
    for refused in (replays["spectator"], out["spectator_view"]):
        assert (refused.status_code, refused.json()["error"]["code"]) == (403, "fork_of_running_game")
    assert out["origin"] in out["listed_running"] and out["fork"] not in out["listed_running"]
    # Once the origin is over, the fork is anybody's to watch and replay, and listed.
    assert out["spectator_view_open"].status_code == 200, out["spectator_view_open"].text
    assert replays["spectator_open"].status_code == 200
    assert replays["spectator_open"].json()["view"]["game"]["players"][1]["hand"] is None  # a spectator sees no hand
    assert out["fork"] in out["listed_over"]
    opened = replays["open"]
    assert opened.status_code == 200, opened.text
    assert opened.json()["view"]["game"]["players"][1]["hand"] == hands["1"]  # the fork's own deal


def test_the_fork_routes_need_the_operator_token(stack_services):
    url = stack_services.http_url
    r = httpx.post(f"{url}/v1/operator/games/expeditions-0/seats/0/token", timeout=30)
    assert r.status_code == 401
