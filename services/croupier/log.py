"""structlog, configured once per process.

Services log JSON lines (one event per line, to stdout) so that a collector can parse them;
the CLI logs a readable console format to stderr, leaving stdout to its output. Bind
``game_id``, ``seq``, ``command_id`` and ``seat`` rather than formatting them into messages::

    from croupier import log
    log.configure(log.LogSettings.from_env())          # once, in main()
    logger = log.get_logger(__name__).bind(game_id=game_id)
    logger.info("command_accepted", seq=seq, command_id=command_id)
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

from croupier.config import LogSettings

__all__ = ["LogSettings", "configure", "configure_cli", "get_logger"]

_configured: LogSettings | None = None


class _Current:
    """sys.stdout or sys.stderr as it is when a line is written, not when logging was set
    up: whoever swaps the stream (a test's capture, an embedding program) is followed, and a
    stream closed since is never written to."""

    def __init__(self, name: str):
        self._name = name

    def _stream(self) -> Any:
        return getattr(sys, self._name)

    def write(self, text: str) -> int:
        return self._stream().write(text)

    def flush(self) -> None:
        self._stream().flush()

    def isatty(self) -> bool:
        return self._stream().isatty()


def configure(settings: LogSettings | None = None) -> None:
    """Configure structlog (and the stdlib root logger that libraries use) once.

    A second call with the same settings does nothing; with other settings it reconfigures
    (tests and the CLI may switch format).
    """
    global _configured
    settings = settings or LogSettings.from_env()
    if settings == _configured:
        return
    level = logging.getLevelNamesMapping()[settings.level.upper()]
    stream = _Current("stdout" if settings.format == "json" else "stderr")

    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.StackInfoRenderer(),
    ]
    if settings.format == "json":
        renderer: Any = structlog.processors.JSONRenderer(sort_keys=True)
        processors = [*shared, structlog.processors.format_exc_info, renderer]
    else:
        # Plain tracebacks: rich's (structlog's default when rich is installed) show every
        # frame's locals, and a rules service's frames hold a table's seed and every hand.
        renderer = structlog.dev.ConsoleRenderer(colors=stream.isatty(),
                                                 exception_formatter=structlog.dev.plain_traceback)
        processors = [*shared, renderer]

    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(stream),
        cache_logger_on_first_use=False,
    )
    # Libraries (kafka-python, grpc, redis) log through the stdlib; keep them quieter than
    # our own events and in the same stream.
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_croupier", False):
            root.removeHandler(handler)
    handler = logging.StreamHandler(stream)
    handler._croupier = True  # type: ignore[attr-defined]
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(max(level, logging.WARNING))
    _configured = settings


def configure_cli() -> None:
    """The CLI's logging: readable console lines on stderr unless CROUPIER_LOG_FORMAT says
    otherwise. kafka-python's own lines (each failed connection, each backoff) are kept for
    CROUPIER_LOG_LEVEL=debug: a command says in one line when Kafka is away."""
    settings = LogSettings.from_env(default_format="console")
    configure(settings)
    logging.getLogger("kafka").setLevel(logging.DEBUG if settings.level.lower() == "debug" else logging.CRITICAL)


def get_logger(name: str | None = None, **bound: Any) -> Any:
    logger = structlog.get_logger()
    if name:
        bound = {"logger": name, **bound}
    return logger.bind(**bound) if bound else logger
