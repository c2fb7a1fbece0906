"""Routing a write to the owner of its game: follow NOT_OWNER to the named owner, re-read the
published owners after any other retryable answer, give up with 503 at the deadline."""

from __future__ import annotations

import asyncio
import time

import fakeredis
import grpc
import pytest

from croupier.engine.contract import Rejection
from croupier.projector.keys import Keys
from croupier.rules.errors import KIND_TO_STATUS, to_proto, trailing
from croupier.v1 import rules_pb2, rules_pb2_grpc
from croupier_gateway.routing import Router


class Replica(rules_pb2_grpc.RulesServiceServicer):
    def __init__(self, name: str, answer):
        self.name = name
        self.answer = answer  # callable -> response, or raises Rejection (with an owner)
        self.calls = 0

    async def HandleCommand(self, request, context):
        self.calls += 1
        try:
            return self.answer(request)
        except Rejection as rej:
            context.set_trailing_metadata(trailing(rej, getattr(rej, "owner", "")))
            await context.abort(KIND_TO_STATUS[rej.kind], rej.message)

    async def HandleCommands(self, request_iterator, context):
        async for message in request_iterator:
            self.calls += 1
            try:
                yield rules_pb2.HandleCommandsResponse(tag=message.tag, response=self.answer(message.command))
            except Rejection as rej:
                yield rules_pb2.HandleCommandsResponse(tag=message.tag,
                                                       rejection=to_proto(rej, getattr(rej, "owner", "")))


class OldReplica(Replica):
    """A replica from before HandleCommands: only unary moves."""

    HandleCommands = rules_pb2_grpc.RulesServiceServicer.HandleCommands


def refusal(kind: str, owner: str = "") -> Rejection:
    rej = Rejection(kind, "moved" if kind == "not_owner" else "busy", kind)
    rej.owner = owner
    return rej


async def start(replica: Replica) -> tuple[grpc.aio.Server, str]:
    server = grpc.aio.server()
    rules_pb2_grpc.add_RulesServiceServicer_to_server(replica, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, f"127.0.0.1:{port}"


def ok(request):
    return rules_pb2.HandleCommandResponse(result=rules_pb2.CommandResult(game_id=request.game_id, version=7))


def request():
    return rules_pb2.HandleCommandRequest(game_type="g", game_id="g-1", seat=0, command_id="c", action_json="{}")


@pytest.fixture(params=[True, False], ids=["stream", "unary"])
def streams(request):
    """Every routing rule holds for moves sent on a stream (the default) and as unary calls."""
    return request.param


def run_with(replicas, owners_of, scenario, deadline_s=2.0, command_streams=True):
    async def main():
        started = [await start(r) for r in replicas]
        addresses = [a for _, a in started]
        r = fakeredis.aioredis.FakeRedis()
        keys = Keys("")
        await r.set(keys.partitions("g"), 1)
        await r.hset(keys.owners("g"), "0", owners_of(addresses))
        router = Router(r, keys, deadline_s=deadline_s, owners_ttl_s=60, command_streams=command_streams)
        try:
            return await scenario(router, r, keys, addresses)
        finally:
            await router.close()
            for server, _ in started:
                await server.stop(0)

    return asyncio.run(main())


def test_not_owner_is_followed_to_the_owner_it_names(streams):
    b = Replica("b", ok)
    a = Replica("a", lambda req: (_ for _ in ()).throw(refusal("not_owner", owner=addresses_holder[1])))
    addresses_holder = []

    async def scenario(router, r, keys, addresses):
        addresses_holder.extend(addresses)
        return await router.call("g", "g-1", "HandleCommand", request())

    response = run_with([a, b], lambda addrs: addrs[0], scenario, command_streams=streams)
    assert response.result.version == 7 and (a.calls, b.calls) == (1, 1)


def test_unavailable_rereads_the_owners_and_retries(streams):
    flaky = Replica("old", lambda req: (_ for _ in ()).throw(refusal("unavailable")))
    good = Replica("new", ok)

    async def scenario(router, r, keys, addresses):
        async def move():
            await asyncio.sleep(0.2)  # the partition moves to the other replica
            await r.hset(keys.owners("g"), "0", addresses[1])

        mover = asyncio.create_task(move())
        response = await router.call("g", "g-1", "HandleCommand", request())
        await mover
        return response

    response = run_with([flaky, good], lambda addrs: addrs[0], scenario, command_streams=streams)
    assert response.result.version == 7 and flaky.calls >= 1 and good.calls == 1


def test_no_owner_until_the_deadline_is_unavailable(streams):
    async def scenario(router, r, keys, addresses):
        started = time.monotonic()
        with pytest.raises(Rejection) as refused:
            await router.call("g", "g-1", "HandleCommand", request())
        return refused.value, time.monotonic() - started

    rejection, took = run_with([], lambda addrs: "127.0.0.1:1", scenario, deadline_s=0.6, command_streams=streams)
    assert rejection.kind == "unavailable" and 0.4 < took < 3


def test_a_final_answer_is_not_retried(streams):
    refuses = Replica("a", lambda req: (_ for _ in ()).throw(Rejection("not_your_turn", "wait", "illegal")))

    async def scenario(router, r, keys, addresses):
        with pytest.raises(Rejection) as refused:
            await router.call("g", "g-1", "HandleCommand", request())
        return refused.value

    rejection = run_with([refuses], lambda addrs: addrs[0], scenario, command_streams=streams)
    assert (rejection.code, rejection.kind, refuses.calls) == ("not_your_turn", "illegal", 1)


def test_a_replica_without_the_stream_gets_the_move_unary_at_once():
    old = OldReplica("old", ok)

    async def scenario(router, r, keys, addresses):
        await router.owners("g")  # cached; then the published owners go away, so a retry
        await r.delete(keys.owners("g"))  # (which re-reads them) would find no replica
        first = await router.call("g", "g-1", "HandleCommand", request())
        second = await router.call("g", "g-1", "HandleCommand", request())
        return first, second

    first, second = run_with([old], lambda addrs: addrs[0], scenario, deadline_s=0.5)
    # UNIMPLEMENTED is not a refusal to retry: the same move goes unary to the same replica.
    assert first.result.version == second.result.version == 7 and old.calls == 2


def test_answers_on_one_stream_find_their_moves_in_any_order():
    release = {}

    class Slow(Replica):
        async def HandleCommands(self, request_iterator, context):
            # Answers each move only once the next has arrived, the last first.
            held = []
            async for message in request_iterator:
                self.calls += 1
                held.append(message)
                if len(held) == 3:
                    for m in reversed(held):
                        yield rules_pb2.HandleCommandsResponse(tag=m.tag, response=rules_pb2.HandleCommandResponse(
                            result=rules_pb2.CommandResult(game_id=m.command.game_id, version=int(m.command.command_id))))
                    held.clear()
            release["done"] = True

    slow = Slow("slow", ok)

    async def scenario(router, r, keys, addresses):
        moves = [rules_pb2.HandleCommandRequest(game_type="g", game_id="g-1", seat=0, command_id=str(n), action_json="{}")
                 for n in (11, 12, 13)]
        return await asyncio.gather(*(router.call("g", "g-1", "HandleCommand", m) for m in moves))

    answers = run_with([slow], lambda addrs: addrs[0], scenario)
    assert [a.result.version for a in answers] == [11, 12, 13] and slow.calls == 3


def test_a_stream_that_ends_mid_move_is_retried_on_the_new_owner():
    class Vanishes(Replica):
        async def HandleCommands(self, request_iterator, context):
            async for _ in request_iterator:
                self.calls += 1
                return  # ends the stream (OK) without answering: the replica shut down
            yield  # an async generator

    gone, good = Vanishes("gone", ok), Replica("new", ok)

    async def scenario(router, r, keys, addresses):
        await r.hset(keys.owners("g"), "0", addresses[0])

        async def move():
            await asyncio.sleep(0.05)
            await r.hset(keys.owners("g"), "0", addresses[1])

        mover = asyncio.create_task(move())
        response = await router.call("g", "g-1", "HandleCommand", request())
        await mover
        return response

    response = run_with([gone, good], lambda addrs: addrs[0], scenario)
    assert response.result.version == 7 and gone.calls >= 1 and good.calls == 1


@pytest.mark.parametrize("code", ["partition_busy", "game_unreadable"])
def test_an_owner_shedding_load_is_not_called_again_and_the_caller_is_told_when_to_retry(streams, code):
    # A partition with its queue full answers partition_busy (retryable). Before, the router
    # re-read the owners and sent the move again at once, every 20-500 ms until its deadline:
    # the flood the owner was shedding, doubled, plus a Redis read per try. The same for a
    # game its owner cannot read (game_unreadable): no retry at once changes that.
    from croupier_gateway.errors import ApiError

    busy = Replica("a", lambda req: (_ for _ in ()).throw(
        Rejection(code, "partition 0 has 5000 commands waiting; retry shortly", "unavailable")))

    async def scenario(router, r, keys, addresses):
        started = time.monotonic()
        with pytest.raises(Rejection) as refused:
            await router.call("g", "g-1", "HandleCommand", request())
        return refused.value, time.monotonic() - started

    rejection, took = run_with([busy], lambda addrs: addrs[0], scenario, deadline_s=2.0, command_streams=streams)
    assert (rejection.code, busy.calls) == (code, 1) and took < 1.0
    error = ApiError.from_rejection(rejection)
    assert error.http_status == 503 and error.retry_after_s == 1.0
