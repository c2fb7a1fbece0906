"""The WebSocket stream read whatever a client sent after its first message and dropped it:
a seat's token that came after the auth wait (a busy browser) left a seat's client on a
spectator's stream without a word, and any other message (a move sent down the stream, a
ping of the client's own) went unanswered. Both are now refused, with an error naming the
problem and close 4400: `token_too_late` (the web client opens the stream again) and
`unexpected_message`. The stream's own auth message sent again is still let be."""

from __future__ import annotations

import json

import pytest
from starlette.websockets import WebSocketDisconnect
from test_gateway_http import bearer, seated  # tests/gateway is on sys.path

# A refusal that never comes (the message dropped, as before) fails here, not after the
# suite's 15 minutes.
pytestmark = pytest.mark.timeout(30)


def refused(ws):
    """The error message and close code that end a refused stream."""
    while True:  # past any update sent before the refusal
        message = json.loads(ws.receive_text())
        if "error" in message:
            break
    with pytest.raises(WebSocketDisconnect) as closed:
        ws.receive_text()
    return message["error"], closed.value.code


def test_a_token_after_the_auth_wait_is_refused_not_taken_for_a_spectator(client):
    gid, (t0, _) = seated(client)
    with client.websocket_connect(f"/v1/tables/{gid}/stream") as ws:
        first = json.loads(ws.receive_text())  # the wait (0.2 s here) ran out: a spectator's view
        assert first["view"]["you"] is None and first["actions"] == []
        ws.send_text(json.dumps({"token": t0}))
        error, code = refused(ws)
    assert (error["code"], error["field"], code) == ("token_too_late", "token", 4400)
    assert "again" in error["message"]
    # Sent in time, the same token gets the seat's stream.
    with client.websocket_connect(f"/v1/tables/{gid}/stream") as ws:
        ws.send_text(json.dumps({"token": t0}))
        assert json.loads(ws.receive_text())["view"]["you"] == 0


@pytest.mark.parametrize("sent", ["ping", '{"type": "Play", "pebble": "pebble-0"}', b"\x00\x01"])
def test_a_message_on_a_seats_stream_is_refused_not_dropped(client, sent):
    gid, (t0, _) = seated(client)
    with client.websocket_connect(f"/v1/tables/{gid}/stream?token={t0}") as ws:
        assert json.loads(ws.receive_text())["view"]["you"] == 0
        ws.send_bytes(sent) if isinstance(sent, bytes) else ws.send_text(sent)
        error, code = refused(ws)
    assert (error["code"], code) == ("unexpected_message", 4400)
    assert "/commands" in error["message"]


def test_a_message_on_a_spectators_stream_is_refused_too(client):
    gid, _ = seated(client)
    with client.websocket_connect(f"/v1/tables/{gid}/stream") as ws:
        ws.send_text("{}")
        assert json.loads(ws.receive_text())["view"]["you"] is None
        ws.send_text(json.dumps({"token": "whatever"}))  # chose to watch: not a late token
        error, code = refused(ws)
    assert (error["code"], code) == ("unexpected_message", 4400)


def test_the_streams_own_auth_message_again_is_let_be(client):
    """A spectator's {} that came after the wait, and a seat's token message when the token
    came in the URL too: the stream goes on and brings the next update."""
    gid, (t0, t1) = seated(client)
    with client.websocket_connect(f"/v1/tables/{gid}/stream") as spectator, \
            client.websocket_connect(f"/v1/tables/{gid}/stream?token={t0}") as seat:
        first = json.loads(spectator.receive_text())
        assert first["view"]["you"] is None
        spectator.send_text("{}")
        mine = json.loads(seat.receive_text())
        seat.send_text(json.dumps({"token": t0}))
        r = client.post(f"/v1/tables/{gid}/commands", headers=bearer(t0),
                        json={"command_id": "m-1", "action": mine["actions"][0]})
        assert r.status_code == 200, r.text
        assert json.loads(spectator.receive_text())["version"] == r.json()["version"]
        assert json.loads(seat.receive_text())["version"] == r.json()["version"]
