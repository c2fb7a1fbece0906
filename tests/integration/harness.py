"""Run Croupier services as real processes against the test broker and Redis."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import redis as redis_lib

from croupier_gateway.launcher import free_port  # noqa: F401  (the tests' ports, as the launcher's)

ROOT = Path(__file__).resolve().parents[2]


def service_env(kafka: str, redis_url: str, prefix: str, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "CROUPIER_KAFKA_BOOTSTRAP": kafka,
        "CROUPIER_REDIS_URL": redis_url,
        "CROUPIER_TOPIC_PREFIX": prefix,
        "CROUPIER_KEY_PREFIX": prefix,
        "CROUPIER_PARTITIONS": "4",
        "CROUPIER_KAFKA_SESSION_TIMEOUT_MS": "6000",
        "CROUPIER_KAFKA_HEARTBEAT_MS": "500",
        "PYTHONUNBUFFERED": "1",
        "CROUPIER_GATEWAY_MAX_STREAMS_PER_ADDRESS": "100000",  # every test client is at 127.0.0.1
        "CROUPIER_RATE_LIMIT_ADDRESS_FACTOR": "100000",
    })
    env.update(extra)
    return env


def croupier(env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """One `croupier` command run to its end, its output captured."""
    return subprocess.run([sys.executable, "-m", "croupier.cli.main", *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


class Service:
    def __init__(self, args: list[str], env: dict[str, str], log_path: Path):
        self.args = args
        self.log_path = log_path
        self._log = open(log_path, "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "croupier.cli.main", *args], env=env, cwd=ROOT,
                                     stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)

    def tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.alive():
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self, timeout: float = 30) -> None:
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log.close()


def start_rules(game: str, kafka: str, redis_url: str, prefix: str, log_dir: Path, **extra: str) -> tuple[Service, str]:
    port = free_port()
    env = service_env(kafka, redis_url, prefix, **extra)
    svc = Service(["serve", "rules", "--game", game, "--port", str(port)], env, log_dir / f"rules-{game}-{port}.log")
    return svc, f"127.0.0.1:{port}"


def wait_owned(redis_url: str, prefix: str, game: str, partitions: int, timeout: float = 90,
               services: list[Service] = (), owners: set[str] | None = None) -> dict[str, str]:
    """Until every partition of the game type has a published owner (among `owners`)."""
    r = redis_lib.Redis.from_url(redis_url)
    deadline = time.monotonic() + timeout
    while True:
        table = {k.decode(): v.decode() for k, v in r.hgetall(f"{prefix}croupier:owners:{game}").items()}
        if len(table) == partitions and (owners is None or set(table.values()) <= owners):
            return table
        for svc in services:
            if not svc.alive():
                raise RuntimeError(f"service died:\n{svc.tail()}")
        if time.monotonic() > deadline:
            logs = "\n---\n".join(s.tail() for s in services)
            raise TimeoutError(f"owners of {game} not all published: {table}\n{logs}")
        time.sleep(0.2)


def start_projector(kafka: str, redis_url: str, prefix: str, log_dir: Path, **extra: str) -> Service:
    env = service_env(kafka, redis_url, prefix, **extra)
    return Service(["serve", "projector"], env, log_dir / f"projector-{time.monotonic_ns()}.log")


def wait_caught_up(redis_url: str, prefix: str, services: list[Service] = (), timeout: float = 90,
                   epoch: int | None = None) -> None:
    """Until the projector reports zero lag on every partition (and has seen `epoch`)."""
    r = redis_lib.Redis.from_url(redis_url)
    deadline = time.monotonic() + timeout
    stable = 0
    while True:
        lag = {k.decode(): int(v) for k, v in r.hgetall(f"{prefix}projector:lag").items()}
        ack = int(r.get(f"{prefix}projector:epoch_ack") or 0)
        if lag and sum(lag.values()) == 0 and (epoch is None or ack >= epoch):
            stable += 1
            if stable >= 3:
                return
        else:
            stable = 0
        for svc in services:
            if not svc.alive():
                raise RuntimeError(f"service died:\n{svc.tail()}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"projector lag did not reach zero: {lag}\n" + "\n---\n".join(s.tail() for s in services))
        time.sleep(0.4)


def read_model_views(host, state) -> dict[str, str]:
    """The views hash the projector must hold for a game in `state` (a fold of its log): the
    spectator's view, each seat's view and each seat's legal actions, as canonical JSON."""
    from croupier.engine.codec import canonical_json

    views = {"spectator": canonical_json(host.view(state, None))}
    for seat in range(state.seats):
        views[str(seat)] = canonical_json(host.view(state, seat))
        views[f"actions:{seat}"] = canonical_json([host.encode_action(a) for a in host.legal_actions(state, seat)])
    return views


def played_as(game_id: str, game_type: str, seed: int = 9) -> list:
    """A whole game of game_type played by random bots in process, under game_id (its hash
    chain taken again): a log to write into a topic as if the rules services had."""
    import dataclasses

    from croupier.engine import registry
    from croupier.engine.envelope import GENESIS_HASH, compute_hash
    from croupier.engine.selfplay import SelfplayReport, play_one

    spec = registry.get(game_type)
    table = play_one(spec, seats=spec.min_seats, seat_bots=["random"] * spec.min_seats,
                     options=spec.parse_options({}), seed=seed, index=0, report=SelfplayReport(game=game_type),
                     check_all_legal=False)
    out, prev = [], GENESIS_HASH
    for env in table.envelopes:
        env = dataclasses.replace(env, game_id=game_id, prev_hash=prev)
        env = dataclasses.replace(env, hash=compute_hash(prev, env.body()))
        out.append(env)
        prev = env.hash
    return out
