"""The gRPC face on a fake Redis and router: the same checks and errors as HTTP; bytes that
do not parse are INVALID_ARGUMENT, never INTERNAL."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random

import grpc

from croupier.v1 import gateway_pb2
from croupier_gateway.client import GatewayError, GrpcGateway
from croupier_gateway.core import Gateway
from croupier_gateway.grpc_api import SERVICE, start_server


def serve_and(fake_stack, scenario, **overrides):
    settings, aredis, _, router = fake_stack
    settings = dataclasses.replace(settings, **overrides)

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


def test_a_game_over_grpc(fake_stack):
    async def scenario(client, _):
        games = await client.games()
        created = await client.create_table("pebbles", 2)
        gid = created["game_id"]
        t0 = (await client.join(gid, 0, player="a"))["token"]
        t1 = (await client.join(gid, 1, player="b"))["token"]
        view = await client.view(gid, t0)
        spectator = await client.view(gid)
        actions = (await client.actions(gid, t0))["actions"]
        errors = {}
        for name, call in {
            "no_token": client.actions(gid, None),
            "bad_token": client.actions(gid, "garbage"),
            "wrong_turn": client.submit(gid, t1, "c1", actions[0]),
            "conflict": client.submit(gid, t0, "c2", actions[0], expected_version=1),
            "no_command_id": client.submit(gid, t0, "", actions[0]),
            "bad_seat": client.join(gid, 99),
        }.items():
            try:
                await call
            except GatewayError as exc:
                errors[name] = (exc.status, exc.code)
        done = await client.submit(gid, t0, "c3", actions[0])
        updates = []
        async for update in client.updates(gid, t1, 0):
            updates.append(update)
            break
        return games, view, spectator, errors, done, updates

    games, view, spectator, errors, done, updates = serve_and(fake_stack, scenario)
    assert [g["id"] for g in games] == ["pebbles"]
    assert view["seat"] == 0 and view["view"]["game"]["hands"][1] is None
    assert spectator["seat"] is None and spectator["view"]["game"]["hands"] == [None, None]
    assert errors == {"no_token": (401, "unauthenticated"), "bad_token": (401, "unauthenticated"),
                      "wrong_turn": (422, "not_your_turn"), "conflict": (409, "version_conflict"),
                      "no_command_id": (400, "missing_command_id"), "bad_seat": (400, "invalid_seat")}
    assert done["seat"] == 0 and not done["duplicate"]
    assert updates[0].version == done["version"] and updates[0].actions


def test_random_bytes_are_invalid_argument(fake_stack):
    async def scenario(client, address):
        codes = set()
        rng = random.Random(7)
        async with grpc.aio.insecure_channel(address) as channel:
            for method in SERVICE.methods:
                for _ in range(15):
                    payload = rng.randbytes(rng.randint(1, 64))
                    call = (channel.unary_stream if method.server_streaming else channel.unary_unary)(
                        f"/{SERVICE.full_name}/{method.name}")
                    try:
                        result = call(payload, timeout=1)
                        if method.server_streaming:
                            async for _ in result:
                                pass
                        else:
                            await result
                        codes.add("OK")
                    except grpc.aio.AioRpcError as error:
                        codes.add(error.code().name)
        return codes

    codes = serve_and(fake_stack, scenario)
    assert not codes & {"INTERNAL", "UNKNOWN", "UNIMPLEMENTED"}, codes
    assert "INVALID_ARGUMENT" in codes


def test_tables_listing_over_grpc(fake_stack):
    async def scenario(client, _):
        gid = (await client.create_table("pebbles", 2))["game_id"]
        listed = await client.stub.ListTables(gateway_pb2.ListTablesRequest(game_type="pebbles"))
        table = await client.table(gid)
        return gid, listed, table

    gid, listed, table = serve_and(fake_stack, scenario)
    assert [t.game_id for t in listed.tables] == [gid]
    assert listed.tables[0].status == gateway_pb2.TABLE_STATUS_OPEN
    assert table["status"] == "open" and json.dumps(table["players"]) == "[null, null]"


def test_a_burst_of_calls_on_a_busy_gateway_is_queued_not_refused_as_cancelled(fake_stack):
    # gRPC core answers CANCELLED, before any handler runs, to calls beyond 1,000 that a
    # server has received and not yet picked up; a grpc.aio gateway picks them up as its loop
    # gets to them. A burst of 3,000 calls on one connection once lost ~10 % of them that way.
    async def scenario(_client, address):
        channel = grpc.aio.insecure_channel(address)
        try:
            list_games = channel.unary_unary(f"/{SERVICE.full_name}/ListGames",
                                             request_serializer=gateway_pb2.ListGamesRequest.SerializeToString,
                                             response_deserializer=gateway_pb2.ListGamesResponse.FromString)
            results = await asyncio.gather(*(list_games(gateway_pb2.ListGamesRequest(), timeout=60)
                                             for _ in range(3000)), return_exceptions=True)
        finally:
            await channel.close()
        failed = [r.code() for r in results if isinstance(r, grpc.aio.AioRpcError)]
        assert failed == [], f"{len(failed)} of 3000 failed: {set(failed)}"
        assert all(isinstance(r, gateway_pb2.ListGamesResponse) and r.games for r in results)

    # One address sends them all: the per-address rate limit is not what this is about.
    serve_and(fake_stack, scenario, rate_limit_per_s=1e6, rate_limit_burst=1_000_000)


def test_a_call_the_server_shed_is_a_retryable_error_for_the_client():
    from croupier_gateway.client import RETRYABLE_STATUS

    shed = grpc.aio.AioRpcError(grpc.StatusCode.CANCELLED, grpc.aio.Metadata(), grpc.aio.Metadata(), details="CANCELLED")
    err = GrpcGateway._error(shed)
    assert err.status in RETRYABLE_STATUS and err.code == "cancelled"


def test_a_seat_plays_on_one_stream_with_the_same_answers_as_the_separate_calls(fake_stack):
    async def scenario(client, address):
        gid = (await client.create_table("pebbles", 2))["game_id"]
        t0 = (await client.join(gid, 0, player="a"))["token"]
        t1 = (await client.join(gid, 1, player="b"))["token"]
        streams = [client.updates(gid, t, 0) for t in (t0, t1)]
        first = [await anext(s) for s in streams]  # both seats' sessions are open
        assert set(client._sessions) == {(gid, t0), (gid, t1)}
        actions = first[0].actions
        errors = {}
        for name, call in {
            "wrong_turn": client.submit(gid, t1, "c1", actions[0]),
            "conflict": client.submit(gid, t0, "c2", actions[0], expected_version=1),
            "no_command_id": client.submit(gid, t0, "", actions[0]),
        }.items():
            try:
                await call
            except GatewayError as exc:
                errors[name] = (exc.status, exc.code)
        done = await client.submit(gid, t0, "c3", actions[0], expected_version=first[0].version)
        seen = [await anext(s) for s in streams]
        for s in streams:
            await s.aclose()
        return errors, done, first, seen

    errors, done, first, seen = serve_and(fake_stack, scenario)
    assert errors == {"wrong_turn": (422, "not_your_turn"), "conflict": (409, "version_conflict"),
                      "no_command_id": (400, "missing_command_id")}
    assert done["seat"] == 0 and not done["duplicate"]
    assert [u.version for u in seen] == [done["version"]] * 2 and seen[0].view != seen[1].view
    assert not seen[0].actions or not seen[1].actions or seen[0].actions != seen[1].actions


def test_the_moves_went_on_the_stream(fake_stack):
    """Counted by the gateway: moves on Play, not SubmitCommand calls."""
    settings, aredis, _, router = fake_stack

    async def main():
        gw = Gateway(settings, aredis, router=router)
        server, port = await start_server(gw, "127.0.0.1", 0)
        client = GrpcGateway(f"127.0.0.1:{port}", timeout_s=10)
        try:
            gid = (await client.create_table("pebbles", 2))["game_id"]
            t0 = (await client.join(gid, 0, player="a"))["token"]
            await client.join(gid, 1, player="b")
            stream = client.updates(gid, t0, 0)
            update = await anext(stream)
            await client.submit(gid, t0, "m1", update.actions[0], expected_version=update.version)
            await stream.aclose()
            counts = {(s.labels["method"], s.labels["code"]): s.value for m in gw.metrics.grpc.collect()
                      for s in m.samples if s.name.endswith("_total")}
            return counts
        finally:
            await client.close()
            await server.stop(0)
            await gw.close()

    counts = asyncio.run(main())
    assert counts.get(("PlayMove", "OK")) == 1 and counts.get(("SubmitCommand", "OK"), 0) == 0


def test_play_refuses_a_stream_that_does_not_start_with_start(fake_stack):
    async def scenario(client, address):
        async with grpc.aio.insecure_channel(address) as channel:
            call = channel.stream_stream(f"/{SERVICE.full_name}/Play",
                                         request_serializer=gateway_pb2.PlayRequest.SerializeToString,
                                         response_deserializer=gateway_pb2.PlayResponse.FromString)()
            await call.write(gateway_pb2.PlayRequest(move=gateway_pb2.PlayMove(tag=1)))
            try:
                await call.read()
            except grpc.aio.AioRpcError as error:
                return error.code(), error.details()
            return await call.code(), ""

    code, details = serve_and(fake_stack, scenario)
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "play_start_first" in details


def test_a_move_for_another_game_is_refused_and_the_stream_goes_on(fake_stack):
    async def scenario(client, address):
        gid = (await client.create_table("pebbles", 2))["game_id"]
        t0 = (await client.join(gid, 0, player="a"))["token"]
        await client.join(gid, 1, player="b")
        stream = client.updates(gid, t0, 0)
        update = await anext(stream)
        session = client._sessions[(gid, t0)]
        wrong = gateway_pb2.SubmitCommandRequest(game_id="pebbles-other", command_id="x", action_json="{}")
        answer = (await session.ask(lambda tag: gateway_pb2.PlayRequest(
            move=gateway_pb2.PlayMove(tag=tag, command=wrong)), 5)).answer
        done = await client.submit(gid, t0, "m1", update.actions[0], expected_version=update.version)
        await stream.aclose()
        return answer, done

    answer, done = serve_and(fake_stack, scenario)
    assert answer.rejection.code == "wrong_game" and answer.status_code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert done["version"] > 0


async def _updates_from(handlers: dict, from_version: int) -> tuple[list, bool]:
    """Two updates from a gateway serving only `handlers`, through the client's updates()
    (a stream each time), and whether the client still opens Play streams after."""
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("croupier.v1.GatewayService", handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    client = GrpcGateway(f"127.0.0.1:{port}", timeout_s=5)
    try:
        got = []
        for _ in range(2):
            stream = client.updates("g-1", "token", from_version)
            got.append(await anext(stream))
            await stream.aclose()
        return got, client.play_streams
    finally:
        await client.close()
        await server.stop(0)


async def _old_stream_updates(request, context):
    yield gateway_pb2.StreamUpdatesResponse(version=request.from_version + 1, view_json="{}")


_STREAM_UPDATES = grpc.unary_stream_rpc_method_handler(
    _old_stream_updates, request_deserializer=gateway_pb2.StreamUpdatesRequest.FromString,
    response_serializer=gateway_pb2.StreamUpdatesResponse.SerializeToString)


def test_a_gateway_without_play_gets_the_separate_calls():
    """A gateway built before Play does not know the method: the client falls back to
    StreamUpdates, and remembers, so its later streams go there at once."""
    updates, play_streams = asyncio.run(_updates_from({"StreamUpdates": _STREAM_UPDATES}, 4))
    assert [u.version for u in updates] == [5, 5] and play_streams is False


def test_a_play_stream_that_fails_before_any_update_gets_them_from_the_separate_call():
    """A Play stream ended with INTERNAL before its first message (what grpc.aio reports when
    the opening write races the server's status): that stream's updates come from
    StreamUpdates, which gives the real status if there is one; Play is still used next time."""
    opened = []

    async def play(requests, context):
        opened.append(1)
        await context.abort(grpc.StatusCode.INTERNAL, "Internal error from Core")
        yield  # an async generator, as a stream handler is

    handlers = {"StreamUpdates": _STREAM_UPDATES, "Play": grpc.stream_stream_rpc_method_handler(
        play, request_deserializer=gateway_pb2.PlayRequest.FromString,
        response_serializer=gateway_pb2.PlayResponse.SerializeToString)}
    updates, play_streams = asyncio.run(_updates_from(handlers, 7))
    assert [u.version for u in updates] == [8, 8] and play_streams is True and len(opened) == 2


def test_the_gateways_own_refusals_carry_their_kind_in_the_rejection_metadata(fake_stack):
    """unauthenticated and rate_limited are kinds of their own on the wire, not UNSPECIFIED."""
    from croupier.rules.errors import REJECTION_METADATA
    from croupier.v1 import events_pb2, gateway_pb2_grpc

    async def scenario(client, address):
        gid = (await client.create_table("pebbles", 2))["game_id"]
        kinds = {}
        async with grpc.aio.insecure_channel(address) as channel:
            stub = gateway_pb2_grpc.GatewayServiceStub(channel)
            for name, call in {
                "no_token": stub.ListActions(gateway_pb2.ListActionsRequest(game_id=gid)),
                "rate_limited": None,
            }.items():
                if call is None:  # a burst far over the limit (1 a second, burst 1 here)
                    for _ in range(5):
                        try:
                            await stub.ListGames(gateway_pb2.ListGamesRequest())
                        except grpc.aio.AioRpcError as exc:
                            call_error = exc
                            break
                else:
                    try:
                        await call
                    except grpc.aio.AioRpcError as exc:
                        call_error = exc
                raw = dict(call_error.trailing_metadata())[REJECTION_METADATA]
                kinds[name] = (call_error.code(), events_pb2.Rejection.FromString(raw).kind)
        return kinds

    kinds = serve_and(fake_stack, scenario, rate_limit_per_s=1.0, rate_limit_burst=3)

    assert kinds == {
        "no_token": (grpc.StatusCode.UNAUTHENTICATED, events_pb2.REJECTION_KIND_UNAUTHENTICATED),
        "rate_limited": (grpc.StatusCode.RESOURCE_EXHAUSTED, events_pb2.REJECTION_KIND_RATE_LIMITED),
    }


def test_a_seat_token_is_renewed_over_grpc(fake_stack):
    async def scenario(client, _):
        gid = (await client.create_table("pebbles", 2))["game_id"]
        t0 = (await client.join(gid, 0, player="a"))["token"]
        await client.join(gid, 1, player="b")
        renewed = await client.renew(gid, 0, t0)
        seen = [(await client.view(gid, token))["seat"] for token in (t0, renewed["token"])]
        try:
            await client.renew(gid, 1, t0)
        except GatewayError as exc:
            refused = (exc.status, exc.code)
        return renewed, seen, refused

    renewed, seen, refused = serve_and(fake_stack, scenario)
    assert renewed["seat"] == 0 and renewed["token"] and renewed["expires_at"] > 0
    assert seen == [0, 0] and refused == (403, "wrong_seat")



def test_a_play_stream_that_never_sends_start_is_closed(fake_stack):
    """Before, Play waited for its first request for good, outside the count of streams."""
    async def scenario(client, target):
        channel = grpc.aio.insecure_channel(target)
        try:
            call = channel.stream_stream(f"/{SERVICE.full_name}/Play")()  # opened, nothing sent
            try:
                await call.read()
            except grpc.aio.AioRpcError as exc:
                return exc.code(), exc.details()
            return await call.code(), await call.details()
        finally:
            await channel.close()

    code, details = serve_and(fake_stack, scenario)
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "did not come within" in details


def test_a_leave_retried_over_grpc_gets_the_first_answer_and_a_left_seat_stays_refused(fake_stack):
    """The gRPC LeaveTable is the same leave: its retry (the answer lost) gets the first
    answer (its message has no `duplicate`), and nothing is left twice."""
    router = fake_stack[3]

    async def scenario(client, _):
        gid = (await client.create_table("pebbles", 3))["game_id"]
        t0 = (await client.join(gid, 0, player="a"))["token"]
        first = await client.leave(gid, 0, t0)
        again = await client.leave(gid, 0, t0)
        t0b = (await client.join(gid, 0, player="b"))["token"]
        try:
            await client.leave(gid, 0, t0)
            refused = None
        except GatewayError as exc:
            refused = (exc.status, exc.code)
        view = await client.view(gid, t0b)
        return first, again, refused, view

    first, again, refused, view = serve_and(fake_stack, scenario)
    assert again == first
    assert refused == (401, "unauthenticated")
    assert view["seat"] == 0
    assert sum(method == "LeaveSeat" for method, _ in router.calls) == 1


def test_list_games_over_grpc_names_the_table_options_and_the_bounds_http_does(fake_stack):
    """gRPC's ListGames named each game's own options without their bounds, and not the table's
    own (the turn clock) at all, which GET /v1/games lists: a gRPC client could not learn the
    clock's range or its actions. Both doors now list the same options."""
    from croupier.v1 import gateway_pb2_grpc

    def option(o) -> dict:
        return {"name": o.name, "default": json.loads(o.default_json),
                "choices": json.loads(o.choices_json) if o.choices_json else None,
                "minimum": o.minimum if o.HasField("minimum") else None,
                "maximum": o.maximum if o.HasField("maximum") else None, "doc": o.doc}

    async def scenario(client, address):
        async with grpc.aio.insecure_channel(address) as channel:
            response = await gateway_pb2_grpc.GatewayServiceStub(channel).ListGames(gateway_pb2.ListGamesRequest())
        return {g.id: {"options": [option(o) for o in g.options], "table_options": [option(o) for o in g.table_options]}
                for g in response.games}

    settings, aredis, _, router = fake_stack
    listed = serve_and(fake_stack, scenario)
    http = {g["id"]: g for g in Gateway(settings, aredis, router=router).games()}
    assert listed and set(listed) == set(http)
    for game_id, got in listed.items():
        assert got["options"] == http[game_id]["options"], game_id
        assert got["table_options"] == http[game_id]["table_options"], game_id
    clock = {o["name"]: o for o in next(iter(listed.values()))["table_options"]}
    assert clock["turn_clock_ms"]["maximum"] == 86_400_000 and clock["turn_clock_ms"]["minimum"] == 0
    assert clock["turn_clock_action"]["choices"] == ["default", "forfeit"]
