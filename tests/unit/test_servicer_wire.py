"""The rules servicer on a real grpc.aio server (in-process partitions, no store): requests
whose bytes are no message of their type get a typed refusal, as any malformed request."""

from __future__ import annotations

import asyncio
import logging

import grpc
from servicer_fakes import GAME, servicer, stop  # tests/unit is on sys.path

from croupier.rules.errors import from_rpc_error
from croupier.rules.service import add_to_server
from croupier.v1 import rules_pb2, rules_pb2_grpc


def _field(number: int, data: bytes) -> bytes:
    return bytes([(number << 3) | 2, len(data)]) + data


async def _serve():
    svc, parts = await servicer(owned=(0, 1, 2, 3))
    server = grpc.aio.server()
    add_to_server(svc, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, parts, f"127.0.0.1:{port}"


def test_unreadable_requests_are_refused_invalid_argument_with_a_rejection_and_the_game_plays_on(caplog):
    """A string field that is not UTF-8, or bytes that are no protobuf at all: grpc's own
    deserializer failed the call UNKNOWN (no Rejection, a traceback in the log), and on a
    HandleCommands stream ended every move in flight on it."""
    caplog.set_level(logging.ERROR)

    async def main():
        server, parts, address = await _serve()
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                stub = rules_pb2_grpc.RulesServiceStub(channel)
                await stub.CreateGame(rules_pb2.CreateGameRequest(game_type=GAME, game_id="w1", seats=2, command_id="c"))
                for seat in (0, 1):
                    await stub.JoinSeat(rules_pb2.JoinSeatRequest(game_type=GAME, game_id="w1", seat=seat,
                                                                  player=f"p{seat}", command_id=f"j{seat}"))
                unary = {}
                for method, payload, response in (
                    ("GetState", _field(1, GAME.encode()) + _field(2, b"w\xff"), rules_pb2.GetStateResponse),
                    ("CreateGame", _field(2, b"w2") + _field(5, b"\xfe\xff"), rules_pb2.CreateGameResponse),
                    ("HandleCommand", _field(2, b"w1") + _field(6, b'{"type":"\xff"}'), rules_pb2.HandleCommandResponse),
                    ("ListLegalActions", b"\xff\xff\xff", rules_pb2.ListLegalActionsResponse),
                ):
                    call = channel.unary_unary(f"/croupier.v1.RulesService/{method}", request_serializer=lambda b: b,
                                               response_deserializer=response.FromString)
                    try:
                        await call(payload, timeout=10)
                        unary[method] = None
                    except grpc.aio.AioRpcError as exc:
                        unary[method] = (exc.code(), from_rpc_error(exc)[0])

                raw_stream = channel.stream_stream("/croupier.v1.RulesService/HandleCommands",
                                                   request_serializer=lambda b: b,
                                                   response_deserializer=rules_pb2.HandleCommandsResponse.FromString)
                state = await stub.GetState(rules_pb2.GetStateRequest(game_type=GAME, game_id="w1"))
                import json
                seat = json.loads(state.view_json)["to_act"][0]
                legal = await stub.ListLegalActions(rules_pb2.ListLegalActionsRequest(game_type=GAME, game_id="w1",
                                                                                       seat=seat))
                good = rules_pb2.HandleCommandsRequest(tag=8, command=rules_pb2.HandleCommandRequest(
                    game_type=GAME, game_id="w1", seat=seat, command_id="m1", action_json=legal.actions_json[0]))
                stream = raw_stream()
                # tag 7, a command whose game id is not UTF-8: refused alone, by its tag
                await stream.write(bytes([0x08, 7]) + _field(2, _field(2, b"\xc3\x28")))
                first = await stream.read()
                await stream.write(good.SerializeToString())
                second = await stream.read()
                await stream.write(b"\xff\xff\xff")  # no tag to answer by: the stream ends
                try:
                    third = await stream.read()
                    ended = None
                except grpc.aio.AioRpcError as exc:
                    third, ended = None, (exc.code(), from_rpc_error(exc)[0])
                return unary, first, second, third, ended
        finally:
            await server.stop(0)
            await stop(parts)

    unary, first, second, third, ended = asyncio.run(main())
    for method, answer in unary.items():
        assert answer is not None, method
        code, rejection = answer
        assert code == grpc.StatusCode.INVALID_ARGUMENT, (method, code)
        assert (rejection.code, rejection.kind) == ("malformed_request", "malformed"), (method, rejection)
    assert "UTF-8" in unary["GetState"][1].message
    assert first.tag == 7 and first.WhichOneof("outcome") == "rejection"
    assert first.rejection.code == "malformed_request"
    assert second.tag == 8 and second.WhichOneof("outcome") == "response", second
    assert second.response.result.version > 0
    assert third is None and ended is not None
    assert ended[0] == grpc.StatusCode.INVALID_ARGUMENT and ended[1].code == "malformed_request"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [r.getMessage() for r in caplog.records]
