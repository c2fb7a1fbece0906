"""A Redis server (Debian's redis-server package) on the stack's port, data under the state dir."""

from __future__ import annotations

import shutil
from pathlib import Path

import psutil

from croupier.config import StackSettings
from croupier.stack.process import PidFile, port_open, spawn


class RedisNode:
    name = "redis"

    def __init__(self, settings: StackSettings) -> None:
        self.settings = settings
        self.root = settings.state_dir / "redis"
        self.pidfile = PidFile(self.root / "redis.pid")
        self.log_path = self.root / "redis.log"

    @property
    def ports(self) -> list[int]:
        return [self.settings.redis_port]

    @property
    def endpoint(self) -> str:
        return self.settings.redis_url

    @property
    def log_files(self) -> list[Path]:
        return [self.log_path]

    def preflight(self) -> list[str]:
        if shutil.which(self.settings.redis_server) is None:
            return [
                f"no redis-server ({self.settings.redis_server!r}): run `make setup` "
                "(apt-get install redis-server) or set CROUPIER_REDIS_SERVER"
            ]
        return []

    def argv(self) -> list[str]:
        s = self.settings
        persistence = ["--appendonly", "yes", "--appendfsync", "everysec"] if s.redis_persist else ["--appendonly", "no"]
        return [
            s.redis_server,
            "--bind", s.host,
            "--port", str(s.redis_port),
            "--protected-mode", "yes",
            "--daemonize", "no",
            "--dir", str(self.root),
            "--logfile", str(self.log_path),
            "--save", "",
            *persistence,
        ]

    def start(self) -> psutil.Process:
        self.root.mkdir(parents=True, exist_ok=True)
        return spawn(self.argv(), log_path=self.root / "stdout.log", cwd=self.root)

    def probe(self, timeout: float = 1.0) -> bool:
        """True when Redis answers PING."""
        if not port_open(self.settings.host, self.settings.redis_port):
            return False
        import redis

        client = redis.Redis(
            host=self.settings.host, port=self.settings.redis_port,
            socket_connect_timeout=timeout, socket_timeout=timeout,
        )
        try:
            return bool(client.ping())
        except (redis.RedisError, OSError):
            return False
        finally:
            client.close()
