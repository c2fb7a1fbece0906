"""Settings of the gateway, from CROUPIER_* environment variables, with laptop defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import structlog

from croupier.rules.settings import SettingsError, env_int, env_port, env_str, redis_url_from_env

log = structlog.get_logger("croupier.gateway")

# Good enough for a laptop, useless anywhere else: the gateway warns when it signs with it.
DEV_SIGNING_KEY = "croupier-dev-signing-key-change-me"
# Keys anyone can read in this repository (the defaults of deploy/compose.yaml and of the k8s
# dev overlay's Secret): seat tokens signed with them are forgeable, so they are warned about.
PUBLIC_SIGNING_KEYS = frozenset({DEV_SIGNING_KEY, "compose-dev-signing-key-change-me", "dev-only-signing-key-not-secret"})


def env_float(name: str, default: float, minimum: float | None = None) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a number, not {raw!r}") from None
    if minimum is not None and value < minimum:
        raise SettingsError(f"{name} must be at least {minimum}, not {value}")
    return value


def env_list(name: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in os.environ.get(name, "").split(",") if item.strip())


def _connection_class() -> type:
    """redis-py's asyncio connection, bounding a write with asyncio.timeout rather than
    asyncio.wait_for, which in Python 3.11 makes a Task for every command sent."""
    import asyncio

    from redis import asyncio as aioredis
    from redis.exceptions import TimeoutError as RedisTimeoutError

    class Connection(aioredis.Connection):
        async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
            timeout = self.socket_timeout
            if not timeout:
                return await super().send_packed_command(command, check_health)
            self.socket_timeout = None  # the write's own bound is the one below
            try:
                async with asyncio.timeout(timeout):
                    await super().send_packed_command(command, check_health)
            except TimeoutError:
                raise RedisTimeoutError("Timeout writing to socket") from None
            finally:
                self.socket_timeout = timeout

    return Connection


@dataclass(frozen=True)
class GatewaySettings:
    host: str = "127.0.0.1"
    port: int = 18080
    grpc_port: int = 18081
    # 0: Prometheus's /metrics on the HTTP port. Otherwise a listener of its own on this port,
    # and the HTTP port has no /metrics: an Ingress that sends every path to the HTTP port
    # (k8s/base/gateway.yaml) must not publish the gateway's metrics to the internet.
    metrics_port: int = 0
    signing_key: str = DEV_SIGNING_KEY
    # Tokens signed with the previous key still verify until they expire: rotate without a cut.
    previous_signing_key: str = ""
    # Empty: the operator routes answer 401 to everyone.
    operator_token: str = ""
    token_ttl_s: int = 12 * 3600
    rate_limit_per_s: float = 50.0
    rate_limit_burst: int = 100
    # Every request with a seat token also counts against its address, at this many times the
    # seat's rate: seat tokens cost one join each, and would otherwise multiply a client's
    # rate without end (the local stack's launcher raises it: its load generator is one address).
    rate_limit_address_factor: float = 10.0
    max_body_bytes: int = 64 * 1024
    cors_origins: tuple[str, ...] = ()
    redis_url: str = "redis://127.0.0.1:16379/0"
    key_prefix: str = ""
    # How long a command may take, redirects and retries included, before 503.
    rules_deadline_s: float = 5.0
    # How long the owners of partitions are cached before Redis is asked again.
    owners_ttl_s: float = 1.0
    # How long a write waits for the projector before it answers (so a read that follows
    # sees the write); the write has happened either way.
    projection_wait_s: float = 2.0
    # A stream re-reads its game at least this often even without a notification.
    stream_poll_s: float = 5.0
    # A stream without a token in the query waits this long for {"token": ...} first.
    ws_auth_wait_s: float = 1.0
    max_streams: int = 10_000
    # Streams one client address may hold at once (WebSocket, StreamUpdates and Play): one
    # client must not take every slot. A load generator needs more (the local stack's
    # launcher raises it).
    max_streams_per_address: int = 200
    # The proxies whose X-Forwarded-For names the client (comma-separated addresses, or "*"):
    # behind an ingress, the ingress's own address would put every client in one bucket of
    # the rate limit and the per-address stream cap. Trust only what stands in front of the
    # gateway (k8s: with a NetworkPolicy that admits nothing else).
    forwarded_allow_ips: str = "127.0.0.1"
    # Redis connections the gateway may hold at once; a request that finds them all busy
    # waits for one (up to redis_wait_s) rather than failing. (redis-py 8's asyncio pool
    # holds at most 100 and raises MaxConnectionsError beyond: a 1,000-table load test got
    # 503 store_unavailable for 1 command in 4.)
    redis_connections: int = 256
    redis_wait_s: float = 5.0
    # How long a seat holder read from Redis may answer for it (holders.py): only while the
    # game's change feed is live here, which retires it at once on a holder change. 0: off.
    seat_cache_s: float = 5.0
    # Moves go to each rules replica over one open HandleCommands stream (routing.py); 0:
    # a unary HandleCommand call per move, as before the stream existed.
    command_streams: bool = True

    def redis_client(self) -> Any:
        """The gateway's asyncio Redis client: a pool of at most redis_connections, where a
        request waits up to redis_wait_s for a free connection."""
        from redis import asyncio as aioredis

        extra = {"connection_class": _connection_class()} if self.redis_url.startswith("redis://") else {}
        pool = aioredis.BlockingConnectionPool.from_url(
            self.redis_url, max_connections=self.redis_connections, timeout=self.redis_wait_s,
            socket_timeout=5, health_check_interval=30, **extra)
        return aioredis.Redis(connection_pool=pool)

    @property
    def dev_key(self) -> bool:
        return self.signing_key in PUBLIC_SIGNING_KEYS

    @classmethod
    def from_env(cls) -> "GatewaySettings":
        settings = cls(
            host=env_str("CROUPIER_GATEWAY_HOST", "127.0.0.1"),
            port=env_port("CROUPIER_GATEWAY_PORT", 18080),
            grpc_port=env_port("CROUPIER_GATEWAY_GRPC_PORT", 18081),
            metrics_port=env_port("CROUPIER_GATEWAY_METRICS_PORT", 0),
            signing_key=env_str("CROUPIER_GATEWAY_SIGNING_KEY", "") or DEV_SIGNING_KEY,
            previous_signing_key=env_str("CROUPIER_GATEWAY_PREVIOUS_SIGNING_KEY", ""),
            operator_token=env_str("CROUPIER_OPERATOR_TOKEN", ""),
            token_ttl_s=env_int("CROUPIER_TOKEN_TTL_S", 12 * 3600, 1),
            rate_limit_per_s=env_float("CROUPIER_RATE_LIMIT_PER_S", 50.0, 0.001),
            rate_limit_burst=env_int("CROUPIER_RATE_LIMIT_BURST", 100, 1),
            rate_limit_address_factor=env_float("CROUPIER_RATE_LIMIT_ADDRESS_FACTOR", 10.0, 1.0),
            max_body_bytes=env_int("CROUPIER_MAX_BODY_BYTES", 64 * 1024, 256),
            cors_origins=env_list("CROUPIER_CORS_ORIGINS"),
            redis_url=redis_url_from_env(),
            key_prefix=env_str("CROUPIER_KEY_PREFIX", ""),
            rules_deadline_s=env_float("CROUPIER_GATEWAY_RULES_DEADLINE_S", 5.0, 0.1),
            owners_ttl_s=env_float("CROUPIER_GATEWAY_OWNERS_TTL_S", 1.0, 0.0),
            projection_wait_s=env_float("CROUPIER_GATEWAY_PROJECTION_WAIT_S", 2.0, 0.0),
            stream_poll_s=env_float("CROUPIER_GATEWAY_STREAM_POLL_S", 5.0, 0.05),
            ws_auth_wait_s=env_float("CROUPIER_GATEWAY_WS_AUTH_WAIT_S", 1.0, 0.0),
            max_streams=env_int("CROUPIER_GATEWAY_MAX_STREAMS", 10_000, 1),
            max_streams_per_address=env_int("CROUPIER_GATEWAY_MAX_STREAMS_PER_ADDRESS", 200, 1),
            forwarded_allow_ips=env_str("CROUPIER_GATEWAY_FORWARDED_ALLOW_IPS", "127.0.0.1"),
            redis_connections=env_int("CROUPIER_GATEWAY_REDIS_CONNECTIONS", 256, 2),
            redis_wait_s=env_float("CROUPIER_GATEWAY_REDIS_WAIT_S", 5.0, 0.01),
            seat_cache_s=env_float("CROUPIER_GATEWAY_SEAT_CACHE_S", 5.0, 0.0),
            command_streams=env_int("CROUPIER_GATEWAY_COMMAND_STREAMS", 1, 0) > 0,
        )
        if settings.dev_key:
            log.warning("dev_signing_key", hint="set CROUPIER_GATEWAY_SIGNING_KEY: seat tokens are forgeable with a key "
                        "published in this repository (the built-in, compose or k8s dev default)")
        if len(settings.signing_key) < 16:
            raise SettingsError("CROUPIER_GATEWAY_SIGNING_KEY must be at least 16 characters")
        if settings.previous_signing_key and len(settings.previous_signing_key) < 16:
            raise SettingsError("CROUPIER_GATEWAY_PREVIOUS_SIGNING_KEY must be at least 16 characters (or unset)")
        return settings
