"""A move refused rate_limited on a Play stream came back as an answer with its Rejection and
status code and nothing saying when to try again (SubmitCommand says so in its `retry-after`
trailing metadata, HTTP in Retry-After). PlayAnswer now has `retry_after_ms`: the rate
limit's own wait, in milliseconds (not rounded up to whole seconds: a bot's next move is
milliseconds away), and the Python client hands it on as GatewayError.retry_after_s."""

from __future__ import annotations

import asyncio
import dataclasses
import json

from croupier.v1 import gateway_pb2
from croupier_gateway.client import GatewayError, GrpcGateway
from croupier_gateway.core import Gateway
from croupier_gateway.grpc_api import start_server


def test_a_rate_limited_move_on_play_says_when_to_retry(fake_stack):
    settings, aredis, _, router = fake_stack
    # A seat's bucket of 4 at 20 a second: the fifth move at once waits about 50 ms.
    settings = dataclasses.replace(settings, rate_limit_per_s=20.0, rate_limit_burst=4)

    async def main():
        gw = Gateway(settings, aredis, router=router)
        server, port = await start_server(gw, "127.0.0.1", 0)
        client = GrpcGateway(f"127.0.0.1:{port}", timeout_s=10)
        try:
            gid = (await client.create_table("pebbles", 2))["game_id"]
            await client.join(gid, 0, player="a")
            t1 = (await client.join(gid, 1, player="b"))["token"]
            stream = client.updates(gid, t1, 0)
            await anext(stream)
            session = client._sessions[(gid, t1)]
            move = gateway_pb2.SubmitCommandRequest(  # seat 1 is not to act: refused, not_your_turn
                game_id=gid, action_json=json.dumps({"type": "Play", "pebble": "pebble-0"}))

            async def ask(i):
                request = gateway_pb2.SubmitCommandRequest()
                request.CopyFrom(move)
                request.command_id = f"m-{i}"
                return (await session.ask(lambda tag: gateway_pb2.PlayRequest(
                    move=gateway_pb2.PlayMove(tag=tag, command=request)), 5)).answer

            answers = await asyncio.gather(*(ask(i) for i in range(12)))
            limited = [a for a in answers if a.rejection.code == "rate_limited"]
            # the client's own submit over the stream, still limited
            caught = None
            for i in range(20):
                try:
                    await client.submit(gid, t1, f"c-{i}", {"type": "Play", "pebble": "pebble-0"})
                except GatewayError as exc:
                    if exc.code == "rate_limited":
                        caught = exc
                        break
            await stream.aclose()
            return answers, limited, caught
        finally:
            await client.close()
            await server.stop(0)
            await gw.close()

    answers, limited, caught = asyncio.run(main())
    assert limited, [a.rejection.code for a in answers]
    for answer in limited:
        assert answer.status_code == 8  # RESOURCE_EXHAUSTED
        assert 1 <= answer.retry_after_ms <= 1000, answer.retry_after_ms  # ~50 ms, not a whole second
    others = [a for a in answers if a.rejection.code != "rate_limited"]
    assert others and all(a.retry_after_ms == 0 for a in others)  # a refusal that says no wait
    assert caught is not None and 0 < caught.retry_after_s <= 1.0
