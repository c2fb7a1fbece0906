"""`croupier play`: play a game by hand in the terminal, through the gateway."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import urllib.parse

from croupier.cli.argtypes import whole
from croupier.engine import registry


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("play", help="play a game in the terminal through the gateway (create or join a table)")
    default_url = os.environ.get("CROUPIER_GATEWAY_URL") or \
        f"http://127.0.0.1:{os.environ.get('CROUPIER_GATEWAY_PORT', '18080')}"
    p.add_argument("--gateway", default=default_url,
                   help=f"http://host:port, or grpc://host:port (default {default_url}; CROUPIER_GATEWAY_URL)")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--game", help=f"create a table of this game: {', '.join(registry.GAME_IDS)}")
    which.add_argument("--table", help="join this table (its id)")
    p.add_argument("--seats", type=whole(1), default=None,
                   help="seats of a new table, within the game's limits (default: the game's minimum)")
    p.add_argument("--seat", type=whole(0), default=None,
                   help="your seat, from 0 (default 0 at a new table, else the first free)")
    p.add_argument("--option", action="append", default=[], metavar="K=V", help="game option (repeatable)")
    p.add_argument("--name", default=os.environ.get("USER", "player"), help="your name at the table")
    p.add_argument("--bots", default=None, help="bot for the other seats of a new table (default: the game's "
                                               "best; 'none' leaves them open for other players)")
    p.add_argument("--auto", default=None, metavar="BOT",
                   help="let this bot pick your moves: one of the game's bots (random, heuristic...; croupier games --json "
                        "lists them)")
    p.add_argument("--moves", type=whole(0), default=0, metavar="N",
                   help="leave after making N moves (0: play to the end)")
    source = ("CROUPIER_GATEWAY_URL" if os.environ.get("CROUPIER_GATEWAY_URL")
              else "CROUPIER_GATEWAY_PORT" if os.environ.get("CROUPIER_GATEWAY_PORT") else None)
    p.set_defaults(func=cmd_play, gateway_default=(default_url, source))


def _url_problem(url: str) -> str | None:
    """What is wrong with a --gateway URL, or None."""
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not one
    except ValueError as exc:
        return f"--gateway {url!r} is not a URL ({exc})"
    if parts.scheme not in ("http", "https", "grpc"):
        return f"--gateway {url!r}: give http://host:port, https://host:port or grpc://host:port"
    if not parts.hostname:
        return f"--gateway {url!r} names no host"
    return None


async def _unanswered(url: str) -> str | None:
    """Why no gateway answers at url (asked for its list of games before anything is
    made), or None when one does."""
    import httpx

    from croupier_gateway.client import GatewayError, connect

    client = connect(url)
    try:
        await client.games()
    except (httpx.TransportError, OSError) as exc:
        return f"{type(exc).__name__}: {exc}"
    except GatewayError as exc:
        if exc.status in (502, 503, 504):
            return f"{exc.status} {exc.code}: {exc.message}"
    finally:
        await client.close()
    return None


def _table_problem(args: argparse.Namespace, options: dict[str, str]) -> str | None:
    """What the game's rules refuse of the flags (seats, seat, options, bots), told before a
    table is created or a seat joined; None when nothing."""
    from croupier.engine.bots import bot_for, bot_names
    from croupier.engine.contract import Rejection
    from croupier.engine.table import TableHost

    game = args.game
    if game is None:  # joining: the game is the table id's prefix (the gateway's ids name their type)
        prefix = args.table.split("-", 1)[0]
        if args.auto is None:
            return None
        if prefix not in registry.GAME_IDS:
            return (f"--auto needs the table's game, and --table {args.table!r} is not the id of a table of a known "
                    f"game (an id starts with its game: {', '.join(registry.GAME_IDS)})")
        game = prefix
    spec = registry.get(game)
    for flag, name in (("--auto", args.auto), ("--bots", None if args.game is None else args.bots)):
        if name is not None and not (flag == "--bots" and name == "none"):
            try:
                bot_for(spec, name)
            except Rejection:
                others = ", or none (seats left open)" if flag == "--bots" else ""
                return f"{flag} {name!r}: {game} has no such bot; its bots are {', '.join(bot_names(spec))}{others}"
    if args.game is None:
        return None
    try:
        if args.seats is not None:
            spec.check_seats(args.seats)
        TableHost(spec).parse_options(options)  # the game's options and the table's own (its turn clock)
    except Rejection as exc:
        flag = "--seats" if exc.code == "invalid_seats" else "--option"
        return f"{flag}: {exc.message}"
    seats = spec.min_seats if args.seats is None else args.seats
    if args.seat is not None and args.seat >= seats:
        return f"--seat {args.seat}: a table of {seats} seats has seats 0..{seats - 1}"
    return None


def cmd_play(args: argparse.Namespace) -> int:
    import httpx

    from croupier.cli.main import EXIT_UNAVAILABLE
    from croupier_gateway.play import play

    def fail(message: str, code: int) -> int:
        print(f"croupier play: {message}", file=sys.stderr)
        return code

    if args.game and args.game not in registry.GAME_IDS:
        return fail(f"no game {args.game!r}; games are {', '.join(registry.GAME_IDS)}", 2)
    options = {}
    for item in args.option:
        key, sep, value = item.partition("=")
        if not sep:
            return fail(f"--option {item!r} is not K=V", 2)
        options[key.strip()] = value.strip()
    problem = _table_problem(args, options)
    if problem:
        return fail(problem, 2)
    problem = _url_problem(args.gateway)
    if problem:
        default, source = getattr(args, "gateway_default", (None, None))
        if source and args.gateway == default:  # no --gateway: the setting it came from is what to fix
            problem += f" (from {source})"
        return fail(problem, 2)
    away = asyncio.run(_unanswered(args.gateway))
    if away:
        return fail(f"no gateway answers at {args.gateway} ({away}); is one running? (croupier demo starts one; "
                    "--gateway or CROUPIER_GATEWAY_URL names another)", EXIT_UNAVAILABLE)
    try:
        return asyncio.run(play(args.gateway, game=args.game, table=args.table, seat=args.seat, seats=args.seats,
                                options=options, name=args.name, bots=args.bots, auto=args.auto, moves=args.moves))
    except httpx.TransportError as exc:  # the gateway went away during the game
        return fail(f"the gateway at {args.gateway} stopped answering ({type(exc).__name__}: {exc}); "
                    "the table goes on without you", EXIT_UNAVAILABLE)
