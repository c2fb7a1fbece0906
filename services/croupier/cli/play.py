"""`croupier play`: play a game by hand in the terminal, through the gateway."""

from __future__ import annotations

import argparse
import asyncio
import os

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


def cmd_play(args: argparse.Namespace) -> int:
    from croupier_gateway.play import play

    if args.game and args.game not in registry.GAME_IDS:
        print(f"croupier play: no game {args.game!r}; games are {', '.join(registry.GAME_IDS)}")
        return 2
    options = {}
    for item in args.option:
        key, sep, value = item.partition("=")
        if not sep:
            print(f"croupier play: --option {item!r} is not K=V")
            return 2
        options[key.strip()] = value.strip()
    return asyncio.run(play(args.gateway, game=args.game, table=args.table, seat=args.seat, seats=args.seats,
                            options=options, name=args.name, bots=args.bots, auto=args.auto, moves=args.moves))
