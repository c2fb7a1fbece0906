"""Start the services as processes: a rules replica per game type, the projector and the
gateway, against a running Kafka and Redis. Used by `croupier demo` (`make run`) and by
the end-to-end tests; each service logs to its own file under `log_dir`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

import httpx
import redis as redis_lib

from croupier.stack.process import free_ports, reserve_ports


def free_port() -> int:
    """A port free now for a service to listen on (croupier.stack.process.free_ports: below
    the ephemeral range, so no client's outgoing connection takes it first)."""
    return free_ports(1)[0]


class Process:
    def __init__(self, name: str, args: list[str], env: Mapping[str, str], log_path: Path):
        self.name = name
        self.log_path = log_path
        self._log = open(log_path, "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "croupier.cli.main", *args], env=dict(env),
                                     stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def tail(self, n: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    def terminate(self) -> None:
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)

    def wait(self, timeout: float) -> None:
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        self._log.close()


# Partitions of each game's topic in a stack of this machine (`make run`, `croupier demo`,
# the benchmarks), where one replica serves each game type: fewer, busier partitions let group
# commit put more commands in each transaction (docs/performance.md). CROUPIER_PARTITIONS
# overrides it; a topic that exists keeps its partitions. Deployments that scale a game type
# out over replicas set more (compose and the k8s base: 6; the k8s prod overlay: 24), as a game
# type has at most one replica a partition.
LOCAL_PARTITIONS = 2

# Group commit's linger on that stack (CROUPIER_RULES_COMMIT_LINGER_MS overrides it; the
# setting's own default, 10 ms, is what deployments and bench/rules run). On 2 cores shared by
# the broker, Redis, the services and a load generator, the CPU is what is short: at the 2 s
# think load of 1,000 tables, 25 ms took the transactions from 0.69 to 0.44 a move and the p99
# from ~500 to ~205 ms in alternated runs (docs/performance.md, 2026-12-03).
LOCAL_COMMIT_LINGER_MS = 25


class Launcher:
    """The services of one Croupier, started and stopped together."""

    def __init__(self, env: Mapping[str, str], log_dir: Path, *, http_port: int = 0, grpc_port: int = 0):
        # Every client of the local stack is at 127.0.0.1, a load generator's thousands of
        # streams included: the per-address cap of streams is for a gateway on a network.
        self.env = {"CROUPIER_PARTITIONS": str(LOCAL_PARTITIONS),
                    "CROUPIER_RULES_COMMIT_LINGER_MS": str(LOCAL_COMMIT_LINGER_MS),
                    "CROUPIER_GATEWAY_MAX_STREAMS_PER_ADDRESS": "100000",
                    "CROUPIER_RATE_LIMIT_ADDRESS_FACTOR": "100000",
                    **os.environ, "PYTHONUNBUFFERED": "1", **env}
        self.log_dir = Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        reserve_ports(http_port, grpc_port)  # given: no other service of ours may be handed them
        self.http_port = http_port or free_port()
        self.grpc_port = grpc_port or free_port()
        self.processes: list[Process] = []
        self.metrics_ports: dict[str, int] = {}  # rules replica -> its Prometheus port
        self.prefix = self.env.get("CROUPIER_KEY_PREFIX", "")
        port = self.env.get("CROUPIER_REDIS_PORT", "16379")
        self.redis_url = self.env.get("CROUPIER_REDIS_URL") or f"redis://127.0.0.1:{port}/0"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def grpc_address(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def _start(self, name: str, args: list[str], **extra: str) -> Process:
        process = Process(name, args, {**self.env, **extra}, self.log_dir / f"{name}.log")
        self.processes.append(process)
        return process

    def prepare_topics(self, games: list[str]) -> None:
        """Create the games' topics first: a replica that subscribes to a topic it has just
        created may see no partition metadata yet and stay without partitions."""
        from croupier.rules.settings import KafkaSettings
        from croupier.rules.store import ensure_topic

        port = self.env.get("CROUPIER_KAFKA_PORT", "19092")
        settings = KafkaSettings(bootstrap=self.env.get("CROUPIER_KAFKA_BOOTSTRAP") or f"127.0.0.1:{port}",
                                 topic_prefix=self.env.get("CROUPIER_TOPIC_PREFIX", ""),
                                 partitions=int(self.env["CROUPIER_PARTITIONS"]))
        for game in games:
            ensure_topic(settings, settings.topic(game))

    def start(self, games: Iterable[str], *, owned_within_s: float = 30.0) -> None:
        """Start a rules replica per game, the projector and the gateway, all at once. A replica
        whose partitions do not all get an owner within owned_within_s (a rebalance during its
        start can leave one without) is started again, once."""
        self.games = list(games)
        self.prepare_topics(self.games)
        rules = {game: self._start_rules(game) for game in self.games}
        self._start("projector", ["serve", "projector"])
        # /metrics on the HTTP port, whatever the shell sets: `make run` prints it there, and
        # bench/loadtest scrapes it there.
        self._start("gateway", ["serve", "gateway", "--port", str(self.http_port), "--grpc-port", str(self.grpc_port)],
                    CROUPIER_GATEWAY_METRICS_PORT="0")
        r = redis_lib.Redis.from_url(self.redis_url)
        try:
            deadline = time.monotonic() + owned_within_s
            waiting = set(self.games)
            while waiting and time.monotonic() < deadline:
                for game in list(waiting):
                    if not rules[game].alive():
                        raise RuntimeError(f"{rules[game].name} exited:\n{rules[game].tail()}")
                    if self._owned(r, game):
                        waiting.discard(game)
                time.sleep(0.2)
            for game in waiting:
                print(f"launcher: {game}'s partitions are not all owned after {owned_within_s:.0f} s; "
                      "starting its rules replica again", file=sys.stderr, flush=True)
                rules[game].terminate()
                rules[game].wait(10)
                self.processes.remove(rules[game])
                self._start_rules(game)
        finally:
            r.close()

    def _start_rules(self, game: str) -> Process:
        name, metrics_port = f"rules-{game}", free_port()
        self.metrics_ports[name] = metrics_port
        return self._start(name, ["serve", "rules", "--game", game, "--port", str(free_port())],
                           CROUPIER_RULES_METRICS_PORT=str(metrics_port))

    def _owned(self, r: redis_lib.Redis, game: str) -> bool:
        count = r.get(f"{self.prefix}croupier:partitions:{game}")
        return bool(count) and r.hlen(f"{self.prefix}croupier:owners:{game}") >= int(count)

    def wait_ready(self, timeout_s: float = 90.0) -> None:
        """Until every game type's partitions all have an owner, the projector reports its lag
        (it has partitions) and the gateway answers."""
        r = redis_lib.Redis.from_url(self.redis_url)
        deadline = time.monotonic() + timeout_s
        pending = set(self.games)
        try:
            while True:
                for p in self.processes:
                    if not p.alive():
                        raise RuntimeError(f"{p.name} exited:\n{p.tail()}")
                for game in list(pending):
                    if self._owned(r, game):
                        pending.discard(game)
                if not pending and r.hlen(f"{self.prefix}projector:lag"):  # the projector has its partitions
                    try:
                        if httpx.get(f"{self.http_url}/healthz", timeout=2).status_code == 200:
                            return
                    except httpx.HTTPError:
                        pass
                if time.monotonic() > deadline:
                    logs = "\n---\n".join(f"{p.name}:\n{p.tail(15)}" for p in self.processes)
                    raise TimeoutError(f"services not ready after {timeout_s} s (waiting for {sorted(pending)})\n{logs}")
                time.sleep(0.25)
        finally:
            r.close()

    def stop(self, timeout_s: float = 20.0) -> None:
        # The gateway first (no new commands), then the rules replicas and the projector.
        for p in reversed(self.processes):
            p.terminate()
        deadline = time.monotonic() + timeout_s
        for p in self.processes:
            p.wait(max(0.5, deadline - time.monotonic()))
        self.processes.clear()
