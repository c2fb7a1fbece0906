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
