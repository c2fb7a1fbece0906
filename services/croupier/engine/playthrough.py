"""Golden playthroughs: a recorded game whose replay must give the same events and views.

    python -m croupier.engine.playthrough record GAME [--seats N] [--seed S] > tests/golden/GAME.jsonl
    python -m croupier.engine.playthrough rehash tests/golden/GAME.jsonl   # after a deliberate view change

Each line is one command: who sent it, its wire form, the envelopes it produced (type,
payload, hash) and the SHA-256 of every seat's and the spectator's view after it.
`check` replays a file and returns the first difference.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections.abc import Iterable
from typing import Any

from croupier.engine import registry
from croupier.engine.bots import bot_for, first_to_move
from croupier.engine.codec import canonical_json
from croupier.engine.contract import GameSpec, Rejection, Tick
from croupier.engine.local import LocalTable
from croupier.engine.selfplay import STEP_MS, table_seed
from croupier.engine.table import OVER


def _view_hashes(table: LocalTable) -> dict[str, str]:
    out = {}
    for seat in [None, *range(table.state.seats)]:
        view = table.host.view(table.state, seat)
        out["spectator" if seat is None else str(seat)] = hashlib.sha256(canonical_json(view).encode()).hexdigest()
    return out


def _line(step: dict[str, Any], envelopes, table: LocalTable) -> str:
    step["events"] = [{"seq": e.seq, "type": e.type, "payload": e.payload, "hash": e.hash} for e in envelopes]
    step["views"] = _view_hashes(table)
    return canonical_json(step)


def record(spec: GameSpec, seats: int, seed: int, options: dict | None = None, bot: str = "heuristic") -> list[str]:
    table = LocalTable(spec, f"golden-{spec.id}", seats, options, table_seed(seed, 0, spec.id))
    lines = [canonical_json({"game": spec.id, "seats": seats, "seed": seed, "options": table.state.options,
                             "rules_version": spec.rules_version})]
    rng = random.Random(seed)
    play = bot_for(spec, bot if bot in spec.bots else "random")
    now = 0
    for seat in range(seats):
        wire = {"type": "JoinSeat", "player": f"seat{seat}", "bot": None, "entropy": f"e{seat}"}
        envs = table.handle(table.host.commands.decode(wire, seat=seat), now=now)
        lines.append(_line({"seat": seat, "command": wire, "now": now}, envs, table))
    steps = 0
    while table.state.status != OVER and steps < 5000:
        steps += 1
        now += STEP_MS
        state = table.state
        to_act = spec.to_act(state.game)
        deadline = table.host.deadline(state)
        if deadline is not None and (now >= deadline or not to_act):
            now = max(now, deadline)
            command = Tick(now=now)
        else:
            first = to_act[0] if len(to_act) == 1 else rng.choice(list(to_act))
            # A bot may wait (None, croupier.engine.bots): then another seat moves, or time passes.
            picked = first_to_move(table.host, state, [first, *(s for s in to_act if s != first)],
                                   lambda _seat: play, rng)
            if picked is not None:
                _seat, legal, wire_legal, choice = picked
                command = legal[wire_legal.index(choice)]
            else:
                if deadline is None:
                    raise RuntimeError(f"{spec.id}: every seat to act waits and no deadline is set")
                now = max(now, deadline)
                command = Tick(now=now)
        envs = table.handle(command, now=now)
        lines.append(_line({"seat": command.seat, "command": table.host.commands.encode(command), "now": now}, envs, table))
    return lines


def _replay(lines: Iterable[str]):
    """Replays a golden file's commands: (line number, step, its events now, the table)
    for each, the header first as (1, header, [], table)."""
    it = iter(lines)
    head = json.loads(next(it))
    spec = registry.get(head["game"])
    # A game recorded under an earlier rules version replays under that version (a game
    # keeps the rules it was created with): the check that an upgrade kept them.
    spec = spec.for_version(int(head.get("rules_version", spec.rules_version)))
    table = LocalTable(spec, f"golden-{spec.id}", head["seats"], head["options"], table_seed(head["seed"], 0, spec.id))
    yield 1, head, [], table
    for n, raw in enumerate(it, start=2):
        step = json.loads(raw)
        command = table.host.commands.decode(step["command"], seat=step["seat"])
        envs = table.handle(command, now=step["now"])
        got = [{"seq": e.seq, "type": e.type, "payload": e.payload, "hash": e.hash} for e in envs]
        yield n, step, json.loads(canonical_json(got)), table


def _event_difference(n: int, step: dict, got: list) -> str | None:
    if got == step["events"]:
        return None
    for want, have in zip(step["events"], got):
        if want != have:
            return f"line {n}: event seq {want['seq']} differs: recorded {want} now {have}"
    return f"line {n}: recorded {len(step['events'])} events, now {len(got)}"


def check(lines: Iterable[str]) -> str | None:
    """Replays a golden file; the first difference in words, or None."""
    table = None
    for n, step, got, table in _replay(lines):
        if n == 1:
            continue
        problem = _event_difference(n, step, got)
        if problem:
            return problem
        views = _view_hashes(table)
        for who, digest in step["views"].items():
            if views.get(who) != digest:
                return f"line {n}: the view of {who} after seq {table.state.version} differs"
    if table is None or table.state.status != OVER:
        return "the recorded game does not end"
    return None


def rehash_views(lines: Iterable[str]) -> tuple[list[str], int]:
    """A golden file with its view hashes taken again, for a deliberate change to what a seat
    sees (a view that showed too much, say): every command must still give the recorded
    events, or ValueError. Returns the new lines and how many steps' views changed."""
    out, changed = [], 0
    for n, step, got, table in _replay(lines):
        if n == 1:
            out.append(canonical_json(step))
            continue
        problem = _event_difference(n, step, got)
        if problem:
            raise ValueError(f"the events changed, not only the views: {problem}")
        views = _view_hashes(table)
        changed += views != step["views"]
        out.append(canonical_json({**step, "views": views}))
    return out, changed


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m croupier.engine.playthrough")
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("game")
    r.add_argument("--seats", type=int, default=None)
    r.add_argument("--seed", type=int, default=7)
    r.add_argument("--bot", default="heuristic")
    c = sub.add_parser("check")
    c.add_argument("file")
    h = sub.add_parser("rehash", help="take a golden file's view hashes again (its events must not change)")
    h.add_argument("file")
    args = p.parse_args(argv)
    try:
        return _run(args)
    except Rejection as exc:  # an unknown game
        print(f"{p.prog} {args.cmd}: {exc.message}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file that is not there, or cannot be written
        print(f"{p.prog} {args.cmd}: {getattr(exc, 'filename', None) or args.file}: {exc.strerror or exc}",
              file=sys.stderr)
        return 2
    except ValueError as exc:  # rehash of a file whose events changed: refused, the file left as it was
        print(f"{p.prog} {args.cmd}: {args.file}: {exc}; the file is left as it was", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace) -> int:
    if args.cmd == "rehash":
        with open(args.file, encoding="utf-8") as fh:
            lines, changed = rehash_views(fh)
        _write_whole(args.file, "\n".join(lines) + "\n")
        print(f"{args.file}: the views of {changed} of {len(lines) - 1} steps changed; every event is the same")
        return 0
    if args.cmd == "record":
        spec = registry.get(args.game)
        for line in record(spec, args.seats or spec.min_seats, args.seed, bot=args.bot):
            print(line)
        return 0
    with open(args.file, encoding="utf-8") as fh:
        problem = check(fh)
    print(problem or "ok")
    return 1 if problem else 0


def _write_whole(path: str, text: str) -> None:
    """A golden file rewritten whole or not at all (beside it, then renamed over it): a
    write that fails halfway left a truncated golden file."""
    import os
    import tempfile

    target = os.path.realpath(path)
    fd, tmp = tempfile.mkstemp(prefix=".rehash.", dir=os.path.dirname(target))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, os.stat(target).st_mode & 0o7777)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


if __name__ == "__main__":
    sys.exit(main())
