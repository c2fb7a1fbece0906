"""A 409 version_conflict gave the game's current version only in its words ("expected
version 1, the table is at 5"): a client that wanted to try again at the right version had to
read it out of a sentence. It is now a field of its own: the HTTP body's
`error.current_version`, gRPC's `current-version` trailing metadata, a Play answer's
`current_version` (and the Python client's GatewayError.current_version)."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from test_gateway_http import bearer, seated  # tests/gateway is on sys.path

from croupier.engine.contract import Rejection
from croupier.v1 import gateway_pb2
from croupier_gateway.client import GatewayError, GrpcGateway
from croupier_gateway.core import Gateway
from croupier_gateway.errors import ApiError, conflict_version
from croupier_gateway.grpc_api import start_server


def test_a_version_conflict_names_the_current_version_in_the_http_body(client):
    gid, (t0, _) = seated(client)
    actions = client.get(f"/v1/tables/{gid}/actions", headers=bearer(t0)).json()
    r = client.post(f"/v1/tables/{gid}/commands", headers=bearer(t0),
                    json={"command_id": "m-1", "action": actions["actions"][0], "expected_version": 1})
    assert r.status_code == 409, r.text
    err = r.json()["error"]
    assert err["code"] == "version_conflict" and err["current_version"] == actions["version"]
    # and a retry at that version is taken
    r = client.post(f"/v1/tables/{gid}/commands", headers=bearer(t0),
                    json={"command_id": "m-2", "action": actions["actions"][0],
                          "expected_version": err["current_version"]})
    assert r.status_code == 200, r.text
    # other refusals have no such field
    other = client.post(f"/v1/tables/{gid}/commands", headers=bearer(t0),
                        json={"command_id": "m-3", "action": actions["actions"][0]})
    assert other.status_code == 422 and "current_version" not in other.json()["error"]


def test_the_openapi_document_names_the_field(client):
    detail = client.get("/openapi.json").json()["components"]["schemas"]["ErrorDetail"]
    assert "current_version" in detail["properties"]


@pytest.mark.parametrize("message, version", [
    ("expected version 1, the table is at 5", 5),  # croupier.engine.table
    ("expected version 7, the game is at 12", 12),  # croupier.rules.partition
    ("the game moved on", None),
])
def test_the_rules_services_words_give_the_version(message, version):
    assert conflict_version("version_conflict", message) == version
    err = ApiError.from_rejection(Rejection("version_conflict", message, "conflict"))
    assert err.current_version == version and err.http_status == 409
    assert ("current_version" in err.body()["error"]) == (version is not None)
    # another code's words are not read for one
    assert ApiError.from_rejection(Rejection("not_your_turn", message)).current_version is None


def _serve(fake_stack, scenario):
    settings, aredis, _, router = fake_stack

    async def main():
        gw = Gateway(settings, aredis, router=router)
        server, port = await start_server(gw, "127.0.0.1", 0)
        client = GrpcGateway(f"127.0.0.1:{port}", timeout_s=10)
        try:
            return await scenario(client, f"127.0.0.1:{port}")
        finally:
            await client.close()
            await server.stop(0)
            await gw.close()

    return asyncio.run(main())


def test_a_version_conflict_names_the_current_version_over_grpc(fake_stack):
    async def scenario(client, address):
        gid = (await client.create_table("pebbles", 2))["game_id"]
        t0 = (await client.join(gid, 0, player="a"))["token"]
        await client.join(gid, 1, player="b")
        actions = await client.actions(gid, t0)
        from croupier.v1 import gateway_pb2_grpc

        async with grpc.aio.insecure_channel(address) as channel:
            stub = gateway_pb2_grpc.GatewayServiceStub(channel)
            request = gateway_pb2.SubmitCommandRequest(game_id=gid, command_id="m-1", expected_version=1,
                                                       action_json=_json(actions["actions"][0]))
            try:
                await stub.SubmitCommand(request, metadata=(("authorization", f"Bearer {t0}"),))
                unary = None
            except grpc.aio.AioRpcError as exc:
                unary = exc
        # the client, on the unary call and on a Play stream
        client.play_streams = False
        with pytest.raises(GatewayError) as by_call:
            await client.submit(gid, t0, "m-2", actions["actions"][0], expected_version=1)
        client.play_streams = True
        stream = client.updates(gid, t0, 0)
        await anext(stream)
        session = client._sessions[(gid, t0)]
        request.command_id = "m-3"
        answer = (await session.ask(lambda tag: gateway_pb2.PlayRequest(
            move=gateway_pb2.PlayMove(tag=tag, command=request)), 5)).answer
        with pytest.raises(GatewayError) as on_stream:
            await client.submit(gid, t0, "m-4", actions["actions"][0], expected_version=1)
        await stream.aclose()
        return actions["version"], unary, by_call.value, answer, on_stream.value

    version, unary, by_call, answer, on_stream = _serve(fake_stack, scenario)
    assert unary.code() == grpc.StatusCode.ABORTED
    assert dict(unary.trailing_metadata())["current-version"] == str(version)
    assert (by_call.code, by_call.current_version) == ("version_conflict", version)
    assert answer.rejection.code == "version_conflict" and answer.HasField("current_version")
    assert answer.current_version == version and answer.retry_after_ms == 0
    assert (on_stream.code, on_stream.current_version) == ("version_conflict", version)


def _json(action):
    import json

    return json.dumps(action)
