"""Kafka or Redis away: every command and service says so in one line, exits 75 (retry
later), and a service told to stop while it waits for Kafka stops at once.

The address that is away is a port nobody listens on; the one that is there is the test's
real Redis."""

from __future__ import annotations

import signal
import subprocess
import time
import uuid

import pytest
from harness import Service, croupier, free_port, service_env

from croupier.cli.main import EXIT_UNAVAILABLE


@pytest.fixture
def no_kafka(redis_url, redis_prefix):
    """The settings of a stack whose Kafka does not answer (its Redis does)."""
    address = f"127.0.0.1:{free_port()}"
    return address, service_env(address, redis_url, redis_prefix, CROUPIER_KAFKA_CONNECT_TIMEOUT_S="2")


def one_clear_line(stderr: str, *words: str) -> None:
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and all(w in lines[0] for w in words), stderr


@pytest.mark.parametrize("args", [("export", "g-1"), ("audit", "g-1"), ("replay", "g-1"),
                                  ("export", "--all", "--game", "journey")])
def test_an_operator_command_says_kafka_is_away_and_exits_75(no_kafka, args):
    address, env = no_kafka
    r = croupier(env, *args, timeout=60)
    assert r.returncode == EXIT_UNAVAILABLE == 75, r.stdout + r.stderr
    one_clear_line(r.stderr, f"croupier {args[0]}:", "cannot reach Kafka", address, "2 s")


def test_a_rebuild_while_kafka_is_away_drops_no_view(no_kafka, redis, redis_prefix):
    """A rebuild drops the read models for the projectors to fold again from the log: with
    the log out of reach, it must leave them as they are (and the epoch too)."""
    address, env = no_kafka
    views = f"{redis_prefix}g:{{g-1}}:views"
    redis.hset(views, "0", "{}")
    r = croupier(env, "projector", "rebuild", timeout=60)
    assert r.returncode == EXIT_UNAVAILABLE, r.stdout + r.stderr
    one_clear_line(r.stderr, "croupier projector rebuild:", "cannot reach Kafka", address)
    assert redis.hgetall(views) == {b"0": b"{}"} and redis.get(f"{redis_prefix}projector:epoch") is None


def test_status_asks_kafka_itself_and_says_it_does_not_answer(no_kafka):
    """What Redis holds of owners and lag may be stale: status asks the broker too, and with
    it away says so and exits 3 (not everything is up), in its JSON as well."""
    import json

    address, env = no_kafka
    r = croupier(env, "status", "--json", timeout=60)
    assert r.returncode == 3, r.stdout + r.stderr
    assert json.loads(r.stdout)["kafka_answers"] is False
    r = croupier(env, "status", timeout=60)
    assert r.returncode == 3 and f"kafka {address} (DOES NOT ANSWER)" in r.stdout, r.stdout + r.stderr


def test_status_with_redis_away_still_prints_json_for_a_script(redis_url, redis_prefix):
    import json

    env = service_env("127.0.0.1:1", f"redis://127.0.0.1:{free_port()}/0", redis_prefix)
    r = croupier(env, "status", "--json", timeout=60)
    assert r.returncode == 3 and json.loads(r.stdout)["redis_answers"] is False, r.stdout + r.stderr
    one_clear_line(r.stderr, "croupier status:", "Redis is not reachable")


def test_status_json_says_redis_answers_when_it_does(redis_url, redis_prefix):
    """A script tells the two cases apart by `redis_answers`: false with Redis away (above),
    and true, not absent, when it answers."""
    import json

    env = service_env("127.0.0.1:1", redis_url, redis_prefix)
    r = croupier(env, "status", "--json", timeout=60)
    assert r.returncode == 3, r.stdout + r.stderr  # nothing owned here, Kafka away
    assert json.loads(r.stdout)["redis_answers"] is True


@pytest.mark.parametrize("service", [["serve", "projector"], ["serve", "rules", "--game", "journey", "--port", "0"]])
def test_a_service_that_cannot_reach_kafka_at_start_exits_75_with_the_reason(no_kafka, service):
    address, env = no_kafka
    r = croupier(env, *service, timeout=60)
    assert r.returncode == EXIT_UNAVAILABLE, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    assert f"croupier serve {service[1]}: cannot reach Kafka at {address}" in r.stderr


def test_a_service_that_cannot_reach_redis_at_start_exits_75_with_the_reason():
    address = f"redis://127.0.0.1:{free_port()}/0"
    env = service_env(f"127.0.0.1:{free_port()}", address, "away.")
    r = croupier(env, "serve", "projector", timeout=60)
    assert r.returncode == EXIT_UNAVAILABLE, r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr
    assert "croupier serve projector: cannot reach Redis" in r.stderr and "Connection refused" in r.stderr


def test_a_projector_waiting_for_kafka_stops_at_once_on_sigterm(no_kafka, tmp_path):
    """It used to wait out the topic creation's timeout (30 s by default) first, so an
    orchestrator's stop of a projector whose Kafka was away ended in SIGKILL."""
    _address, env = no_kafka
    env["CROUPIER_KAFKA_CONNECT_TIMEOUT_S"] = "60"
    projector = Service(["serve", "projector"], env, tmp_path / "projector.log")
    try:
        time.sleep(3)  # well into its wait for a broker
        assert projector.alive(), projector.tail()
        projector.proc.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        rc = projector.proc.wait(20)
        took = time.monotonic() - sent
    finally:
        projector.kill()
    assert rc == 0, projector.tail()
    assert took < 5, f"stopped {took:.1f} s after SIGTERM"
    assert '"before": "joining its group"' in projector.tail() and "Traceback" not in projector.tail()


def test_sigusr1_makes_a_waiting_service_show_its_stacks_and_go_on(no_kafka, tmp_path):
    """What an operator does with a service that is alive but does nothing (operations.md):
    SIGUSR1 writes every thread's stack to its output, and the service goes on."""
    _address, env = no_kafka
    env["CROUPIER_KAFKA_CONNECT_TIMEOUT_S"] = "60"
    projector = Service(["serve", "projector"], env, tmp_path / "projector.log")
    try:
        time.sleep(3)  # well into its wait for a broker
        assert projector.alive(), projector.tail()
        projector.proc.send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + 10
        while "most recent call first" not in projector.tail(400) and time.monotonic() < deadline:
            time.sleep(0.1)
        dump = projector.tail(400)
        time.sleep(1)
        assert projector.alive(), dump
    finally:
        projector.stop(20)
    assert "most recent call first" in dump and "in connect" in dump, dump
    assert "Traceback" not in dump


def test_a_rules_replica_serves_without_redis_and_publishes_its_partitions_once_redis_answers(kafka, tmp_path):
    """Redis carries only the routing table for a rules replica: it starts without it
    (taking its partitions and rebuilding from Kafka), and publishes itself once Redis is up."""
    import redis as redis_lib
    from harness import start_rules, wait_owned

    from croupier.config import StackSettings

    prefix = f"late-redis-{uuid.uuid4().hex[:8]}."  # its own topic and group: no earlier run's in the way
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    rules, address = start_rules("journey", kafka, url, prefix, tmp_path)
    server = None
    try:
        deadline = time.monotonic() + 60
        while '"rules_serving"' not in rules.tail(200):
            assert rules.alive(), rules.tail()
            assert time.monotonic() < deadline, rules.tail()
            time.sleep(0.2)
        assert "owner_publish_failed" in rules.tail(200)
        time.sleep(3)  # past an owners refresh with Redis still away
        assert rules.alive(), rules.tail()
        server = subprocess.Popen([StackSettings.from_env().redis_server, "--port", str(port), "--bind", "127.0.0.1",
                                   "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
        r = redis_lib.Redis.from_url(url)
        for _ in range(100):
            try:
                r.ping()
                break
            except redis_lib.ConnectionError:
                time.sleep(0.1)
        owners = wait_owned(url, prefix, "journey", 4, timeout=60, services=[rules])
        assert set(owners.values()) == {address}
        assert r.get(f"{prefix}croupier:partitions:journey") == b"4"
    finally:
        rules.stop()
        if server is not None:
            server.terminate()
            server.wait(10)


@pytest.mark.parametrize("away", ["kafka", "redis"])
def test_the_demo_without_the_stack_says_to_start_it_and_starts_no_service(kafka, redis_url, tmp_path, away):
    """`croupier demo` runs on the local stack (`make run` starts it first). Run alone with
    the stack down, it names what does not answer and how to start it, at once, before
    it starts any service (each of which would otherwise wait out its connect timeout)."""
    dead = str(free_port())
    env = {**service_env(kafka, redis_url, "demo-away."),
           "CROUPIER_STACK_HOST": "127.0.0.1",
           "CROUPIER_KAFKA_PORT": dead if away == "kafka" else kafka.rsplit(":", 1)[1],
           "CROUPIER_REDIS_PORT": dead if away == "redis" else redis_url.rsplit(":", 1)[1].split("/")[0],
           "CROUPIER_STATE_DIR": str(tmp_path / "state")}
    r = croupier(env, "demo", timeout=60)
    assert r.returncode == EXIT_UNAVAILABLE, r.stdout + r.stderr
    one_clear_line(r.stderr, "croupier demo:", f"127.0.0.1:{dead}", "Is the local stack up?", "croupier stack up")
    assert ("Kafka at" if away == "kafka" else "Redis at") in r.stderr
    assert "starting" not in r.stdout and not (tmp_path / "state" / "logs").exists()
