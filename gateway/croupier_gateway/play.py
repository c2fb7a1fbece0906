"""`croupier play`: a terminal client of the gateway, the quickest way to try a game by hand.

Create a table (the other seats are played by bots unless told otherwise) or join one, then
follow your own stream: each time it is your turn it shows your view and your legal actions,
numbered, and sends the one you pick. `--auto BOT` lets a bot pick for you.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sys
import uuid
from typing import Any, TextIO

from croupier.numbers import parse_int
from croupier_gateway.bots import default_bot, play_seat
from croupier_gateway.client import GatewayError, Update, connect

MAX_VIEW_LINES = 60


def describe_action(action: dict[str, Any]) -> str:
    fields = ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted(action.items()) if k != "type")
    return f"{action.get('type')}({fields})"


def render(update: Update, seat: int, out: TextIO) -> None:
    view = update.view
    print(f"\n== version {update.version}: {view.get('status')}"
          + (f", to act: {view.get('to_act')}" if view.get("to_act") else "") + f" (you are seat {seat})", file=out)
    text = json.dumps(view.get("game"), indent=1, sort_keys=True)
    lines = text.splitlines()
    if len(lines) > MAX_VIEW_LINES:
        lines = lines[:MAX_VIEW_LINES] + [f"... ({len(text.splitlines()) - MAX_VIEW_LINES} more lines; 'v' shows all)"]
    print("\n".join(lines), file=out)


async def ask(prompt: str, inp: TextIO, out: TextIO) -> str | None:
    print(prompt, end="", file=out, flush=True)
    line = await asyncio.get_running_loop().run_in_executor(None, inp.readline)
    return None if line == "" else line.strip()


async def play(url: str, *, game: str | None, table: str | None, seat: int | None, seats: int | None,
               options: dict[str, str], name: str, bots: str | None, auto: str | None, moves: int = 0,
               inp: TextIO = sys.stdin, out: TextIO = sys.stdout, err: TextIO | None = None) -> int:
    """Play at a table through the gateway at url; 0 when done, 1 when the gateway refused
    (its words on `err`, standard error by default: never mixed into the game's output)."""
    err = sys.stderr if err is None else err
    client = connect(url)
    helpers: list[asyncio.Task] = []
    try:
        if table is None:
            created = await client.create_table(game, seats, options)
            table = created["game_id"]
            print(f"created table {table} ({created['seats']} seats, seed hash {created['seed_hash'][:16]}...)",
                  file=out)
            seat = 0 if seat is None else seat
            joined = await client.join(table, seat, player=name, entropy=uuid.uuid4().hex)
            if bots != "none":
                bot_name = bots or default_bot(game)
                for other in range(created["seats"]):
                    if other != seat:
                        j = await client.join(table, other, player=f"{bot_name}-{other}", bot=bot_name,
                                              entropy=uuid.uuid4().hex)
                        helpers.append(asyncio.create_task(play_seat(client, table, other, j["token"], bot_name)))
        else:
            info = await client.table(table)
            if seat is None:
                free = [i for i, p in enumerate(info.get("players") or []) if p is None]
                if not free:
                    print(f"croupier play: table {table} has no free seat", file=err)
                    return 1
                seat = free[0]
            joined = await client.join(table, seat, player=name, entropy=uuid.uuid4().hex)
        token = joined["token"]
        print(f"you are seat {seat} at {table}; watch it at {url.rstrip('/')}/watch/{table}", file=out)
        game_type = table.split("-", 1)[0] if game is None else game
        rng = random.Random()
        picker = None
        if auto:
            from croupier.engine import registry
            from croupier.engine.bots import bot_for

            picker = bot_for(registry.get(game_type), auto)
        last = 0
        made = 0
        final: Update | None = None
        while final is None:
            try:
                async with contextlib.aclosing(client.updates(table, token, last)) as stream:
                    async for update in stream:
                        last = update.version
                        if update.over:
                            final = update
                            break
                        if not update.actions:
                            continue
                        render(update, seat, out)
                        for i, action in enumerate(update.actions, 1):
                            print(f"  {i:>3}. {describe_action(action)}", file=out)
                        action = await choose(update, picker, rng, inp, out)
                        if action is WAIT:
                            continue
                        if action is None:
                            print("bye", file=out)
                            return 0
                        try:
                            await client.submit(table, token, uuid.uuid4().hex, action, expected_version=update.version)
                            made += 1
                        except GatewayError as exc:
                            print(f"refused: {exc.status} {exc.code}: {exc.message}", file=out)
                        if moves and made >= moves:
                            print(f"made {made} moves; bye (the table goes on: {table})", file=out)
                            return 0
            except ConnectionError:
                await asyncio.sleep(0.5)  # resume after the last version seen
        render(final, seat, out)
        print(f"game over ({final.view.get('end_reason')}): result {json.dumps(final.view.get('result'))}", file=out)
        print(f"seed {final.view.get('seed')} (its hash was {final.view.get('seed_hash')})", file=out)
        return 0
    except GatewayError as exc:
        print(f"croupier play: {exc.status} {exc.code}: {exc.message}", file=err)
        return 1
    finally:
        for task in helpers:
            task.cancel()
        await asyncio.gather(*helpers, return_exceptions=True)
        await client.close()


WAIT: Any = object()  # choose(): the bot keeps its standing choice; wait for the next update


async def choose(update: Update, picker, rng, inp: TextIO, out: TextIO) -> Any:
    """The action to send; None to quit; WAIT when the seat's bot waits."""
    if picker is not None:
        action = picker(update.view, update.actions, rng)
        if action is None:
            print("  -> (waits: its choice stands)", file=out)
            return WAIT
        print(f"  -> {describe_action(action)}", file=out)
        return dict(action)
    while True:
        answer = await ask(f"your move [1-{len(update.actions)}], v = whole view, q = quit: ", inp, out)
        if answer is None or answer.lower() in ("q", "quit"):
            return None
        if answer.lower() == "v":
            print(json.dumps(update.view, indent=1, sort_keys=True), file=out)
            continue
        picked = parse_int(answer)
        if picked is not None and 1 <= picked <= len(update.actions):
            return update.actions[picked - 1]
        print("pick a number from the list", file=out)
