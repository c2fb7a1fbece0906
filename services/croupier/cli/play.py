"""`croupier play`: play a game by hand in the terminal, through the gateway."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import urllib.parse

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
    p.add_argument("--seats", type=int, default=None, help="seats of a new table (default: the game's minimum)")
    p.add_argument("--seat", type=int, default=None, help="your seat (default 0 at a new table, else the first free)")
    p.add_argument("--option", action="append", default=[], metavar="K=V", help="game option (repeatable)")
    p.add_argument("--name", default=os.environ.get("USER", "player"), help="your name at the table")
    p.add_argument("--bots", default=None, help="bot for the other seats of a new table (default: the game's "
                                               "best; 'none' leaves them open for other players)")
    p.add_argument("--auto", default=None, metavar="BOT", help="let this bot pick your moves (random, heuristic...)")
    p.add_argument("--moves", type=int, default=0, metavar="N", help="leave after making N moves (0: play to the end)")
    p.set_defaults(func=cmd_play)


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
    problem = _url_problem(args.gateway)
    if problem:
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
