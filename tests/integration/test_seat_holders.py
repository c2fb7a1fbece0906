"""The gateway's record of seat holders against the real Redis: a leave and a join of the same
seat racing each other."""

from __future__ import annotations

import asyncio
import uuid

import redis.asyncio as aioredis

from croupier.projector.keys import Keys
from croupier_gateway.reads import ReadStore, left_by


def test_a_join_landing_during_the_last_holder_s_leave_keeps_the_seat(redis_url):
    """drop_holder read the holder, then wrote the leave in a second step: a join recorded
    between them was overwritten, and the new holder's token refused for good. Run together
    many times, the join always ends holding the seat, whichever comes first."""

    async def main() -> list[str]:
        client = aioredis.Redis.from_url(redis_url)
        prefix = f"h{uuid.uuid4().hex[:8]}."
        reads = ReadStore(client, Keys(prefix))
        outcomes = []
        try:
            for i in range(200):
                game = f"g{i}"
                await reads.set_holder(game, 0, "token-a", 3600)
                # The leave's read yields to the loop, where the join runs.
                _, _ = await asyncio.gather(reads.drop_holder(game, 0, "token-a", 3600, version=7),
                                            reads.set_holder(game, 0, "token-b", 3600))
                outcomes.append(await reads.holder(game, 0))
                assert await client.ttl(reads.seats_key(game)) > 0
            await reads.drop_holder("fresh", 0, "token-a", 3600, version=7)  # no record yet: it expires too
            assert left_by(await reads.holder("fresh", 0)) == ("token-a", 7)
            assert 0 < await client.ttl(reads.seats_key("fresh")) <= 3600
        finally:
            keys = [k async for k in client.scan_iter(match=f"{prefix}*")]
            if keys:
                await client.delete(*keys)
            await client.aclose()
        return outcomes

    outcomes = asyncio.run(main())
    assert set(outcomes) == {"token-b"}, {o: outcomes.count(o) for o in set(outcomes)}
