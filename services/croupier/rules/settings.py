"""Settings of the rules service, from CROUPIER_* environment variables."""

from __future__ import annotations

import os
from dataclasses import dataclass, field


class SettingsError(ValueError):
    pass


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_int(name: str, default: int, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise SettingsError(f"{name} must be an integer, not {raw!r}") from None
    if minimum is not None and value < minimum:
        raise SettingsError(f"{name} must be at least {minimum}, not {value}")
    return value


@dataclass(frozen=True)
class KafkaSettings:
    bootstrap: str = "127.0.0.1:19092"
    topic_prefix: str = ""
    partitions: int = 6
    replication_factor: int = 1
    session_timeout_ms: int = 6000
    heartbeat_interval_ms: int = 1000

    def topic(self, game_type: str) -> str:
        return f"{self.topic_prefix}croupier.events.{game_type}"

    @classmethod
    def from_env(cls) -> "KafkaSettings":
        port = env_int("CROUPIER_KAFKA_PORT", 19092, 1)
        return cls(
            bootstrap=env_str("CROUPIER_KAFKA_BOOTSTRAP", f"127.0.0.1:{port}"),
            topic_prefix=env_str("CROUPIER_TOPIC_PREFIX", ""),
            partitions=env_int("CROUPIER_PARTITIONS", 6, 1),
            replication_factor=env_int("CROUPIER_REPLICATION_FACTOR", 1, 1),
            session_timeout_ms=env_int("CROUPIER_KAFKA_SESSION_TIMEOUT_MS", 6000, 1000),
            heartbeat_interval_ms=env_int("CROUPIER_KAFKA_HEARTBEAT_MS", 1000, 100),
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
    kafka: KafkaSettings = field(default_factory=KafkaSettings)

    @classmethod
    def from_env(cls, game: str, port: int | None = None) -> "RulesSettings":
        redis_port = env_int("CROUPIER_REDIS_PORT", 16379, 1)
        port = port if port is not None else env_int("CROUPIER_RULES_PORT", 0, 0)
        return cls(
            game=game,
            host=env_str("CROUPIER_RULES_HOST", "127.0.0.1"),
            port=port,
            advertise=env_str("CROUPIER_RULES_ADVERTISE", ""),
            metrics_port=env_int("CROUPIER_RULES_METRICS_PORT", 0, 0),
            redis_url=env_str("CROUPIER_REDIS_URL", f"redis://127.0.0.1:{redis_port}/0"),
            key_prefix=env_str("CROUPIER_KEY_PREFIX", ""),
            max_batch=env_int("CROUPIER_RULES_MAX_BATCH", 256, 1),
            dedupe_window=env_int("CROUPIER_RULES_DEDUPE_WINDOW", 128, 1),
            kafka=KafkaSettings.from_env(),
        )
