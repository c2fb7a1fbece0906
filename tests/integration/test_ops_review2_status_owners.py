"""`croupier status` asks each rules replica the owners' table names whether it answers: a
replica killed outright (SIGKILL, its node lost) stays named there until another takes its
partitions, and status called every partition owned, exit 0, while that game's commands
answered 503."""

from __future__ import annotations

import json
import socket
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from harness import croupier, service_env

from croupier.engine import registry
from croupier.projector.keys import Keys


@pytest.fixture
def serving_replica():
    """A gRPC health service that answers SERVING, as a rules replica does."""
    server = grpc.server(ThreadPoolExecutor(max_workers=2))
    servicer = health.HealthServicer()
    servicer.set("croupier.v1.RulesService", health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield f"127.0.0.1:{port}"
    server.stop(0)


def _gone_address() -> str:
    """An address nothing listens on any more (a replica killed outright)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


def test_an_owner_that_does_not_answer_is_named_and_status_exits_3(kafka, redis, redis_url, redis_prefix,
                                                                    serving_replica):
    keys = Keys(redis_prefix)
    gone = _gone_address()
    for game in registry.GAME_IDS:
        redis.set(keys.partitions(game), 1)
        redis.hset(keys.owners(game), "0", gone if game == "delve" else serving_replica)
    redis.hset(keys.lag(), "t/0", 0)  # a projector reporting
    env = service_env(kafka, redis_url, redis_prefix)

    r = croupier(env, "status", "--json", timeout=60)
    assert r.returncode == 3, r.stdout + r.stderr
    out = json.loads(r.stdout)
    assert out["kafka_answers"] is True and out["projector"]["reporting"] is True
    delve = out["games"]["delve"]
    assert delve["owned"] == 1 and delve["serving"] == 0 and delve["silent_owners"] == [gone]
    assert out["games"]["journey"]["silent_owners"] == [] and out["games"]["journey"]["serving"] == 1
    r = croupier(env, "status", timeout=60)
    assert r.returncode == 3 and f"{gone} (DOES NOT ANSWER)" in r.stdout, r.stdout + r.stderr
    assert f"{serving_replica} (DOES NOT ANSWER)" not in r.stdout

    # Another replica takes the partition: every owner answers, and status says all is up.
    redis.hset(keys.owners("delve"), "0", serving_replica)
    r = croupier(env, "status", "--json", timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert all(g["silent_owners"] == [] for g in json.loads(r.stdout)["games"].values())


def test_an_owner_whose_name_does_not_resolve_here_is_not_called_dead(kafka, redis, redis_url, redis_prefix,
                                                                      serving_replica):
    """Compose advertises the replicas by container name (rules-delve:50051), which the host
    that runs `croupier status` cannot resolve: those are shown as not resolved here, and do
    not make status exit 3 (it could not tell them dead from alive)."""
    keys = Keys(redis_prefix)
    for game in registry.GAME_IDS:
        redis.set(keys.partitions(game), 1)
        redis.hset(keys.owners(game), "0", "rules-delve.invalid:50051" if game == "delve" else serving_replica)
    redis.hset(keys.lag(), "t/0", 0)
    r = croupier(service_env(kafka, redis_url, redis_prefix), "status", "--json", timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    delve = json.loads(r.stdout)["games"]["delve"]
    assert delve["unresolved_owners"] == ["rules-delve.invalid:50051"] and delve["silent_owners"] == []
