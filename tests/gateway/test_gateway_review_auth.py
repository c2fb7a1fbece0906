"""A demanding player's review of the Authorization header: a token sent in a form the
gateway does not read (no "Bearer ", another scheme) was taken for no token at all, so a
seat's client was silently served a spectator's view with no legal actions (and waited for
a turn that never showed), on HTTP, the WebSocket and gRPC alike. It is a 401 now, naming
the form; a proxy's Basic credentials are still left alone."""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest
from starlette.websockets import WebSocketDisconnect

from croupier.v1 import gateway_pb2
from croupier_gateway.core import Gateway
from croupier_gateway.grpc_api import start_server


def seated(client):
    gid = client.post("/v1/tables", json={"game_type": "pebbles", "seats": 2}).json()["game_id"]
    tokens = [client.post(f"/v1/tables/{gid}/seats/{s}", json={"player": f"p{s}"}).json()["token"] for s in (0, 1)]
    return gid, tokens


def test_a_token_without_bearer_is_refused_not_served_as_a_spectator(client):
    gid, (t0, _) = seated(client)
    for header in (t0, f"Token {t0}", "Bearer", "Bearer   "):
        r = client.get(f"/v1/tables/{gid}/view", headers={"authorization": header})
        assert r.status_code == 401, f"{header[:12]!r}: {r.status_code} {r.text[:120]}"
        assert "Bearer" in r.json()["error"]["message"]
    assert client.get(f"/v1/tables/{gid}/view", headers={"authorization": f"bearer {t0}"}).json()["seat"] == 0
    # A proxy's Basic credentials are not ours: a spectator, as before.
    assert client.get(f"/v1/tables/{gid}/view", headers={"authorization": "Basic dXNlcjpwdw=="}).json()["seat"] is None


def test_a_websocket_with_a_token_without_bearer_is_refused(client):
    gid, (t0, _) = seated(client)
    with client.websocket_connect(f"/v1/tables/{gid}/stream", headers={"authorization": t0}) as ws:
        message = json.loads(ws.receive_text())
        assert message.get("error", {}).get("kind") == "unauthenticated", str(message)[:200]
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_text()
        assert closed.value.code == 4401


def test_a_grpc_call_with_a_token_without_bearer_is_refused(fake_stack):
    settings, aredis, _, router = fake_stack

    async def main():
        gw = Gateway(settings, aredis, router=router)
        server, port = await start_server(gw, "127.0.0.1", 0)
        try:
            created = await gw.create_table("pebbles", 2, None)
            gid = created["game_id"]
            token = (await gw.join(gid, 0, "p0"))["token"]
            await gw.join(gid, 1, "p1")
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                view = channel.unary_unary("/croupier.v1.GatewayService/GetView",
                                           request_serializer=gateway_pb2.GetViewRequest.SerializeToString,
                                           response_deserializer=gateway_pb2.GetViewResponse.FromString)
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await view(gateway_pb2.GetViewRequest(game_id=gid), metadata=(("authorization", token),))
                return refused.value
        finally:
            await server.stop(0)
            await gw.close()

    exc = asyncio.run(main())
    assert exc.code() == grpc.StatusCode.UNAUTHENTICATED




def test_a_json_body_sent_without_its_content_type_is_told_so(client):
    """`curl -d '{...}'` sends application/x-www-form-urlencoded: the body, valid JSON, was
    refused with FastAPI's "Input should be a valid dictionary or object to extract fields
    from", which does not say what to change."""
    for content_type in (None, "application/x-www-form-urlencoded", "text/plain"):
        headers = {"content-type": content_type} if content_type else {}
        r = client.post("/v1/tables", content=b'{"game_type": "pebbles"}', headers=headers)
        assert r.status_code == 400, r.text
        error = r.json()["error"]
        assert error["code"] == "invalid_content_type" and "application/json" in error["message"], error
    ok = client.post("/v1/tables", content=b'{"game_type": "pebbles"}',
                     headers={"content-type": "application/json; charset=utf-8"})
    assert ok.status_code == 201, ok.text
    # A join needs no body, whatever its content type says.
    gid = ok.json()["game_id"]
    assert client.post(f"/v1/tables/{gid}/seats/0", headers={"content-type": "text/plain"}).status_code == 201
