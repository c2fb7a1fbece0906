"""The stack's pieces that need no broker: its configuration, pid files, preflight, the CLI."""

from __future__ import annotations

import dataclasses
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from croupier import stack
from croupier.cli.main import build_parser
from croupier.config import StackSettings
from croupier.stack.kafka import KafkaNode
from croupier.stack.process import PidFile, free_ports, stop
from croupier.stack.redis import RedisNode


@pytest.fixture
def settings(tmp_path: Path) -> StackSettings:
    kafka_port, controller_port, redis_port = free_ports(3)
    return dataclasses.replace(StackSettings.from_env({}), state_dir=tmp_path / "state", kafka_port=kafka_port,
                               kafka_controller_port=controller_port, redis_port=redis_port)


def test_kafka_config_is_single_node_kraft_on_localhost(settings: StackSettings) -> None:
    props = dict(
        line.split("=", 1) for line in KafkaNode(settings).server_properties().splitlines() if not line.startswith("#")
    )
    assert props["process.roles"] == "broker,controller"
    port, cport = settings.kafka_port, settings.kafka_controller_port
    assert props["controller.quorum.bootstrap.servers"] == f"127.0.0.1:{cport}"
    assert "controller.quorum.voters" not in props
    assert props["listeners"] == f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{cport}"
    assert props["advertised.listeners"] == f"PLAINTEXT://127.0.0.1:{port}"
    assert props["log.dirs"] == str(settings.state_dir / "kafka" / "data")
    for key in ("offsets.topic.replication.factor", "transaction.state.log.replication.factor",
                "transaction.state.log.min.isr", "share.coordinator.state.topic.replication.factor"):
        assert props[key] == "1"
    assert props["group.initial.rebalance.delay.ms"] == "0"


def test_redis_runs_on_localhost_without_snapshots(settings: StackSettings) -> None:
    argv = RedisNode(dataclasses.replace(settings, redis_persist=False)).argv()
    assert argv[argv.index("--bind") + 1] == "127.0.0.1"
    assert argv[argv.index("--port") + 1] == str(settings.redis_port)
    assert argv[argv.index("--save") + 1] == ""
    assert argv[argv.index("--appendonly") + 1] == "no"


def test_up_names_what_is_missing_before_starting_anything(settings: StackSettings, tmp_path: Path) -> None:
    broken = dataclasses.replace(settings, kafka_dir=tmp_path / "nowhere", redis_server="no-such-redis-server")
    with pytest.raises(stack.StackError) as error:
        stack.up(broken)
    assert "the Kafka jars are missing" in str(error.value)
    assert "no redis-server ('no-such-redis-server')" in str(error.value)
    assert not (settings.state_dir / "kafka" / "kafka.pid").exists()


def test_down_leaves_alone_a_process_that_is_not_ours(settings: StackSettings) -> None:
    stranger = subprocess.Popen(["sleep", "30"])
    try:
        # A pid file naming a live process that started at another time: a reused pid.
        pidfile = RedisNode(settings).pidfile
        pidfile.path.parent.mkdir(parents=True)
        pidfile.path.write_text(f"{stranger.pid}\n{psutil.Process(stranger.pid).create_time() - 100:.3f}\n")
        assert pidfile.owned_process() is None
        assert stack.down(settings)["redis"] == "stale pid file removed"
        assert stranger.poll() is None
        assert not pidfile.exists()
        assert [s.state for s in stack.status(settings)] == ["stopped", "stopped"]
    finally:
        stranger.kill()
        stranger.wait()


def test_pid_file_names_our_process_and_stop_ends_it(tmp_path: Path) -> None:
    child = subprocess.Popen(["sleep", "30"])
    pidfile = PidFile(tmp_path / "x.pid")
    pidfile.write(psutil.Process(child.pid))
    process = pidfile.owned_process()
    assert process is not None and process.pid == child.pid
    began = time.monotonic()
    assert stop(process, timeout=5) == "stopped"
    assert time.monotonic() - began < 5
    assert pidfile.owned_process() is None


def test_free_ports_are_distinct() -> None:
    ports = free_ports(3)
    assert len(set(ports)) == 3


def test_a_port_handed_out_is_not_handed_out_again_before_its_service_binds_it() -> None:
    """A launcher picks a port per service, one call at a time, and each service binds its
    port only once started: a later pick must not return a port an earlier one gave (two
    rules replicas once served on one port that way). 1,000 picks from ~12,000 ports would
    repeat one almost surely if each pick only checked the port was free."""
    picked = [free_ports(1)[0] for _ in range(1000)]
    assert len(set(picked)) == len(picked)


def test_a_port_given_from_outside_is_never_handed_out_to_another_service(monkeypatch) -> None:
    """`croupier demo` given its gateway's ports (CROUPIER_GATEWAY_PORT and _GRPC_PORT) picked
    ports for the rules replicas it starts first, and one pick was the gateway's: the replica
    bound it, and the gateway then failed to start (a full test run). The launcher reserves
    the ports it is given."""
    import random

    import croupier.stack.process as process
    from croupier_gateway.launcher import Launcher

    floor = process._ephemeral_floor()
    if floor - process.PICK_FROM < 1_000:
        pytest.skip("no room below the ephemeral range to pick from")
    given = free_ports(2)
    monkeypatch.setattr(process, "_handed", {})  # as in a new process, which never handed them out
    Launcher({}, Path("/tmp/launcher-reserve-test"), http_port=given[0], grpc_port=given[1])
    # Every pick lands on a given port unless it is reserved: the picker's randomness made
    # to return them first.
    picks = iter([given[0], given[1]] * 5)
    monkeypatch.setattr(random.SystemRandom, "randrange", lambda self, a, b: next(picks, a + 1))
    assert not set(free_ports(3)) & set(given)


def test_free_ports_are_outside_the_range_outgoing_connections_take_theirs_from() -> None:
    """A port picked by bind(0) comes from the ephemeral range, where any client's outgoing
    connection may take it before the service given it binds it (a rules replica failed to
    start its metrics server that way in a full test run)."""
    import socket

    from croupier.stack.process import PICK_FROM, _ephemeral_floor

    floor = _ephemeral_floor()
    if floor - PICK_FROM < 1_000:
        pytest.skip(f"this kernel's ephemeral range starts at {floor}: no room below it to pick from")
    ports = free_ports(20)
    assert len(set(ports)) == 20
    assert all(PICK_FROM <= p < floor for p in ports), ports
    for port in ports:  # and each is free to listen on now
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))


def test_cli_has_the_stack_commands() -> None:
    parser = build_parser()
    for action in ("up", "down", "status"):
        args = parser.parse_args(["stack", action])
        assert callable(args.func)
    assert parser.parse_args(["stack", "up", "--only", "redis"]).only == ["redis"]


def test_kafka_cluster_ids_never_look_like_an_option(monkeypatch) -> None:
    # uuid4 bytes whose base64url starts with '-' (0xf8...) must be drawn again.
    import uuid

    from croupier.stack import kafka

    draws = iter([uuid.UUID(bytes=b"\xf8" + b"\x00" * 15), uuid.UUID(bytes=b"\x10" * 16)])
    monkeypatch.setattr(kafka.uuid, "uuid4", lambda: next(draws))
    cluster_id = kafka.new_cluster_id()
    assert not cluster_id.startswith("-") and len(cluster_id) == 22


def test_a_process_stays_ours_when_the_wall_clock_is_stepped(tmp_path: Path) -> None:
    """A creation time is the boot time plus the start since boot, and the kernel moves the
    boot time when the wall clock is stepped (seen here: 11 s after a VM resumed): by that
    alone the stack's own Kafka and Redis were no longer ours, `stack down` left them running
    and the next `stack up` found their ports taken. The start in ticks since boot decides."""
    child = subprocess.Popen(["sleep", "30"])
    try:
        pidfile = PidFile(tmp_path / "x.pid")
        pidfile.write(psutil.Process(child.pid))
        pid, created, ticks, boot = pidfile.read()
        assert ticks is not None and boot
        # The same file as if written 11 s before a clock step (the creation time moved).
        pidfile.path.write_text(f"{pid}\n{created - 11:.3f}\n{ticks}\n{boot}\n")
        assert pidfile.owned_process() is not None
        # Another start (a reused pid), or another boot: not ours.
        for other in (f"{ticks + 1}\n{boot}", f"{ticks}\nanother-boot"):
            pidfile.path.write_text(f"{pid}\n{created:.3f}\n{other}\n")
            assert pidfile.owned_process() is None
        # A file written before the ticks were recorded still goes by the creation time.
        pidfile.path.write_text(f"{pid}\n{created:.3f}\n")
        assert pidfile.owned_process() is not None
    finally:
        child.kill()
        child.wait()


def test_the_local_stack_runs_its_partitions_and_linger_unless_told_otherwise(monkeypatch, tmp_path) -> None:
    """`make run`, `croupier demo` and the benchmarks' stack: 2 partitions a game type and a
    25 ms linger (fewer, fuller transactions on a machine short of CPU); a setting given in
    the environment wins, and the settings' own default (10 ms) is what deployments run."""
    from croupier.rules.settings import RulesSettings
    from croupier_gateway.launcher import LOCAL_COMMIT_LINGER_MS, LOCAL_PARTITIONS, Launcher

    monkeypatch.delenv("CROUPIER_RULES_COMMIT_LINGER_MS", raising=False)
    monkeypatch.delenv("CROUPIER_PARTITIONS", raising=False)
    env = Launcher({}, tmp_path).env
    assert env["CROUPIER_RULES_COMMIT_LINGER_MS"] == str(LOCAL_COMMIT_LINGER_MS) == "25"
    assert env["CROUPIER_PARTITIONS"] == str(LOCAL_PARTITIONS)
    monkeypatch.setenv("CROUPIER_RULES_COMMIT_LINGER_MS", "10")
    assert Launcher({}, tmp_path).env["CROUPIER_RULES_COMMIT_LINGER_MS"] == "10"
    assert Launcher({"CROUPIER_RULES_COMMIT_LINGER_MS": "0"}, tmp_path).env["CROUPIER_RULES_COMMIT_LINGER_MS"] == "0"
    monkeypatch.delenv("CROUPIER_RULES_COMMIT_LINGER_MS")
    assert RulesSettings.from_env("expeditions").commit_linger_ms == 10
