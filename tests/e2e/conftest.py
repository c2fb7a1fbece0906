"""The whole local stack for end-to-end tests through the gateway: a rules replica per game
type, the projector and the gateway as processes, on the session's Kafka and Redis (the
`kafka` and `redis_url` fixtures of tests/conftest.py; or CROUPIER_TEST_KAFKA and
CROUPIER_TEST_REDIS when those fixtures are not there), under a key and topic prefix of
their own so they share a broker and a Redis with other tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from croupier.engine import registry
from croupier_gateway.launcher import Launcher
from e2e_helpers import OPERATOR_TOKEN, PARTITIONS, SIGNING_KEY, Played, _play_one, run


@dataclass
class StackServices:
    http_url: str
    grpc_address: str
    kafka: str
    redis_url: str
    prefix: str
    games: tuple[str, ...]
    launcher: Launcher

    @property
    def operator_headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {OPERATOR_TOKEN}"}

    @property
    def topic_prefix(self) -> str:
        return self.prefix


def _backends(request) -> tuple[str, str]:
    try:
        return request.getfixturevalue("kafka"), request.getfixturevalue("redis_url")
    except pytest.FixtureLookupError:
        kafka, redis_url = os.environ.get("CROUPIER_TEST_KAFKA"), os.environ.get("CROUPIER_TEST_REDIS")
        if not (kafka and redis_url):
            raise RuntimeError("the e2e tests need Kafka and Redis: the kafka/redis_url fixtures, "
                               "or CROUPIER_TEST_KAFKA and CROUPIER_TEST_REDIS") from None
        return kafka, redis_url


@pytest.fixture(scope="session")
def stack_services(request, tmp_path_factory) -> StackServices:
    kafka, redis_url = _backends(request)
    prefix = f"e2e{uuid.uuid4().hex[:8]}."
    env = {
        "CROUPIER_KAFKA_BOOTSTRAP": kafka,
        "CROUPIER_REDIS_URL": redis_url,
        "CROUPIER_TOPIC_PREFIX": prefix,
        "CROUPIER_KEY_PREFIX": prefix,
        "CROUPIER_PARTITIONS": str(PARTITIONS),
        "CROUPIER_KAFKA_SESSION_TIMEOUT_MS": "6000",
        "CROUPIER_KAFKA_HEARTBEAT_MS": "500",
        "CROUPIER_OPERATOR_TOKEN": OPERATOR_TOKEN,
        "CROUPIER_GATEWAY_SIGNING_KEY": SIGNING_KEY,
        "CROUPIER_RATE_LIMIT_PER_S": "100000",
        "CROUPIER_RATE_LIMIT_BURST": "100000",
        "CROUPIER_GATEWAY_WS_AUTH_WAIT_S": "0.2",
    }
    log_dir = tmp_path_factory.mktemp("e2e-logs")
    launcher = Launcher(env, log_dir)
    games = tuple(registry.GAME_IDS)
    launcher.start(games)
    try:
        launcher.wait_ready(120)
    except BaseException:
        launcher.stop()
        raise
    yield StackServices(launcher.http_url, launcher.grpc_address, kafka, redis_url, prefix, games, launcher)
    launcher.stop()
    _cleanup(kafka, redis_url, prefix, games)


def _cleanup(kafka: str, redis_url: str, prefix: str, games) -> None:
    import redis

    with contextlib.suppress(Exception):
        r = redis.Redis.from_url(redis_url)
        keys = list(r.scan_iter(match=f"{prefix}*", count=1000))
        for i in range(0, len(keys), 500):
            r.unlink(*keys[i:i + 500])
    with contextlib.suppress(Exception):
        from kafka.admin import KafkaAdminClient

        admin = KafkaAdminClient(bootstrap_servers=kafka, client_id="e2e-cleanup")
        admin.delete_topics([f"{prefix}croupier.events.{g}" for g in games])
        admin.close()


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def played(stack_services) -> dict[tuple[str, str], Played]:
    """Every game, once over HTTP (+WebSocket) and once over gRPC, all at the same time."""
    from croupier_gateway.client import GrpcGateway, HttpGateway

    async def main():
        http = HttpGateway(stack_services.http_url, timeout_s=60)
        grpc_ = GrpcGateway(stack_services.grpc_address, timeout_s=60)
        try:
            jobs = []
            for i, game in enumerate(stack_services.games):
                jobs.append(_play_one(http, http, game, "http", i))
                jobs.append(_play_one(grpc_, grpc_, game, "grpc", 100 + i))
            results = await asyncio.wait_for(asyncio.gather(*jobs), 600)
        finally:
            await http.close()
            await grpc_.close()
        return {(p.game_type, p.transport): p for p in results}

    return run(main())
