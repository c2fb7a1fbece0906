"""The compose file's structure: Kafka (apache/kafka, KRaft), Redis, the topics, one rules
service per game, the projector and the gateway, each with a health check, started with the
same entry points as `croupier serve`, on the local stack's ports."""

from __future__ import annotations

import base64
import re
import shlex

import code_settings
import pytest
from deploy_objects import ROOT, compose_env, games

GAMES = games()
CROUPIER_SERVICES = [f"rules-{g}" for g in GAMES] + ["projector", "gateway"]


def command_args(service: dict) -> list[str]:
    command = service["command"]
    return shlex.split(command) if isinstance(command, str) else list(command)


def published(service: dict) -> dict[int, int]:
    """container port -> host port"""
    ports = {}
    for spec in service.get("ports", []):
        parts = str(spec).split(":")
        ports[int(parts[-1])] = int(parts[-2])
    return ports


def test_the_services(compose):
    services = compose["services"]
    assert set(services) == {"kafka", "redis", "topics", *CROUPIER_SERVICES}
    for name in CROUPIER_SERVICES:
        svc = services[name]
        assert svc["build"] == {"context": "..", "dockerfile": "deploy/Dockerfile"}, name
        assert (ROOT / "deploy" / "Dockerfile").is_file()
        assert svc["image"].startswith("${CROUPIER_IMAGE:-croupier:"), name
        assert svc["stop_grace_period"] == "30s" and svc.get("stop_signal", "SIGTERM") == "SIGTERM"
        assert svc["restart"] == "unless-stopped"


@pytest.mark.parametrize("name", CROUPIER_SERVICES)
def test_entry_points_are_the_croupier_commands(compose, name):
    from croupier.cli.main import build_parser

    if name == "gateway" and code_settings.gateway_pending():
        pytest.skip("no `croupier serve gateway` in this tree yet")

    parsed = build_parser().parse_args(command_args(compose["services"][name]))
    assert parsed.command == "serve"
    if name.startswith("rules-"):
        assert parsed.service == "rules" and parsed.game == name.removeprefix("rules-")
        assert compose_env(compose["services"][name])["CROUPIER_RULES_ADVERTISE"] == (
            f"{name}:{compose_env(compose['services'][name])['CROUPIER_RULES_PORT']}")
    else:
        assert parsed.service == name


def test_every_long_running_service_has_a_health_check(compose):
    services = compose["services"]
    for name, svc in services.items():
        if name == "topics":
            continue
        test = svc["healthcheck"]["test"]
        assert test[0] in ("CMD", "CMD-SHELL") and len(test) > 1, name
    for name in [f"rules-{g}" for g in GAMES]:
        env = compose_env(services[name])
        assert services[name]["healthcheck"]["test"] == [
            "CMD", "croupier-probe", "grpc", f"127.0.0.1:{env['CROUPIER_RULES_PORT']}", "--service", "croupier.v1.RulesService"]
        assert env["CROUPIER_RULES_HOST"] == "0.0.0.0"
    env = compose_env(services["projector"])
    assert services["projector"]["healthcheck"]["test"] == [
        "CMD", "croupier-probe", "http", f"http://127.0.0.1:{env['CROUPIER_PROJECTOR_METRICS_PORT']}/metrics"]
    env = compose_env(services["gateway"])
    assert services["gateway"]["healthcheck"]["test"] == [
        "CMD", "croupier-probe", "http", f"http://127.0.0.1:{env['CROUPIER_GATEWAY_PORT']}/healthz"]


def test_dependencies_wait_for_health(compose):
    services = compose["services"]
    for name, svc in services.items():
        for dependency, spec in (svc.get("depends_on") or {}).items():
            assert dependency in services, f"{name} depends on a missing {dependency}"
            condition = spec["condition"]
            if condition == "service_healthy":
                assert "healthcheck" in services[dependency], f"{name} waits for {dependency}, which has no health check"
            else:
                assert condition in ("service_completed_successfully", "service_started"), condition
    for name in [f"rules-{g}" for g in GAMES] + ["projector"]:
        assert services[name]["depends_on"]["topics"]["condition"] == "service_completed_successfully"
        assert services[name]["depends_on"]["kafka"]["condition"] == "service_healthy"
    assert services["gateway"]["depends_on"]["redis"]["condition"] == "service_healthy"


def test_kafka_runs_in_kraft_mode(compose):
    kafka = compose["services"]["kafka"]
    assert re.fullmatch(r"apache/kafka:\d+\.\d+\.\d+", kafka["image"])
    env = compose_env(kafka)
    assert env["KAFKA_PROCESS_ROLES"] == "broker,controller"
    assert "CONTROLLER" in env["KAFKA_CONTROLLER_LISTENER_NAMES"]
    assert env["KAFKA_CONTROLLER_QUORUM_VOTERS"] == f"{env['KAFKA_NODE_ID']}@kafka:9093"
    assert len(base64.urlsafe_b64decode(env["CLUSTER_ID"] + "==")) == 16, "a KRaft cluster id is 16 bytes, base64"
    # The local stack's single-node settings (services/croupier/stack/kafka.py).
    assert env["KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR"] == "1"
    assert env["KAFKA_TRANSACTION_STATE_LOG_MIN_ISR"] == "1"
    assert env["KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"] == "1"
    assert env["KAFKA_AUTO_CREATE_TOPICS_ENABLE"] == "false"
    bootstrap = {compose_env(compose["services"][n])["CROUPIER_KAFKA_BOOTSTRAP"] for n in CROUPIER_SERVICES}
    assert bootstrap == {"kafka:9092"} and "INTERNAL://kafka:9092" in env["KAFKA_ADVERTISED_LISTENERS"]


def test_the_host_sees_the_local_stack_ports(compose):
    from croupier.config import DEFAULT_KAFKA_PORT, DEFAULT_REDIS_PORT

    services = compose["services"]
    assert published(services["kafka"]) == {DEFAULT_KAFKA_PORT: DEFAULT_KAFKA_PORT}
    assert f"EXTERNAL://localhost:{DEFAULT_KAFKA_PORT}" in compose_env(services["kafka"])["KAFKA_ADVERTISED_LISTENERS"]
    assert published(services["redis"]) == {6379: DEFAULT_REDIS_PORT}
    env = compose_env(services["gateway"])
    http, grpc = int(env["CROUPIER_GATEWAY_PORT"]), int(env["CROUPIER_GATEWAY_GRPC_PORT"])
    assert published(services["gateway"]) == {http: http, grpc: grpc}
    for spec in services["kafka"]["ports"] + services["redis"]["ports"] + services["gateway"]["ports"]:
        assert str(spec).startswith("127.0.0.1:"), "published on the loopback only"
    assert {"kafka-data", "redis-data"} <= set(compose["volumes"])


def test_topics_job_creates_every_games_topic(compose):
    topics = compose["services"]["topics"]
    env = compose_env(topics)
    assert env["GAMES"].split() == GAMES or set(env["GAMES"].split()) == set(GAMES)
    script = " ".join(command_args(topics))
    assert "--topic \"$${CROUPIER_TOPIC_PREFIX}croupier.events.$$game\"" in script
    assert "--config retention.ms=-1" in script and "--partitions \"$$CROUPIER_PARTITIONS\"" in script
    partitions = {compose_env(compose["services"][f"rules-{g}"])["CROUPIER_PARTITIONS"] for g in GAMES}
    assert partitions == {env["CROUPIER_PARTITIONS"]}, "the rules services know their topics' partitions"
