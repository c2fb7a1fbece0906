"""`croupier stack up|down|status`: the local Kafka and Redis."""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys

from croupier import stack
from croupier.config import ConfigError, StackSettings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("stack", help="run the local Kafka (KRaft) and Redis: up, down, status")
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True

    def components(parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--only", action="append", choices=stack.COMPONENTS, default=None,
            help="act on this component only (repeatable; default: all)",
        )

    up = actions.add_parser("up", help="start what is not running and wait until it answers")
    components(up)
    up.add_argument("--timeout", type=_seconds, default=None,
                    help="seconds to wait for readiness (default CROUPIER_STACK_START_TIMEOUT or 60)")
    up.add_argument("--quiet", action="store_true", help="print only the timing line")
    up.set_defaults(func=cmd_up)

    down = actions.add_parser("down", help="stop the processes that `up` started")
    components(down)
    down.set_defaults(func=cmd_down)

    st = actions.add_parser("status", help="what runs and whether it answers (exit 3 if not all up)")
    components(st)
    st.add_argument("--json", action="store_true", help="machine-readable output")
    st.set_defaults(func=cmd_status)


def _seconds(text: str) -> float:
    """--timeout: seconds, more than 0 and finite (nan waited for ever, and a negative
    wait stopped at once what `up` had just started)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"the timeout is a number of seconds above 0, not {text}")
    return value


def _settings() -> StackSettings:
    return StackSettings.from_env()


def _fail(exc: Exception) -> int:
    """2 for a setting that cannot be used (bad input, as everywhere in the CLI), 1 for what
    went wrong doing the work (a port taken, a start that timed out, a file that could not be
    written under the state directory)."""
    if isinstance(exc, OSError) and exc.filename:
        exc = stack.StackError(f"{exc.filename}: {exc.strerror or exc}")
    print(f"croupier stack: {exc}", file=sys.stderr)
    return 2 if isinstance(exc, ConfigError) else 1


def how_to_reach(settings: StackSettings, components: list[str]) -> list[str]:
    lines = []
    if "kafka" in components:
        lines.append(f"  Kafka  {settings.kafka_bootstrap}   (kcat -L -b {settings.kafka_bootstrap})")
    if "redis" in components:
        lines.append(f"  Redis  {settings.redis_url}   (redis-cli -p {settings.redis_port} ping)")
    lines.append(f"  state, data and logs under {settings.state_dir}")
    return lines


class Terminated(BaseException):
    """SIGTERM while `up` starts the stack: unwinds as Ctrl-C does (stack.up stops what it
    started), not a kill that leaves a stack half started and not ready."""


EXIT_SIGTERM = 143  # 128 + SIGTERM, as a shell reports a command a SIGTERM ended


def _on_sigterm(signum, frame) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # more of them while it stops: it finishes
    raise Terminated()


def cmd_up(args: argparse.Namespace) -> int:
    try:
        settings = _settings()
        components = args.only or list(stack.COMPONENTS)
    except (ConfigError, stack.StackError) as exc:
        return _fail(exc)
    # Killed by SIGTERM (`timeout`, a supervisor, `kill`) halfway through, `up` left Kafka
    # or Redis running and not ready, as Ctrl-C does not: it now stops them as Ctrl-C does.
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        report = stack.up(settings, components, timeout=args.timeout)
    except (ConfigError, stack.StackError, OSError) as exc:
        return _fail(exc)
    except Terminated:
        print("croupier stack: stopped by SIGTERM before the stack was ready; what this `up` had started is stopped "
              "again", file=sys.stderr)
        return EXIT_SIGTERM
    finally:
        signal.signal(signal.SIGTERM, previous)
    parts = [f"{name} {secs:.1f} s" for name, secs in sorted(report.ready_after.items())]
    if report.started:
        print(f"stack ready in {report.seconds:.1f} s (start to ready: {', '.join(parts)}; "
              f"started {', '.join(report.started)}"
              + (f"; already running {', '.join(report.already_running)}" if report.already_running else "")
              + ")")
    else:
        print(f"stack already running ({', '.join(report.already_running)}), answering in {report.seconds:.1f} s")
    if not args.quiet:
        print("\n".join(how_to_reach(settings, components)))
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    try:
        outcome = stack.down(_settings(), args.only or list(stack.COMPONENTS))
    except (ConfigError, stack.StackError, RuntimeError, OSError) as exc:
        return _fail(exc)
    for name, what in outcome.items():
        print(f"{name:<6} {what}")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    try:
        settings = _settings()
        statuses = stack.status(settings, args.only or list(stack.COMPONENTS))
    except (ConfigError, stack.StackError, OSError) as exc:
        return _fail(exc)
    if args.json:
        print(json.dumps([s.__dict__ for s in statuses], indent=2))
    else:
        for s in statuses:
            pid = f"pid {s.pid}" if s.pid else ""
            health = "ready" if s.ready else (s.note or "-")
            print(f"{s.name:<6} {s.state:<8} {pid:<11} {s.endpoint:<28} {health}")
        print(f"state  {settings.state_dir}")
    return 0 if all(s.ready for s in statuses) else 3
