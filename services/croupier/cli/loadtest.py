"""`croupier loadtest`: open tables through the gateway, play them with bots, measure.

    croupier loadtest [--game G|all] --tables N --duration S [--ramp S] [--protocol grpc|http]
                      [--bot random|heuristic] [--think-ms MS] [--workers W] [--target HOST:PORT]
                      [--json FILE] [--plot FILE] [--think-from move|view]

The work is in croupier_gateway.loadtest; this parses and checks the flags (a bad one: exit 2).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from croupier.cli import argtypes
from croupier.engine import registry

_positive_int = argtypes.whole(1)
_count = argtypes.whole(0)
_address = argtypes.address
MIN_THINK_MS = 0.001  # a microsecond: below it the offered load (tables x 1000 / MS) means nothing
MAX_TABLES = 1_000_000  # more than any machine's load generator holds open at once
MAX_DURATION_S = 86_400.0  # a day
_tables = argtypes.whole(1, MAX_TABLES)
# Each worker is a Python process of its own (~60 MB before its tables), started before the run:
# thousands (a slip for --tables) would take the machine's memory before a table is opened.
MAX_WORKERS = 256
_workers = argtypes.whole(1, MAX_WORKERS, " (each is a process of its own)")


def _seconds(minimum_exclusive: bool, high: float | None = None, what: str = ""):
    return argtypes.seconds(above_zero=minimum_exclusive, high=high, what=what)


def _think_ms(text: str) -> float:
    """--think-ms: 0 (no think time) or at least MIN_THINK_MS, finite."""
    value = _seconds(False)(text)
    if 0 < value < MIN_THINK_MS:
        raise argparse.ArgumentTypeError(f"must be 0 (no think time) or at least {MIN_THINK_MS:g}, not {text}")
    return value


def _game(text: str) -> str:
    if text != "all" and text not in registry.GAME_IDS:
        raise argparse.ArgumentTypeError(f"no game {text!r}; games are {', '.join(registry.GAME_IDS)}, or all")
    return text


def _out_file(text: str) -> str:
    """--json and --plot: a file that can be written, checked before the run rather than found
    after it; the path given on is the expanded one (`--json=~/r.json` reaches no shell)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("cannot write '': give a file name")
    path = Path(text).expanduser()
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: it is a directory; give a file name")
    parent = path.resolve().parent
    if not parent.is_dir():
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: no directory {parent}")
    if path.exists() and not os.access(path, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: it is not writable")
    try:  # what a write would meet (root included: a read-only mount, a directory it may not write)
        tempfile.NamedTemporaryFile(dir=parent, prefix=".croupier-loadtest-").close()
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: {exc.strerror or exc} in {parent}") from None
    return str(path)


def _plot_unavailable() -> str | None:
    """None if matplotlib, which --plot draws with, is installed, else why not. Found, not
    imported: an import writes its caches under $HOME and takes a while; a matplotlib that is
    there but fails is told after the run (the report is kept)."""
    import importlib.util

    try:
        found = importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None if found else "it is not installed"


def register(sub: argparse._SubParsersAction) -> None:
    grpc_port = os.environ.get("CROUPIER_GATEWAY_GRPC_PORT", "18081")
    http_port = os.environ.get("CROUPIER_GATEWAY_PORT", "18080")
    p = sub.add_parser("loadtest", help="play many tables through the gateway with bots and measure it",
                       description="Open N tables through the gateway, play whole games with bots (starting a new "
                                   "table when one ends) until the time is up, then report throughput, latency, "
                                   "errors and a check (audit, projection equals replay) of a sample of the "
                                   "finished games. Exit 0: no errors and the check passed; 1: errors, a failed "
                                   "check, tables the operator API did not force-end, or a --json/--plot not "
                                   "written; 2: bad flags, a game the gateway does not host, or an operator "
                                   "token it refuses (checked before the run); 75: no gateway answers at the "
                                   "target, or at --http-target with an operator token (nothing was run: try "
                                   "again later); 130/143/129: stopped by SIGINT/SIGTERM/SIGHUP (what was "
                                   "measured is reported, the tables left are force-ended).")
    p.add_argument("--game", type=_game, default="all", metavar="G|all",
                   help=f"the game of the tables: {', '.join(registry.GAME_IDS)}, or all (spread evenly; default)")
    p.add_argument("--tables", type=_tables, required=True, metavar="N",
                   help=f"tables in play at once (1..{MAX_TABLES:,})")
    p.add_argument("--duration", type=_seconds(True, MAX_DURATION_S, " (a day)"), required=True, metavar="S",
                   help=f"seconds to run (at most {MAX_DURATION_S:g}, a day)")
    p.add_argument("--ramp", type=_seconds(False), default=0.0, metavar="S",
                   help="open the first tables gradually over these seconds (default 0: all at once)")
    p.add_argument("--protocol", choices=["grpc", "http"], default="grpc",
                   help="gRPC, or HTTP + WebSocket (default grpc)")
    p.add_argument("--bot", choices=["random", "heuristic"], default="heuristic", help="the bots' play (default heuristic)")
    p.add_argument("--think-ms", type=_think_ms, default=0.0, metavar="MS",
                   help="mean pause of a bot before each move, drawn from [0.5, 1.5] x MS (default 0: no pause; "
                        f"else at least {MIN_THINK_MS:g})")
    p.add_argument("--think-from", choices=["move", "view"], default="move",
                   help="where a think time counts from: the table's previous move (default: each table makes one "
                        "move per think time, so the load offered is tables / think time whatever the stack's "
                        "latency) or the view the bot acts on (every lag adds to the pause)")
    p.add_argument("--workers", type=_workers, default=2, metavar="W",
                   help=f"load-generator processes (default 2, at most {MAX_WORKERS})")
    p.add_argument("--target", type=_address, default=None, metavar="HOST:PORT",
                   help=f"the gateway: its gRPC address (default 127.0.0.1:{grpc_port}) or, with --protocol "
                        f"http, its HTTP address (default 127.0.0.1:{http_port})")
    p.add_argument("--json", type=_out_file, default=None, metavar="FILE", help="write the report as JSON")
    p.add_argument("--plot", type=_out_file, default=None, metavar="FILE",
                   help="write a PNG of throughput and latency over time")
    p.add_argument("--seats", type=_positive_int, default=None, metavar="K",
                   help="seats per table (default 2, within each game's limits)")
    p.add_argument("--check", type=_count, default=10, metavar="K",
                   help="finished games to check afterwards: audit and projection equals replay (default 10)")
    p.add_argument("--http-target", type=_address, default=None, metavar="HOST:PORT",
                   help=f"the gateway's HTTP address for the operator API (default: --target with --protocol http, "
                        f"else --target's host with port {http_port}, $CROUPIER_GATEWAY_PORT)")
    p.add_argument("--operator-token", default=None, metavar="TOKEN",
                   help="operator token (default $CROUPIER_OPERATOR_TOKEN): the sample's logs come from the "
                        "gateway's export and tables cut short are force-ended; without one the logs are read "
                        "from Kafka and such tables are left as they are")
    p.add_argument("--keep-tables", action="store_true", help="do not force-end the tables the time cut short")
    p.add_argument("--seed", type=_count, default=0, metavar="N", help="seed of the bots and think times (default 0)")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.add_argument("--stagger", action=argparse.BooleanOptionalAction, default=None,
                   help="before the measured run, play each table to a random point of its first game with no "
                        "think time, so the run sees games end as a live platform does (default: on with --think-ms, "
                        "unless --ramp is given)")
    p.set_defaults(func=cmd_loadtest)


def _targets(args: argparse.Namespace) -> tuple[str, str]:
    """The gateway's address for the load (gRPC or HTTP) and its HTTP address for the operator
    API: the flags, else 127.0.0.1 on the gateway's port settings, read only where they are
    used (ConfigError, naming the variable, for one that is not a port)."""
    from croupier.config import Env

    env = Env()
    target = args.target or (f"127.0.0.1:{env.port('GATEWAY_GRPC_PORT', 18081)}" if args.protocol == "grpc"
                             else f"127.0.0.1:{env.port('GATEWAY_PORT', 18080)}")
    # The HTTP port of the same gateway: --target's host (not this machine's) with the HTTP port.
    http_target = args.http_target or (target if args.protocol == "http"
                                       else f"{target.rpartition(':')[0]}:{env.port('GATEWAY_PORT', 18080)}")
    return target, http_target


def cmd_loadtest(args: argparse.Namespace) -> int:
    from croupier.config import ConfigError, event_loop
    from croupier_gateway.loadtest import Config, run

    try:
        event_loop()  # the generator's processes run on it: a bad value is told before any starts
    except ConfigError as exc:
        print(f"croupier loadtest: {exc}", file=sys.stderr)
        return 2
    if args.plot:
        problem = _plot_unavailable()
        if problem:  # told now, not after the whole run
            print(f"croupier loadtest: --plot needs matplotlib, which cannot be loaded here ({problem})",
                  file=sys.stderr)
            return 2
    if args.json and args.plot and Path(args.json).resolve() == Path(args.plot).resolve():
        # The PNG would be written over the report (or the other way round): one would be lost.
        print(f"croupier loadtest: --json and --plot name the same file ({args.json}): give each its own",
              file=sys.stderr)
        return 2
    if args.ramp > args.duration:
        print(f"croupier loadtest: --ramp ({args.ramp:g} s) must not be longer than --duration ({args.duration:g} s)",
              file=sys.stderr)
        return 2
    if args.ramp and args.stagger:
        # With --stagger every table is open and playing when the measured run starts: there
        # is nothing left to ramp up, and a flag given must not be dropped without a word.
        print("croupier loadtest: --ramp and --stagger do not go together (staggered, every table is open and "
              "playing when the run starts): give one of them", file=sys.stderr)
        return 2
    games = tuple(registry.GAME_IDS) if args.game == "all" else (args.game,)
    try:
        target, http_target = _targets(args)
    except ConfigError as exc:  # a gateway port setting that is not a port: bad input, not a gateway away
        print(f"croupier loadtest: {exc}", file=sys.stderr)
        return 2
    if len(games) > args.tables:
        # Tables go to the games in turn: the report would list games no table played, each
        # with nothing finished, as if they had been tried. Said, and left out of the run.
        print(f"croupier loadtest: --tables {args.tables} is fewer than the {len(games)} games of --game all: "
              f"only {', '.join(games[:args.tables])} are played", file=sys.stderr)
        games = games[:args.tables]
    token = args.operator_token if args.operator_token is not None else os.environ.get("CROUPIER_OPERATOR_TOKEN", "")
    cfg = Config(games=games, tables=args.tables, duration_s=args.duration, ramp_s=args.ramp, protocol=args.protocol,
                 bot=args.bot, think_ms=args.think_ms, workers=min(args.workers, args.tables), target=target,
                 seats=args.seats, http_target=http_target, operator_token=token, check=args.check,
                 cleanup=not args.keep_tables, seed=args.seed, progress=not args.quiet, think_from=args.think_from,
                 # On with a think time unless a ramp is asked for instead.
                 stagger=bool(args.think_ms and not args.ramp) if args.stagger is None else args.stagger)
    code, _report = run(cfg, json_path=args.json, plot_path=args.plot)
    return code
