"""Play whole games in process with bots, checking every step.

Checks: every bot action is one of the legal actions; legal actions are sorted and each
one is accepted by decide; every seat to act has one; a seat that may not act has none and
is refused; no view (or legal action) of a seat or spectator contains a card hidden from it; the log's
hash chain holds; replaying the log gives the live state; every random draw re-derives
from the revealed seed. Same seed in, same digest out.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from croupier.engine.bots import bot_for, first_to_move
from croupier.engine.codec import canonical_json
from croupier.engine.contract import Context, GameSpec, Rejection, Tick
from croupier.engine.envelope import verify_chain
from croupier.engine.local import LocalTable
from croupier.engine.rng import FairRng, commitment, verify_draws
from croupier.engine.table import OVER

STEP_MS = 1000


def leaves(value: Any) -> Iterator[str]:
    """Every string (key or value) in a JSON-like value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield str(k)
            yield from leaves(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from leaves(v)


_JSON_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
_dumps = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode


def leaks(value: Any, hidden: frozenset[str]) -> set[str]:
    """The hidden strings that occur (as a key or a value) anywhere in a JSON-like value."""
    if not hidden:
        return set()
    try:
        # The C encoder and one regex walk a view far faster than Python recursion does.
        text = _dumps(value)
    except (TypeError, ValueError):
        return {s for s in leaves(value) if s in hidden}
    if '\\"' not in text:
        # No quote is escaped, so every quote delimits a string: every other piece is one.
        pieces = text.split('"')[1::2]
        if "\\" in text:
            pieces = [json.loads(f'"{p}"') if "\\" in p else p for p in set(pieces)]
        return hidden.intersection(pieces)
    return hidden.intersection({json.loads(f'"{raw}"') for raw in set(_JSON_STRING.findall(text))})


@dataclass
class SelfplayReport:
    game: str
    games: int = 0
    commands: int = 0
    events: int = 0
    rejections: int = 0
    errors: list[str] = field(default_factory=list)
    wins_by_bot: Counter = field(default_factory=Counter)
    seats_by_bot: Counter = field(default_factory=Counter)
    wins_by_seat: Counter = field(default_factory=Counter)
    score_sum_by_bot: Counter = field(default_factory=Counter)
    score_n_by_bot: Counter = field(default_factory=Counter)
    finished: int = 0
    turns: int = 0
    digest: str = ""

    def as_dict(self) -> dict[str, Any]:
        win_rate = {b: round(self.wins_by_bot[b] / n, 4) for b, n in sorted(self.seats_by_bot.items()) if n}
        avg_score = {
            b: round(self.score_sum_by_bot[b] / n, 3) for b, n in sorted(self.score_n_by_bot.items()) if n
        }
        return {
            "game": self.game,
            "games": self.games,
            "finished": self.finished,
            "commands": self.commands,
            "events": self.events,
            "rejections": self.rejections,
            "errors": len(self.errors),
            "error_samples": self.errors[:20],
            "results": {
                "win_rate_by_bot": win_rate,
                "avg_score_by_bot": avg_score,
                "wins_by_seat": {str(k): v for k, v in sorted(self.wins_by_seat.items())},
                "avg_commands_per_game": round(self.commands / self.games, 1) if self.games else 0,
            },
            "digest": self.digest,
        }


def table_seed(seed: int, index: int, game_id: str) -> str:
    return hashlib.sha256(f"croupier-selfplay|{game_id}|{seed}|{index}".encode()).hexdigest()


def play_one(
    spec: GameSpec,
    *,
    seats: int,
    seat_bots: Sequence[str],
    options: Mapping[str, Any],
    seed: int,
    index: int,
    report: SelfplayReport,
    check_all_legal: bool = True,
    max_steps: int = 20000,
    verify: bool = True,
) -> LocalTable:
    """One whole game by bots. With verify (the default) every step is checked (views,
    order, refusals; with check_all_legal every legal action too); without, the game is only
    played, as benchmarks do to record games."""
    game_id = f"selfplay-{spec.id}-{seed}-{index}"
    table = LocalTable(spec, game_id, seats, options, table_seed(seed, index, spec.id))
    host = table.host
    bots = [bot_for(spec, name) for name in seat_bots]
    rng = random.Random(f"{seed}/{index}")
    now = 0
    table.join_all(list(seat_bots), now=now)
    err = report.errors

    def fail(msg: str) -> None:
        err.append(f"{game_id} v{table.state.version}: {msg}")

    steps = 0
    while table.state.status != OVER:
        steps += 1
        if steps > max_steps:
            fail(f"did not end within {max_steps} steps")
            break
        state = table.state
        game = state.game
        now += STEP_MS
        deadline = host.deadline(state)
        to_act = spec.to_act(game)
        if deadline is not None and (now >= deadline or not to_act):
            now = max(now, deadline)
            try:
                table.handle(Tick(now=now), command_id=f"tick-{steps}", now=now)
                report.commands += 1
            except Rejection as exc:
                fail(f"deadline tick refused: {exc}")
                break
            continue
        if not to_act:
            fail("no seat can act and no deadline is set: the table is stuck")
            break
        if verify:
            _check_views(host, state, err, game_id)
        seat = to_act[0] if len(to_act) == 1 else rng.choice(list(to_act))
        legal = host.legal_actions(state, seat)
        if not legal:
            fail(f"seat {seat} is to act but has no legal action")
            break
        if verify:
            if [a.sort_key() for a in legal] != sorted(a.sort_key() for a in legal):
                fail("legal actions are not in their sorted order")
            if check_all_legal:
                _check_all_accepted(host, state, legal, now, fail)
            _check_others_refused(host, state, to_act, legal[0], now, fail)
            # Every seat to act has a move, not only the one picked: the turn clock plays the
            # first seat to act that has one, and a table where none has is stuck.
            for other in to_act:
                if other != seat and not host.legal_actions(state, other):
                    fail(f"seat {other} is to act but has no legal action")
        wire = [host.encode_action(a) for a in legal]
        if verify and check_all_legal:
            # What a player sends back is one of these: each must decode to itself, exact
            # field types included (decode_action's check), or a legal move would be refused.
            for action, w in zip(legal, wire):
                try:
                    back = host.decode_action(json.loads(canonical_json(w)), action.seat)
                except Rejection as exc:
                    fail(f"legal action {w} does not decode: {exc}")
                    break
                if back != action:
                    fail(f"legal action {w} decodes to {back}")
                    break
        if verify:
            # The texts the rules service and the read models send come from the host's cache.
            if (host.legal_action_texts(state, seat) != [canonical_json(w) for w in wire]
                    or host.legal_actions_json(state, seat) != canonical_json(wire)):
                fail("legal_action_texts differ from the legal actions' wire form")
        choice = bots[seat](host.view(state, seat), wire, rng)
        if choice is None:
            # This seat waits (croupier.engine.bots): another seat to act moves, or time passes.
            picked = first_to_move(host, state, [s for s in to_act if s != seat], bots.__getitem__, rng)
            if picked is None:
                if deadline is None:
                    fail("every seat to act waits and no deadline is set: the table is stuck")
                    break
                now = max(now, deadline)
                continue
            seat, legal, wire, choice = picked
        try:
            index_of = wire.index(choice)
        except ValueError:
            fail(f"bot {seat_bots[seat]} chose {choice!r}, not a legal action")
            break
        try:
            table.handle(legal[index_of], command_id=f"c{steps}", now=now)
        except Rejection as exc:
            report.rejections += 1
            fail(f"legal action {wire[index_of]} was rejected: {exc}")
            break
        report.commands += 1
    _check_end(spec, table, fail)
    report.games += 1
    report.events += table.state.version
    report.turns += steps
    final = table.state
    if final.status == OVER and not (final.result or {}).get("aborted"):
        report.finished += 1
        result = final.result or {}
        winners = set(result.get("winners", []))
        scores = result.get("scores")
        for s, name in enumerate(seat_bots):
            report.seats_by_bot[name] += 1
            if s in winners:
                report.wins_by_bot[name] += 1
                report.wins_by_seat[s] += 1
            if isinstance(scores, (list, tuple)) and s < len(scores) and isinstance(scores[s], (int, float)):
                report.score_sum_by_bot[name] += scores[s]
                report.score_n_by_bot[name] += 1
    return table


def _check_views(host, state, err, game_id) -> None:
    spec = host.spec
    for seat in [None, *range(state.seats)]:
        view = host.view(state, seat)
        hidden = spec.hidden(state.game, seat)
        found = leaks(view, hidden)
        if found:
            err.append(f"{game_id} v{state.version}: view of seat {seat} shows hidden {sorted(found)[:5]}")
        if seat is not None:
            actions = [host.encode_action(a) for a in host.legal_actions(state, seat)]
            found = leaks(actions, hidden)
            if found:
                err.append(f"{game_id} v{state.version}: legal actions of seat {seat} show hidden {sorted(found)[:5]}")


def _probe_ctx(state, now) -> Context:
    return Context(rng=FairRng(state.seed, state.entropy, state.rng_counter), now=now)


def _check_all_accepted(host, state, legal, now, fail) -> None:
    for action in legal:
        try:
            host.decide_events(state, action, _probe_ctx(state, now))
        except Rejection as exc:
            fail(f"legal action {host.encode_action(action)} of seat {action.seat} is rejected by decide: {exc}")


def _check_others_refused(host, state, to_act, action, now, fail) -> None:
    for other in range(state.seats):
        if other in to_act:
            continue
        if host.legal_actions(state, other):
            fail(f"seat {other} is not to act but has legal actions")
        try:
            host.decide_events(state, dataclasses.replace(action, seat=other), _probe_ctx(state, now))
        except Rejection:
            continue
        fail(f"seat {other}, not to act, had {action.TYPE} accepted")


def _check_end(spec, table: LocalTable, fail) -> None:
    envelopes = table.envelopes
    fault = verify_chain(envelopes)
    if fault:
        fail(f"hash chain: {fault}")
    replayed = table.host.fold(envelopes)
    if replayed != table.state:
        fail("replaying the log does not give the live state")
    state = table.state
    if commitment(state.seed) != state.seed_hash:
        fail("the seed does not match its commitment")
    draws = [d for env in envelopes if env.cause for d in env.cause["draws"]]
    for problem in verify_draws(state.seed, state.entropy, draws):
        fail(f"randomness: {problem}")
        break


def digest_of(tables: Sequence[LocalTable]) -> str:
    h = hashlib.sha256()
    for table in tables:
        for env in table.envelopes:
            h.update(env.hash.encode())
    return h.hexdigest()


def _lineup(spec: GameSpec, i: int, players: int | None, bot: str, seat_bots: Sequence[str] | None):
    seats = players if players is not None else spec.min_seats + i % (spec.max_seats - spec.min_seats + 1)
    spec.check_seats(seats)
    names = list(seat_bots) if seat_bots else [bot] * seats
    if seat_bots:
        # Rotate mixed line-ups so no bot always sits in the same seat.
        names = [names[(s + i) % len(names)] for s in range(seats)]
    return seats, names


def _play_games(spec: GameSpec, indices: Sequence[int], *, seed: int, players: int | None, bot: str,
                seat_bots: Sequence[str] | None, parsed: Mapping[str, Any], check_all_legal: bool):
    """Games `indices`: the report of them, and each game's event hashes in order."""
    report = SelfplayReport(game=spec.id)
    hashes: list[list[str]] = []
    for i in indices:
        seats, names = _lineup(spec, i, players, bot, seat_bots)
        table = play_one(
            spec, seats=seats, seat_bots=names, options=parsed, seed=seed, index=i,
            report=report, check_all_legal=check_all_legal,
        )
        hashes.append([env.hash for env in table.envelopes])
    return report, hashes


def _play_chunk(args: tuple) -> tuple[SelfplayReport, list[list[str]]]:
    game_id, indices, kwargs = args
    from croupier.engine import registry

    return _play_games(registry.get(game_id), indices, **kwargs)


def _merge(into: SelfplayReport, part: SelfplayReport) -> None:
    for f in dataclasses.fields(SelfplayReport):
        if f.name in ("game", "digest"):
            continue
        mine, theirs = getattr(into, f.name), getattr(part, f.name)
        if isinstance(mine, Counter):
            mine.update(theirs)
        elif isinstance(mine, list):
            mine.extend(theirs)
        else:
            setattr(into, f.name, mine + theirs)


def selfplay(
    spec: GameSpec,
    *,
    games: int,
    seed: int,
    players: int | None = None,
    bot: str = "random",
    seat_bots: Sequence[str] | None = None,
    options: Mapping[str, Any] | None = None,
    check_all_legal: bool = True,
    jobs: int = 1,
) -> SelfplayReport:
    """Play `games` games. Seat counts cycle through the game's range unless `players`.

    With jobs > 1 the games are shared among that many processes. Each game depends only on
    (seed, index), and the digest is taken over the games in index order, so the report and
    the digest are the same for any number of jobs."""
    parsed = spec.parse_options(options)
    for i in range(min(games, spec.max_seats - spec.min_seats + 1)):
        _lineup(spec, i, players, bot, seat_bots)  # a bad --players fails before any game
    kwargs = dict(seed=seed, players=players, bot=bot, seat_bots=seat_bots, parsed=parsed,
                  check_all_legal=check_all_legal)
    jobs = max(1, min(jobs, games))
    if jobs == 1:
        parts = [_play_games(spec, range(games), **kwargs)]
    else:
        import multiprocessing

        # Interleaved slices: seat counts and long games spread evenly over the processes.
        chunks = [(spec.id, range(j, games, jobs), kwargs) for j in range(jobs)]
        with multiprocessing.get_context("spawn").Pool(jobs) as pool:
            parts = pool.map(_play_chunk, chunks)
    report = SelfplayReport(game=spec.id)
    by_index: dict[int, list[str]] = {}
    if jobs == 1:
        by_index = dict(enumerate(parts[0][1]))
    else:
        for j, (_, hashes) in enumerate(parts):
            by_index.update(zip(range(j, games, jobs), hashes))
    for part, _ in parts:
        _merge(report, part)
    if jobs > 1:
        # Errors in index order, as a single process reports them.
        report.errors.sort(key=lambda e: _error_index(e, seed, spec.id))
    digest = hashlib.sha256()
    for i in range(games):
        for h in by_index[i]:
            digest.update(h.encode())
    report.digest = digest.hexdigest()
    return report


def _error_index(error: str, seed: int, game_id: str) -> int:
    prefix = f"selfplay-{game_id}-{seed}-"
    if error.startswith(prefix):
        head = error[len(prefix):].split(" ", 1)[0]
        if head.isdigit():
            return int(head)
    return 0
