"""Shared fixtures: a real Kafka and a real Redis, started only when a test asks for them.

Where they come from, in order:
1. an external cluster named by ``CROUPIER_TEST_KAFKA`` (bootstrap servers) and
   ``CROUPIER_TEST_REDIS`` (a redis:// URL);
2. containers (testcontainers), when a Docker daemon answers;
3. the local processes of ``croupier stack``, on free ports with their own state directory
   under a temp dir, stopped after the session.
``CROUPIER_TEST_STACK=docker`` forces 2 and ``=local`` forces 3 (``auto``, the default, tries
2 then 3). If none can start, the tests that need it ERROR; they never skip.

Per test: ``topic_name`` (unique), ``create_topic`` (creates topics, deletes them after),
``redis_prefix`` (a unique key prefix, its keys deleted after).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import os
import re
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

INTEGRATION_DIR = Path(__file__).parent / "integration"
KAFKA_IMAGE = "apache/kafka:4.1.1"
REDIS_IMAGE = "redis:7.0"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).is_relative_to(INTEGRATION_DIR):
            item.add_marker(pytest.mark.integration)


class Backends:
    """Starts each of Kafka and Redis at most once per session, the first real way that works."""

    def __init__(self, tmp_root: Path) -> None:
        self.tmp_root = tmp_root
        self.mode = os.environ.get("CROUPIER_TEST_STACK", "auto").strip().lower() or "auto"
        if self.mode not in ("auto", "docker", "local"):
            raise ValueError(f"CROUPIER_TEST_STACK={self.mode!r}: expected auto, docker or local")
        self._kafka: str | None = None
        self._redis: str | None = None
        self._containers: list = []
        self._local_settings = None
        self.how: dict[str, str] = {}

    # -- Kafka ---------------------------------------------------------------------------
    def kafka(self) -> str:
        if self._kafka is None:
            external = os.environ.get("CROUPIER_TEST_KAFKA", "").strip()
            if external:
                self._kafka, self.how["kafka"] = external, "external (CROUPIER_TEST_KAFKA)"
            else:
                self._kafka = self._from_docker("kafka", self._kafka_container) or self._from_local("kafka")
        return self._kafka

    def redis_url(self) -> str:
        if self._redis is None:
            external = os.environ.get("CROUPIER_TEST_REDIS", "").strip()
            if external:
                self._redis, self.how["redis"] = external, "external (CROUPIER_TEST_REDIS)"
            else:
                self._redis = self._from_docker("redis", self._redis_container) or self._from_local("redis")
        return self._redis

    # -- containers ----------------------------------------------------------------------
    def _from_docker(self, name: str, make: Callable[[], str]) -> str | None:
        if self.mode == "local":
            return None
        try:
            endpoint = make()
        except _NoDocker as exc:
            if self.mode == "docker":
                raise RuntimeError(f"CROUPIER_TEST_STACK=docker but no Docker daemon answers: {exc}") from exc
            return None
        self.how[name] = "testcontainers"
        return endpoint

    def _container(self, image: str):
        """Construct a container; constructing it asks the daemon, so no daemon fails here."""
        import requests
        from docker.errors import DockerException
        from testcontainers.core.container import DockerContainer

        try:
            return DockerContainer(image)
        except (DockerException, requests.exceptions.ConnectionError, OSError) as exc:
            raise _NoDocker(str(exc)) from exc

    def _kafka_container(self) -> str:
        from croupier.stack.kafka import broker_ready
        from croupier.stack.process import free_ports

        container = self._container(KAFKA_IMAGE)
        # The advertised port must be known before start, so publish it on the same number.
        (port,) = free_ports(1)
        env = {
            "KAFKA_NODE_ID": "1",
            "KAFKA_PROCESS_ROLES": "broker,controller",
            "KAFKA_LISTENERS": f"PLAINTEXT://0.0.0.0:{port},CONTROLLER://localhost:9093",
            "KAFKA_ADVERTISED_LISTENERS": f"PLAINTEXT://localhost:{port}",
            "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
            "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            "KAFKA_CONTROLLER_QUORUM_VOTERS": "1@localhost:9093",
            "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
            "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
            "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
            "KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR": "1",
            "KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR": "1",
            "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0",
            "KAFKA_AUTO_CREATE_TOPICS_ENABLE": "false",
        }
        for key, value in env.items():
            container.with_env(key, value)
        container.with_bind_ports(port, port)
        container.start()
        self._containers.append(container)
        bootstrap = f"localhost:{port}"
        deadline = time.monotonic() + 90
        while not broker_ready(bootstrap):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Kafka container ({KAFKA_IMAGE}) gave no metadata within 90 s")
            time.sleep(0.5)
        return bootstrap

    def _redis_container(self) -> str:
        import redis

        container = self._container(REDIS_IMAGE)
        container.with_exposed_ports(6379)
        container.start()
        self._containers.append(container)
        url = f"redis://{container.get_container_host_ip()}:{container.get_exposed_port(6379)}/0"
        deadline = time.monotonic() + 60
        while True:
            try:
                if redis.Redis.from_url(url, socket_connect_timeout=1).ping():
                    return url
            except (redis.RedisError, OSError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Redis container ({REDIS_IMAGE}) did not answer PING within 60 s")
            time.sleep(0.2)

    # -- the local processes of `croupier stack` ----------------------------------------
    def _from_local(self, name: str) -> str:
        from croupier import stack
        from croupier.config import StackSettings
        from croupier.stack.process import free_ports

        if self._local_settings is None:
            kafka_port, controller_port, redis_port = free_ports(3)
            self._local_settings = dataclasses.replace(
                StackSettings.from_env({k: v for k, v in os.environ.items() if k in _TOOL_VARS}),
                state_dir=self.tmp_root / "stack",
                kafka_port=kafka_port,
                kafka_controller_port=controller_port,
                redis_port=redis_port,
                redis_persist=False,
            )
            atexit.register(self.close)
        settings = self._local_settings
        report = stack.up(settings, [name])  # raises (so the tests ERROR) with the log tail
        self.how[name] = f"local croupier stack ({report.seconds:.1f} s to ready)"
        return settings.kafka_bootstrap if name == "kafka" else settings.redis_url

    def close(self) -> None:
        if self._local_settings is not None:
            from croupier import stack

            stack.down(self._local_settings)
            self._local_settings = None
        while self._containers:
            with contextlib.suppress(Exception):
                self._containers.pop().stop()


class _NoDocker(Exception):
    pass


# Settings of the tools themselves (which java, which redis-server, timeouts) are taken from
# the environment; ports and the state directory never are, so a developer's stack is left alone.
_TOOL_VARS = {
    "CROUPIER_KAFKA_DIR", "CROUPIER_JAVA", "CROUPIER_KAFKA_HEAP", "CROUPIER_KAFKA_JVM_OPTS",
    "CROUPIER_REDIS_SERVER", "CROUPIER_STACK_START_TIMEOUT", "CROUPIER_STACK_STOP_TIMEOUT",
}


@pytest.fixture(scope="session")
def backends(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Iterator[Backends]:
    b = Backends(tmp_path_factory.mktemp("backends"))
    pytestconfig._croupier_backends = b  # type: ignore[attr-defined]  # for the terminal summary
    try:
        yield b
    finally:
        b.close()


@pytest.fixture(scope="session")
def kafka(backends: Backends) -> str:
    """Bootstrap servers of a real Kafka 4.x broker."""
    return backends.kafka()


@pytest.fixture(scope="session")
def redis_url(backends: Backends) -> str:
    return backends.redis_url()


@pytest.fixture(scope="session")
def redis(redis_url: str):
    """A redis.Redis client of a real Redis server."""
    import redis as redis_lib

    client = redis_lib.Redis.from_url(redis_url)
    yield client
    client.close()


@pytest.fixture(scope="session")
def kafka_admin(kafka: str):
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=kafka, client_id="croupier-tests")
    yield admin
    admin.close()


def _slug(request: pytest.FixtureRequest, limit: int = 60) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", request.node.name).strip("-")[:limit] or "test"


@pytest.fixture
def topic_name(request: pytest.FixtureRequest) -> str:
    """A topic name no other test (or run) uses."""
    return f"test-{_slug(request)}-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def create_topic(kafka_admin, request: pytest.FixtureRequest) -> Iterator[Callable[..., str]]:
    """``create_topic(partitions=1, name=None) -> name``: a fresh topic, deleted after the test."""
    from kafka.admin import NewTopic

    created: list[str] = []

    def create(partitions: int = 1, name: str | None = None) -> str:
        name = name or f"test-{_slug(request)}-{uuid.uuid4().hex[:8]}"
        kafka_admin.create_topics([NewTopic(name, partitions, 1)])
        created.append(name)
        return name

    yield create
    if created:
        with contextlib.suppress(Exception):
            kafka_admin.delete_topics(created)


@pytest.fixture
def redis_prefix(request: pytest.FixtureRequest, redis) -> Iterator[str]:
    """A key prefix no other test (or run) uses; its keys are deleted after the test."""
    prefix = f"test:{_slug(request, 40)}:{uuid.uuid4().hex[:8]}:"
    yield prefix
    keys = list(redis.scan_iter(match=prefix + "*", count=500))
    if keys:
        redis.delete(*keys)


def pytest_report_header(config: pytest.Config) -> list[str]:
    mode = os.environ.get("CROUPIER_TEST_STACK", "auto")
    return [f"croupier: Kafka/Redis for integration tests: external > docker > local (CROUPIER_TEST_STACK={mode})"]


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    b = getattr(config, "_croupier_backends", None)
    if b is not None and b.how:
        terminalreporter.write_line("croupier backends: " + "; ".join(f"{k}: {v}" for k, v in b.how.items()))
