"""`croupier games` and `croupier selfplay`."""

from __future__ import annotations

import argparse
import json
import sys
import time

from croupier.engine import registry
from croupier.engine.bots import bot_names
from croupier.engine.contract import Rejection
from croupier.engine.selfplay import selfplay


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("games", help="list the games Croupier hosts")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_games)

    p = sub.add_parser("selfplay", help="play whole games in process with bots, checking every step")
    p.add_argument("game", help="game id (see `croupier games`)")
    p.add_argument("--games", type=int, default=100, help="how many games (default 100)")
    p.add_argument("--seed", type=int, default=1, help="seed for tables and bots (default 1)")
    p.add_argument("--players", type=int, default=None, help="seats per table (default: cycle the range)")
    p.add_argument("--bot", default="random", help="bot for every seat: random or heuristic")
    p.add_argument("--seat-bots", default=None, help="comma list of bots per seat, rotated each game (e.g. heuristic,random)")
    p.add_argument("--option", action="append", default=[], metavar="K=V", help="game option (repeatable)")
    p.add_argument("--quick", action="store_true", help="check a legal action per step instead of all of them")
    p.add_argument("--jobs", type=int, default=1,
                   help="processes to share the games (default 1); the report and digest do not depend on it")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_selfplay)


def table_options() -> list[dict]:
    """The table's own options, which every game takes beside its own (the turn clock:
    TableHost.parse_options). `games` listed only each game's, so the clock, which `play
    --option` and the gateway's create take, was nowhere to be found from the CLI."""
    from croupier.engine import table

    return [{k: o[k] for k in ("name", "default", "doc")} for o in table.table_options()]


def cmd_games(args: argparse.Namespace) -> int:
    specs = registry.all_games()
    table = table_options()
    if args.json:
        print(json.dumps([
            {
                "id": s.id, "name": s.name, "min_seats": s.min_seats, "max_seats": s.max_seats,
                "rules_version": s.rules_version, "bots": bot_names(s),
                "options": [{"name": o.name, "default": o.default, "doc": o.doc} for o in s.options],
                "table_options": table,
            }
            for s in specs
        ], indent=2))
        return 0
    for s in specs:
        seats = f"{s.min_seats}" if s.min_seats == s.max_seats else f"{s.min_seats}-{s.max_seats}"
        print(f"{s.id:<12} {seats:>4} seats  {s.name}")
        for o in s.options:
            print(f"{'':<12}   --option {o.name}={o.default!s:<8} {o.doc}")
    print("every game also takes the table's own options:")
    for o in table:
        print(f"{'':<12}   --option {o['name']}={o['default']!s:<8} {o['doc']}")
    return 0


def parse_options(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        if "=" not in pair:
            raise Rejection("invalid_option", f"--option takes K=V, not {pair!r}", "malformed")
        k, v = pair.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def cmd_selfplay(args: argparse.Namespace) -> int:
    try:
        spec = registry.get(args.game)
        options = parse_options(args.option)
        seat_bots = [b.strip() for b in args.seat_bots.split(",")] if args.seat_bots else None
        if args.games < 1:
            raise Rejection("invalid_games", "--games must be at least 1", "malformed")
        if not 1 <= args.jobs <= 64:
            raise Rejection("invalid_jobs", "--jobs must be between 1 and 64", "malformed")
        start = time.perf_counter()
        report = selfplay(
            spec, games=args.games, seed=args.seed, players=args.players, bot=args.bot,
            seat_bots=seat_bots, options=options, check_all_legal=not args.quick, jobs=args.jobs,
        )
        elapsed = time.perf_counter() - start
    except Rejection as exc:
        print(f"croupier selfplay: {exc.message}", file=sys.stderr)
        return 2
    out = report.as_dict()
    out["seconds"] = round(elapsed, 2)
    if args.json:
        print(json.dumps(out, indent=2, sort_keys=True))
    else:
        print(f"{spec.id}: {out['games']} games ({out['finished']} finished), {out['commands']} commands, "
              f"{out['events']} events, {out['rejections']} rejections, {out['errors']} errors in {out['seconds']} s")
        for k, v in out["results"].items():
            print(f"  {k}: {v}")
        for e in out["error_samples"]:
            print(f"  error: {e}")
        print(f"  digest: {out['digest']}")
    return 1 if report.errors else 0
