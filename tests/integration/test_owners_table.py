"""The rules replicas' owners table against the real Redis."""

from __future__ import annotations

import asyncio
import uuid

from croupier.rules import owners as owners_module
from croupier.rules.owners import OwnersTable

GAME = "expeditions"


def test_a_late_ready_of_the_partition_s_old_owner_is_written_over_by_its_new_owner(redis, monkeypatch):
    """A replica's writes to the table go through a queue: the "ready" of a replica that has
    since given the partition up can land after its new owner's. The new owner's
    keep_published fills gaps with HSETNX, which alone never mended that entry, and the
    gateway routed the partition to the old owner until the next rebalance."""
    monkeypatch.setattr(owners_module, "OWNERS_REFRESH_S", 0.1)
    prefix = f"o{uuid.uuid4().hex[:8]}."
    new = OwnersTable(redis, prefix, GAME, "10.0.0.2:50051", 4)

    async def main():
        new.publish(1, "ready").result(5)
        redis.hset(new.key, "1", "10.0.0.1:50051")  # the old owner's late "ready"
        keeping = asyncio.create_task(new.keep_published(lambda: [1]))
        try:
            for _ in range(50):
                if redis.hget(new.key, "1") == b"10.0.0.2:50051":
                    return True
                await asyncio.sleep(0.1)
            return False
        finally:
            keeping.cancel()

    try:
        assert asyncio.run(main()), redis.hget(new.key, "1")
    finally:
        new.close()
        redis.delete(new.key, new.partitions_key)
