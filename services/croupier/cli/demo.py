"""`croupier demo`: every service and demo tables played by bots (what `make run` starts)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="start the rules services, projector and gateway, and demo tables played by bots")
    p.add_argument("--tables", type=int, default=1, help="demo tables per game (default 1)")
    p.add_argument("--pace", type=float, default=0.4, metavar="S", help="seconds a bot waits before each move")
    p.add_argument("--stop-stack", action="store_true", help="also stop Kafka and Redis (croupier stack down) on exit")
    p.set_defaults(func=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    from croupier_gateway.demo import main

    return main(tables_per_game=args.tables, pace_s=args.pace, stop_stack=args.stop_stack)
