"""`croupier serve rules|projector|gateway`: run one service in the foreground."""

from __future__ import annotations

import argparse
import sys

from croupier.cli.argtypes import port
from croupier.engine import registry


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="run a service (rules, projector, gateway) in the foreground")
    kinds = p.add_subparsers(dest="service", metavar="SERVICE")
    kinds.required = True
    r = kinds.add_parser("rules", help="the rules service of one game type")
    r.add_argument("--game", required=True, help=f"game id: one of {', '.join(registry.GAME_IDS)}")
    r.add_argument("--port", type=port, default=None, help="gRPC port (default CROUPIER_RULES_PORT, 0 = any)")
    r.set_defaults(func=cmd_rules)
    pr = kinds.add_parser("projector", help="fold the event log of every game into Redis")
    pr.set_defaults(func=cmd_projector)
    gw = kinds.add_parser("gateway", help="the public door: HTTP+JSON, WebSocket and gRPC")
    gw.add_argument("--port", type=port, default=None, help="HTTP port (default CROUPIER_GATEWAY_PORT or 18080; 0 = any)")
    gw.add_argument("--grpc-port", type=port, default=None,
                    help="gRPC port (default CROUPIER_GATEWAY_GRPC_PORT or 18081; 0 = any)")
    gw.set_defaults(func=cmd_gateway)


def _configure_logging() -> None:
    """Logging, the event loop's name checked, then the garbage collector (croupier.runtime):
    the last step before a service's loop starts, so that start-up's objects are frozen out
    of collections. `kill -USR1 PID` then writes every thread's stack to the service's stderr:
    what a service that is alive but does nothing is waiting on (docs/operations.md)."""
    import faulthandler
    import signal

    from croupier.config import ConfigError, LogSettings, event_loop
    from croupier.log import configure
    from croupier.runtime import tune_gc

    try:
        configure(LogSettings.from_env(default_format="json"))
        event_loop()  # a bad CROUPIER_EVENT_LOOP is told here, before the service starts
        tune_gc()
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    except ConfigError as exc:
        print(f"croupier serve: {exc}", file=sys.stderr)
        sys.exit(2)


def cmd_rules(args: argparse.Namespace) -> int:
    from croupier.engine.contract import Rejection
    from croupier.rules.service import ListenError, serve
    from croupier.rules.settings import RulesSettings, SettingsError
    from croupier.runtime import run

    try:
        registry.get(args.game)
        settings = RulesSettings.from_env(args.game, port=args.port)
    except (Rejection, SettingsError) as exc:
        print(f"croupier serve rules: {getattr(exc, 'message', exc)}", file=sys.stderr)
        return 2
    _configure_logging()
    try:
        run(serve(settings))
    except ListenError as exc:
        print(f"croupier serve rules: {exc}", file=sys.stderr)
        return 1
    return 0


def cmd_projector(args: argparse.Namespace) -> int:
    from croupier.projector.service import ProjectorSettings, serve
    from croupier.rules.settings import SettingsError

    try:
        settings = ProjectorSettings.from_env()
    except SettingsError as exc:
        print(f"croupier serve projector: {exc}", file=sys.stderr)
        return 2
    _configure_logging()
    serve(settings)
    return 0


def cmd_gateway(args: argparse.Namespace) -> int:
    import dataclasses

    from croupier.rules.settings import SettingsError
    from croupier.runtime import ListenError, run

    try:
        from croupier_gateway.serve import serve
        from croupier_gateway.settings import GatewaySettings

        settings = GatewaySettings.from_env()
    except SettingsError as exc:
        print(f"croupier serve gateway: {exc}", file=sys.stderr)
        return 2
    if args.port is not None:
        settings = dataclasses.replace(settings, port=args.port)
    if args.grpc_port is not None:
        settings = dataclasses.replace(settings, grpc_port=args.grpc_port)
    _configure_logging()
    try:
        run(serve(settings))
    except ListenError as exc:
        print(f"croupier serve gateway: {exc}", file=sys.stderr)
        return 1
    return 0
