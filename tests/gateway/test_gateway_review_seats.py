"""A demanding player's review of seats and tokens: a token that lost its seat gets nothing
more of that seat, whichever door it comes through, and a holder is never pushed out by a
token that no longer holds the seat."""

from __future__ import annotations

import json
import threading
import time

from test_gateway_http import bearer, seated  # tests/gateway is on sys.path

from croupier.projector.keys import Keys

OP = {"authorization": "Bearer op-secret"}


def test_a_long_poll_of_a_token_whose_seat_was_given_to_another_gets_no_later_view(client, fake_stack):
    """A fork's seat token (operator-issued, no join of its own) loses its seat when the
    operator issues the seat again. A long poll it had open must not return the seat's view
    after that (the new holder's cards): it was checked only when it began."""
    _, _, sredis, _ = fake_stack
    gid, _ = seated(client)
    sredis.hset(Keys("").meta(gid), "origin", json.dumps({"game_id": "pebbles-0000000000000000", "seq": 3}))
    alice = client.post(f"/v1/operator/games/{gid}/seats/0/token", headers=OP).json()["token"]
    now = client.get(f"/v1/tables/{gid}/view", headers=bearer(alice)).json()["version"]
    answer = {}

    def poll():
        answer["r"] = client.get(f"/v1/tables/{gid}/view", headers=bearer(alice),
                                 params={"min_version": now + 1, "timeout_s": 5})

    waiting = threading.Thread(target=poll)
    waiting.start()
    gw = client.app.state.holder["gw"]
    for _ in range(200):
        if gw.open_streams:
            break
        time.sleep(0.01)
    assert gw.open_streams == 1
    bob = client.post(f"/v1/operator/games/{gid}/seats/0/token", headers=OP).json()["token"]
    # Alice is refused at once...
    assert client.get(f"/v1/tables/{gid}/view", headers=bearer(alice)).status_code == 401
    # ...and Bob plays the seat: its next view is Bob's, not Alice's.
    action = client.get(f"/v1/tables/{gid}/actions", headers=bearer(bob)).json()["actions"][0]
    r = client.post(f"/v1/tables/{gid}/commands", json={"command_id": "b1", "action": action}, headers=bearer(bob))
    assert r.status_code == 200, r.text
    waiting.join()
    r = answer["r"]
    assert r.status_code == 401, f"the long poll of a token that lost its seat answered {r.status_code}: {r.text}"
    assert r.json()["error"]["code"] == "unauthenticated"


def test_a_renewal_racing_a_leave_and_another_join_does_not_take_the_seat_from_its_new_holder(client):
    """A renewal checks its token, then writes the seat's holder record again. A leave of
    that token (its player's other device) and another player's join landing in between
    (through any gateway) were overwritten by it: the new holder's token was refused for good
    (and the renewed one too, the read models naming the new join), a seat held by nobody."""
    r = client.post("/v1/tables", json={"game_type": "pebbles", "seats": 3})
    gid = r.json()["game_id"]
    alice = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "alice"}).json()["token"]
    gw = client.app.state.holder["gw"]
    original = gw.reads.holder_and_join
    bob = {}

    async def holder_and_join(game_id, seat):
        found = await original(game_id, seat)
        if not bob:  # the renewal's check of its token: the leave and the join land right after it
            bob["leaving"] = True
            await gw.leave(alice, gid, 0)
            bob["token"] = (await gw.join(gid, 0, player="bob"))["token"]
        return found

    gw.reads.holder_and_join = holder_and_join
    renewed = client.post(f"/v1/tables/{gid}/seats/0/renew", headers=bearer(alice))
    gw.reads.holder_and_join = original
    assert "token" in bob
    r = client.get(f"/v1/tables/{gid}/view", headers=bearer(bob["token"]))
    assert r.status_code == 200, f"the seat's new holder is refused after a renewal raced its join: {r.text}"
    assert renewed.status_code == 401, renewed.text
    assert client.get(f"/v1/tables/{gid}/view", headers=bearer(alice)).status_code == 401


def test_a_join_command_id_sent_again_by_another_player_does_not_take_the_seat(client, fake_stack):
    """The rules service answers a join's command_id seen before as a duplicate whatever the
    join carries (it leaves the comparison of a join's retry to the gateway). The gateway
    gave the seat again, with a new token, to anyone who sent that id: another player whose
    client makes ids the same way took a seated player's seat, the hidden cards
    of its view with it, and the player's token stopped working. A retry is the same join:
    another player or bot with that command_id is 409 command_id_reused."""
    r = client.post("/v1/tables", json={"game_type": "pebbles", "seats": 2})
    gid = r.json()["game_id"]
    alice = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "alice", "command_id": "join-1-0123456789"})
    assert alice.status_code == 201, alice.text
    client.post(f"/v1/tables/{gid}/seats/1", json={"player": "carol", "command_id": "carol-0123456789"})
    bob = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "bob", "command_id": "join-1-0123456789"})
    assert bob.status_code == 409, f"another player's join with the same command_id got the seat: {bob.text}"
    assert bob.json()["error"]["code"] == "command_id_reused"
    robot = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "alice", "bot": "random", "command_id": "join-1-0123456789"})
    assert robot.status_code in (400, 409), robot.text  # not the seat either
    gw, sredis = client.app.state.holder["gw"], fake_stack[2]  # alice's token still holds the seat
    assert sredis.hget(gw.reads.seats_key(gid), "0").decode() == gw.signer.verify(alice.json()["token"]).jti
    # The same join again (its answer lost: its token never used) still gets the seat, with a
    # new token (test_gateway_review2_join_ids: not once a token of the join has been used).
    again = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "alice", "command_id": "join-1-0123456789"})
    assert again.status_code == 201, again.text
    assert client.get(f"/v1/tables/{gid}/view", headers=bearer(again.json()["token"])).json()["seat"] == 0


def test_a_leave_whose_command_id_an_earlier_holders_leave_used_does_not_unseat_its_sender(client):
    """Command ids are namespaced by seat, not by holder: a leave of seat 0 with the
    command_id an earlier holder's leave of seat 0 used is answered by the rules service as
    that leave's duplicate, and nothing is done. The gateway took that answer for this
    token's leave: it marked the seat left by it, so the player, still seated in the log,
    could neither play nor leave, nor could anyone join that seat."""
    r = client.post("/v1/tables", json={"game_type": "pebbles", "seats": 3})
    gid = r.json()["game_id"]
    alice = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "alice"}).json()["token"]
    r = client.request("DELETE", f"/v1/tables/{gid}/seats/0", json={"command_id": "leave-1"}, headers=bearer(alice))
    assert r.status_code == 200, r.text
    bob = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "bob"}).json()["token"]
    r = client.request("DELETE", f"/v1/tables/{gid}/seats/0", json={"command_id": "leave-1"}, headers=bearer(bob))
    assert r.status_code == 409, f"bob's leave was answered as alice's: {r.text}"
    assert r.json()["error"]["code"] == "command_id_reused"
    # Bob still holds the seat, and can leave it with an id of his own.
    assert client.get(f"/v1/tables/{gid}/view", headers=bearer(bob)).status_code == 200
    r = client.request("DELETE", f"/v1/tables/{gid}/seats/0", json={"command_id": "leave-2"}, headers=bearer(bob))
    assert r.status_code == 200 and not r.json()["duplicate"], r.text
    assert client.post(f"/v1/tables/{gid}/seats/0", json={"player": "carol"}).status_code == 201
