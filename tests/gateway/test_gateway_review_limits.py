"""A demanding player's review of the limits: a stream or call refused for a limit says when
to come back on every door, not only over HTTP (whose Retry-After header a WebSocket's
refusal, sent after the upgrade, and a gRPC status cannot carry)."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import grpc
import pytest
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from croupier.v1 import gateway_pb2
from croupier_gateway.app import create_app
from croupier_gateway.core import Gateway
from croupier_gateway.grpc_api import start_server


def test_a_websocket_refused_for_its_addresss_stream_cap_says_when_to_retry(fake_stack):
    settings, aredis, _, router = fake_stack
    settings = dataclasses.replace(settings, max_streams_per_address=1)
    with TestClient(create_app(settings, redis=aredis, router=router)) as c:
        gid = c.post("/v1/tables", json={"game_type": "pebbles", "seats": 2}).json()["game_id"]
        with c.websocket_connect(f"/v1/tables/{gid}/stream") as first:
            first.send_text("{}")
            assert json.loads(first.receive_text())["version"] >= 1
            with c.websocket_connect(f"/v1/tables/{gid}/stream") as second:
                second.send_text("{}")
                error = json.loads(second.receive_text())["error"]
                assert error["code"] == "too_many_streams_from_address"
                assert error.get("retry_after_s") == 5, error
                with pytest.raises(WebSocketDisconnect) as closed:
                    second.receive_text()
                assert closed.value.code == 4503


def test_a_websocket_refused_for_its_rate_says_when_to_retry(fake_stack):
    settings, aredis, _, router = fake_stack
    settings = dataclasses.replace(settings, rate_limit_per_s=0.5, rate_limit_burst=1)
    with TestClient(create_app(settings, redis=aredis, router=router)) as c:
        c.get("/v1/games")  # the address's one request
        with c.websocket_connect("/v1/tables/pebbles-0000000000000000/stream") as ws:
            error = json.loads(ws.receive_text())["error"]
            assert error["code"] == "rate_limited"
            assert error.get("retry_after_s") == 2, error
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_text()
            assert closed.value.code == 4429


def test_a_grpc_call_refused_for_its_rate_says_when_to_retry(fake_stack):
    settings, aredis, _, router = fake_stack
    settings = dataclasses.replace(settings, rate_limit_per_s=0.5, rate_limit_burst=1)

    async def main():
        gw = Gateway(settings, aredis, router=router)
        server, port = await start_server(gw, "127.0.0.1", 0)
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                games = channel.unary_unary("/croupier.v1.GatewayService/ListGames",
                                            request_serializer=gateway_pb2.ListGamesRequest.SerializeToString,
                                            response_deserializer=gateway_pb2.ListGamesResponse.FromString)
                await games(gateway_pb2.ListGamesRequest())
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await games(gateway_pb2.ListGamesRequest())
                stream = channel.unary_stream("/croupier.v1.GatewayService/StreamUpdates",
                                              request_serializer=gateway_pb2.StreamUpdatesRequest.SerializeToString,
                                              response_deserializer=gateway_pb2.StreamUpdatesResponse.FromString)
                with pytest.raises(grpc.aio.AioRpcError) as stream_refused:
                    async for _ in stream(gateway_pb2.StreamUpdatesRequest(game_id="pebbles-0000000000000000")):
                        pass
                return refused.value, stream_refused.value
        finally:
            await server.stop(0)
            await gw.close()

    unary, streaming = asyncio.run(main())
    for exc in (unary, streaming):
        assert exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert dict(exc.trailing_metadata()).get("retry-after") == "2", exc.trailing_metadata()
