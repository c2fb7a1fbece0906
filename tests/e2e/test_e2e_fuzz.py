"""Fuzzing the gateway: the HTTP API from its own OpenAPI document (schemathesis), and the
gRPC API with random bytes. No answer may be a server error, and no game may change.

The fuzzer is handed a real running table (its id, one of its seat tokens) and the operator
token for part of its requests, so it reaches past the token checks into the validation of
commands on a live game; everything in Redis that belongs to a game is compared before and
after.
"""

from __future__ import annotations

import hashlib
import random
import time

import grpc
import pytest
import redis
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from croupier.v1 import gateway_pb2
from croupier_gateway.app import create_app
from croupier_gateway.settings import GatewaySettings
from e2e_helpers import OPERATOR_TOKEN, run

schema = schemathesis.openapi.from_dict(create_app(GatewaySettings()).openapi())


@pytest.fixture(scope="module")
def target(stack_services):
    """A running table and an open one, and a snapshot of every game's read models."""
    from croupier_gateway.client import HttpGateway

    async def make():
        client = HttpGateway(stack_services.http_url)
        game = stack_services.games[0]
        running = (await client.create_table(game, 2))["game_id"]
        tokens = [(await client.join(running, s, player=f"fz{s}"))["token"] for s in range(2)]
        open_ = (await client.create_table(game, 2))["game_id"]
        await client.join(open_, 0, player="waiting")
        await client.close()
        return running, tokens, open_

    running, tokens, open_ = run(make())
    r = redis.Redis.from_url(stack_services.redis_url)
    deadline = time.monotonic() + 30
    while True:  # the projector shows both tables with every join (it may lag a moment)
        before = snapshot(r, stack_services.prefix)
        states = {gid: dict(before[gid][0]).get(b"free_seats") for gid in (running, open_) if gid in before}
        if states == {running: b"0", open_: b"1"} or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert states == {running: b"0", open_: b"1"}
    yield {"running": running, "token": tokens[0], "open": open_, "before": before, "redis": r}
    r.close()


def snapshot(r: redis.Redis, prefix: str) -> dict[str, tuple]:
    """Per game: its meta and views as the projector left them."""
    out = {}
    for key in r.scan_iter(match=f"{prefix}g:{{*}}", count=1000):
        key = key.decode()
        if key.endswith("}"):
            gid = key[len(prefix) + 3:-1]
            meta = r.hgetall(key)
            views = r.hgetall(f"{key}:views")
            out[gid] = (sorted(meta.items()), sorted(views.items()))
    return out


def _choice(case, n: int) -> int:
    return int(hashlib.sha256(repr((case.method, case.path, case.path_parameters, case.query,
                                     case.body)).encode()).hexdigest(), 16) % n


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_http_api_never_answers_5xx(case, stack_services, target):
    pick = _choice(case, 6)
    if case.path_parameters and "game_id" in case.path_parameters and pick < 3:
        case.path_parameters["game_id"] = target["running"]
    headers = {}
    if pick in (0, 1):
        headers["authorization"] = f"Bearer {target['token']}"
    elif pick == 2 and "/operator/" in case.path:
        headers["authorization"] = f"Bearer {OPERATOR_TOKEN}"
    elif pick == 3:
        headers["authorization"] = "Bearer not-a-token"
    if "/force-end" in case.path and case.path_parameters.get("game_id") == target["running"]:
        headers.pop("authorization", None)  # the one write an operator may make: not on our table
    if case.query and "timeout_s" in case.query:
        case.query["timeout_s"] = 0.1  # a long poll is allowed to wait 30 s; the fuzzer need not
    response = case.call(base_url=stack_services.http_url, headers=headers, timeout=30)
    assert response.status_code < 500, \
        f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text[:300]}"
    case.validate_response(response, checks=[not_a_server_error], headers=headers)


METHODS = [(m.name, m.server_streaming) for m in gateway_pb2.DESCRIPTOR.services_by_name["GatewayService"].methods]


@pytest.mark.parametrize("method,streaming", METHODS)
def test_grpc_api_random_bytes_never_internal(stack_services, target, method, streaming):
    rng = random.Random(method)
    path = f"/croupier.v1.GatewayService/{method}"
    payloads = [b"", b"\x00", b"\xff" * 8] + [rng.randbytes(rng.randint(1, 200)) for _ in range(40)]
    # valid messages with random field values, aimed at the live table
    request_cls = getattr(gateway_pb2, f"{method}Request")
    for _ in range(10):
        msg = request_cls()
        if "game_id" in request_cls.DESCRIPTOR.fields_by_name:
            msg.game_id = rng.choice([target["running"], "nope-1", "", "\u2603" * 3, "x" * 300])
        payloads.append(msg.SerializeToString() + rng.randbytes(rng.randint(0, 20)))

    async def main():
        bad = []
        async with grpc.aio.insecure_channel(stack_services.grpc_address) as channel:
            for i, payload in enumerate(payloads):
                metadata = (("authorization", f"Bearer {target['token']}"),) if i % 2 else ()
                try:
                    if streaming:
                        call = channel.unary_stream(path)(payload, metadata=metadata, timeout=1.5)
                        async for _ in call:
                            pass
                    else:
                        await channel.unary_unary(path)(payload, metadata=metadata, timeout=10)
                except grpc.aio.AioRpcError as error:
                    if error.code() in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN,
                                        grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.DATA_LOSS):
                        bad.append((payload[:40], error.code().name, error.details()))
        return bad

    assert run(main()) == []


def test_no_game_changed(stack_services, target):
    """Runs after the fuzzers (file order): every game is as it was."""
    after = snapshot(target["redis"], stack_services.prefix)
    changed = [gid for gid, value in target["before"].items() if after.get(gid) != value]
    assert changed == []


def test_a_websocket_message_over_the_limit_closes_the_stream_and_compression_is_not_offered(stack_services):
    """A WebSocket client sends one small message (its token). uvicorn's defaults took
    messages of 16 MiB, compressed: a few KB on the wire cost the gateway 16 MiB each."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    from croupier_gateway.serve import WS_MAX_MESSAGE_BYTES

    url = stack_services.http_url.replace("http://", "ws://") + "/v1/tables/no-such-table-x/stream"

    async def main():
        async with connect(url, compression="deflate") as ws:
            extensions = [type(e).__name__ for e in ws.protocol.extensions]
            await ws.send("x" * (WS_MAX_MESSAGE_BYTES + 1))
            try:
                await ws.recv()
            except ConnectionClosed as exc:
                return extensions, exc.rcvd.code if exc.rcvd else None
            return extensions, "open"

    extensions, code = run(main())
    assert extensions == []  # permessage-deflate declined
    assert code == 1009  # message too big
