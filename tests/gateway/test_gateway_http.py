"""The HTTP API on a fake Redis and a fake router: statuses, fields, tokens, seats, limits."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from croupier.engine.contract import Rejection
from croupier.v1 import rules_pb2
from croupier_gateway.reads import left_by

OP = {"authorization": "Bearer op-secret"}


def bearer(token):
    return {"authorization": f"Bearer {token}"}


def create(client, seats=2, **extra):
    r = client.post("/v1/tables", json={"game_type": "pebbles", "seats": seats, **extra})
    assert r.status_code == 201, r.text
    return r.json()["game_id"]


def seated(client, seats=2):
    gid = create(client, seats)
    tokens = []
    for seat in range(seats):
        r = client.post(f"/v1/tables/{gid}/seats/{seat}", json={"player": f"p{seat}"})
        assert r.status_code == 201, r.text
        tokens.append(r.json()["token"])
    return gid, tokens


def error(r, status):
    assert r.status_code == status, r.text
    return r.json()["error"]


def test_games_lists_the_registry(client):
    games = client.get("/v1/games").json()["games"]
    assert [g["id"] for g in games] == ["pebbles"]
    assert games[0]["options"][0]["name"] == "speed"


def test_create_validates_before_any_rules_call(client, fake_stack):
    router = fake_stack[3]
    assert error(client.post("/v1/tables", json={"game_type": "chess"}), 400)["field"] == "game_type"
    assert error(client.post("/v1/tables", json={"game_type": "pebbles", "seats": 9}), 400)["field"] == "seats"
    assert error(client.post("/v1/tables", json={"game_type": "pebbles", "seats": 2, "options": {"speed": 7}}),
                 400)["field"] == "options"
    assert error(client.post("/v1/tables", json={"game_type": "pebbles", "colour": 1}), 400)["field"] == "colour"
    assert error(client.post("/v1/tables", json={"game_type": "pebbles", "options": {"speed": 1.5}}), 400)
    bad_json = error(client.post("/v1/tables", content=b"{not json", headers={"content-type": "application/json"}), 400)
    assert bad_json["code"] == "invalid_json" and bad_json["field"] == "body"
    # numbers are numbers: no true for 1 seat, no "2" for 2
    assert error(client.post("/v1/tables", json={"game_type": "pebbles", "seats": True}), 400)["field"] == "seats"
    assert error(client.post("/v1/tables", json={"game_type": "pebbles", "seats": "2"}), 400)["field"] == "seats"
    assert error(client.post("/v1/tables", json=[1, 2]), 400)
    assert router.calls == []


def test_a_table_id_refused_as_used_long_ago_is_replaced_and_a_callers_retry_finds_the_same_table(client, fake_stack):
    router = fake_stack[3]
    router.refuse_creates = 1
    gid = create(client)
    tried = [request.game_id for method, request in router.calls if method == "CreateGame"]
    assert len(tried) == 2 and tried[1] == gid != tried[0]
    assert client.get(f"/v1/tables/{gid}").json()["status"] == "open"
    # An id derived from the caller's command_id is replaced by the next one derived from it
    # (our clients send a command_id with every create): the same request walks the same ids,
    # so its retry, refused the same way at the first, finds the table it made at the second.
    router.refuse_creates = 1
    router.calls.clear()
    made = client.post("/v1/tables", json={"game_type": "pebbles", "command_id": "mine-1"})
    assert made.status_code == 201, made.text
    tried = [request.game_id for method, request in router.calls if method == "CreateGame"]
    assert len(tried) == 2 and tried[1] == made.json()["game_id"] != tried[0]
    router.refuse_creates = 1  # the filter's "maybe" for that first id holds on the retry too
    again = client.post("/v1/tables", json={"game_type": "pebbles", "command_id": "mine-1"})
    assert again.status_code == 201 and again.json()["game_id"] == made.json()["game_id"]
    # And a gateway that is refused every time gives up after its tries.
    router.refuse_creates = 10
    assert error(client.post("/v1/tables", json={"game_type": "pebbles"}), 409)["code"] == "already_exists"
    assert router.refuse_creates == 10 - 3


def test_create_list_get(client):
    gid = create(client, options={"speed": 2})
    tables = client.get("/v1/tables", params={"game_type": "pebbles"}).json()["tables"]
    assert [t["game_id"] for t in tables] == [gid]
    table = client.get(f"/v1/tables/{gid}").json()
    assert table["status"] == "open" and table["free_seats"] == 2 and table["options"]["speed"] == 2
    assert "seed" not in table
    assert error(client.get("/v1/tables/nope-1"), 404)["code"] == "no_such_game"
    assert error(client.get("/v1/tables/bad%20id"), 400)["field"] == "game_id"
    assert error(client.get("/v1/tables", params={"status": "closed"}), 400)["field"] == "status"


def test_join_gives_a_token_for_that_seat_only(client):
    gid, (t0, t1) = seated(client)
    v0 = client.get(f"/v1/tables/{gid}/view", headers=bearer(t0)).json()
    v1 = client.get(f"/v1/tables/{gid}/view", headers=bearer(t1)).json()
    spectator = client.get(f"/v1/tables/{gid}/view").json()
    assert v0["seat"] == 0 and v1["seat"] == 1 and spectator["seat"] is None
    hands0 = v0["view"]["game"]["hands"]
    assert hands0[0] and hands0[1] is None
    assert spectator["view"]["game"]["hands"] == [None, None]
    assert spectator["view"]["seed"] is None
    assert error(client.post(f"/v1/tables/{gid}/seats/0", json={}), 422)["code"] == "table_full"


def test_tokens_are_checked(client):
    gid, (t0, t1) = seated(client)
    other, (o0, _) = seated(client)
    assert error(client.get(f"/v1/tables/{gid}/actions"), 401)
    assert error(client.get(f"/v1/tables/{gid}/actions", headers=bearer("garbage")), 401)
    assert error(client.get(f"/v1/tables/{gid}/view", headers=bearer("garbage")), 401)
    assert error(client.get(f"/v1/tables/{gid}/actions", headers=bearer(o0)), 403)["code"] == "wrong_table"
    r = client.post(f"/v1/tables/{gid}/commands", json={"command_id": "c", "action": {"type": "Play", "pebble": "x"}},
                    headers=bearer(o0))
    assert error(r, 403)


def test_the_seat_comes_from_the_token(client, fake_stack):
    router = fake_stack[3]
    gid, (t0, t1) = seated(client)
    actions = client.get(f"/v1/tables/{gid}/actions", headers=bearer(t0)).json()
    assert actions["seat"] == 0 and actions["actions"]
    action = actions["actions"][0]
    # seat 1 cannot play seat 0's move: it is sent as seat 1's, and refused by the rules
    r = client.post(f"/v1/tables/{gid}/commands", json={"command_id": "c1", "action": action}, headers=bearer(t1))
    assert error(r, 422)["code"] == "not_your_turn"
    assert router.calls[-1][1].seat == 1
    r = client.post(f"/v1/tables/{gid}/commands", json={"command_id": "c1", "action": action}, headers=bearer(t0))
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["seat"] == 0 and body["duplicate"] is False
    view = client.get(f"/v1/tables/{gid}/view", headers=bearer(t0)).json()
    assert view["version"] == body["version"] and view["view"]["game"]["played"] == [action["pebble"]]


def test_command_input_errors_name_the_field(client):
    gid, (t0, _) = seated(client)
    h = bearer(t0)
    play = {"type": "Play", "pebble": "pebble-0"}
    assert error(client.post(f"/v1/tables/{gid}/commands", json={"action": play}, headers=h), 400)["field"] == "command_id"
    assert error(client.post(f"/v1/tables/{gid}/commands", json={"command_id": "", "action": play}, headers=h),
                 400)["field"] == "command_id"
    assert error(client.post(f"/v1/tables/{gid}/commands", json={"command_id": "c", "action": {"kind": 1}}, headers=h),
                 400)["field"] == "action"
    assert error(client.post(f"/v1/tables/{gid}/commands", json={"command_id": "c", "action": {"type": "Fly"}},
                             headers=h), 400)["field"] == "action"
    assert error(client.post(f"/v1/tables/{gid}/commands",
                             json={"command_id": "c", "action": {"type": "Play", "pebble": "p", "x": 1}}, headers=h),
                 400)["field"] == "action"
    assert error(client.post(f"/v1/tables/{gid}/commands",
                             json={"command_id": "c", "expected_version": -1, "action": play}, headers=h),
                 400)["field"] == "expected_version"
    for loose in ("1", 1.0, True):  # a version is an integer, not something that converts to one
        assert error(client.post(f"/v1/tables/{gid}/commands",
                                 json={"command_id": "c", "expected_version": loose, "action": play}, headers=h),
                     400)["field"] == "expected_version"
    for depth in (600, 900):  # nested past sense: a 400 naming the action, never a 500
        deep = '{"command_id": "c", "action": {"type": "Play", "pebble": ' + "[" * depth + "]" * depth + "}}"
        r = client.post(f"/v1/tables/{gid}/commands", content=deep,
                        headers={**h, "content-type": "application/json"})
        assert error(r, 400)["field"] == "action", depth


def test_version_conflict_is_409(client):
    gid, (t0, _) = seated(client)
    action = client.get(f"/v1/tables/{gid}/actions", headers=bearer(t0)).json()["actions"][0]
    r = client.post(f"/v1/tables/{gid}/commands", json={"command_id": "c", "expected_version": 1, "action": action},
                    headers=bearer(t0))
    assert error(r, 409)["code"] == "version_conflict"


@pytest.mark.parametrize("kind,status", [("illegal", 422), ("conflict", 409), ("not_found", 404),
                                         ("forbidden", 403), ("unavailable", 503), ("not_owner", 503),
                                         ("malformed", 400), ("already_exists", 409)])
def test_rejections_map_to_statuses(client, fake_stack, kind, status):
    router = fake_stack[3]
    gid, (t0, _) = seated(client)
    router.fail = Rejection("some_rule", "words", kind)
    r = client.post(f"/v1/tables/{gid}/commands",
                    json={"command_id": "c", "action": {"type": "Play", "pebble": "pebble-0"}}, headers=bearer(t0))
    err = error(r, status)
    assert err["code"] == "some_rule" and err["message"] == "words"


def test_a_seat_token_is_renewed_for_a_game_that_outlasts_it(client, fake_stack):
    """A token lives CROUPIER_TOKEN_TTL_S (12 h); a turn clock may give a move a day. The seat's
    (still valid) token gets a new one a full lifetime from now, signed with today's key; both
    hold the seat (its holder is unchanged, so a stream open with the old one goes on)."""
    import time

    settings = fake_stack[0]
    signer = client.app.state.holder["gw"].signer
    gid, (t0, t1) = seated(client)
    first = signer.verify(t0)
    # The seat's token as it is a minute before it expires, issued almost a lifetime ago.
    old, _ = signer.issue(gid, 0, 60, jti=first.jti, join=first.join)
    r = client.post(f"/v1/tables/{gid}/seats/0/renew", headers=bearer(old))
    assert r.status_code == 200, r.text
    renewed = r.json()
    assert renewed["seat"] == 0 and renewed["token"] != old
    assert renewed["expires_at"] >= int(time.time()) + settings.token_ttl_s - 5
    claims = signer.verify(renewed["token"])
    assert (claims.jti, claims.join, claims.seat) == (first.jti, first.join, 0)
    for token in (t0, old, renewed["token"]):
        assert client.get(f"/v1/tables/{gid}/view", headers=bearer(token)).json()["seat"] == 0
    # Only the seat's own token, for its own seat, renews it.
    assert error(client.post(f"/v1/tables/{gid}/seats/0/renew"), 401)["code"] == "unauthenticated"
    assert error(client.post(f"/v1/tables/{gid}/seats/0/renew", headers=bearer(t1)), 403)["code"] == "wrong_seat"
    assert error(client.post(f"/v1/tables/{gid}/seats/0/renew", headers=bearer("forged.token")), 401)
    # A seat given up is not renewed by its old token.
    gid2 = create(client, 3)
    t = client.post(f"/v1/tables/{gid2}/seats/2", json={"player": "x"}).json()["token"]
    assert client.delete(f"/v1/tables/{gid2}/seats/2", headers=bearer(t)).status_code == 200
    assert error(client.post(f"/v1/tables/{gid2}/seats/2/renew", headers=bearer(t)), 401)["code"] == "unauthenticated"


def test_leave_frees_the_seat_and_its_token_stops_working(client):
    gid = create(client, 3)
    t0 = client.post(f"/v1/tables/{gid}/seats/0", json={}).json()["token"]
    assert error(client.delete(f"/v1/tables/{gid}/seats/1", headers=bearer(t0)), 403)["code"] == "wrong_seat"
    assert client.delete(f"/v1/tables/{gid}/seats/0", headers=bearer(t0)).status_code == 200
    assert client.get(f"/v1/tables/{gid}").json()["free_seats"] == 3
    t0b = client.post(f"/v1/tables/{gid}/seats/0", json={}).json()["token"]
    assert error(client.get(f"/v1/tables/{gid}/view", headers=bearer(t0)), 401)
    assert client.get(f"/v1/tables/{gid}/view", headers=bearer(t0b)).json()["seat"] == 0


def leave(client, gid, seat, token, command_id=None):
    body = {"command_id": command_id} if command_id else None
    return client.request("DELETE", f"/v1/tables/{gid}/seats/{seat}", headers=bearer(token), json=body)


def committed_leaves(router, gid):
    """(LeaveSeat calls that reached the rules service, SeatLeft events in the game's log)."""
    calls = sum(method == "LeaveSeat" and request.game_id == gid for method, request in router.calls)
    return calls, sum(env.type == "SeatLeft" for env in router.tables[gid].log.read(gid))


def test_a_leave_whose_answer_was_lost_gets_the_same_answer_when_retried(client, fake_stack):
    """The leave is committed and the seat marked left, then its answer is lost (the client's
    connection drops, a timeout). Before, the retry (same token, same command_id) was refused
    401 "this token no longer holds its seat": the seat's record was a bare "-", which did not
    say whose leave it was. It names the token and the leave's version now, and the retry gets
    the first answer again, marked duplicate, without a second leave."""
    router = fake_stack[3]
    gid = create(client, 3)
    t0 = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "a"}).json()["token"]
    client.post(f"/v1/tables/{gid}/seats/1", json={"player": "b"})
    first = leave(client, gid, 0, t0, "leave-a")  # its answer never reaches the client
    assert first.status_code == 200, first.text
    for _ in range(2):
        again = leave(client, gid, 0, t0, "leave-a")
        assert again.status_code == 200, again.text  # was 401 unauthenticated
        assert again.json() == {**first.json(), "duplicate": True}
    assert first.json()["duplicate"] is False
    assert committed_leaves(router, gid) == (1, 1)  # nothing sent, nothing appended twice
    table = client.get(f"/v1/tables/{gid}").json()
    assert table["free_seats"] == 2 and table["players"][0] is None and table["version"] == first.json()["version"]
    # The answer is a leave's again, not the seat back: the token acts for nothing else.
    assert error(client.get(f"/v1/tables/{gid}/view", headers=bearer(t0)), 401)["code"] == "unauthenticated"
    assert error(client.post(f"/v1/tables/{gid}/seats/0/renew", headers=bearer(t0)), 401)
    # Nor is it a leave of another seat (the seat is the token's).
    assert error(leave(client, gid, 1, t0, "leave-a"), 401)["code"] == "unauthenticated"
    assert committed_leaves(router, gid) == (1, 1)


def test_a_leave_committed_while_the_read_models_lag_is_retried_through_the_rules_dedupe(client, fake_stack):
    """The rules service committed the leave but the gateway never marked the seat (it failed
    before): while the record still names the token and the read models do not show the leave
    yet, the retry goes to the rules service, whose command_id dedupe answers it, and the
    gateway marks the seat then."""
    gid = create(client, 3)
    t0 = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "a"}).json()["token"]
    _, _, sredis, router = fake_stack
    gw = client.app.state.holder["gw"]
    router.projecting = False  # the leave reaches the log, not (yet) the read models
    response = asyncio.run(router.call("pebbles", gid, "LeaveSeat", rules_pb2.LeaveSeatRequest(
        game_type="pebbles", game_id=gid, seat=0, command_id="leave:0:leave-a")))
    version = int(response.result.version)
    assert sredis.hget(gw.reads.seats_key(gid), "0").decode() == gw.signer.verify(t0).jti  # no mark
    router.projecting = True
    again = leave(client, gid, 0, t0, "leave-a")
    assert again.status_code == 200, again.text
    assert again.json() == {"game_id": gid, "seat": 0, "version": version, "duplicate": True}
    assert committed_leaves(router, gid) == (2, 1)  # sent again, appended once
    # Marked now: a further retry is answered from the mark, without the rules service.
    assert leave(client, gid, 0, t0, "leave-a").json() == again.json()
    assert committed_leaves(router, gid) == (2, 1)


def test_a_left_token_whose_seat_was_taken_again_is_still_refused_and_removes_no_one(client, fake_stack):
    router = fake_stack[3]
    gid = create(client, 3)
    t0 = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "a"}).json()["token"]
    assert leave(client, gid, 0, t0, "leave-a").status_code == 200
    tb = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "b"}).json()["token"]
    # The seat is b's now: the old token's leave, retried or new, is refused, and b keeps it.
    for cid in ("leave-a", "leave-a2", None):
        assert error(leave(client, gid, 0, t0, cid), 401)["code"] == "unauthenticated"
    assert committed_leaves(router, gid) == (1, 1)
    assert client.get(f"/v1/tables/{gid}/view", headers=bearer(tb)).json()["seat"] == 0
    assert client.get(f"/v1/tables/{gid}").json()["players"][0]["player"] == "b"
    # b leaves too: the seat's mark is b's leave, which a's token did not make.
    assert leave(client, gid, 0, tb, "leave-b").status_code == 200
    assert error(leave(client, gid, 0, t0, "leave-a"), 401)["code"] == "unauthenticated"
    assert leave(client, gid, 0, tb, "leave-b").json()["duplicate"] is True
    assert committed_leaves(router, gid) == (2, 2)


def lost_before_the_mark(client, fake_stack, gid, token, command_id):
    """A leave of seat 0 that the rules service commits (and the projector shows) but whose
    answer the gateway never gets (the router's deadline ran out after the commit): a 503, and
    the seat's record still names the token. The leave's version."""
    _, _, sredis, router = fake_stack
    gw = client.app.state.holder["gw"]
    router.lose_answers = 1
    assert error(leave(client, gid, 0, token, command_id), 503)["code"] == "unavailable"
    assert router.lose_answers == 0
    assert sredis.hget(gw.reads.seats_key(gid), "0").decode() == gw.signer.verify(token).jti  # no mark
    assert router.tables[gid].log.read(gid)[-1].type == "SeatLeft"
    return router.tables[gid].state.version


def test_a_leave_committed_but_answered_503_before_its_mark_is_answered_duplicate_when_retried(client, fake_stack):
    """The leave committed, the gateway answered 503 before marking it, and the projection
    caught up: the read models no longer give the token its seat, so the retry (the bundled
    clients retry a 503 with the same command_id) was refused 401 although the leave was done.
    It goes to the rules service now, with the version at which the read models show the seat
    free as its expected_version, and the command_id's dedupe answers it."""
    router = fake_stack[3]
    gid = create(client, 3)
    t0 = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "a"}).json()["token"]
    client.post(f"/v1/tables/{gid}/seats/1", json={"player": "b"})
    version = lost_before_the_mark(client, fake_stack, gid, t0, "leave-a")
    assert error(client.get(f"/v1/tables/{gid}/view", headers=bearer(t0)), 401)["code"] == "unauthenticated"
    again = leave(client, gid, 0, t0, "leave-a")
    assert again.status_code == 200, again.text  # was 401 unauthenticated
    assert again.json() == {"game_id": gid, "seat": 0, "version": version, "duplicate": True}
    assert committed_leaves(router, gid) == (2, 1)  # sent again, appended once
    sent = router.calls[-1][1]
    assert sent.command_id == "leave:0:leave-a" and sent.HasField("expected_version") and sent.expected_version == version
    # Marked now: a further retry is answered from the mark, without the rules service.
    assert leave(client, gid, 0, t0, "leave-a").json() == again.json()
    assert committed_leaves(router, gid) == (2, 1)
    table = client.get(f"/v1/tables/{gid}").json()
    assert table["free_seats"] == 2 and table["players"][0] is None


def test_an_unmarked_leave_retried_after_the_seat_was_taken_again_removes_no_one(client, fake_stack):
    """As above, but another player takes the seat before the retry. Recorded by the gateway,
    the new holder's record refuses the retry at once. Committed but not projected or
    recorded yet (the read models still show the seat free at the version the gateway sends),
    a fresh leave is refused version_conflict by the rules service and the retry stays a 401,
    the new player keeping the seat; the same command_id is still answered as the leave that
    it was, without touching the seat."""
    _, _, sredis, router = fake_stack
    gw = client.app.state.holder["gw"]
    # Taken through the gateway: the record names the new holder.
    gid = create(client, 3)
    t0 = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "a"}).json()["token"]
    lost_before_the_mark(client, fake_stack, gid, t0, "leave-a")
    tb = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "b"}).json()["token"]
    assert error(leave(client, gid, 0, t0, "leave-a"), 401)["code"] == "unauthenticated"
    assert committed_leaves(router, gid) == (1, 1)
    assert client.get(f"/v1/tables/{gid}/view", headers=bearer(tb)).json()["seat"] == 0
    # Taken by a join the read models and the record do not show yet.
    gid = create(client, 3)
    t0 = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "a"}).json()["token"]
    free_at = lost_before_the_mark(client, fake_stack, gid, t0, "leave-a")
    router.projecting = False
    asyncio.run(router.call("pebbles", gid, "JoinSeat", rules_pb2.JoinSeatRequest(
        game_type="pebbles", game_id=gid, seat=0, player="c", command_id="join-c")))
    router.projecting = True
    assert error(leave(client, gid, 0, t0, "leave-a2"), 401)["code"] == "unauthenticated"
    calls, left = committed_leaves(router, gid)
    assert (calls, left) == (2, 1)  # sent, refused: nothing appended
    assert router.calls[-1][1].expected_version == free_at
    assert router.tables[gid].state.players[0]["player"] == "c"
    again = leave(client, gid, 0, t0, "leave-a")
    assert again.json() == {"game_id": gid, "seat": 0, "version": free_at, "duplicate": True}
    assert committed_leaves(router, gid) == (3, 1)
    assert router.tables[gid].state.players[0]["player"] == "c"
    assert left_by(sredis.hget(gw.reads.seats_key(gid), "0").decode()) == (gw.signer.verify(t0).jti, free_at)


def test_an_unmarked_leave_retried_with_another_command_id_is_refused_seat_empty(client, fake_stack):
    """A new command_id after such a leave is a fresh leave of a free seat: the rules service
    refuses it (seat_empty), the retry is the 401 it was, and nothing is appended."""
    router = fake_stack[3]
    gid = create(client, 3)
    t0 = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "a"}).json()["token"]
    version = lost_before_the_mark(client, fake_stack, gid, t0, "leave-a")
    refused = []
    call = router.call

    async def recording(game_type, game_id, method, request):
        try:
            return await call(game_type, game_id, method, request)
        except Rejection as rej:
            refused.append(rej.code)
            raise

    router.call = recording
    assert error(leave(client, gid, 0, t0, "leave-b"), 401)["code"] == "unauthenticated"
    assert refused == ["seat_empty"]
    assert committed_leaves(router, gid) == (2, 1)
    assert router.tables[gid].state.version == version
    # Without a command_id there is nothing to dedupe: refused at once, as before.
    assert error(leave(client, gid, 0, t0), 401)["code"] == "unauthenticated"
    assert committed_leaves(router, gid) == (2, 1)


def test_a_committed_leave_whose_mark_fails_is_still_answered(client, fake_stack, monkeypatch):
    """drop_holder raising a Redis error after the leave committed was a 503 for a leave that
    was done. It is logged and the leave answered; the retry of the unmarked leave is answered
    through the rules service's dedupe once the read models show the seat free."""
    from redis.exceptions import ConnectionError as RedisConnectionError

    router = fake_stack[3]
    gw = client.app.state.holder["gw"]
    gid = create(client, 3)
    t0 = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "a"}).json()["token"]
    drop_holder = gw.reads.drop_holder

    async def failing(*args, **kwargs):
        raise RedisConnectionError("Redis went away")

    monkeypatch.setattr(gw.reads, "drop_holder", failing)
    first = leave(client, gid, 0, t0, "leave-a")
    assert first.status_code == 200, first.text  # was 503
    version = router.tables[gid].state.version
    assert first.json() == {"game_id": gid, "seat": 0, "version": version, "duplicate": False}
    assert error(client.get(f"/v1/tables/{gid}/view", headers=bearer(t0)), 401)["code"] == "unauthenticated"
    monkeypatch.setattr(gw.reads, "drop_holder", drop_holder)
    assert leave(client, gid, 0, t0, "leave-a").json() == {**first.json(), "duplicate": True}
    assert committed_leaves(router, gid) == (2, 1)


def test_a_seat_marked_left_by_an_earlier_gateway_still_refuses_its_token(client, fake_stack):
    """A gateway of an earlier version marks a left seat with a bare "-" (still in Redis during
    a rolling upgrade): it says the seat was left, not by whom, so it refuses every token as
    before, and a leave retried against it is a 401 as it was (never a duplicate's answer)."""
    _, _, sredis, router = fake_stack
    gw = client.app.state.holder["gw"]
    gid = create(client, 3)
    t0 = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "a"}).json()["token"]
    sredis.hset(gw.reads.seats_key(gid), "0", "-")  # the leave's mark, written by an older gateway
    assert error(client.get(f"/v1/tables/{gid}/view", headers=bearer(t0)), 401)["code"] == "unauthenticated"
    assert error(leave(client, gid, 0, t0, "leave-a"), 401)["code"] == "unauthenticated"
    assert committed_leaves(router, gid)[0] == 0


def test_a_retried_join_gets_a_token_only_while_that_join_holds_the_seat(client):
    gid = create(client, 3)
    first = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "a", "command_id": "join-a-0123456789"})
    assert first.status_code == 201
    # its answer lost, the same join again: the seat is still this join's, so a token
    again = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "a", "command_id": "join-a-0123456789"})
    assert again.status_code == 201, again.text
    assert client.get(f"/v1/tables/{gid}/view", headers=bearer(again.json()["token"])).json()["seat"] == 0
    assert client.delete(f"/v1/tables/{gid}/seats/0", headers=bearer(again.json()["token"])).status_code == 200
    b = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "b", "command_id": "join-b-0123456789"}).json()["token"]
    # once left, the old join's command_id does not take the seat back from b
    stale = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "a", "command_id": "join-a-0123456789"})
    assert error(stale, 409)["code"] == "join_undone"
    assert client.get(f"/v1/tables/{gid}/view", headers=bearer(b)).json()["seat"] == 0
    assert client.get(f"/v1/tables/{gid}").json()["players"][0]["player"] == "b"
    # nor a free seat: a new join is a new command_id
    assert client.delete(f"/v1/tables/{gid}/seats/0", headers=bearer(b)).status_code == 200
    assert error(client.post(f"/v1/tables/{gid}/seats/0", json={"player": "a", "command_id": "join-a-0123456789"}), 409)
    assert client.post(f"/v1/tables/{gid}/seats/0", json={"player": "a", "command_id": "join-a2-0123456789"}).status_code == 201


def test_a_join_done_but_answered_503_is_retried_by_the_client_and_the_seat_is_its_callers(client, monkeypatch):
    """The rules service commits the join, then recording the seat's holder fails (Redis away
    a moment): the answer is 503. Before, our clients sent no command_id and did not retry, so
    a retry by hand was refused seat_taken and the seat stayed taken by nobody who held its
    token. The clients now send a command_id with every join and try again with it."""
    import asyncio

    import httpx
    from redis.exceptions import ConnectionError as RedisConnectionError

    from croupier_gateway.client import HttpGateway
    from croupier_gateway.core import GRANT_ATTEMPTS

    gw = client.app.state.holder["gw"]
    real = gw.reads.set_holder
    failures = {"left": GRANT_ATTEMPTS}  # the gateway's own tries, then a 503

    async def set_holder(*args, **kwargs):
        if failures["left"]:
            failures["left"] -= 1
            raise RedisConnectionError("Redis went away a moment")
        return await real(*args, **kwargs)

    monkeypatch.setattr(gw.reads, "set_holder", set_holder)
    gid = create(client, 2)
    sent = []

    async def main():
        api = HttpGateway("http://gateway")
        transport = httpx.ASGITransport(app=client.app)

        async def record(request):
            sent.append(json_of(request))

        api.http = httpx.AsyncClient(base_url="http://gateway", transport=transport,
                                     event_hooks={"request": [record]})
        try:
            return await api.join(gid, 0, player="ann", entropy="e")
        finally:
            await api.close()

    joined = asyncio.run(main())
    assert failures["left"] == 0 and len(sent) == 2  # a 503, then the same join again
    assert sent[0] == sent[1] and sent[0]["command_id"]
    assert client.get(f"/v1/tables/{gid}/view", headers=bearer(joined["token"])).json()["seat"] == 0
    assert client.get(f"/v1/tables/{gid}").json()["players"][0]["player"] == "ann"


def json_of(request):
    import json

    return json.loads(request.content)


def test_a_retried_join_while_the_read_models_are_behind_it_is_told_to_retry_not_refused(client, fake_stack):
    """A projector catching up (after a broker restart, in a rebuild) cannot show yet whether
    the join still holds the seat: 503 seats_restoring, and the token once it can."""
    sredis, router = fake_stack[2], fake_stack[3]
    keys = router.keys
    gid = create(client, 3)
    first = client.post(f"/v1/tables/{gid}/seats/1", json={"player": "a", "command_id": "join-a-0123456789"})
    assert first.status_code == 201
    meta = keys.meta(gid)
    saved = sredis.hgetall(meta)
    sredis.hset(meta, mapping={"version": 1, "joined:1": 0})  # as if only the create were projected
    router.projecting = False
    behind = client.post(f"/v1/tables/{gid}/seats/1", json={"player": "a", "command_id": "join-a-0123456789"})
    assert error(behind, 503)["code"] == "seats_restoring" and behind.headers["retry-after"] == "1"
    router.projecting = True
    sredis.hset(meta, mapping=saved)  # caught up
    again = client.post(f"/v1/tables/{gid}/seats/1", json={"player": "a", "command_id": "join-a-0123456789"})
    assert again.status_code == 201 and again.json()["seat"] == 1


def test_body_size_limit(client):
    r = client.post("/v1/tables", content=b"{" + b" " * 70_000 + b"}", headers={"content-type": "application/json"})
    assert error(r, 413)["code"] == "body_too_large"


def test_rate_limit_is_429_with_retry_after(fake_stack):
    import dataclasses

    from starlette.testclient import TestClient

    from croupier_gateway.app import create_app

    settings, aredis, _, router = fake_stack
    settings = dataclasses.replace(settings, rate_limit_per_s=0.01, rate_limit_burst=3)
    with TestClient(create_app(settings, redis=aredis, router=router)) as c:
        assert [c.get("/v1/games").status_code for _ in range(3)] == [200] * 3
        r = c.get("/v1/games")
        assert error(r, 429)["code"] == "rate_limited"
        assert int(r.headers["retry-after"]) >= 1


def test_the_operator_listing_finds_a_game_by_its_id_past_its_scan_and_says_when_it_stopped(client, monkeypatch):
    from croupier_gateway import operators

    ids = [create(client) for _ in range(5)]
    monkeypatch.setattr(operators, "MAX_SCAN", 2)
    monkeypatch.setattr(operators, "PAGE", 1)
    listed = client.get("/v1/operator/games", headers=OP, params={"q": "nobody"}).json()
    assert listed["games"] == [] and listed["scanned"] == 2 and listed["truncated"] is True
    for gid in ids:  # every one, however far down the listing
        found = client.get("/v1/operator/games", headers=OP, params={"q": gid}).json()
        assert [g["game_id"] for g in found["games"]] == [gid] and found["truncated"] is False
    assert client.get("/v1/operator/games", headers=OP, params={"q": ids[0], "status": "running",
                                                                "game_type": "pebbles"}).json()["games"] == []
    monkeypatch.setattr(operators, "MAX_SCAN", 20_000)
    assert client.get("/v1/operator/games", headers=OP).json()["truncated"] is False


def test_operator_routes_need_the_operator_token(client):
    gid, (t0, _) = seated(client)
    assert "required" in error(client.get("/v1/operator/games"), 401)["message"]
    assert error(client.get("/v1/operator/games", headers=bearer(t0)), 401)["message"] == "this is not the operator token"
    games = client.get("/v1/operator/games", headers=OP).json()
    assert [g["game_id"] for g in games["games"]] == [gid]
    assert client.get("/v1/operator/games", headers=OP, params={"q": "p1"}).json()["games"]
    assert not client.get("/v1/operator/games", headers=OP, params={"q": "nobody"}).json()["games"]
    full = client.get(f"/v1/operator/games/{gid}", headers=OP).json()
    assert set(full["views"]) == {"spectator", "0", "1"} and set(full["actions"]) == {"0", "1"}
    ended = client.post(f"/v1/operator/games/{gid}/force-end", json={"reason": "stuck"}, headers=OP)
    assert ended.status_code == 200, ended.text
    table = client.get(f"/v1/tables/{gid}").json()
    assert table["status"] == "over" and table["end_reason"] == "forced"


def test_service_routes(client):
    assert client.get("/healthz").json() == {"ok": True}
    client.get("/v1/games")
    assert "croupier_gateway_requests_total" in client.get("/metrics").text
    doc = client.get("/openapi.json").json()
    assert "/v1/tables/{game_id}/commands" in doc["paths"]
    assert error(client.get("/nowhere"), 404)
    assert error(client.put("/v1/games"), 405)


def test_pages_forbid_framing_and_foreign_scripts_and_every_answer_forbids_sniffing(client):
    import re

    for path in ("/web/", "/web/table.html", "/web/js/table.js"):
        r = client.get(path)
        assert r.status_code == 200, path
        policy = r.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy, policy
        assert r.headers["x-frame-options"] == "DENY"
        assert r.headers["x-content-type-options"] == "nosniff"
    # /watch's inline script and style run by a nonce of their own, new for every answer.
    nonces = []
    for _ in range(2):
        r = client.get("/watch/some-table")
        (nonce,) = re.findall(r"script-src 'nonce-([^']+)'", r.headers["content-security-policy"])
        assert f'<script nonce="{nonce}">' in r.text and f'<style nonce="{nonce}">' in r.text
        assert "'self'" not in r.headers["content-security-policy"].split("script-src")[1].split(";")[0]
        nonces.append(nonce)
    assert nonces[0] != nonces[1]
    api = client.get("/v1/games")
    assert api.headers["x-content-type-options"] == "nosniff" and api.headers["referrer-policy"] == "no-referrer"
    assert "content-security-policy" not in api.headers
    assert client.get("/nowhere").headers["x-content-type-options"] == "nosniff"


def test_stream_sends_each_new_version_once_and_resumes(client, fake_stack):
    gid, (t0, t1) = seated(client)
    with client.websocket_connect(f"/v1/tables/{gid}/stream?from_version=0&token={t0}") as ws:
        first = json.loads(ws.receive_text())
        assert first["view"]["you"] == 0 and first["actions"]
        version = first["version"]
        r = client.post(f"/v1/tables/{gid}/commands", json={"command_id": "a", "action": first["actions"][0]},
                        headers=bearer(t0))
        assert r.status_code == 200
        second = json.loads(ws.receive_text())
        assert second["version"] > version and second["actions"] == []
    # reconnect from what we saw: nothing twice; the next move arrives
    with client.websocket_connect(f"/v1/tables/{gid}/stream?from_version={second['version']}",) as ws:
        ws.send_text(json.dumps({"token": t1}))
        a1 = client.get(f"/v1/tables/{gid}/actions", headers=bearer(t1)).json()["actions"][0]
        client.post(f"/v1/tables/{gid}/commands", json={"command_id": "b", "action": a1}, headers=bearer(t1))
        third = json.loads(ws.receive_text())
        assert third["version"] > second["version"] and third["view"]["you"] == 1


def test_stream_refusals_close_with_4000_plus_status(client):
    from starlette.websockets import WebSocketDisconnect

    for url, code in (("/v1/tables/nope-1/stream", 4404), ("/v1/tables/x/stream?from_version=-1", 4400),
                      ("/v1/tables/x/stream?from_version=²", 4400), ("/v1/tables/x/stream?token=garbage", 4401)):
        with client.websocket_connect(url) as ws:
            if "token" not in url:
                ws.send_text("{}")
            assert "error" in json.loads(ws.receive_text())
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_text()
            assert closed.value.code == code


def test_metrics_are_labelled_by_route_template(client):
    gid = create(client)
    client.get(f"/v1/tables/{gid}")
    text = client.get("/metrics").text
    assert 'route="/v1/tables/{game_id}"' in text and gid not in text


def test_cors_allows_only_the_configured_origins(fake_stack):
    import dataclasses

    from starlette.testclient import TestClient

    from croupier_gateway.app import create_app

    settings, aredis, _, router = fake_stack
    settings = dataclasses.replace(settings, cors_origins=("https://play.example",))
    with TestClient(create_app(settings, redis=aredis, router=router)) as c:
        pre = {"access-control-request-method": "POST", "access-control-request-headers": "authorization"}
        ok = c.options("/v1/tables", headers={"origin": "https://play.example", **pre})
        assert ok.headers.get("access-control-allow-origin") == "https://play.example"
        other = c.options("/v1/tables", headers={"origin": "https://evil.example", **pre})
        assert "access-control-allow-origin" not in other.headers


def test_a_retried_create_makes_one_table(client, fake_stack):
    body = {"game_type": "pebbles", "seats": 2, "command_id": "create-once"}
    first = client.post("/v1/tables", json=body).json()
    again = client.post("/v1/tables", json=body).json()
    assert first["game_id"] == again["game_id"]
    assert len(client.get("/v1/tables").json()["tables"]) == 1
    other = client.post("/v1/tables", json={**body, "command_id": "create-twice"}).json()
    assert other["game_id"] != first["game_id"]
    # the same command_id for another table is refused, not answered with the first one
    assert error(client.post("/v1/tables", json={**body, "seats": 3}), 409)["code"] == "command_id_reused"
    assert error(client.post("/v1/tables", json={**body, "options": {"speed": 2}}), 409)["code"] == "command_id_reused"
    assert client.get(f"/v1/tables/{first['game_id']}").json()["seats"] == 2


def test_a_redis_outage_is_a_retryable_503_not_a_500(client, fake_stack, monkeypatch):
    import redis

    _, aredis, _, _ = fake_stack
    gid = create(client, 2)

    async def down(*args, **kwargs):
        raise redis.exceptions.ConnectionError("Error 111 connecting")

    monkeypatch.setattr(aredis, "hgetall", down)
    r = client.get(f"/v1/tables/{gid}")
    assert error(r, 503)["code"] == "store_unavailable" and r.headers["retry-after"] == "1"


def test_replay_audit_and_export_answer_503_while_the_event_log_cannot_be_read(client, monkeypatch):
    """Kafka away: the request was fine and the log is intact, so a retryable 503 naming
    the store, not a 500."""
    from croupier_gateway.launcher import free_port

    gid, (t0, _) = seated(client)
    address = f"127.0.0.1:{free_port()}"  # nobody listens there
    monkeypatch.setenv("CROUPIER_KAFKA_BOOTSTRAP", address)
    monkeypatch.setenv("CROUPIER_KAFKA_CONNECT_TIMEOUT_S", "1")
    for path, headers in ((f"/v1/operator/games/{gid}/replay", OP), (f"/v1/operator/games/{gid}/audit", OP),
                          (f"/v1/operator/games/{gid}/export", OP), (f"/v1/tables/{gid}/replay", bearer(t0))):
        r = client.get(path, headers=headers)
        e = error(r, 503)
        assert e["code"] == "event_store_unavailable" and address in e["message"], (path, e)
        assert int(r.headers["retry-after"]) >= 1


def test_a_listing_page_is_at_most_a_thousand_deep_for_players_not_for_operators(client):
    """A page reads offset + limit ids of every game type listed and their tables: a deep one
    was a cheap way for anyone to make the gateway read a hundred thousand."""
    from croupier_gateway.validation import MAX_OFFSET

    assert client.get("/v1/tables", params={"offset": MAX_OFFSET}).status_code == 200
    refused = error(client.get("/v1/tables", params={"offset": MAX_OFFSET + 1}), 400)
    assert refused["field"] == "offset"
    operator = {"authorization": "Bearer op-secret"}
    assert client.get("/v1/operator/games", params={"offset": 5_000}, headers=operator).status_code == 200


def test_a_players_replay_of_no_table_is_404_without_reading_the_log_and_few_read_at_once(client, monkeypatch):
    """Anyone may ask for a replay, and each read a game's log from Kafka: an id no table has
    is now answered from the read models, and a gateway reads at most a few at once."""
    import croupier_gateway.replay_routes as routes

    reads = []

    async def log(gw, game_id):
        reads.append(game_id)
        raise AssertionError("the log was read")

    monkeypatch.setattr(routes, "_log", log)
    assert error(client.get("/v1/tables/made-up-id-1/replay"), 404)["code"] == "no_such_game"
    assert reads == []
    gid, _ = seated(client)
    gw = client.app.state.holder["gw"]
    held = []

    async def take_all():
        while not gw.player_replays.locked():
            await gw.player_replays.acquire()
            held.append(1)

    # A running table replayed as a seat not the asker's: refused from the read models too.
    status = client.get(f"/v1/tables/{gid}").json()["status"]
    assert status in ("open", "running")
    assert error(client.get(f"/v1/tables/{gid}/replay", params={"as": "0"}), 403)["code"] == "replay_while_running"
    assert reads == []
    client.portal.call(take_all)  # every slot busy with other replays
    try:
        r = client.get(f"/v1/tables/{gid}/replay")
        assert error(r, 503)["code"] == "replays_busy" and r.headers["retry-after"] == "2"
    finally:
        for _ in held:
            gw.player_replays.release()
    assert reads == []


def test_one_address_holds_at_most_its_share_of_streams(fake_stack):
    """One client must not take every stream slot of a gateway (spectator streams need no
    token): CROUPIER_GATEWAY_MAX_STREAMS_PER_ADDRESS streams an address; the next is 4503."""
    import dataclasses
    import time

    from starlette.testclient import TestClient
    from starlette.websockets import WebSocketDisconnect

    from croupier_gateway.app import create_app

    settings, aredis, _, router = fake_stack
    settings = dataclasses.replace(settings, max_streams_per_address=2)
    with TestClient(create_app(settings, redis=aredis, router=router)) as c:
        gid = create(c)
        gw = c.app.state.holder["gw"]
        with c.websocket_connect(f"/v1/tables/{gid}/stream") as a, c.websocket_connect(f"/v1/tables/{gid}/stream") as b:
            for ws in (a, b):
                ws.send_text("{}")
                assert json.loads(ws.receive_text())["version"] >= 1
            assert sum(gw.streams_by_address.values()) == 2
            with c.websocket_connect(f"/v1/tables/{gid}/stream") as third:
                third.send_text("{}")
                assert json.loads(third.receive_text())["error"]["code"] == "too_many_streams_from_address"
                with pytest.raises(WebSocketDisconnect) as closed:
                    third.receive_text()
                assert closed.value.code == 4503
        # Closed streams give their slots back.
        for _ in range(50):
            if not gw.streams_by_address:
                break
            time.sleep(0.02)
        assert gw.streams_by_address == {} and gw.open_streams == 0


def test_a_grpc_clients_address_is_the_one_a_trusted_proxy_forwards():
    from croupier_gateway.grpc_api import _peer

    class Context:
        def __init__(self, peer, forwarded=None):
            self._peer, self._md = peer, (("x-forwarded-for", forwarded),) if forwarded else ()

        def peer(self):
            return self._peer

        def invocation_metadata(self):
            return self._md

    assert _peer(Context("ipv4:10.0.0.5:4431")) == "10.0.0.5"
    assert _peer(Context("ipv6:[::1]:4431")) == "::1"
    # A proxy not trusted: its header is not believed.
    assert _peer(Context("ipv4:10.0.0.5:1", "1.2.3.4"), "127.0.0.1") == "10.0.0.5"
    # A trusted one: the last address it names that is not a trusted proxy itself.
    assert _peer(Context("ipv4:10.0.0.5:1", "6.6.6.6, 1.2.3.4, 10.0.0.9"), "10.0.0.5,10.0.0.9") == "1.2.3.4"
    assert _peer(Context("ipv4:10.0.0.5:1", "6.6.6.6, 1.2.3.4"), "*") == "1.2.3.4"
    assert _peer(Context("ipv4:10.0.0.5:1"), "*") == "10.0.0.5"


def test_seat_tokens_do_not_multiply_an_addresss_rate(fake_stack):
    """Each seat token has its own bucket, and a token costs one join: a client that bought
    many had as many buckets. A request with a seat token also counts against its address,
    at CROUPIER_RATE_LIMIT_ADDRESS_FACTOR times the seat's rate."""
    import dataclasses

    from starlette.testclient import TestClient

    from croupier_gateway.app import create_app

    settings, aredis, _, router = fake_stack
    settings = dataclasses.replace(settings, rate_limit_per_s=0.01, rate_limit_burst=3, rate_limit_address_factor=1.0)
    with TestClient(create_app(settings, redis=aredis, router=router)) as c:
        gid = create(c)
        tokens = [c.post(f"/v1/tables/{gid}/seats/{s}", json={"player": f"p{s}"}).json()["token"] for s in (0, 1)]
        assert [c.get(f"/v1/tables/{gid}/view", headers=bearer(tokens[0])).status_code for _ in range(3)] == [200] * 3
        # The second seat's own bucket is full, but the address has spent its share.
        r = c.get(f"/v1/tables/{gid}/view", headers=bearer(tokens[1]))
        assert error(r, 429)["code"] == "rate_limited"


def test_a_long_poll_holds_one_of_its_addresss_stream_slots_while_it_waits(fake_stack):
    """GET /view with min_version waits up to 30 s on the game's feed: a stream in all but
    name, counted with the address's streams (before, anyone could hold thousands)."""
    import dataclasses
    import threading

    from starlette.testclient import TestClient

    from croupier_gateway.app import create_app

    settings, aredis, _, router = fake_stack
    settings = dataclasses.replace(settings, max_streams_per_address=1)
    with TestClient(create_app(settings, redis=aredis, router=router)) as c:
        gid = create(c)
        gw = c.app.state.holder["gw"]
        waiting = threading.Thread(target=lambda: c.get(f"/v1/tables/{gid}/view",
                                                        params={"min_version": 1000, "timeout_s": 2}))
        waiting.start()
        for _ in range(100):
            if gw.open_streams:
                break
            time.sleep(0.02)
        assert gw.open_streams == 1
        second = c.get(f"/v1/tables/{gid}/view", params={"min_version": 1000, "timeout_s": 2})
        assert error(second, 503)["code"] == "too_many_streams_from_address"
        assert second.headers["retry-after"] == "5"  # when to come back, not at once
        assert c.get(f"/v1/tables/{gid}/view").status_code == 200  # no wait, no slot
        waiting.join()
        assert gw.open_streams == 0


def test_the_bundled_client_sends_a_leave_with_a_command_id_and_retries_it_with_the_same_one(monkeypatch):
    """croupier_gateway.client's leave: a 503 (the answer lost to a fault, the leave maybe
    done) is tried again with the same command_id, which the gateway answers as the first
    leave. Before, the client sent none and did not retry."""
    import httpx

    from croupier_gateway import client as client_mod

    monkeypatch.setattr(client_mod, "CALL_BACKOFF_S", (0.0,))
    bodies = []

    def answer(request: httpx.Request) -> httpx.Response:
        bodies.append((request.method, request.url.path, json.loads(request.content or b"null")))
        if len(bodies) == 1:
            return httpx.Response(503, json={"error": {"code": "unavailable", "message": "retry", "kind": "unavailable"}})
        return httpx.Response(200, json={"game_id": "g", "seat": 1, "version": 4, "duplicate": True})

    async def main():
        gateway = client_mod.HttpGateway("http://gateway.test")
        gateway.http = httpx.AsyncClient(base_url="http://gateway.test", transport=httpx.MockTransport(answer))
        try:
            return await gateway.leave("g", 1, "token")
        finally:
            await gateway.close()

    out = asyncio.run(main())
    assert out["version"] == 4 and out["duplicate"] is True
    assert [(m, p) for m, p, _ in bodies] == [("DELETE", "/v1/tables/g/seats/1")] * 2
    ids = [body["command_id"] for _, _, body in bodies]
    assert ids[0] and ids[0] == ids[1]


def test_games_lists_the_table_options_every_game_takes(client):
    """GET /v1/games listed each game's own options only: the turn clock that every table
    takes (turn_clock_ms, turn_clock_action) was named nowhere a client could read it."""
    games = client.get("/v1/games").json()["games"]
    clock = {o["name"]: o for o in games[0]["table_options"]}
    assert clock["turn_clock_ms"]["default"] == 0 and clock["turn_clock_ms"]["maximum"] == 86_400_000
    assert clock["turn_clock_action"]["choices"] == ["default", "forfeit"]
