"""Hostile input on every face of the gateway: each is a clear refusal (4xx, or a gRPC status
with a code and the field), never a 500, an UNKNOWN or an exception in the log; nothing of it
reaches a rules service, and the table plays on afterwards."""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from typing import ClassVar

import grpc
import pytest
from test_gateway_grpc import serve_and
from test_gateway_http import bearer, create, error, seated

from croupier.engine import registry
from croupier.engine.contract import Command
from croupier.projector.keys import Keys
from croupier.v1 import gateway_pb2
from croupier_gateway import validation
from croupier_gateway.errors import ApiError

JSON = {"content-type": "application/json"}
# The JSON escape \ud800 (a lone surrogate) below: Python's parser takes it, as a str that
# UTF-8 cannot carry.


def writes(router) -> list[str]:
    return [method for method, _ in router.calls if method != "CreateGame" and method != "JoinSeat"]


@pytest.mark.parametrize("action", [
    r'{"type": "Play", "pebble": "\ud800"}',  # a field's value
    r'{"type": "\ud800"}',  # the type, which the codec's refusal quotes
    r'{"type": "Play", "pebble": "pebble-0", "\ud800": 1}',  # a key
    r'{"type": "Play", "pebble": ["\ud800"]}',  # deeper down
])
def test_an_action_with_a_lone_surrogate_is_a_400_naming_the_action_and_the_table_plays_on(client, fake_stack, action):
    router = fake_stack[3]
    gid, (t0, _) = seated(client)
    body = '{"command_id": "c1", "action": ' + action + "}"
    r = client.post(f"/v1/tables/{gid}/commands", content=body, headers={**bearer(t0), **JSON})
    err = error(r, 400)
    assert err["field"] == "action" and err["code"] in ("invalid_action", "malformed_command"), err
    assert writes(router) == []
    play = client.get(f"/v1/tables/{gid}/actions", headers=bearer(t0)).json()["actions"][0]
    done = client.post(f"/v1/tables/{gid}/commands", json={"command_id": "c2", "action": play}, headers=bearer(t0))
    assert done.status_code == 200, done.text


@pytest.mark.parametrize("options", [
    r'{"\ud800": "1"}',  # a name, which the options' refusal quotes
    r'{"speed": "\ud800"}',  # a value
])
def test_options_with_a_lone_surrogate_are_a_400_and_no_table_is_made(client, fake_stack, options):
    router = fake_stack[3]
    r = client.post("/v1/tables", content='{"game_type": "pebbles", "options": ' + options + "}", headers=JSON)
    err = error(r, 400)
    assert err["code"] == "invalid_option" and err["field"].startswith("options"), err
    assert router.calls == []
    create(client)  # and the next create is served


def test_a_refusal_that_quotes_a_lone_surrogate_is_still_sent():
    exc = ApiError("malformed", "x", "no option \ud800 here", field="options.\ud800")
    assert exc.message == "no option \\ud800 here" and exc.field == "options.\\ud800"
    exc.message.encode("utf-8")  # sendable: JSON answers, gRPC details and Rejections are UTF-8


def test_an_action_json_with_a_lone_surrogate_is_invalid_argument_over_grpc_and_on_play(fake_stack):
    async def scenario(client, address):
        gid = (await client.create_table("pebbles", 2))["game_id"]
        t0 = (await client.join(gid, 0, player="a"))["token"]
        await client.join(gid, 1, player="b")
        bad = r'{"type": "Play", "pebble": "\ud800"}'
        async with grpc.aio.insecure_channel(address) as channel:
            submit = channel.unary_unary(
                "/croupier.v1.GatewayService/SubmitCommand",
                request_serializer=gateway_pb2.SubmitCommandRequest.SerializeToString,
                response_deserializer=gateway_pb2.SubmitCommandResponse.FromString)
            try:
                await submit(gateway_pb2.SubmitCommandRequest(game_id=gid, command_id="g1", action_json=bad),
                             metadata=(("authorization", f"Bearer {t0}"),))
                unary = None
            except grpc.aio.AioRpcError as exc:
                unary = (exc.code(), exc.details())
        stream = client.updates(gid, t0, 0)
        update = await anext(stream)
        session = client._sessions[(gid, t0)]
        move = gateway_pb2.SubmitCommandRequest(game_id=gid, command_id="g2", action_json=bad)
        answer = (await session.ask(lambda tag: gateway_pb2.PlayRequest(
            move=gateway_pb2.PlayMove(tag=tag, command=move)), 5)).answer
        done = await client.submit(gid, t0, "g3", update.actions[0], expected_version=update.version)
        await stream.aclose()
        return unary, answer, done

    unary, answer, done = serve_and(fake_stack, scenario)
    assert unary is not None and unary[0] == grpc.StatusCode.INVALID_ARGUMENT and "invalid_action" in unary[1]
    assert answer.rejection.code == "invalid_action"
    assert answer.status_code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert done["seat"] == 0
    assert writes(fake_stack[3]) == ["HandleCommand"]  # the good move only


@pytest.mark.parametrize("body", [
    b'{"game_type": "pebbles", "command_id": "\xff\xfe"}',  # not UTF-8
    b'{"game_type": "pebbles", "options": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5001,  # past the parser's depth
    b"[" * 30000 + b"]" * 30000,
])
def test_a_body_the_json_parser_fails_on_is_a_400_invalid_json_naming_the_body(client, fake_stack, body):
    err = error(client.post("/v1/tables", content=body, headers=JSON), 400)
    assert err["code"] == "invalid_json" and err["field"] == "body", err
    assert fake_stack[3].calls == []
    gid, (t0, _) = seated(client)
    deep = b'{"command_id": "c1", "action": {"type": "Play", "pebble": ' + b"[" * 5000 + b"]" * 5000 + b"}}"
    err = error(client.post(f"/v1/tables/{gid}/commands", content=deep, headers={**bearer(t0), **JSON}), 400)
    assert err["code"] == "invalid_json" and err["field"] == "body", err


def test_a_write_to_an_id_no_table_has_does_not_make_its_spectators_wait_for_it(client, fake_stack):
    """Any id of the shape `<game type>-...` is routed as a table's; one the rules service does
    not know (404) is not remembered as a table, whose spectators would wait for it to appear
    (10 s each, a watch of its feed apiece)."""
    ghost = "pebbles-00000000000000ff"
    assert error(client.post(f"/v1/tables/{ghost}/seats/0", json={"player": "a"}), 404)["code"] == "no_such_game"
    started = time.monotonic()
    assert error(client.get(f"/v1/tables/{ghost}/view"), 404)["code"] == "no_such_game"
    with client.websocket_connect(f"/v1/tables/{ghost}/stream") as ws:
        ws.send_text("{}")
        assert json.loads(ws.receive_text())["error"]["code"] == "no_such_game"
    assert time.monotonic() - started < 3
    # A table that is there: joined, then watched, as before.
    gid, (t0, _) = seated(client)
    assert client.get(f"/v1/tables/{gid}/view").status_code == 200


@dataclass(frozen=True, kw_only=True)
class Bid(Command):
    TYPE: ClassVar[str] = "Bid"
    amount: int


@pytest.fixture
def bidding(pebbles, monkeypatch):
    """pebbles with a move that has an integer field (the rules refuse every bid)."""
    spec = dataclasses.replace(pebbles, commands=(*pebbles.commands, Bid))
    monkeypatch.setitem(registry._cache, "pebbles", spec)
    return spec


@pytest.mark.parametrize("amount", [2**64, 10**30, -(2**63) - 1, 10**400])
def test_an_integer_past_64_bits_in_an_action_is_refused_in_the_gateway_naming_the_action(bidding, client, fake_stack,
                                                                                            amount):
    """The rules service reads such an integer back as a float (or infinity): not the action
    the gateway checked. Refused here, naming the action, and nothing reaches the rules."""
    router = fake_stack[3]
    gid, (t0, _) = seated(client)
    body = json.dumps({"command_id": "c1", "action": {"type": "Bid", "amount": amount}})
    err = error(client.post(f"/v1/tables/{gid}/commands", content=body, headers={**bearer(t0), **JSON}), 400)
    assert err["code"] == "invalid_action" and err["field"] == "action", err
    assert writes(router) == []
    for fits in (2**63, -(2**63)):  # what the rules read as the integer it is goes on to them
        r = client.post(f"/v1/tables/{gid}/commands", json={"command_id": f"c{fits}", "action": {"type": "Bid",
                                                                                                   "amount": fits}},
                        headers=bearer(t0))
        assert error(r, 400)["code"] == "unknown"  # the (fake) rules' refusal of every bid
    assert writes(router) == ["HandleCommand", "HandleCommand"]


def test_a_game_id_with_a_final_newline_is_refused_as_an_id_on_every_face(client, fake_stack):
    """A regex's "$" matches before a final newline: "id\\n" passed the gateway's check of an
    id, and a join with it went on to the rules service."""
    router = fake_stack[3]
    gid, (t0, _) = seated(client)
    calls = len(router.calls)
    with client.websocket_connect(f"/v1/tables/{gid}%0A/stream?token={t0}") as ws:
        assert json.loads(ws.receive_text())["error"]["code"] == "invalid_game_id"

    async def scenario(grpc_client, address):
        codes = {}
        async with grpc.aio.insecure_channel(address) as channel:
            for method, request in {
                "GetTable": gateway_pb2.GetTableRequest(game_id=gid + "\n"),
                "JoinTable": gateway_pb2.JoinTableRequest(game_id=gid + "\n", seat=0, player="x"),
                "GetView": gateway_pb2.GetViewRequest(game_id=gid + "\n"),
            }.items():
                call = channel.unary_unary(f"/croupier.v1.GatewayService/{method}",
                                           request_serializer=type(request).SerializeToString,
                                           response_deserializer=lambda b: b)
                try:
                    await call(request)
                except grpc.aio.AioRpcError as exc:
                    codes[method] = (exc.code(), exc.details().split(":")[0])
        return codes

    codes = serve_and(fake_stack, scenario)
    assert codes == {m: (grpc.StatusCode.INVALID_ARGUMENT, "invalid_game_id") for m in ("GetTable", "JoinTable", "GetView")}
    assert len(router.calls) == calls


def test_a_forks_result_is_left_out_of_its_public_facts_while_its_origin_is_played(client, fake_stack):
    """GET /v1/tables/{id} (and GetTable) answer anyone who has the id; a fork starts from its
    origin's hands and decks, so its result may tell of the running origin's hidden cards."""
    sredis = fake_stack[2]
    origin, _ = seated(client)
    fork, tokens = seated(client)
    sredis.hset(Keys("").meta(fork), "origin", json.dumps({"game_id": origin, "seq": 3}))
    for n in range(4):  # two pebbles a seat, played in turn: the fork ends
        token = tokens[n % 2]
        move = client.get(f"/v1/tables/{fork}/actions", headers=bearer(token)).json()["actions"][0]
        assert client.post(f"/v1/tables/{fork}/commands", json={"command_id": f"m{n}", "action": move},
                           headers=bearer(token)).status_code == 200
    table = client.get(f"/v1/tables/{fork}").json()
    assert table["status"] == "over" and table["origin"]["game_id"] == origin
    assert table["result"] is None
    assert client.get(f"/v1/tables/{fork}/view", headers=bearer(tokens[0])).json()["view"]["result"]  # its seats'

    async def scenario(grpc_client, address):
        return await grpc_client.table(fork)

    assert serve_and(fake_stack, scenario)["result"] is None
    sredis.hset(Keys("").meta(origin), "status", "over")  # the origin is over: the fork is anyone's
    assert client.get(f"/v1/tables/{fork}").json()["result"] == {"winners": [0]}


def test_an_action_past_the_rules_size_is_refused_in_the_gateway_and_big_ones_are_not_remembered(client, fake_stack):
    """A well-formed action of 16 KB and more reached the rules service, which refused it
    without naming the action; and every well-formed action was remembered as checked (50,000
    of them), so a seat sending big ones (a 60 KB card name) filled the gateway's memory."""
    from croupier.rules.service import MAX_ACTION_JSON

    router = fake_stack[3]
    gw = client.app.state.holder["gw"]
    gid, (t0, _) = seated(client)
    huge = {"type": "Play", "pebble": "p" * MAX_ACTION_JSON}
    err = error(client.post(f"/v1/tables/{gid}/commands", json={"command_id": "c1", "action": huge},
                            headers=bearer(t0)), 413)
    assert err["code"] == "action_too_large" and err["field"] == "action"
    assert writes(router) == []
    big = {"type": "Play", "pebble": "p" * 2000}  # well formed, no pebble: the rules refuse it
    assert error(client.post(f"/v1/tables/{gid}/commands", json={"command_id": "c2", "action": big},
                             headers=bearer(t0)), 422)["code"] == "not_in_hand"
    assert not any(len(action) > 1000 for _, _, action in gw._checked_actions)
    move = client.get(f"/v1/tables/{gid}/actions", headers=bearer(t0)).json()["actions"][0]
    assert client.post(f"/v1/tables/{gid}/commands", json={"command_id": "c3", "action": move},
                       headers=bearer(t0)).status_code == 200
    assert len(gw._checked_actions) == 1  # a move as it is sent is remembered
    assert validation.MAX_ACTION_CHARS == MAX_ACTION_JSON  # the gateway's limit is the rules service's


def test_a_field_a_request_does_not_have_is_unknown_field_whatever_its_name(client):
    """The code of a refusal is ours and stable: not made of the client's own field name
    (which was echoed at any length, 60 KB included)."""
    for name in ("colour", 'a "b" c', "x" * 60_000):
        err = error(client.post("/v1/tables", json={"game_type": "pebbles", name: 1}), 400)
        assert err["code"] == "unknown_field" and err["field"].startswith(name[:100]) and len(err["field"]) <= 101
        assert len(err["message"]) < 200
    gid, (t0, _) = seated(client)
    err = error(client.post(f"/v1/tables/{gid}/commands", json={"command_id": "c", "action": {"type": "Play"},
                                                                "seat": 1}, headers=bearer(t0)), 400)
    assert (err["code"], err["field"]) == ("unknown_field", "seat")
