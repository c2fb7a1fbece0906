"""`croupier projector rebuild`."""

from __future__ import annotations

import argparse
import json
import sys


def _seconds(text: str) -> float:
    """--wait: checked before anything is dropped."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 <= value <= 86_400:  # also refuses nan and inf
        raise argparse.ArgumentTypeError(f"S is 0..86400 seconds, not {text}")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("projector", help="manage the Redis read models")
    ops = p.add_subparsers(dest="op", metavar="OP")
    ops.required = True
    r = ops.add_parser("rebuild", help="drop the read models and rebuild them from offset zero")
    r.add_argument("--wait", type=_seconds, default=0, metavar="S",
                   help="wait up to S seconds (0..86400) for the projectors to fold every partition again")
    r.set_defaults(func=cmd_rebuild)


def cmd_rebuild(args: argparse.Namespace) -> int:
    # Its own errors name the command and its operation, as `croupier serve projector: …` does
    # (main's generic handlers name the command only).
    from croupier.cli.main import EXIT_UNAVAILABLE, unreachable
    from croupier.config import ConfigError
    from croupier.projector.service import ProjectorSettings, rebuild

    try:
        out = rebuild(ProjectorSettings.from_env(), wait_s=args.wait)
    except ConfigError as exc:
        print(f"croupier projector rebuild: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        reason = unreachable(exc)
        if reason is None:
            raise
        print(f"croupier projector rebuild: {reason}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    print(json.dumps(out, sort_keys=True))
    return 0 if out.get("caught_up", True) else 1
