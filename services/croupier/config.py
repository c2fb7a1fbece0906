"""Typed settings read from ``CROUPIER_*`` environment variables.

Every process builds its settings once, at start, with ``<Settings>.from_env()``; nothing else
reads the environment. The defaults work on a laptop: the local stack listens on 127.0.0.1
on ports that do not clash with the usual ones (19092, 19093, 16379), and clients find it
there. A bad value fails at once with a :class:`ConfigError` that names the variable.

Services compose their own settings object from the pieces here (``KafkaSettings``,
``RedisSettings``, ``LogSettings``) plus their own fields.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from croupier.numbers import parse_int

PREFIX = "CROUPIER_"

DEFAULT_KAFKA_PORT = 19092
DEFAULT_KAFKA_CONTROLLER_PORT = 19093
DEFAULT_REDIS_PORT = 16379
DEFAULT_HOST = "127.0.0.1"

# The repository root, when croupier runs from a checkout (the editable install): the
# local stack finds deploy/kafka there.
_REPO_ROOT = Path(__file__).resolve().parents[2]


class ConfigError(ValueError):
    """A CROUPIER_* variable holds a value that cannot be used."""


class Env:
    """Reads typed values from an environment mapping, naming the variable on error."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._environ = os.environ if environ is None else environ

    def raw(self, name: str) -> str | None:
        value = self._environ.get(PREFIX + name)
        if value is None or value.strip() == "":
            return None
        return value.strip()

    def _fail(self, name: str, value: str, expected: str) -> ConfigError:
        return ConfigError(f"{PREFIX}{name}={value!r} is not valid: expected {expected}")

    def str(self, name: str, default: str) -> str:
        value = self.raw(name)
        return default if value is None else value

    def int(self, name: str, default: int, *, low: int | None = None, high: int | None = None) -> int:
        value = self.raw(name)
        if value is None:
            return default
        number = parse_int(value)
        if number is None:
            raise self._fail(name, value, "an integer")
        if (low is not None and number < low) or (high is not None and number > high):
            if high is None:
                raise self._fail(name, value, f"an integer of at least {low}")
            if low is None:
                raise self._fail(name, value, f"an integer of at most {high}")
            raise self._fail(name, value, f"an integer in [{low}, {high}]")
        return number

    def float(self, name: str, default: float, *, above: float = 0.0) -> float:
        value = self.raw(name)
        if value is None:
            return default
        try:
            number = float(value)
        except ValueError:
            raise self._fail(name, value, "a number") from None
        if not number > above:
            raise self._fail(name, value, f"a number greater than {above}")
        return number

    def port(self, name: str, default: int) -> int:
        return self.int(name, default, low=1, high=65535)

    def bool(self, name: str, default: bool) -> bool:
        value = self.raw(name)
        if value is None:
            return default
        lowered = value.lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise self._fail(name, value, "true or false")

    def choice(self, name: str, default: str, choices: tuple[str, ...]) -> str:
        value = self.raw(name)
        if value is None:
            return default
        if value.lower() not in choices:
            raise self._fail(name, value, "one of " + ", ".join(choices))
        return value.lower()

    def path(self, name: str, default: Path) -> Path:
        value = self.raw(name)
        return (Path(value) if value is not None else default).expanduser().absolute()


@dataclass(frozen=True)
class LogSettings:
    level: str = "info"
    format: str = "json"  # json lines for services, console for people

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, default_format: str = "json") -> LogSettings:
        env = Env(environ)
        return cls(
            level=env.choice("LOG_LEVEL", "info", ("debug", "info", "warning", "error")),
            format=env.choice("LOG_FORMAT", default_format, ("json", "console")),
        )


@dataclass(frozen=True)
class GcSettings:
    """The cyclic garbage collector of a service process (croupier.runtime.tune_gc).

    CPython's default thresholds (700, 10, 10) collect the young generation every ~700 net
    allocations of container objects; a service with thousands of requests in flight keeps
    that many alive at once, so it collected ~55 times a second and promoted live request
    objects into the old generation, whose full collections took 100+ ms each on the
    gateway (measured under `croupier loadtest`, docs/performance.md). Higher thresholds
    make collections rarer; the objects alive after start-up are frozen out of them.
    ``CROUPIER_GC_THRESHOLD=700,10,10`` restores CPython's defaults; ``0`` turns automatic
    collection off (not recommended: reference cycles would then never be freed)."""

    threshold: tuple[int, int, int] = (20_000, 20, 20)
    freeze: bool = True

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> GcSettings:
        env = Env(environ)
        raw = env.str("GC_THRESHOLD", ",".join(map(str, cls.threshold))).strip()
        parts = [p.strip() for p in raw.split(",")]
        if raw == "0":
            parts = ["0", "0", "0"]
        numbers = [parse_int(p) for p in parts]
        if len(parts) != 3 or any(n is None or not 0 <= n <= 10_000_000 for n in numbers):
            raise env._fail("GC_THRESHOLD", raw, "three integers gen0,gen1,gen2 (e.g. 20000,20,20), or 0 for off")
        return cls(threshold=(numbers[0], numbers[1], numbers[2]), freeze=env.bool("GC_FREEZE", True))


EVENT_LOOPS = ("uvloop", "asyncio")


def event_loop(environ: Mapping[str, str] | None = None) -> str:
    """The event loop a service or load-generator process runs on (croupier.runtime.run):
    ``uvloop`` (the default; libuv's loop, written in Cython) or ``asyncio`` (the standard
    library's). Under `croupier loadtest` uvloop took about 5 % less CPU a move over the
    whole stack, most of it in the gateway and the generator (docs/performance.md);
    ``CROUPIER_EVENT_LOOP=asyncio`` is the way back should a platform lack it."""
    env = Env(environ)
    name = env.str("EVENT_LOOP", EVENT_LOOPS[0]).lower()
    if name not in EVENT_LOOPS:
        raise env._fail("EVENT_LOOP", name, " or ".join(EVENT_LOOPS))
    return name


@dataclass(frozen=True)
class KafkaSettings:
    """Where clients find Kafka."""

    bootstrap_servers: str = f"{DEFAULT_HOST}:{DEFAULT_KAFKA_PORT}"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> KafkaSettings:
        env = Env(environ)
        port = env.port("KAFKA_PORT", DEFAULT_KAFKA_PORT)
        # by default, where `croupier stack` puts the broker: its host and port settings
        bootstrap = env.str("KAFKA_BOOTSTRAP", f"{env.str('STACK_HOST', DEFAULT_HOST)}:{port}")
        for server in bootstrap.split(","):
            address = re.fullmatch(r"[^\s:,]+:(\d{1,5})", server.strip())
            if not address or not 1 <= int(address.group(1)) <= 65535:
                raise ConfigError(
                    f"{PREFIX}KAFKA_BOOTSTRAP={bootstrap!r} is not valid: expected host:port[,host:port...] with ports 1..65535"
                )
        return cls(bootstrap_servers=bootstrap)


@dataclass(frozen=True)
class RedisSettings:
    """Where clients find Redis."""

    url: str = f"redis://{DEFAULT_HOST}:{DEFAULT_REDIS_PORT}/0"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> RedisSettings:
        env = Env(environ)
        port = env.port("REDIS_PORT", DEFAULT_REDIS_PORT)
        url = env.str("REDIS_URL", f"redis://{env.str('STACK_HOST', DEFAULT_HOST)}:{port}/0")
        problem = _redis_url_problem(url)
        if problem:
            raise ConfigError(f"{PREFIX}REDIS_URL={url!r} is not valid: {problem}; expected redis://host:port/db")
        return cls(url=url)


def _redis_url_problem(url: str) -> str | None:
    """What is wrong with a Redis URL, or None. A port out of 1..65535 or a database that is
    not a number used to reach redis-py, which failed on the first command with a message
    that named neither the setting nor the fault."""
    if url.startswith("unix://"):
        return None if len(url) > len("unix://") else "no socket path"
    if not re.match(r"^rediss?://", url):
        return "the scheme must be redis://, rediss:// or unix://"
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return "the port must be a number in 1..65535"
    if port == 0:
        return "the port must be a number in 1..65535"
    if not parts.hostname:
        return "no host"
    if parts.path not in ("", "/") and not re.fullmatch(r"/\d+", parts.path):
        return f"the database {parts.path[1:]!r} is not a number"
    return None


def _in_checkout() -> bool:
    """Whether croupier runs from a checkout (the editable install), whose root then holds
    the local stack's files wherever the command is run from."""
    return (_REPO_ROOT / "deploy" / "kafka").is_dir()


def _default_kafka_dir() -> Path:
    return (_REPO_ROOT if _in_checkout() else Path.cwd()) / "deploy" / "kafka"


def _default_state_dir() -> Path:
    """The checkout's .croupier, as the Kafka directory is found: `croupier stack status` run
    from another directory sees the stack `make up` started (and `up` there starts no second
    one); outside a checkout, .croupier in the current directory."""
    return (_REPO_ROOT if _in_checkout() else Path.cwd()) / ".croupier"


@dataclass(frozen=True)
class StackSettings:
    """The local stack of `croupier stack`: one Kafka (KRaft) and one Redis process."""

    state_dir: Path
    kafka_dir: Path  # holds pom.xml, log4j2.xml and lib/ (the jars `make setup` fetched)
    host: str = DEFAULT_HOST
    kafka_port: int = DEFAULT_KAFKA_PORT
    kafka_controller_port: int = DEFAULT_KAFKA_CONTROLLER_PORT
    redis_port: int = DEFAULT_REDIS_PORT
    kafka_heap: str = "512m"
    # Full tiered JIT (C2): once warm, a broker under load spends about a third less CPU per
    # transaction than with C1 alone (-XX:TieredStopAtLevel=1, which starts quicker).
    kafka_jvm_opts: str = "-XX:+UseSerialGC -XX:+ExitOnOutOfMemoryError"
    java: str = "java"
    redis_server: str = "redis-server"
    redis_persist: bool = True  # append-only file under the state dir; tests turn it off
    start_timeout: float = 60.0
    stop_timeout: float = 30.0

    def __post_init__(self) -> None:
        ports = {
            "KAFKA_PORT": self.kafka_port,
            "KAFKA_CONTROLLER_PORT": self.kafka_controller_port,
            "REDIS_PORT": self.redis_port,
        }
        if len(set(ports.values())) != len(ports):
            listed = ", ".join(f"{PREFIX}{k}={v}" for k, v in ports.items())
            raise ConfigError(f"the stack's ports must differ: {listed}")
        if not re.fullmatch(r"\d+[kKmMgG]?", self.kafka_heap):
            raise ConfigError(f"{PREFIX}KAFKA_HEAP={self.kafka_heap!r} is not valid: expected a JVM size like 512m")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> StackSettings:
        env = Env(environ)
        defaults = cls(state_dir=Path(".croupier"), kafka_dir=Path("deploy/kafka"))
        return cls(
            state_dir=env.path("STATE_DIR", _default_state_dir()),
            kafka_dir=env.path("KAFKA_DIR", _default_kafka_dir()),
            host=env.str("STACK_HOST", defaults.host),
            kafka_port=env.port("KAFKA_PORT", defaults.kafka_port),
            kafka_controller_port=env.port("KAFKA_CONTROLLER_PORT", defaults.kafka_controller_port),
            redis_port=env.port("REDIS_PORT", defaults.redis_port),
            kafka_heap=env.str("KAFKA_HEAP", defaults.kafka_heap),
            kafka_jvm_opts=env.str("KAFKA_JVM_OPTS", defaults.kafka_jvm_opts),
            java=env.str("JAVA", defaults.java),
            redis_server=env.str("REDIS_SERVER", defaults.redis_server),
            redis_persist=env.bool("REDIS_PERSIST", defaults.redis_persist),
            start_timeout=env.float("STACK_START_TIMEOUT", defaults.start_timeout),
            stop_timeout=env.float("STACK_STOP_TIMEOUT", defaults.stop_timeout),
        )

    @property
    def kafka_bootstrap(self) -> str:
        return f"{self.host}:{self.kafka_port}"

    @property
    def redis_url(self) -> str:
        return f"redis://{self.host}:{self.redis_port}/0"
