"""The change feed's hub (feed.py): what its callers see when a subscription cannot be
confirmed, is cancelled half way, or its pub/sub connection fails."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from redis.exceptions import RedisError

from croupier.projector.keys import Keys
from croupier_gateway.core import Gateway
from croupier_gateway.feed import FeedHub


def run(fake_stack, scenario, **overrides):
    settings, aredis, _, router = fake_stack
    settings = dataclasses.replace(settings, **overrides)

    async def main():
        gw = Gateway(settings, aredis, router=router)
        try:
            return await scenario(gw)
        finally:
            await gw.close()

    return asyncio.run(main())


async def deaf() -> None:
    """A feed reader that never reads: no subscription is ever confirmed."""
    await asyncio.Event().wait()


def test_a_feed_that_never_confirms_is_store_unavailable_and_a_committed_move_still_answers(fake_stack):
    router = fake_stack[3]

    async def scenario(a: Gateway):
        gid = (await a.create_table("pebbles", 2, {}))["game_id"]
        t0 = (await a.join(gid, 0))["token"]
        await a.join(gid, 1)
        snap = await a.snapshot(gid, a.signer.verify(t0))
        action = __import__("json").loads(snap.actions)[0]
        a.hub._read = deaf
        a.hub.confirm_timeout_s = 0.05
        router.projecting = False  # the move's projection is waited for, through the feed
        answer = await a.submit(t0, gid, "m0", snap.version, action)
        with pytest.raises(RedisError):  # a stream's answer: store_unavailable (4503 / UNAVAILABLE)
            async for _ in a.updates(gid, None, 0):
                pass
        return answer["version"] > snap.version, a.hub.channels

    assert run(fake_stack, scenario) == (True, 0)


def test_a_subscribe_cancelled_half_way_leaves_nothing_behind(fake_stack):
    _, aredis, _, _ = fake_stack

    async def main():
        hub = FeedHub(aredis, Keys(""), confirm_timeout_s=1.0)
        pubsub = hub._pubsub = aredis.pubsub()
        started = asyncio.Event()

        async def hanging(*channels):
            started.set()
            await asyncio.Event().wait()

        pubsub.subscribe = hanging
        task = asyncio.create_task(hub.watch("g-1").__aenter__())
        await started.wait()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        left = (hub.channels, dict(hub._confirmed))
        del pubsub.subscribe  # the connection works again: a new watch of the game is confirmed
        try:
            async with hub.watch("g-1"):
                confirmed = hub.stamp(hub.keys.feed("g-1")) is not None
        finally:
            await hub.close()
        return left, confirmed

    assert asyncio.run(main()) == ((0, {}), True)


def break_the_connection(hub: FeedHub) -> None:
    """The hub's next pub/sub read fails, as on a dropped connection."""
    pubsub = hub._pubsub

    async def broken(**kwargs):
        raise ConnectionError("Connection reset by peer")

    pubsub.get_message = broken


def test_an_update_published_while_the_feed_reconnects_reaches_the_stream(fake_stack):
    """After a pub/sub error nothing is heard until the subscription is made again: the
    streams re-read once it is confirmed, so an update published before that is not left
    until the next poll."""
    _, aredis, _, router = fake_stack

    async def scenario(a: Gateway):
        from croupier.v1 import rules_pb2

        gid = (await a.create_table("pebbles", 3, {}))["game_id"]
        got: list = []

        async def spectate():
            async for snap in a.updates(gid, None, 0):
                got.append(snap)

        task = asyncio.create_task(spectate())
        try:
            for _ in range(500):
                if got and a.hub.stamp(a.keys.feed(gid)) is not None:
                    break
                await asyncio.sleep(0.01)
            first = got[-1].version
            make = aredis.pubsub

            def pubsub():  # the reconnect's pub/sub: a join lands before its SUBSCRIBE does
                made = make()
                subscribe = made.subscribe

                async def late_subscribe(*channels):
                    await router.call("pebbles", gid, "JoinSeat", rules_pb2.JoinSeatRequest(
                        game_type="pebbles", game_id=gid, seat=2, player="late", command_id="join-2"))
                    await subscribe(*channels)

                made.subscribe = late_subscribe
                aredis.pubsub = make
                return made

            aredis.pubsub = pubsub
            break_the_connection(a.hub)
            for _ in range(300):
                if got[-1].version > first:
                    break
                await asyncio.sleep(0.01)
            return got[-1].version > first
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    assert run(fake_stack, scenario, stream_poll_s=30.0)


def test_a_watch_made_while_the_feed_reconnects_waits_for_its_subscription(fake_stack):
    _, aredis, _, _ = fake_stack

    async def main():
        hub = FeedHub(aredis, Keys(""), confirm_timeout_s=5.0)
        channel = hub.keys.feed("g-1")
        gate = asyncio.Event()
        resubscribe = hub._resubscribe

        async def gated():
            await gate.wait()
            return await resubscribe()

        hub._resubscribe = gated
        try:
            async with hub.watch("g-1"):
                break_the_connection(hub)
                for _ in range(500):
                    if hub.stamp(channel) is None:
                        break
                    await asyncio.sleep(0.01)
                late = asyncio.create_task(hub.watch("g-1").__aenter__())
                await asyncio.sleep(0.2)
                early = late.done()  # before the subscription is made again: it must wait
                gate.set()
                await asyncio.wait_for(late, 5.0)
                live = hub.stamp(channel) is not None
        finally:
            await hub.close()
        return early, live

    assert asyncio.run(main()) == (False, True)
