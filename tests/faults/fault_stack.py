"""A whole Croupier of real processes that the fault tests may break: its own Kafka and Redis
(started with the code of `croupier stack`, so they can be stopped and started again without
touching the session's broker), two rules replicas of every game type, the projector and the
gateway. Every service is a process of `croupier serve ...` (tests/integration/harness.py).
"""

from __future__ import annotations

import dataclasses
import os
import signal
import time
import uuid
from pathlib import Path

import httpx
import redis as redis_lib
from harness import Service, free_port, service_env, wait_caught_up

from croupier import stack
from croupier.config import StackSettings
from croupier.engine import registry
from croupier.stack.process import free_ports

PARTITIONS = 4
REPLICAS = 2
SIGNING_KEY = "faults-signing-key-0123456789abcdef"
OPERATOR_TOKEN = "faults-operator-token-fedcba9876543210"

# Settings of the tools (which java, which redis-server); never ports or the state directory.
_TOOL_VARS = ("CROUPIER_KAFKA_DIR", "CROUPIER_JAVA", "CROUPIER_KAFKA_HEAP", "CROUPIER_KAFKA_JVM_OPTS",
              "CROUPIER_REDIS_SERVER", "CROUPIER_STACK_START_TIMEOUT", "CROUPIER_STACK_STOP_TIMEOUT")


class FaultStack:
    def __init__(self, root: Path, games: tuple[str, ...] = tuple(registry.GAME_IDS)):
        self.root = root
        self.games = games
        self.log_dir = root / "logs"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        kafka_port, controller_port, redis_port = free_ports(3)
        self.settings = dataclasses.replace(
            StackSettings.from_env({k: v for k, v in os.environ.items() if k in _TOOL_VARS}),
            state_dir=root / "stack", kafka_port=kafka_port, kafka_controller_port=controller_port,
            redis_port=redis_port, redis_persist=False,
        )
        # A broker restarted under load on a shared 2-core machine can take over a minute.
        self.settings = dataclasses.replace(self.settings, start_timeout=max(self.settings.start_timeout, 240.0))
        self.kafka = self.settings.kafka_bootstrap
        self.redis_url = self.settings.redis_url
        self.prefix = f"f{uuid.uuid4().hex[:8]}."
        self.http_port, self.grpc_port = free_port(), free_port()
        self.rules: dict[str, list[Service]] = {g: [] for g in games}
        self.projector: Service | None = None
        self.gateway: Service | None = None
        self.all_services: list[Service] = []
        # Set by a scenario that failed: the next test gets a new stack (conftest.fault_stack),
        # so that one failure is told once, not again by every test after it.
        self.broken = False
        self.log_dirs = [self.log_dir]  # this stack's, and those of the stacks it replaced

    # -- settings -------------------------------------------------------------------------

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def grpc_address(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def env(self) -> dict[str, str]:
        return service_env(
            self.kafka, self.redis_url, self.prefix,
            CROUPIER_PARTITIONS=str(PARTITIONS),
            CROUPIER_GATEWAY_SIGNING_KEY=SIGNING_KEY,
            CROUPIER_OPERATOR_TOKEN=OPERATOR_TOKEN,
            CROUPIER_RATE_LIMIT_PER_S="100000",
            CROUPIER_RATE_LIMIT_BURST="100000",
            CROUPIER_GATEWAY_WS_AUTH_WAIT_S="0.2",
            CROUPIER_LOG_LEVEL="debug",
        )

    def redis(self) -> redis_lib.Redis:
        return redis_lib.Redis.from_url(self.redis_url, socket_timeout=5)

    # -- start and stop -------------------------------------------------------------------

    def up(self) -> None:
        stack.up(self.settings)
        from croupier.rules.settings import KafkaSettings
        from croupier.rules.store import ensure_topic

        ks = KafkaSettings(bootstrap=self.kafka, topic_prefix=self.prefix, partitions=PARTITIONS)
        for game in self.games:
            ensure_topic(ks, ks.topic(game))
        for game in self.games:
            for _ in range(REPLICAS):
                self.start_rules(game)
        self.start_projector()
        self.start_gateway()
        self.wait_ready()

    def _service(self, name: str, args: list[str]) -> Service:
        svc = Service(args, self.env(), self.log_dir / f"{name}-{time.monotonic_ns()}.log")
        self.all_services.append(svc)
        return svc

    def start_rules(self, game: str) -> Service:
        svc = self._service(f"rules-{game}", ["serve", "rules", "--game", game, "--port", str(free_port())])
        self.rules[game].append(svc)
        return svc

    def start_projector(self) -> Service:
        self.projector = self._service("projector", ["serve", "projector"])
        return self.projector

    def start_gateway(self) -> Service:
        self.gateway = self._service("gateway", ["serve", "gateway", "--port", str(self.http_port),
                                                 "--grpc-port", str(self.grpc_port)])
        return self.gateway

    def live(self) -> list[Service]:
        out = [s for group in self.rules.values() for s in group]
        out += [s for s in (self.projector, self.gateway) if s is not None]
        return out

    def wait_ready(self, timeout: float = 180, *, caught_up: bool = True) -> None:
        """Until every partition of every game type has an owner that is one of the live
        replicas' addresses, the projector has its partitions (and, with caught_up, reports
        no lag: only once the load has stopped) and the gateway answers."""
        r = self.redis()
        deadline = time.monotonic() + timeout
        try:
            while True:
                dead = [s for s in self.live() if not s.alive()]
                if dead:
                    raise RuntimeError("a service died:\n" + "\n---\n".join(s.tail() for s in dead))
                if self._all_owned(r) and self._projecting(r) and self._gateway_up():
                    break
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the fault stack is not ready (owned {self._all_owned(r)}, projecting "
                                       f"{self._projecting(r)}, gateway {self._gateway_up()}):\n" + self.tails())
                time.sleep(0.3)
        finally:
            r.close()
        if caught_up:
            wait_caught_up(self.redis_url, self.prefix, [self.projector], timeout=max(30, deadline - time.monotonic()))

    def _all_owned(self, r: redis_lib.Redis) -> bool:
        try:
            for game in self.games:
                addresses = {s.args[-1] for s in self.rules[game] if s.alive()}
                owners = {k.decode(): v.decode() for k, v in r.hgetall(f"{self.prefix}croupier:owners:{game}").items()}
                if len(owners) != PARTITIONS or not {a.rsplit(":", 1)[-1] for a in owners.values()} <= addresses:
                    return False
            return True
        except (redis_lib.RedisError, OSError):
            return False

    def _projecting(self, r: redis_lib.Redis) -> bool:
        try:
            return bool(r.hlen(f"{self.prefix}projector:lag"))
        except (redis_lib.RedisError, OSError):
            return False

    def _gateway_up(self) -> bool:
        try:
            return httpx.get(f"{self.http_url}/healthz", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def restart_kafka(self) -> None:
        """Stop the broker (SIGTERM, a controlled shutdown) and start it again on its data."""
        stack.down(self.settings, ["kafka"])
        stack.up(self.settings, ["kafka"])

    def stop_kafka(self) -> None:
        stack.down(self.settings, ["kafka"])

    def start_kafka(self) -> None:
        stack.up(self.settings, ["kafka"])

    def stop_redis(self) -> None:
        stack.down(self.settings, ["redis"])

    def start_redis(self) -> None:
        """Redis comes back empty: the stack runs it without persistence."""
        stack.up(self.settings, ["redis"])

    def diagnose(self) -> str:
        """What a failed scenario prints, since its logs stay on the machine that ran it: the
        services that died (their last lines), the thread stacks of the live projector and
        gateway (SIGUSR1: a service alive but doing nothing shows what it waits on), the
        warnings and errors each service logged last, and the projector's lag readings."""
        out = []
        for svc in self.live():
            if not svc.alive():
                out.append(f"DIED (exit {svc.proc.returncode}): {' '.join(svc.args[:3])}:\n{svc.tail(30)}")
        for svc in (self.projector, self.gateway):
            if svc is not None and svc.alive():
                out.append(f"STACKS of {' '.join(svc.args[:2])}:\n{_stacks(svc)}")
        for svc in self.live():
            lines = [line[:400] for line in svc.tail(3000).splitlines()
                     if '"level": "warning"' in line or '"level": "error"' in line or '"level": "critical"' in line
                     or "Traceback" in line or "Error" in line[:40]]
            if lines:
                keep = 12 if svc in (self.projector, self.gateway) else 4
                out.append(f"LAST WARNINGS of {' '.join(svc.args[:4])}:\n" + "\n".join(lines[-keep:]))
        try:
            r = self.redis()
            try:
                lag = {k.decode(): v.decode() for k, v in r.hgetall(f"{self.prefix}projector:lag").items()}
            finally:
                r.close()
            out.append(f"PROJECTOR LAG: {dict(sorted(lag.items()))}")
        except (redis_lib.RedisError, OSError) as exc:
            out.append(f"PROJECTOR LAG: Redis does not answer ({exc})")
        return "\n---\n".join(out)

    def tails(self, n: int = 15) -> str:
        return "\n---\n".join(f"{' '.join(s.args[:3])}:\n{s.tail(n)}" for s in self.live())

    def down(self) -> None:
        for svc in reversed(self.all_services):
            try:
                svc.stop(10)
            except Exception:
                pass
        stack.down(self.settings)


def _stacks(svc: Service, wait_s: float = 5.0) -> str:
    """The thread stacks a `croupier serve` process writes to its log on SIGUSR1."""
    try:
        start = svc.log_path.stat().st_size
        svc.proc.send_signal(signal.SIGUSR1)
    except OSError as exc:
        return f"(no stacks: {exc})"
    deadline = time.monotonic() + wait_s
    text = ""
    while time.monotonic() < deadline:
        time.sleep(0.2)
        with open(svc.log_path, "rb") as f:
            f.seek(start)
            text = f.read().decode(errors="replace")
        if "Current thread" in text:
            time.sleep(0.3)  # the rest of the dump
            with open(svc.log_path, "rb") as f:
                f.seek(start)
                text = f.read().decode(errors="replace")
            break
    dump = [line for line in text.splitlines() if line.startswith(("Thread 0x", "Current thread", "  File "))]
    return "\n".join(dump[:120]) or "(no stacks written)"
