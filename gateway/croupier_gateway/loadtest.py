"""`croupier loadtest`: tables played by bots through the gateway, as hard as asked, measured.

W load-generator processes (multiprocessing) each run asyncio clients (client.HttpGateway or
client.GrpcGateway) against the gateway. The N table slots are dealt round-robin to the game
types and the workers; each slot opens a table (create + a join per seat), plays it to the end
with bots (bots.play_seat: every seat follows its own stream and picks among its legal actions),
pausing a think time before each move, then opens the next one, until the duration is up.
--ramp spreads the slots' first tables evenly over its seconds.

--stagger (the default with a think time and no --ramp) starts the measured run in the steady
state of a live platform rather than with every table at its first move: before the start, each table
plays a random share of its first game (uniform over the bots' mean game length, which each
worker measures by playing a few games in process) with no think time. Those warm-up moves,
and the games that end within the warm-up, are not in the report's figures (it gives their
count and time under "stagger"). Without it, a run shorter than a game never sees a game end.

Latency is from a command's first try to its acknowledgement (the gateway's answer; moves are
submitted with wait=false, so the answer comes once the rules service has committed the
events): a command retried after a 429 or a 503 is one command, timed across its tries and
their back-off (TimedClient; a move's tries are play_seat's, with one command id). It goes
into log-bucket histograms (`Histogram`, ~1 % wide buckets, exact max) that the workers send
to the parent, which merges them: once a second for the progress line and the timeline, at
the end per command kind and per game.

At the end a sample of the finished games is checked: their log (the gateway's operator export
when an operator token is given, else read from Kafka) must pass the engine's audit, and the
gateway's final view of every seat and of a spectator must equal the fold of that log
(projection equals replay). Tables still running when the time is up (a table being opened
then included: its answer is waited for) are force-ended through the operator API when an
operator token is given, so none is left behind.

The report's fields are documented in docs/performance.md ("croupier loadtest").
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import math
import multiprocessing as mp
import os
import queue as queue_lib
import random
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from croupier.engine import registry
from croupier_gateway.client import GatewayError

REPORT_VERSION = 1
STAGGER_TIMEOUT_S = 1800.0  # how long the parent waits for the workers' warm-up (--stagger)
READY_TIMEOUT_S = 120.0  # ... and for a worker to be ready without one
ABORT_GRACE_S = 30.0  # a worker told to give up its warm-up has this long to report its tables
UNAVAILABLE_TRIES = 20  # a create or join answered 503 is tried this often with its command id (as a move is)
CREATE_ANSWER_GRACE_S = 10.0  # a create in flight when the run ends: how long its answer (its table) is waited for
STOP_GRACE_S = 30.0  # workers told to stop (SIGINT/SIGTERM of the load test) have this long to report
CHECK_BUDGET_S = 180.0  # the check of the sample, all told: a gateway (or Kafka) that hangs does not hang the end
FORCE_END_TRIES = 100  # a force-end answered 429 or 503 is tried again, within the budget, up to this often
FORCE_END_BUDGET_S = 120.0  # ... and the force-end of the tables left (those not ended by then: force_end_failed)
WARM_LINE_S = 10.0  # how often the warm-up's progress line is written when stderr is not a terminal
POLL_S = 0.2  # how often a worker looks whether it is told to stop (or its parent is gone)
EXIT_ON_SIGNAL = {"SIGINT": 130, "SIGTERM": 143, "SIGHUP": 129}  # 128 + the signal's number, as a shell says
EXPECTED_REFUSALS = {(409, None), (422, "not_your_turn"), (422, "game_over")}


# -- histograms ---------------------------------------------------------------------------


class Histogram:
    """Latencies in microseconds in log buckets: 64 per doubling (each ~1.1 % wide), so any
    percentile is within ~1.1 % of the exact one; count, sum, min and max are exact. Merging two
    is adding their counts, so workers send theirs and the parent adds them up."""

    PER_DOUBLING = 64

    def __init__(self) -> None:
        self.buckets: dict[int, int] = {}
        self.count = 0
        self.total_us = 0.0
        self.min_us = math.inf
        self.max_us = 0.0

    def record(self, seconds: float) -> None:
        us = max(seconds * 1e6, 1.0)
        i = int(math.log2(us) * self.PER_DOUBLING)
        self.buckets[i] = self.buckets.get(i, 0) + 1
        self.count += 1
        self.total_us += us
        self.min_us = min(self.min_us, us)
        self.max_us = max(self.max_us, us)

    def merge(self, other: Histogram) -> Histogram:
        for i, n in other.buckets.items():
            self.buckets[i] = self.buckets.get(i, 0) + n
        self.count += other.count
        self.total_us += other.total_us
        self.min_us = min(self.min_us, other.min_us)
        self.max_us = max(self.max_us, other.max_us)
        return self

    def percentile_us(self, q: float) -> float:
        """The value at quantile q (0..1): the middle of the bucket holding it, within [min, max]."""
        if not self.count:
            return 0.0
        rank = max(1, math.ceil(q * self.count))
        seen = 0
        for i in sorted(self.buckets):
            seen += self.buckets[i]
            if seen >= rank:
                middle = 2 ** ((i + 0.5) / self.PER_DOUBLING)
                return min(max(middle, self.min_us), self.max_us)
        return self.max_us

    def summary(self) -> dict[str, Any]:
        """count, and p50/p95/p99/max/mean in milliseconds (0 when empty)."""
        ms = [round(self.percentile_us(q) / 1000, 3) for q in (0.50, 0.95, 0.99)]
        return {"count": self.count, "p50_ms": ms[0], "p95_ms": ms[1], "p99_ms": ms[2],
                "max_ms": round(self.max_us / 1000, 3),
                "mean_ms": round(self.total_us / self.count / 1000, 3) if self.count else 0.0}

    def to_wire(self) -> dict[str, Any]:
        return {"b": self.buckets, "n": self.count, "s": self.total_us,
                "lo": self.min_us if self.count else None, "hi": self.max_us}

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> Histogram:
        h = cls()
        h.buckets = {int(k): int(v) for k, v in data["b"].items()}
        h.count = int(data["n"])
        h.total_us = float(data["s"])
        h.min_us = math.inf if data["lo"] is None else float(data["lo"])
        h.max_us = float(data["hi"])
        return h


# -- configuration ------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    games: tuple[str, ...]
    tables: int
    duration_s: float
    ramp_s: float = 0.0
    protocol: str = "grpc"
    bot: str = "heuristic"
    think_ms: float = 0.0
    workers: int = 2
    target: str = "127.0.0.1:18081"
    seats: int | None = None
    http_target: str = "127.0.0.1:18080"
    operator_token: str = ""
    check: int = 10
    cleanup: bool = True
    seed: int = 0
    progress: bool = True
    stagger: bool = False
    # Where a bot's think time counts from (--think-from): the table's previous move ("move": a
    # table makes one move per think time, as the offered load says, whatever the views' lag),
    # or the view the bot acts on ("view": every lag adds to the pause, and the load offered
    # falls as the stack slows).
    think_from: str = "move"

    def seats_for(self, game: str) -> int:
        spec = registry.get(game)
        wanted = self.seats if self.seats else 2
        return min(spec.max_seats, max(spec.min_seats, wanted))

    def game_of_slot(self, slot: int) -> str:
        return self.games[slot % len(self.games)]

    def as_dict(self) -> dict[str, Any]:
        return {"games": list(self.games), "tables": self.tables, "duration_s": self.duration_s,
                "ramp_s": self.ramp_s, "protocol": self.protocol, "bot": self.bot, "think_ms": self.think_ms,
                "workers": self.workers, "target": self.target, "seats": self.seats, "check": self.check,
                "seed": self.seed,  # the bots' and think times' (--seed): what a run again needs
                "stagger": self.stagger, "think_from": self.think_from, "http_target": self.http_target,
                # Whether a token was given (never the token) and --keep-tables: what became of
                # the tables the time cut short.
                "operator": bool(self.operator_token), "keep_tables": not self.cleanup}


def make_client(protocol: str, address: str, timeout_s: float = 30.0, connections: int = 100):
    """One client per worker. Over HTTP, as many connections as the worker's seats can use at
    once, so that no command waits for a free connection (that wait would count as latency)."""
    from croupier_gateway.client import GrpcGateway, HttpGateway

    if protocol == "grpc":
        return GrpcGateway(address, timeout_s=timeout_s)
    return HttpGateway(f"http://{address}", timeout_s=timeout_s, max_connections=max(100, connections))


# -- a worker -----------------------------------------------------------------------------


@dataclass
class Tally:
    """What one worker measured since its last tick (`tick`) and in all (`kinds`, `games`)."""

    tick: Histogram = field(default_factory=Histogram)
    tick_errors: int = 0
    kinds: dict[str, Histogram] = field(default_factory=dict)
    games: dict[str, Histogram] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    refusals: dict[str, int] = field(default_factory=dict)
    rate_limited: int = 0
    opened: int = 0
    finished: dict[str, int] = field(default_factory=dict)

    def ok(self, kind: str, game: str, seconds: float) -> None:
        self.tick.record(seconds)
        self.kinds.setdefault(kind, Histogram()).record(seconds)
        self.games.setdefault(game, Histogram()).record(seconds)

    def error(self, what: str) -> None:
        self.errors[what] = self.errors.get(what, 0) + 1
        self.tick_errors += 1


def error_kind(exc: BaseException) -> str:
    if isinstance(exc, GatewayError):
        return f"{exc.status}:{exc.code}"
    return f"exception:{type(exc).__name__}"


def lost_answer(exc: BaseException) -> bool:
    """Whether a call failed without an answer (the connection dropped, refused or timed out),
    so that what it asked may or may not have been done."""
    import httpx

    return isinstance(exc, (httpx.TransportError, ConnectionError, TimeoutError))


class TimedClient:
    """The gateway client with every command timed: create_table, join (as join_seat) and
    submit (by the action's type). Everything else passes through untouched.

    A command is timed once, from its first try to its acknowledgement: the retries of a 429
    or a 503 (here, for create_table and join_seat) and a move's retries (play_seat's, with the same
    command id) are in its latency, as a player would wait them."""

    RETRIED = (429, 503)  # the answers play_seat tries a move again after

    def __init__(self, client: Any, owner: Any, game: str, running: dict[str, str] | None = None):
        self.client = client
        self.owner = owner  # anything with a `tally` (a Worker): read at each call, as it is reset
        self.game = game
        self.running = running  # a table is "running" from its creation: the time may cut it short
        self.table: str | None = None  # the last table this client created
        # A move's command id -> when its first try was sent, on the latency clock (`clock`)
        # and on the pacing clock (time.monotonic()), until it is answered.
        self.first_try: dict[str, tuple[float, float]] = {}
        self.clock = time.perf_counter
        # time.monotonic() when the table's last accepted move was first sent (or when the
        # table was seated): with the moves not yet answered, where a think time counts from
        # with --think-from move (`since`).
        self.last_move: float | None = None
        self.due: tuple[float, float] | None = None  # (since, when): the table's next move, once drawn

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    @property
    def tally(self) -> Tally:
        return self.owner.tally

    async def _timed(self, kind: str, call, *, retry_throttled: bool = True, t0: float | None = None):
        t0 = self.clock() if t0 is None else t0  # once, before the first try
        throttled = unavailable = 0
        while True:
            try:
                result = await call()
            except GatewayError as exc:
                if exc.status == 429:
                    self.tally.rate_limited += 1
                    throttled += 1
                    if not retry_throttled:
                        raise
                    if throttled >= 60:
                        raise GatewayError(429, "rate_limited", f"{kind} still rate limited after 60 tries") from None
                    await asyncio.sleep(min(0.05 * 2**(throttled - 1), 1.0))
                    continue
                code = exc.code if exc.status == 422 else None
                if (exc.status, code) in EXPECTED_REFUSALS:
                    # Another seat moved first, or the game ended: the bot has a newer view coming.
                    name = "conflict" if exc.status == 409 else exc.code
                    self.tally.refusals[name] = self.tally.refusals.get(name, 0) + 1
                else:
                    self.tally.error(error_kind(exc))
                    exc.counted = True  # type: ignore[attr-defined]
                if exc.status == 503 and retry_throttled:
                    # A create or join answered 503 may have been done all the same (committed,
                    # the answer lost): tried again with its command id, the gateway answers
                    # with that table or seat, which would otherwise be left open with nobody
                    # who knows it. As play_seat does for a move: 20 tries, then given up.
                    unavailable += 1
                    if unavailable >= UNAVAILABLE_TRIES:
                        raise GatewayError(0, "gave_up", f"{kind} still answered {exc.status} {exc.code} after "
                                                         f"{UNAVAILABLE_TRIES} tries") from exc
                    await asyncio.sleep(min(0.05 * 2**(unavailable - 1), 1.0))
                    continue
                raise
            except Exception as exc:
                if not (retry_throttled and lost_answer(exc)):
                    raise
                # The same for a create or join whose answer never came (over HTTP: the
                # connection dropped or timed out; gRPC answers those 503).
                self.tally.error(error_kind(exc))
                exc.counted = True  # type: ignore[attr-defined]
                unavailable += 1
                if unavailable >= UNAVAILABLE_TRIES:
                    raise GatewayError(0, "gave_up", f"{kind} still unanswered ({type(exc).__name__}) after "
                                                     f"{UNAVAILABLE_TRIES} tries") from exc
                await asyncio.sleep(min(0.05 * 2**(unavailable - 1), 1.0))
                continue
            self.tally.ok(kind, self.game, self.clock() - t0)
            return result

    async def create_table(self, game_type: str, seats: int | None = None, options=None, command_id=None):
        # One command id for every try: a retry cannot open a second table.
        cid = command_id or uuid.uuid4().hex
        # retry=False: the report counts what the gateway answered, retryable errors included.
        call = asyncio.ensure_future(self._timed("create_table", lambda: self.client.create_table(
            game_type, seats, options, cid, retry=False)))
        try:
            created = await asyncio.shield(call)
        except asyncio.CancelledError:
            # The time is up (or the run stopped) while the gateway opens the table: it opens
            # it all the same (committed, then waiting for its projection), and a table nobody
            # knows of is never force-ended. Its answer is waited for, a while, so that the
            # table is counted and ended with the others; then the slot stops as it was told.
            with contextlib.suppress(Exception, asyncio.CancelledError):
                self._opened(game_type, await asyncio.wait_for(call, CREATE_ANSWER_GRACE_S))
            raise
        return self._opened(game_type, created)

    def since(self) -> float | None:
        """Where the table's next think time counts from: its last move, the latest of those
        accepted and those still unanswered. A view a move brought can come before that
        move's answer (the projector's path is not the rules service's): counted from the
        last accepted move alone, the next seat would start its think before the move that
        gave it the turn, and the table would make more moves than offered."""
        if not self.first_try:
            return self.last_move
        return max(self.last_move or 0.0, *(sent for _, sent in self.first_try.values()))

    def _opened(self, game_type: str, created: dict) -> dict:
        self.tally.opened += 1
        self.table = created["game_id"]
        if self.running is not None:
            self.running[created["game_id"]] = game_type
        return created

    async def join(self, game_id: str, seat: int, player: str = "", bot: str | None = None, entropy: str = ""):
        cid = uuid.uuid4().hex  # one for every try
        return await self._timed("join_seat", lambda: self.client.join(game_id, seat, player, bot, entropy, cid,
                                                                       retry=False))

    async def submit(self, game_id: str, token: str, command_id: str, action: Mapping[str, Any], *,
                     expected_version: int | None = None, wait: bool = True):
        # play_seat backs off and retries a 429 or a 503 itself, with the same command id: the
        # move is timed from that id's first try.
        t0, sent = self.first_try.setdefault(command_id, (self.clock(), time.monotonic()))
        again = False
        try:
            result = await self._timed(str(action.get("type") or "move"), lambda: self.client.submit(
                game_id, token, command_id, action, expected_version=expected_version, wait=wait),
                retry_throttled=False, t0=t0)
            self.last_move = max(self.last_move or sent, sent)
            return result
        except GatewayError as exc:
            again = exc.status in self.RETRIED
            raise
        finally:
            if not again:
                self.first_try.pop(command_id, None)


@dataclass
class FinishedGame:
    game_id: str
    game_type: str
    tokens: list[str]


class Worker:
    def __init__(self, index: int, cfg: Config, start: float, out: Any):
        self.index = index
        self.cfg = cfg
        self.start = start  # time.monotonic() of the start, the same clock in every process
        self.deadline = start + cfg.duration_s
        self.out = out
        self.tally = Tally()
        self.running: dict[str, str] = {}  # game_id -> game type, tables being played
        self.failed: dict[str, str] = {}  # tables a failure stopped (no bot plays them): not over
        # The last --check finished games of each type: those the check may sample. The last,
        # not the first: their seats' tokens (which read the views checked) must still be good
        # after the run, and a run may last longer than a token (CROUPIER_TOKEN_TTL_S, 12 h).
        self.samples: dict[str, collections.deque[FinishedGame]] = {}
        self.rng = random.Random(f"{cfg.seed}:{index}")
        self.measured = asyncio.Event()  # set when the measured run starts (at once without stagger)
        self.warming = 0  # tables still playing their warm-up moves
        self.warm_moves = 0
        self.warm_finished = 0  # games that ended within the warm-up: not in the report's figures
        self.all_warm = asyncio.Event()
        self.stop: Any = None  # the parent's "stop now" (an mp.Event): SIGINT/SIGTERM of the load test
        self.parent_pid: int | None = None  # set in a worker process: its parent gone is a stop too
        self.stopped_by: str | None = None  # why the run ended early: "parent", "SIGTERM", "orphaned"

    def stopping(self) -> bool:
        """Whether to end the run now: the parent said so (it was interrupted), this process
        was sent SIGTERM, or the parent is gone (killed: nobody reads the figures any more)."""
        if self.stopped_by is None:
            if self.stop is not None and self.stop.is_set():
                self.stopped_by = "parent"
            elif self.parent_pid is not None and os.getppid() != self.parent_pid:
                self.stopped_by = "orphaned"
        return self.stopped_by is not None

    async def until(self, deadline: float) -> None:
        """Sleep to `deadline` (time.monotonic()), or less if told to stop."""
        while not self.stopping():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            await asyncio.sleep(min(left, POLL_S))

    async def wait_go(self, go: Any) -> None:
        """Wait for the parent's start signal, or to be told to stop."""
        loop = asyncio.get_running_loop()
        while not await loop.run_in_executor(None, go.wait, POLL_S):
            if self.stopping():
                return

    def mean_moves(self, game: str, games: int = 3) -> float:
        """The bots' mean moves per game of `game`, from a few games played in process."""
        from croupier.engine.selfplay import SelfplayReport, play_one

        spec = registry.get(game)
        seats = self.cfg.seats_for(game)
        report = SelfplayReport(game=game)
        for i in range(games):
            play_one(spec, seats=seats, seat_bots=[self.cfg.bot] * seats, options=spec.parse_options({}),
                     seed=self.cfg.seed, index=i, report=report, verify=False)
        return report.commands / games

    def warm_pace(self, target: int, think: Callable[[], float]):
        """The pause before each move of a staggered table: none for its first `target` moves,
        then (once the table is marked warm) it waits for the measured start, then `think()`.
        Returns the pace function and the `mark` that says the table is warm."""
        moves = 0
        done = False

        def mark() -> None:
            nonlocal done
            if not done:
                done = True
                self.warming -= 1
                if self.warming == 0:
                    self.all_warm.set()

        async def pace() -> float:
            nonlocal moves
            moves += 1
            if moves <= target and not self.measured.is_set():
                self.warm_moves += 1
                return 0.0
            mark()
            await self.measured.wait()
            return think()

        return pace, mark

    def pause(self, timed: TimedClient) -> float:
        """The pause before a move of the table `timed` plays: with --think-from move, a think
        time counted from the table's last move (or its seating), so the time its view took
        to come is taken off the pause and the table makes one move per think time, as
        offered; nothing when that time is already past (a slow stack then serves less than
        offered). With --think-from view, a think time from the view itself."""
        since = timed.since()
        if not self.cfg.think_ms or self.cfg.think_from != "move" or since is None:
            return self.think()
        if timed.due is not None and timed.due[0] == since:
            # Another seat of the table may move from the same last move (both can act): the
            # table's think is one draw, and the seats race to it (one is refused, a conflict,
            # and thinks again from the winner's move). A draw each, the first of two thinks
            # would win: tables whose seats can act at once would move faster than offered.
            return max(0.0, timed.due[1] - time.monotonic())
        if since < self.start:
            # The table's first move of the measured run, after a warm-up at full speed (or
            # one made before the start): as far into its think time as a table in a steady
            # stream of moves would be at a random moment, so that the tables make their moves
            # at the offered rate from the first second (from the start, each would wait a
            # whole think time: half a move per table lost from the measured run). A random
            # moment falls in a long think more often: its think is drawn in proportion to its
            # length (x T on [0.5, 1.5], by its inverse CDF), and the moment uniformly within it.
            mean = self.cfg.think_ms / 1000
            covering = mean * math.sqrt(0.25 + 2 * self.rng.random())
            timed.due = (since, self.start + covering * self.rng.random())
        else:
            timed.due = (since, since + self.think())
        return max(0.0, timed.due[1] - time.monotonic())

    def think(self) -> float:
        """A think time drawn uniformly from [0.5, 1.5] x --think-ms: the mean is --think-ms,
        and tables that started together drift apart instead of moving in lockstep."""
        if not self.cfg.think_ms:
            return 0.0
        return self.cfg.think_ms / 1000 * self.rng.uniform(0.5, 1.5)

    async def slot(self, client: Any, slot: int) -> None:
        from croupier_gateway.bots import create_and_seat, play_seat

        cfg = self.cfg
        game = cfg.game_of_slot(slot)
        timed = TimedClient(client, self, game, self.running)
        mark = None

        def paced() -> float:
            return self.pause(timed)

        if cfg.stagger:
            pace, mark = self.warm_pace(self.rng.randrange(max(1, int(self.moves_per_game[game]))), paced)
        else:
            pace = paced
            await asyncio.sleep(max(0.0, self.start + cfg.ramp_s * slot / cfg.tables - time.monotonic()))
        while time.monotonic() < self.deadline:
            timed.table = None
            tokens: list[str] = []
            problem: Exception | None = None
            try:
                bots = [cfg.bot] * cfg.seats_for(game)
                _, tokens = await create_and_seat(timed, game, bots)
                timed.last_move = time.monotonic()  # a new table's first think counts from its seating
                seats = [asyncio.ensure_future(play_seat(timed, timed.table, seat, token, cfg.bot, seed=cfg.seed,
                                                         pace_s=pace)) for seat, token in enumerate(tokens)]
                try:
                    await asyncio.gather(*seats)
                finally:
                    for task in seats:  # one seat failed: stop the others too
                        task.cancel()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                problem = exc
            finally:
                timed.first_try.clear()  # a move given up on (or cancelled) is timed no more
            self.table_ended(game, timed.table, tokens, problem)
            if mark is not None:  # the first game ended (or failed): the slot's warm-up is over
                mark()
                mark = None
                pace = paced
                await self.measured.wait()
            elif problem is not None and not tokens:
                await asyncio.sleep(0.5)  # could not open a table: do not spin

    def table_ended(self, game: str, game_id: str | None, tokens: list[str], problem: Exception | None) -> None:
        """Count a table whose game ended (problem None) or that a failure stopped. What ends
        before the measured start belongs to the warm-up (`measured` is set, and the tally
        swapped, in one step): a game over then is counted apart and never sampled."""
        if game_id is not None:
            self.running.pop(game_id, None)
        if problem is not None:
            if not getattr(problem, "counted", False):
                self.tally.error(error_kind(problem))
            if game_id is not None:
                self.failed[game_id] = game  # not over, and no bot plays it now: force-ended at the end
        elif not self.measured.is_set():
            self.warm_finished += 1
        else:
            self.tally.finished[game] = self.tally.finished.get(game, 0) + 1
            kept = self.samples.setdefault(game, collections.deque(maxlen=max(1, self.cfg.check)))
            kept.append(FinishedGame(game_id, game, tokens))

    def unfinished(self) -> list[list[str]]:
        """The tables not over: cut short by the time (running) or stopped by a failure."""
        return [[gid, g] for gid, g in {**self.running, **self.failed}.items()]

    async def ticker(self) -> None:
        second = 0
        while True:
            second += 1
            await asyncio.sleep(max(0.0, self.start + second - time.monotonic()))
            self.send_tick(second)

    def send_tick(self, second: int) -> None:
        t = self.tally
        self.out.put({"type": "tick", "worker": self.index, "t": second, "hist": t.tick.to_wire(),
                      "errors": t.tick_errors, "running": len(self.running),
                      "finished": sum(t.finished.values())})
        t.tick = Histogram()
        t.tick_errors = 0

    async def warm_up(self, abort: Any) -> None:
        """Wait for every table to be warm; raise WarmUpAborted if the parent gives up first.
        Tells the parent how far it is about once a second, for its progress line."""
        tables, told = self.warming, 0.0
        while not self.all_warm.is_set():
            if time.monotonic() - told >= 1.0:
                told = time.monotonic()
                self.out.put({"type": "warming", "worker": self.index, "moves": self.warm_moves,
                              "warm": tables - self.warming, "tables": tables})
            if self.stopping():
                raise WarmUpStopped(self.stopped_by)
            if abort is not None and abort.is_set():
                raise WarmUpAborted(f"the parent gave up waiting for its warm-up ({self.warming} table(s) "
                                    "still warming up)")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.all_warm.wait(), 0.5)

    async def run(self, go: Any = None, start_value: Any = None, abort: Any = None, stop: Any = None) -> None:
        cfg = self.cfg
        self.stop = stop if stop is not None else self.stop
        slots = [s for s in range(cfg.tables) if s % cfg.workers == self.index]
        client = make_client(cfg.protocol, cfg.target,
                             connections=sum(cfg.seats_for(cfg.game_of_slot(s)) for s in slots))
        tasks: list[asyncio.Task] = []
        ticker = None
        warm_stopped: dict[str, Any] | None = None  # the warm-up's figures, when told to stop in it
        try:
            if cfg.stagger:
                self.moves_per_game = {g: self.mean_moves(g) for g in sorted({cfg.game_of_slot(s) for s in slots})}
                self.warming = len(slots)
                if not slots:
                    self.all_warm.set()
                self.deadline = math.inf
            elif go is not None:
                self.out.put({"type": "ready", "worker": self.index})
                await self.wait_go(go)
                self.start = start_value.value if go.is_set() else time.monotonic()
                self.deadline = self.start + cfg.duration_s
            if not cfg.stagger:
                self.measured.set()
            tasks = [asyncio.create_task(self.slot(client, s)) for s in slots]
            if cfg.stagger:
                warm_started = time.monotonic()

                def warm_figures() -> dict[str, Any]:
                    return {"moves": self.warm_moves, "seconds": round(time.monotonic() - warm_started, 3),
                            "errors": sum(self.tally.errors.values()), "errors_by_kind": dict(self.tally.errors),
                            "finished": self.warm_finished}

                try:
                    await self.warm_up(abort)
                except WarmUpStopped:
                    # Told to stop in the warm-up: no measured run; its tables (counted once
                    # they are all stopped, below) are not over.
                    warm_stopped = warm_figures()
                    return
                self.out.put({"type": "ready", "worker": self.index, "warm": warm_figures()})
                if go is not None:
                    await self.wait_go(go)
                    self.start = start_value.value if go.is_set() else time.monotonic()
                else:
                    self.start = time.monotonic()
                self.deadline = self.start + cfg.duration_s
                await self.until(self.start)
                # The warm-up is not in the report: the measured tally starts here, with the
                # tables in play at the start (those not over; a failed one stays not over).
                self.tally = Tally(opened=len(self.running) + len(self.failed))
                self.measured.set()
            ticker = asyncio.create_task(self.ticker())
            await self.until(self.deadline)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if ticker is not None:
                ticker.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await ticker
                # What completed since the last tick belongs to the run's last second.
                self.send_tick(max(1, min(math.ceil(time.monotonic() - self.start), math.ceil(self.cfg.duration_s))))
            with contextlib.suppress(Exception):
                await client.close()
            if warm_stopped is not None:  # (returned from the warm-up: its final is here)
                self.tally = Tally(opened=len(self.running) + len(self.failed))
                self.send_final(warm_stopped)
        self.send_final()

    def send_final(self, warm: dict[str, Any] | None = None) -> None:
        t = self.tally
        self.out.put({
            "type": "final", "worker": self.index, "stopped": self.stopped_by, "warm": warm,
            "kinds": {k: h.to_wire() for k, h in t.kinds.items()},
            "games": {g: h.to_wire() for g, h in t.games.items()},
            "errors": t.errors, "refusals": t.refusals, "rate_limited": t.rate_limited,
            "opened": t.opened, "finished": t.finished, "failed": len(self.failed),
            "unfinished": self.unfinished(),
            "samples": [[f.game_id, f.game_type, f.tokens] for kept in self.samples.values() for f in kept],
        })


class WarmUpAborted(Exception):
    """The parent gave up waiting for this worker's warm-up."""


class WarmUpStopped(Exception):
    """The worker was told to stop (the load test was interrupted) in its warm-up."""


def worker_main(index: int, cfg: Config, start_value: Any, go: Any, out: Any, abort: Any = None,
                stop: Any = None) -> None:
    """A load-generator process: waits for the start signal, then runs its table slots.

    Ctrl-C reaches the whole process group: a worker leaves SIGINT to its parent, which tells
    it to stop (`stop`) and still hears its figures and tables. SIGTERM of the worker alone
    ends its run early too (reported, its tables force-ended), and so does its parent's end."""
    import structlog

    worker = None
    parent = os.getppid()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # a terminal hung up reaches the group too: as Ctrl-C
    try:
        structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))  # errors only
        # Load every game and bot before the start, so that no table's first command pays for it.
        import croupier_gateway.bots  # noqa: F401
        from croupier.engine.bots import bot_for

        for game in cfg.games:
            bot_for(registry.get(game), cfg.bot)
        from croupier.runtime import run, tune_gc

        tune_gc()  # as the services do: a generator that collects less serves more
        worker = Worker(index, cfg, 0.0, out)
        worker.parent_pid = parent

        def on_term(signum: int, frame: Any) -> None:
            worker.stopped_by = worker.stopped_by or "SIGTERM"

        signal.signal(signal.SIGTERM, on_term)
        run(worker.run(go, start_value, abort, stop))
    except Exception as exc:  # the parent must always hear back, and of the tables left open
        out.put({"type": "failed", "worker": index, "error": f"{type(exc).__name__}: {exc}",
                 "unfinished": worker.unfinished() if worker is not None else []})


# -- the parent: progress, merge, check, report ----------------------------------------------


@contextlib.contextmanager
def hangup_ignored():
    """SIGHUP ignored while the workers (and multiprocessing's resource tracker) are started:
    they inherit it, so that the hang-up of the terminal, which reaches the whole process
    group, does not kill them (and their tables with them) before a worker's own handling
    is in place, nor the tracker (whose successor would not know the queue's semaphores)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGHUP, old)


def say(text: str = "", end: str = "\n") -> None:
    """A line on stderr, if it can still be written: after SIGHUP the terminal is gone (EIO),
    and that must not stop the run from reporting and ending its tables."""
    with contextlib.suppress(OSError, ValueError):
        print(text, file=sys.stderr, end=end, flush=True)


class Interrupt:
    """SIGINT (Ctrl-C), SIGTERM or SIGHUP of the load test while its workers run: the first one asks
    them to stop, and the run ends as if its time were up (a report of what was measured, its
    tables force-ended); a second one stops at once (KeyboardInterrupt)."""

    # SIGHUP: the terminal it ran in is gone (an ssh connection dropped): the tables are ended
    # as for Ctrl-C rather than left with nobody to play them.
    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self) -> None:
        self.name: str | None = None  # "SIGINT" or "SIGTERM" once one came
        self.at: float | None = None  # when (time.monotonic())

    def __call__(self, signum: int, frame: Any = None) -> None:
        if self.name is not None:
            raise KeyboardInterrupt
        self.name = signal.Signals(signum).name
        self.at = time.monotonic()

    @contextlib.contextmanager
    def installed(self):
        if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
            yield self
            return
        old = {sig: signal.signal(sig, self) for sig in self.SIGNALS}
        try:
            yield self
        finally:
            for sig, handler in old.items():
                signal.signal(sig, handler)


class Timeline:
    def __init__(self) -> None:
        self.interrupted: str | None = None  # the signal that ended the run early
        self.ran_s: float | None = None  # ... and how long the measured run had run then
        self.seconds: dict[int, dict[str, Any]] = {}
        self.stagger: dict[str, Any] | None = None  # the warm-up's moves, seconds and errors
        self.window_unix: list[float] | None = None  # the measured run's start and end, Unix time

    def add(self, msg: Mapping[str, Any]) -> None:
        row = self.seconds.setdefault(msg["t"], {"hist": Histogram(), "errors": 0, "running": {}, "finished": {}})
        row["hist"].merge(Histogram.from_wire(msg["hist"]))
        row["errors"] += msg["errors"]
        row["running"][msg["worker"]] = msg["running"]
        row["finished"][msg["worker"]] = msg["finished"]

    def row(self, t: int) -> dict[str, Any]:
        row = self.seconds[t]
        h = row["hist"]
        return {"t": t, "commands": h.count, "p50_ms": round(h.percentile_us(0.5) / 1000, 3),
                "p99_ms": round(h.percentile_us(0.99) / 1000, 3), "errors": row["errors"],
                "tables_running": sum(row["running"].values()), "tables_finished": sum(row["finished"].values())}

    def rows(self) -> list[dict[str, Any]]:
        return [self.row(t) for t in sorted(self.seconds)]


def progress_line(row: Mapping[str, Any], errors_total: int) -> str:
    return (f"t={row['t']:>4}s  {row['commands']:>6} cmd/s  p50 {row['p50_ms']:>7.1f} ms  p99 {row['p99_ms']:>7.1f} ms  "
            f"errors {errors_total}  tables running {row['tables_running']} finished {row['tables_finished']}")


def await_ready(cfg: Config, procs: Sequence[Any], out: Any, abort: Any,
                interrupt: Interrupt | None = None) -> tuple[list[dict], list[dict], set[int]]:
    """Wait for every worker to be ready (after its warm-up, with --stagger): returns the warm-up
    figures of those ready, the failure reports of the others, and the workers given up on
    (nothing of theirs counts after). It never waits on a dead worker: one that dies before it
    is ready is a failure, as one that fails during the run is; so is one not ready in time,
    which is first told to give up its warm-up and report the tables it opened (so that they
    are force-ended), then ended. An interrupt (SIGINT/SIGTERM) ends the wait at once; a
    worker that stopped early on its own (SIGTERM) has sent its final report instead."""
    warm: list[dict] = []
    early: list[dict] = []
    gone: set[int] = set()
    answered: set[int] = set()
    warming: dict[int, Mapping[str, Any]] = {}  # each worker's last word on its warm-up
    started, shown = time.monotonic(), time.monotonic()
    tty = sys.stderr.isatty()
    line_open = False  # a progress line on the terminal, not ended yet

    def take(msg: Mapping[str, Any]) -> None:
        if msg["type"] == "warming":
            warming[msg["worker"]] = msg
            return
        if msg.get("worker") in answered or msg["type"] not in ("ready", "failed", "final"):
            return
        answered.add(msg["worker"])
        if msg["type"] in ("failed", "final"):
            early.append(dict(msg))
        if msg.get("warm"):
            warm.append(msg["warm"])

    def give_up(i: int, error: str) -> None:
        answered.add(i)
        gone.add(i)
        early.append({"type": "failed", "worker": i, "error": error})

    limit = STAGGER_TIMEOUT_S if cfg.stagger else READY_TIMEOUT_S
    ready_by = time.monotonic() + limit
    grace_by = None
    while len(answered) < len(procs):
        if interrupt is not None and interrupt.name:
            break
        if cfg.progress and warming and time.monotonic() - shown >= (1.0 if tty else WARM_LINE_S):
            # The warm-up of a thousand tables takes minutes: how far it is, not silence.
            shown = time.monotonic()
            warm_now = sum(m["tables"] if i in answered else m["warm"] for i, m in warming.items())
            say(f"{chr(13) if tty else ''}stagger: {warm_now:,} of {cfg.tables:,} tables at their starting point, "
                f"{sum(m['moves'] for m in warming.values()):,} warm-up moves, {shown - started:.0f} s",
                end="" if tty else "\n")
            line_open = tty
        try:
            take(out.get(timeout=0.5))
            continue
        except queue_lib.Empty:
            pass
        for i, p in enumerate(procs):
            if i not in answered and not p.is_alive():
                # Its last message may still be on its way: read what is there before calling it dead.
                with contextlib.suppress(queue_lib.Empty):
                    while True:
                        take(out.get(timeout=0.2))
                if i not in answered:
                    give_up(i, f"the worker died before it was ready (exit code {p.exitcode})")
        now = time.monotonic()
        if grace_by is None and now > ready_by:
            abort.set()  # a worker still warming up stops its tables and reports them
            grace_by = now + ABORT_GRACE_S
        elif grace_by is not None and now > grace_by:
            what = "its warm-up (--stagger) was not over" if cfg.stagger else "it was not ready"
            for i, p in enumerate(procs):
                if i not in answered:
                    p.terminate()
                    give_up(i, f"{what} after {limit:g} s")
    if line_open:
        say()
    return warm, early, gone


def warm_figures(warm: Sequence[Mapping[str, Any]], seconds: float) -> dict[str, Any]:
    kinds: dict[str, int] = {}
    for w in warm:
        for kind, n in w.get("errors_by_kind", {}).items():
            kinds[kind] = kinds.get(kind, 0) + n
    return {"moves": sum(w["moves"] for w in warm), "seconds": seconds, "errors": sum(w["errors"] for w in warm),
            "errors_by_kind": kinds, "finished": sum(w.get("finished", 0) for w in warm)}


def run_workers(cfg: Config, interrupt: Interrupt | None = None) -> tuple[list[dict], Timeline, float]:
    interrupt = interrupt or Interrupt()
    # spawn, not fork: a forked child would inherit the parent's gRPC state.
    ctx = mp.get_context("spawn")
    with hangup_ignored():  # spawn's helper process, which the queue's semaphores start: started now
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
    out = ctx.Queue()
    go = ctx.Event()
    abort = ctx.Event()
    stop = ctx.Event()
    start_value = ctx.Value("d", 0.0)
    procs = [ctx.Process(target=worker_main, args=(i, cfg, start_value, go, out, abort, stop), daemon=True)
             for i in range(cfg.workers)]
    with hangup_ignored():  # what they start with: a hang-up of the terminal is the parent's to handle
        for p in procs:
            p.start()
    warm_started = time.monotonic()
    if cfg.stagger and cfg.progress:
        say("stagger: playing each table to a random point of its first game ...")
    warm, early, gone = await_ready(cfg, procs, out, abort, interrupt)
    warm_seconds = round(time.monotonic() - warm_started, 3)
    if warm and not interrupt.name and cfg.progress:
        say(f"stagger: {sum(w['moves'] for w in warm)} warm-up moves in {warm_seconds:g} s; the measured run "
            "starts now")
    start_value.value = time.monotonic() + 0.2
    go.set()
    timeline = Timeline()
    measured_from = time.time() + 0.2
    timeline.window_unix = [round(measured_from, 3), round(measured_from + cfg.duration_s, 3)]
    finals: list[dict] = list(early)
    errors_total = 0
    shown = 0
    tty = sys.stderr.isatty()
    # The workers stop at the deadline and then cancel their tables; allow them time for it.
    give_up = start_value.value + cfg.duration_s + 120
    while len(finals) < cfg.workers:
        if interrupt.name and not stop.is_set():
            # Interrupted: the workers end their run now (or their warm-up) and report.
            stop.set()
            give_up = min(give_up, time.monotonic() + STOP_GRACE_S)
            say(f"{chr(13) + chr(10) if tty else ''}croupier loadtest: {interrupt.name}: stopping the run "
                "(again to stop at once)")
        try:
            msg = out.get(timeout=0.5)
        except queue_lib.Empty:
            msg = None
            if time.monotonic() > give_up or not any(p.is_alive() for p in procs):
                break
        if msg is not None:
            if msg.get("worker") in gone:
                pass  # given up on before the start: already counted as failed
            elif msg["type"] == "tick":
                timeline.add(msg)
                errors_total += msg["errors"]
            elif msg["type"] in ("final", "failed"):
                finals.append(msg)
                if msg.get("warm"):  # stopped in its warm-up
                    warm.append(msg["warm"])
            elif msg["type"] == "ready" and msg.get("warm"):  # ready as the parent stopped waiting
                warm.append(msg["warm"])
        # A second is shown once every worker still running has reported it: not one that has
        # reported its end (it ticks no more) or is gone without a word (killed).
        while cfg.progress:
            nxt = shown + 1
            row = timeline.seconds.get(nxt)
            reported_end = {f.get("worker") for f in finals}
            if row is None or any(i not in row["running"] for i, p in enumerate(procs)
                                  if i not in reported_end and p.is_alive()):
                break
            shown = nxt
            line = progress_line(timeline.row(nxt), errors_total)
            say(("\r" + line) if tty else line, end="" if tty else "\n")
    if cfg.progress and tty:
        say()
    elapsed = max(0.0, time.monotonic() - start_value.value)
    timeline.stagger = warm_figures(warm, warm_seconds) if cfg.stagger and (warm or interrupt.name) else None
    if interrupt.name:
        timeline.interrupted = interrupt.name
        timeline.ran_s = min(max(0.0, (interrupt.at or 0.0) - start_value.value), cfg.duration_s)
        timeline.window_unix[1] = round(timeline.window_unix[0] + timeline.ran_s, 3)
    ended: set[int] = set()
    for i, p in enumerate(procs):
        p.join(10)
        if p.is_alive():  # hung: ended here (SIGTERM, which a worker takes as "stop"; then SIGKILL)
            ended.add(i)
            p.terminate()
            p.join(5)
            if p.is_alive():
                p.kill()
                p.join(5)
    reported = {f.get("worker") for f in finals}
    for i, p in enumerate(procs):
        if i not in reported:  # gone without a word (the OOM killer, kill -9), or hung and ended here
            how = "it hung and was ended" if i in ended else f"it died (exit code {p.exitcode})"
            finals.append({"type": "failed", "worker": i, "error": f"the worker did not report back: {how}"})
    return finals, timeline, elapsed


async def fetch_log(cfg: Config, game_id: str, game_type: str) -> tuple[list, str]:
    """The game's log: the gateway's operator export when an operator token is known, else
    read from Kafka (CROUPIER_KAFKA_BOOTSTRAP, CROUPIER_TOPIC_PREFIX)."""
    from croupier.engine.envelope import Envelope

    if cfg.operator_token:
        import httpx

        async with httpx.AsyncClient(base_url=f"http://{cfg.http_target}", timeout=60) as http:
            r = await http.get(f"/v1/operator/games/{game_id}/export",
                               headers={"authorization": f"Bearer {cfg.operator_token}"})
            r.raise_for_status()
            return [Envelope.from_dict(json.loads(line)) for line in r.text.splitlines() if line.strip()], "gateway-export"
    from croupier.rules.settings import KafkaSettings
    from croupier.rules.store import read_game

    envelopes = await asyncio.get_running_loop().run_in_executor(
        None, read_game, KafkaSettings.from_env(), game_id, [game_type])
    return envelopes, "kafka"


def choose_sample(samples: Sequence[Sequence[Any]], n: int, seed: int) -> list[Sequence[Any]]:
    """Up to n finished games, spread over the game types (round-robin)."""
    by_type: dict[str, list] = {}
    for s in samples:
        by_type.setdefault(s[1], []).append(s)
    rng = random.Random(seed)
    for kept in by_type.values():
        rng.shuffle(kept)
    out: list = []
    while len(out) < n and any(by_type.values()):
        for game in sorted(by_type):
            if by_type[game] and len(out) < n:
                out.append(by_type[game].pop())
    return out


async def check_games(cfg: Config, sample: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """Audit each sampled game's log and compare the gateway's final views with its fold, within
    CHECK_BUDGET_S all told (a game not checked by then is a problem: the check fails)."""
    client = make_client(cfg.protocol, cfg.target)
    games = []
    budget_ends = time.monotonic() + CHECK_BUDGET_S
    try:
        for game_id, game_type, tokens in sample:
            row: dict[str, Any] = {"game_id": game_id, "game_type": game_type, "source": None, "audit_ok": False,
                                   "projection_ok": False, "events": 0, "problem": None}
            left = budget_ends - time.monotonic()
            try:
                if left <= 0:
                    raise TimeoutError
                async with asyncio.timeout(left):
                    await check_one(cfg, client, row, game_id, game_type, tokens)
            except TimeoutError:
                row["problem"] = (f"not checked: the check's {CHECK_BUDGET_S:g} s were over (the gateway or Kafka "
                                  "did not answer in time)")
            games.append(row)
    finally:
        with contextlib.suppress(Exception):
            await client.close()
    return {"sampled": len(games), "audit_ok": sum(g["audit_ok"] for g in games),
            "projection_ok": sum(g["projection_ok"] for g in games),
            "passed": all(g["audit_ok"] and g["projection_ok"] for g in games) if games else None, "games": games}


async def check_one(cfg: Config, client: Any, row: dict[str, Any], game_id: str, game_type: str,
                    tokens: Sequence[str]) -> None:
    """One sampled game's audit and projection check, into `row`."""
    from croupier.engine.audit import audit, view_as
    from croupier.engine.codec import canonical_json

    try:
        envelopes, source = await fetch_log(cfg, game_id, game_type)
        row["source"] = source
        row["events"] = len(envelopes)
        if not envelopes:  # nothing to audit: say where it was looked for, not "the log is empty"
            row["problem"] = no_log(source, game_type)
            return
        report = audit(envelopes)
        row["audit_ok"] = report.ok
        if not report.ok:
            row["problem"] = f"audit: {report.faults[0]}"
        mismatched = []
        last_seq = envelopes[-1].seq if envelopes else 0
        for viewer, token in [("spectator", None), *[(str(s), t) for s, t in enumerate(tokens)]]:
            seen = await client.view(game_id, token)
            # Compared as JSON: the fold holds tuples where the wire has lists.
            folded = canonical_json(view_as(envelopes, None, viewer))
            if seen["version"] != last_seq or canonical_json(seen["view"]) != folded:
                mismatched.append(viewer)
        row["projection_ok"] = bool(envelopes) and not mismatched
        if mismatched and row["problem"] is None:
            row["problem"] = f"the gateway's final view differs from the log's fold for {', '.join(mismatched)}"
    except Exception as exc:
        row["problem"] = f"{type(exc).__name__}: {exc}"


def no_log(source: str, game_type: str) -> str:
    """Why a finished game has no log where it was read from."""
    if source != "kafka":
        return "the gateway's export of it is empty"
    from croupier.rules.settings import KafkaSettings

    kafka = KafkaSettings.from_env()
    return (f"no log of it in Kafka at {kafka.bootstrap}, topic {kafka.topic(game_type)}: are CROUPIER_KAFKA_BOOTSTRAP "
            "and CROUPIER_TOPIC_PREFIX the stack's? (with --operator-token the log comes from the gateway instead)")


async def force_end(cfg: Config, unfinished: Sequence[Sequence[str]]) -> tuple[int, int]:
    """Force-end the tables the time cut short (operator API); returns (ended, failed)."""
    import httpx

    ended = failed = 0
    sem = asyncio.Semaphore(32)
    async with httpx.AsyncClient(base_url=f"http://{cfg.http_target}", timeout=30) as http:
        async def one(game_id: str) -> None:
            nonlocal ended, failed
            async with sem:
                try:
                    for attempt in range(FORCE_END_TRIES):
                        r = await http.post(f"/v1/operator/games/{game_id}/force-end",
                                            headers={"authorization": f"Bearer {cfg.operator_token}"},
                                            json={"reason": "load test ended", "command_id": f"loadtest-{game_id}"})
                        if r.status_code not in (429, 503) or attempt == FORCE_END_TRIES - 1:
                            break
                        # The operator's rate limit (CROUPIER_RATE_LIMIT_PER_S: a thousand tables
                        # are more than its burst), or a replica away a moment: the same force-end
                        # again (its command id makes it one), within the budget.
                        wait = min(0.05 * 2**attempt, 1.0)
                        with contextlib.suppress(TypeError, ValueError):
                            wait = min(max(float(r.headers.get("retry-after")), 0.0), 5.0)
                        await asyncio.sleep(wait)
                    if r.status_code < 300 or r.status_code == 422:  # 422: it ended meanwhile
                        ended += 1
                    else:
                        failed += 1
                except httpx.HTTPError:
                    failed += 1

        tasks = [asyncio.ensure_future(one(gid)) for gid, _ in unfinished]
        if tasks:
            # A gateway that hangs: those not ended within the budget are counted as not ended.
            _, pending = await asyncio.wait(tasks, timeout=FORCE_END_BUDGET_S)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
            failed += len(pending)
    return ended, failed


def build_report(cfg: Config, finals: Sequence[Mapping[str, Any]], timeline: Timeline, elapsed: float) -> dict[str, Any]:
    kinds: dict[str, Histogram] = {}
    games: dict[str, Histogram] = {}
    errors: dict[str, int] = {}
    refusals: dict[str, int] = {}
    finished: dict[str, int] = {g: 0 for g in cfg.games}
    rate_limited = opened = failed_tables = 0
    for f in finals:
        if f["type"] == "failed":
            errors[f"worker_failed:{f['error']}"[:200]] = errors.get(f"worker_failed:{f['error']}"[:200], 0) + 1
            # The tables a failed worker left open: not over, force-ended with the others.
            opened += len(f.get("unfinished", []))
            failed_tables += len(f.get("unfinished", []))
            continue
        for k, w in f["kinds"].items():
            kinds.setdefault(k, Histogram()).merge(Histogram.from_wire(w))
        for g, w in f["games"].items():
            games.setdefault(g, Histogram()).merge(Histogram.from_wire(w))
        for d_out, d_in in ((errors, f["errors"]), (refusals, f["refusals"]), (finished, f["finished"])):
            for k, n in d_in.items():
                d_out[k] = d_out.get(k, 0) + n
        stopped_alone = f.get("stopped") in ("SIGTERM", "orphaned") and not timeline.interrupted
        if stopped_alone:
            # A worker that ended its run early on its own: a failure; its figures count, and
            # the tables it left are a failed worker's (not cut short by the time).
            what = f"worker_failed:stopped by {f['stopped']}"
            errors[what] = errors.get(what, 0) + 1
        rate_limited += f["rate_limited"]
        opened += f["opened"]
        failed_tables += len(f.get("unfinished", [])) if stopped_alone else f.get("failed", 0)
    overall = Histogram()
    for h in kinds.values():
        overall.merge(h)
    # An interrupted run's rates are over the time it ran.
    measured_s = max(cfg.duration_s if timeline.ran_s is None else timeline.ran_s, 1e-9)
    throughput = overall.count / measured_s
    offered = cfg.tables * 1000.0 / cfg.think_ms if cfg.think_ms else None
    # Offered load counts moves only (a table asks one move per think time); so does served.
    moves = sum(h.count for k, h in kinds.items() if k not in ("create_table", "join_seat"))
    unfinished = [u for f in finals for u in f.get("unfinished", [])]
    return {
        "report_version": REPORT_VERSION,
        "config": cfg.as_dict(),
        "interrupted": timeline.interrupted,
        "duration_s": cfg.duration_s,
        "elapsed_s": round(elapsed, 2),
        "commands": overall.count,
        "moves": moves,
        "throughput_per_s": round(throughput, 1),
        "moves_per_s": round(moves / measured_s, 1),
        "offered_moves_per_s": round(offered, 1) if offered else None,
        "served_ratio": round(moves / measured_s / offered, 4) if offered else None,
        "latency": overall.summary(),
        "by_kind": {k: kinds[k].summary() for k in sorted(kinds)},
        "by_game": {g: games[g].summary() for g in sorted(games)},
        "errors": sum(errors.values()),
        "errors_by_kind": dict(sorted(errors.items())),
        "refusals": dict(sorted(refusals.items())),
        "stagger": timeline.stagger,
        # The measured run's wall-clock span (after any warm-up), for tools that sample the
        # stack alongside (bench/loadtest.py's CPU figures).
        "window_unix": timeline.window_unix,
        "rate_limited": rate_limited,
        "tables": {"opened": opened, "finished": sum(finished.values()), "unfinished": len(unfinished),
                   "failed": failed_tables, "force_ended": 0, "force_end_failed": 0},
        "games_finished": finished,
        "timeline": timeline.rows(),
        "machine": {"cpus": os.cpu_count(), "load_average_1m": round(os.getloadavg()[0], 2),
                    "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
    }


def print_report(report: Mapping[str, Any], out=None) -> None:
    def line(*parts: Any) -> None:
        print(*parts, file=out or sys.stdout)  # sys.stdout as it is now, not at import

    c = report["config"]
    lat = report["latency"]
    # (A report written before --think-from existed counted from the view.)
    think_from = f" from the {c.get('think_from', 'view')}" if c["think_ms"] else ""
    line(f"croupier loadtest: {c['tables']} tables of {', '.join(c['games'])} for {c['duration_s']:g} s over "
         f"{c['protocol']}, think {c['think_ms']:g} ms{think_from}, {c['workers']} worker(s)")
    if report.get("interrupted"):
        when = ("in the warm-up (--stagger), before the measured run" if report.get("stagger") and not report["timeline"]
                else f"after {report['elapsed_s']:g} s of the run")
        line(f"  INTERRUPTED by {report['interrupted']} {when}: the figures are what it measured until then (rates "
             "over that time); no check")
    if report.get("signal_after_run"):
        line(f"  {report['signal_after_run']} came after the run, while its tables were force-ended: the figures are "
             "whole; the exit code says the signal came")
    served = ""
    if report["offered_moves_per_s"]:
        served = f" of {report['offered_moves_per_s']:,.1f} offered ({report['served_ratio'] * 100:.1f} %)"
    if report.get("stagger"):
        w = report["stagger"]
        line(f"  stagger     {w['moves']:,} warm-up moves in {w['seconds']:g} s before the run (not measured; "
             f"{w.get('finished', 0)} game(s) ended in it; {w['errors']} error(s){': ' if w.get('errors_by_kind') else ''}"
             f"{', '.join(f'{k} {n}' for k, n in sorted(w.get('errors_by_kind', {}).items()))})")
    line(f"  throughput  {report['throughput_per_s']:,.1f} commands/s ({report['commands']:,} commands; "
         f"moves {report['moves_per_s']:,.1f}/s{served})")
    line(f"  latency     p50 {lat['p50_ms']} ms  p95 {lat['p95_ms']} ms  p99 {lat['p99_ms']} ms  max {lat['max_ms']} ms")
    width = max([20, *(len(name) + 1 for name in (*report["by_kind"], *report["by_game"]))])
    line(f"  {'':<{width + 2}}{'count':>9}{'p50 ms':>10}{'p95 ms':>10}{'p99 ms':>10}{'max ms':>10}")
    for title, rows in (("by kind", report["by_kind"]), ("by game", report["by_game"])):
        line(f"  {title}")
        for name, s in rows.items():
            line(f"    {name:<{width}}{s['count']:>9,}{s['p50_ms']:>10}{s['p95_ms']:>10}{s['p99_ms']:>10}{s['max_ms']:>10}")
    line(f"  errors      {report['errors']}" + "".join(f"\n    {k}: {n}" for k, n in report["errors_by_kind"].items()))
    if report["refusals"]:
        line("  refusals    " + ", ".join(f"{k} {n}" for k, n in report["refusals"].items())
             + " (expected: a seat acted on a view another move had overtaken)")
    if report["rate_limited"]:
        line(f"  rate limited {report['rate_limited']} time(s), retried (raise CROUPIER_RATE_LIMIT_PER_S on the gateway)")
    t = report["tables"]
    failed = t.get("failed", 0)
    line(f"  tables      opened {t['opened']}, finished {t['finished']}, cut short {t['unfinished']} "
         f"(by {'the interrupt' if report.get('interrupted') else 'the time'} {t['unfinished'] - failed}, by a failure "
         f"{failed}; force-ended {t['force_ended']})")
    if t.get("force_end_failed"):
        line(f"              {t['force_end_failed']} of them could not be force-ended (the operator API at "
             f"{c.get('http_target', '--http-target')} failed): left running")
    left = t["unfinished"] - t["force_ended"] - t.get("force_end_failed", 0)
    if left > 0:
        if c.get("keep_tables"):
            why = "--keep-tables"
        elif c.get("operator", True):
            why = "not force-ended"
        else:
            why = "give --operator-token (or CROUPIER_OPERATOR_TOKEN) to force-end them at the end"
        line(f"              {left} of them left running (no bot plays them now): {why}")
    line("  finished    " + ", ".join(f"{g} {n}" for g, n in report["games_finished"].items()))
    chk = report.get("check")
    if chk and chk["passed"] is None:
        why = {"interrupted": "the run was interrupted", "--check 0": "--check 0"}.get(chk.get("skipped", ""),
                                                                                     "no finished game to check")
        line(f"  check       none: {why}")
    elif chk:
        verdict = "passed" if chk["passed"] else "FAILED"
        line(f"  check       {verdict}: {chk['sampled']} finished game(s) sampled, audit clean {chk['audit_ok']}, "
             f"projection equals replay {chk['projection_ok']}")
        for g in chk["games"]:
            if g["problem"]:
                line(f"    {g['game_id']}: {g['problem']}")


def plot(report: Mapping[str, Any], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["timeline"]
    t = [r["t"] for r in rows]
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(10, 6))
    top.plot(t, [r["commands"] for r in rows], label="commands/s")
    if report["offered_moves_per_s"]:
        top.axhline(report["offered_moves_per_s"], linestyle="--", color="grey", label="offered moves/s")
    top.set_ylabel("commands/s")
    top.set_ylim(bottom=0)  # a rate read against zero: a dip is not a fall to nothing
    top.legend(loc="lower right")
    # A second without a command has no latency: a gap, not a zero.
    bottom.plot(t, [r["p50_ms"] if r["commands"] else math.nan for r in rows], label="p50")
    bottom.plot(t, [r["p99_ms"] if r["commands"] else math.nan for r in rows], label="p99")
    bottom.set_ylabel("latency (ms)")
    bottom.set_xlabel("seconds")
    bottom.legend(loc="upper right")
    c = report["config"]
    fig.suptitle(f"croupier loadtest: {c['tables']} tables, {c['protocol']}, think {c['think_ms']:g} ms")
    fig.tight_layout()
    # Written whole or not at all, as the report is: a failure (a full disk) midway leaves the
    # file that was there, not half a PNG over it.
    target = os.path.realpath(path)  # (a symbolic link is written through, as the report's)
    partial = f"{target}.partial"
    try:
        fig.savefig(partial, dpi=100, format="png")
        os.replace(partial, target)
    finally:
        plt.close(fig)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)


async def preflight(cfg: Config) -> tuple[int, str] | None:
    """None if the gateway answers at the target and hosts the games, else the exit code and
    what is wrong: 75 (EX_TEMPFAIL, run it again later) when nothing answers, 2 when the
    gateway there does not host a game asked for (bad input)."""
    client = make_client(cfg.protocol, cfg.target, timeout_s=10.0)
    deadline = time.monotonic() + 20.0  # a busy gateway may be slow to answer its first call
    try:
        while True:
            try:
                hosted = {g["id"] for g in await client.games()}
                break
            except Exception as exc:
                slow = (isinstance(exc, GatewayError) and exc.code == "deadline_exceeded") or "Timeout" in type(exc).__name__
                if not slow or time.monotonic() > deadline:  # refused at once: nothing listens there
                    # (the first line only: a web server that is not the gateway answers a page)
                    what = (str(exc).strip().splitlines() or [""])[0][:200]
                    return 75, f"no gateway answers {cfg.protocol} at {cfg.target} ({type(exc).__name__}: {what})"
                await asyncio.sleep(1.0)
    finally:
        with contextlib.suppress(Exception):
            await client.close()
    missing = [g for g in cfg.games if g not in hosted]
    if missing:
        return 2, f"the gateway at {cfg.target} does not host {', '.join(missing)}"
    return None


async def operator_token_refused(cfg: Config) -> tuple[int, str] | None:
    """With an operator token, whether the gateway takes it (checked before the run, not
    after: the token fetches the sample's logs and force-ends the unfinished tables): None if
    it does, else the exit code and what is wrong: 75 when nothing answers HTTP at
    --http-target (as for --target), 2 when the gateway refuses the token."""
    if not cfg.operator_token:
        return None
    import httpx

    try:
        async with httpx.AsyncClient(base_url=f"http://{cfg.http_target}", timeout=10) as http:
            r = await http.get("/v1/operator/health", headers={"authorization": f"Bearer {cfg.operator_token}"})
    except httpx.HTTPError as exc:
        return 75, (f"no gateway answers HTTP at {cfg.http_target} for the operator routes (--http-target; "
                    f"{type(exc).__name__}: {exc})")
    if r.status_code in (401, 403):
        return 2, (f"the gateway at {cfg.http_target} refuses the operator token "
                   "(--operator-token / CROUPIER_OPERATOR_TOKEN)")
    # The gateway's health report (200, or 503 while a part of the stack is down: a load test
    # of a degraded stack may still be meant). Anything else is not a Croupier gateway, and the
    # tables the run leaves could not be force-ended there: told now, not after the run.
    try:
        health = r.json()
    except ValueError:
        health = None
    if r.status_code not in (200, 503) or not isinstance(health, dict) or "gateway" not in health:
        return 75, (f"no Croupier gateway answers HTTP at {cfg.http_target} for the operator routes "
                    f"(--http-target; GET /v1/operator/health answered {r.status_code} "
                    f"{r.headers.get('content-type', 'without a content type')}, not its health report)")
    return None


def run(cfg: Config, *, json_path: str | None = None, plot_path: str | None = None) -> tuple[int, dict[str, Any] | None]:
    """The whole load test; returns (exit code, report). Exit 0 only with no errors and a
    sample check that passed (or nothing to check); 75 when no gateway answers at the target
    or, with an operator token, at the HTTP target (nothing was run: try again later), 2 when
    it does not host the games asked for or refuses the operator token."""
    problem = asyncio.run(preflight(cfg))
    if problem:
        code, message = problem
        print(f"croupier loadtest: {message}", file=sys.stderr)
        return code, None
    refused = asyncio.run(operator_token_refused(cfg))
    if refused:
        code, message = refused
        print(f"croupier loadtest: {message}", file=sys.stderr)
        return code, None
    interrupt = Interrupt()
    with interrupt.installed():  # Ctrl-C / SIGTERM: stop, report, force-end; a second one: at once
        finals, timeline, elapsed = run_workers(cfg, interrupt=interrupt)
        report = build_report(cfg, finals, timeline, elapsed)
        samples = [s for f in finals if f["type"] == "final" for s in f["samples"]]
        unfinished = [u for f in finals for u in f.get("unfinished", [])]
        asyncio.run(after(cfg, report, samples, unfinished, interrupt))
    written = True
    if json_path:
        # Whole or not at all: a write cut short (a full disk, a kill) leaves no half a report
        # (a report there before is left as it was), and a failed one is told, not a traceback.
        target = os.path.realpath(json_path)  # (a symbolic link is written through, as open() would)
        partial = f"{target}.partial"
        try:
            with open(partial, "w", encoding="utf-8") as handle:
                json.dump(report, handle, indent=2, sort_keys=True)
                handle.write("\n")
            os.replace(partial, target)
        except OSError as exc:
            written = False
            with contextlib.suppress(OSError):
                os.unlink(partial)
            say(f"croupier loadtest: could not write --json {json_path} ({exc.strerror or exc}); the report is below")
    with contextlib.suppress(OSError, ValueError):  # (the terminal gone: the report is in --json, if given)
        print_report(report)
    plotted = True
    if plot_path:
        try:
            plot(report, plot_path)
        except Exception as exc:  # no matplotlib, or it failed: the report stands, the plot is missing
            plotted = False
            say(f"croupier loadtest: could not draw --plot {plot_path} ({type(exc).__name__}: {exc})")
    if interrupt.name:
        return EXIT_ON_SIGNAL[interrupt.name], report
    # Tables the operator API did not force-end are left running: not a clean run either.
    ok = (report["errors"] == 0 and report["check"]["passed"] is not False and plotted and written
          and not report["tables"]["force_end_failed"])
    return (0 if ok else 1), report


async def after(cfg: Config, report: dict[str, Any], samples: Sequence[Sequence[Any]],
                unfinished: Sequence[Sequence[str]], interrupt: Interrupt) -> None:
    """After the run: the check of a sample of its finished games (not after an interrupt),
    then the force-end of the tables it left."""
    checked = None
    if cfg.check and samples and not interrupt.name:
        # Interrupted while it checks: the check is given up (the tables are still force-ended).
        sample = choose_sample(samples, cfg.check, cfg.seed)
        if cfg.progress:  # (it may take a while: say what it is doing, not a silence that looks hung)
            say(f"checking {len(sample)} finished game(s): audit, projection equals replay ...")
        task = asyncio.ensure_future(check_games(cfg, sample))
        while not task.done():
            await asyncio.wait({task}, timeout=POLL_S)
            if interrupt.name and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                report["interrupted"] = interrupt.name
        checked = None if task.cancelled() else task.result()
    if checked is not None:
        report["check"] = checked
    else:
        # Nothing finished (or --check 0, or an interrupt): nothing checked, which is not a
        # failure; `skipped` says which.
        skipped = ("interrupted" if interrupt.name or report.get("interrupted") else
                   "--check 0" if not cfg.check else "no finished game")
        report["check"] = {"sampled": 0, "audit_ok": 0, "projection_ok": 0, "passed": None, "games": [],
                           "skipped": skipped}
    if cfg.cleanup and cfg.operator_token and unfinished:
        if cfg.progress:
            say(f"force-ending the {len(unfinished)} table(s) left ...")
        ended, failed = await force_end(cfg, unfinished)
        report["tables"]["force_ended"] = ended
        report["tables"]["force_end_failed"] = failed
    if interrupt.name and not report.get("interrupted"):
        # A signal after the measured run and its check (while the tables were force-ended): the
        # figures are whole, and the exit code (130/143/129) says the signal came; so does this.
        report["signal_after_run"] = interrupt.name
