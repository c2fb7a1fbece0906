"""The gateway's Redis pool against a real Redis: more requests at once than connections wait
for one instead of failing (redis-py's asyncio pool raises MaxConnectionsError past its
limit, which reached players as 503 store_unavailable under a 1,000-table load)."""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid

import pytest

from croupier_gateway.settings import GatewaySettings


@pytest.mark.integration
def test_more_requests_than_connections_wait_for_one_and_all_succeed(redis_url):
    settings = dataclasses.replace(GatewaySettings(), redis_url=redis_url, redis_connections=2, redis_wait_s=10.0)
    key = f"pooltest:{uuid.uuid4().hex}"

    async def main() -> tuple[list, float]:
        client = settings.redis_client()
        try:
            started = time.monotonic()
            # Each BLPOP holds its connection for 0.2 s: 10 of them on 2 connections.
            results = await asyncio.gather(*(client.blpop([key], timeout=0.2) for _ in range(10)),
                                           return_exceptions=True)
            return results, time.monotonic() - started
        finally:
            await client.aclose()

    results, elapsed = asyncio.run(main())
    assert results == [None] * 10  # every one answered (an empty list times out as None), none failed
    assert elapsed >= 0.8  # they took turns on the two connections


@pytest.mark.integration
def test_a_request_that_waits_longer_than_redis_wait_s_fails_with_a_redis_error(redis_url):
    from redis.exceptions import RedisError

    settings = dataclasses.replace(GatewaySettings(), redis_url=redis_url, redis_connections=2, redis_wait_s=0.05)
    key = f"pooltest:{uuid.uuid4().hex}"

    async def main() -> list:
        client = settings.redis_client()
        try:
            return await asyncio.gather(*(client.blpop([key], timeout=1) for _ in range(3)), return_exceptions=True)
        finally:
            await client.aclose()

    results = asyncio.run(main())
    errors = [r for r in results if isinstance(r, BaseException)]
    assert len(errors) == 1 and isinstance(errors[0], RedisError)  # the gateway answers it as 503
