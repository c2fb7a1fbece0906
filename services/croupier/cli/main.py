"""Entry point of the `croupier` console script.

Each sub-command lives in its own module with a ``register(subparsers)`` function that
adds its parser and sets ``func`` (called with the parsed args, returns an exit code).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from croupier import log
from croupier.config import ConfigError

# Modules of croupier.cli that register sub-commands, in the order `--help` lists them.
COMMAND_MODULES = [
    "games",
    "stack",
    "serve",
    "projector",
    "replay",
    "status",
    "play",
    "demo",
    "loadtest",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="croupier",
        description="Croupier: host, replay, audit and load-test card games.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"croupier.cli.{name}")
        module.register(sub)
    return parser


# sysexits' EX_TEMPFAIL: Kafka or Redis did not answer; the same command may work later.
EXIT_UNAVAILABLE = 75


def unreachable(exc: BaseException) -> str | None:
    """Words for an operator when exc says Kafka or Redis is away (not that the command was
    wrong), else None."""
    import redis

    from croupier.rules.store import LOG_UNREADABLE, KafkaUnreachable

    if isinstance(exc, KafkaUnreachable):
        return str(exc)
    if isinstance(exc, LOG_UNREADABLE):  # a read of the log that failed or stalled midway
        return f"the Kafka log cannot be read now: {exc}"
    if isinstance(exc, (redis.ConnectionError, redis.TimeoutError)):
        return f"cannot reach Redis (CROUPIER_REDIS_URL): {exc}"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        log.configure_cli()
        return int(args.func(args) or 0)
    except ConfigError as exc:
        print(f"croupier {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `croupier replay ... | head`: the reader has gone; nothing to say
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:
        reason = unreachable(exc)
        if reason is None:
            raise
        words = [args.command, getattr(args, "service", None)]  # `croupier serve projector: …`
        print(f"croupier {' '.join(w for w in words if w)}: {reason}", file=sys.stderr)
        return EXIT_UNAVAILABLE


if __name__ == "__main__":
    sys.exit(main())
