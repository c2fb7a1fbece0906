"""`croupier demo`: every service and demo tables played by bots (what `make run` starts)."""

from __future__ import annotations

import argparse
import sys

from croupier.cli import argtypes

MAX_TABLES_PER_GAME = 1000  # tables a person can follow; croupier loadtest plays many more
MAX_PACE_S = 3600.0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="start the rules services, projector and gateway, and demo tables played by bots")
    p.add_argument("--tables", type=argtypes.whole(1, MAX_TABLES_PER_GAME, " (croupier loadtest plays more)"), default=1,
                   help=f"demo tables per game, 1..{MAX_TABLES_PER_GAME} (default 1)")
    p.add_argument("--pace", type=argtypes.seconds(above_zero=False, high=MAX_PACE_S), default=0.4, metavar="S",
                   help=f"seconds a bot waits before each move, 0..{MAX_PACE_S:g} (default 0.4)")
    p.add_argument("--stop-stack", action="store_true", help="also stop Kafka and Redis (croupier stack down) on exit")
    p.set_defaults(func=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    from croupier.config import ConfigError
    from croupier_gateway.demo import main

    try:
        return main(tables_per_game=args.tables, pace_s=args.pace, stop_stack=args.stop_stack)
    except ConfigError as exc:  # a setting that cannot be used, told before anything starts
        print(f"croupier demo: {exc}", file=sys.stderr)
        return 2
