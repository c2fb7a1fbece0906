"""Settings of the rules service, from CROUPIER_* environment variables."""

from __future__ import annotations

from dataclasses import dataclass, field

from croupier.config import PREFIX, ConfigError, Env
from croupier.config import KafkaSettings as KafkaAddress
from croupier.config import RedisSettings as RedisAddress

# One reader and one error for every CROUPIER_* value (croupier.config): these helpers take
# the variable's full name, as the services' settings spell them.
SettingsError = ConfigError


def _unprefixed(name: str) -> str:
    if not name.startswith(PREFIX):
        raise ValueError(f"{name} is not a {PREFIX}* setting")
    return name[len(PREFIX):]


def env_str(name: str, default: str) -> str:
    return Env().str(_unprefixed(name), default)


MAX_PORT = 65535


def env_int(name: str, default: int, minimum: int | None = None, maximum: int | None = None) -> int:
    """An integer setting, at least `minimum` and at most `maximum`; a *_PORT variable is a
    port, so at most 65535 unless told otherwise (a larger one used to be wrapped by the
    socket layer, 99999 listening on 34463)."""
    if maximum is None and name.endswith("_PORT"):
        maximum = MAX_PORT
    return Env().int(_unprefixed(name), default, low=minimum, high=maximum)


def env_port(name: str, default: int, minimum: int = 0) -> int:
    """A port setting: `minimum` (0: any free one, for a listener)..65535."""
    return env_int(name, default, minimum, MAX_PORT)


def redis_url_from_env() -> str:
    """CROUPIER_REDIS_URL, else the stack's host (CROUPIER_STACK_HOST, 127.0.0.1) on CROUPIER_REDIS_PORT:
    checked to be a Redis URL."""
    return RedisAddress.from_env().url


@dataclass(frozen=True)
class KafkaSettings:
    bootstrap: str = "127.0.0.1:19092"
    topic_prefix: str = ""
    partitions: int = 6
    replication_factor: int = 1
    session_timeout_ms: int = 6000
    heartbeat_interval_ms: int = 1000
    # How long a kafka-python client (topic creation, metadata, the operators' reads) waits
    # for a first broker to answer before the call fails with KafkaUnreachable.
    connect_timeout_s: int = 30
    # The largest record the writers send (librdkafka's message.max.bytes, its default): a
    # command whose records would be larger is refused `too_large` before its append. Keep
    # it within the topics' max.message.bytes (the broker's default is 1,048,588).
    max_message_bytes: int = 1_000_000

    def topic(self, game_type: str) -> str:
        return f"{self.topic_prefix}croupier.events.{game_type}"

    @classmethod
    def from_env(cls) -> "KafkaSettings":
        return cls(
            bootstrap=KafkaAddress.from_env().bootstrap_servers,
            topic_prefix=env_str("CROUPIER_TOPIC_PREFIX", ""),
            partitions=env_int("CROUPIER_PARTITIONS", 6, 1),
            replication_factor=env_int("CROUPIER_REPLICATION_FACTOR", 1, 1),
            session_timeout_ms=env_int("CROUPIER_KAFKA_SESSION_TIMEOUT_MS", 6000, 1000),
            heartbeat_interval_ms=env_int("CROUPIER_KAFKA_HEARTBEAT_MS", 1000, 100),
            connect_timeout_s=env_int("CROUPIER_KAFKA_CONNECT_TIMEOUT_S", 30, 1),
            max_message_bytes=env_int("CROUPIER_KAFKA_MAX_MESSAGE_BYTES", 1_000_000, 4096),
        )


@dataclass(frozen=True)
class RulesSettings:
    game: str
    host: str = "127.0.0.1"
    port: int = 0
    advertise: str = ""
    metrics_port: int = 0
    redis_url: str = "redis://127.0.0.1:16379/0"
    key_prefix: str = ""
    max_batch: int = 256
    dedupe_window: int = 128
    # 0: every owned partition commits on its own thread, side by side (librdkafka waits
    # without the GIL); N > 0: the partitions share N threads, so at most N transactions
    # are open at once and the others' commands wait and ride in their next one.
    append_threads: int = 0
    # Group commit's pace (ms; 0 turns it off): the most a partition's next batch waits to
    # fill after the one before it, reached as the replica's event loop nears saturation;
    # nothing while the loop is at most half busy (rules/pace.py).
    commit_interval_ms: int = 0
    # Group commit's linger (ms; 0 turns it off): the most a batch's first command waits, from
    # its arrival, for others to share its transaction; only while the partition hears from
    # commands often enough to expect some (rules/partition.py, docs/architecture.md).
    commit_linger_ms: int = 10
    # A finished game is retired from memory this long (s) after its last event: a command
    # for it is still answered (a retry with its first result, anything else `game_over`),
    # and a read of its state reloads it from the log (rules/partition.py).
    retire_after_s: int = 300
    # ... and forgotten this long (s) after it: only its id is kept (a couple of bytes), so a
    # create never reuses it and a command for it is refused as over (rules/forgotten.py).
    forget_after_s: int = 86400
    # A table not over with no event for this long (s) is ended by its owner (a ForceEnd
    # whose reason says it was abandoned), so none waits forever; 0: never.
    idle_end_after_s: int = 86400
    # A partition's games are snapshotted (snapshot.py) after this many events appended or
    # read since the last snapshot, so that its next owner reads only the log after it; 0: never.
    snapshot_every: int = 20000
    kafka: KafkaSettings = field(default_factory=KafkaSettings)

    @classmethod
    def from_env(cls, game: str, port: int | None = None) -> "RulesSettings":
        port = port if port is not None else env_int("CROUPIER_RULES_PORT", 0, 0)
        return cls(
            game=game,
            host=env_str("CROUPIER_RULES_HOST", "127.0.0.1"),
            port=port,
            advertise=env_str("CROUPIER_RULES_ADVERTISE", ""),
            metrics_port=env_int("CROUPIER_RULES_METRICS_PORT", 0, 0),
            redis_url=redis_url_from_env(),
            key_prefix=env_str("CROUPIER_KEY_PREFIX", ""),
            max_batch=env_int("CROUPIER_RULES_MAX_BATCH", 256, 1),
            dedupe_window=env_int("CROUPIER_RULES_DEDUPE_WINDOW", 128, 1),
            append_threads=env_int("CROUPIER_RULES_APPEND_THREADS", 0, 0),
            commit_interval_ms=env_int("CROUPIER_RULES_COMMIT_INTERVAL_MS", 0, 0),
            commit_linger_ms=env_int("CROUPIER_RULES_COMMIT_LINGER_MS", 10, 0),
            retire_after_s=env_int("CROUPIER_RULES_RETIRE_AFTER_S", 300, 0),
            forget_after_s=env_int("CROUPIER_RULES_FORGET_AFTER_S", 86400, 0),
            idle_end_after_s=env_int("CROUPIER_RULES_IDLE_END_AFTER_S", 86400, 0),
            snapshot_every=env_int("CROUPIER_RULES_SNAPSHOT_EVERY", 20000, 0),
            kafka=KafkaSettings.from_env(),
        )
