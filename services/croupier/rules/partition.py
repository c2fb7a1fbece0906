"""One owned partition: its games in memory, its writer, and its group-commit loop.

Commands for games of the partition queue up; the loop takes all that are waiting (up to
max_batch), decides each against the state left by the ones before it (so two commands for
one game in a batch see each other), appends all their events in ONE Kafka transaction,
and only then makes the new states current and answers. A failed append answers every
command of the batch with a retryable error and changes nothing in memory.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import heapq
import re
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import structlog

from croupier.engine.codec import canonical_bytes
from croupier.engine.contract import CONFLICT, MALFORMED, NOT_FOUND, Command, Rejection, Tick
from croupier.engine.envelope import Envelope
from croupier.engine.table import (
    CLOCK_IDLE_MOVES_PER_SEAT,
    DEAL_AGAIN,
    OVER,
    TABLE_COMMANDS,
    ForceEnd,
    JoinSeat,
    LeaveSeat,
    TableCreated,
    TableHost,
    TableState,
)
from croupier.rules.forgotten import IdFilter
from croupier.rules.pace import CommitPace
from croupier.rules.snapshot import Snapshot, SnapshotStore, compress, encode_between
from croupier.rules.store import RecordTooLarge, WriterFenced, clip_text, encode_record, record_fits

log = structlog.get_logger("croupier.rules")

UNAVAILABLE = "unavailable"
NOT_OWNER = "not_owner"
ALREADY_EXISTS = "already_exists"

# Group commit's linger (CROUPIER_RULES_COMMIT_LINGER_MS): a batch waits for company only
# while at least COMPANY commands arrive per linger on average; the average of the gaps
# between arrivals gives the newest gap this weight.
COMPANY = 0.25
GAP_SMOOTHING = 0.2
# ... and only while lingering pays: while at least COMPANY of the recent lingers (weighted
# by PAID_SMOOTHING) found another command arriving. Commands that come one after another's
# answer (a single table played as fast as it answers) arrive often but never meet; there,
# every PROBE_EVERY-th batch lingers to find out whether that has changed.
PAID_SMOOTHING = 0.2
PROBE_EVERY = 16

# The owner's clock (PartitionOwner.now_ms) is not behind the latest event time it has read
# from the log (another owner's, whose clock was ahead of this one's) by up to this much (ms);
# an event further ahead of it is no owner's clock, and is not taken as the time.
SKEW_TRUSTED_MS = 600_000

# The timers' heap is rebuilt from the live deadlines once it holds more than twice as many
# entries as there are deadlines, plus this many: each commit that moves a game's deadline
# pushes an entry, and the superseded ones left only on reaching the top, so one quiet table
# with a day's idle limit kept an entry for every command of that day.
HEAP_SLACK = 1024

# Distinct event-type sequences shared by the remembered results (Remembered); far more than
# any game has, and cleared rather than grown past.
EVENT_TYPE_TUPLES_KEPT = 4096

REBUILDING, READY, LOST = "rebuilding", "ready", "lost"

# Callers' commands a partition holds waiting for their batch, at most: more is refused at
# once, `partition_busy` (retryable), rather than queued. Far above what a replica's peak
# keeps waiting (about one command a game in flight); a flood beyond it would otherwise grow
# memory without bound, each command only to time out (the service's COMMAND_TIMEOUT_S)
# before its turn. The owner's own timer commands are not counted against it.
MAX_QUEUED = 5000

# The command ids of the owner's own commands: an idle end is `idle:{version}`, a Tick
# `tick:{version}:{due}`. A caller's command_id may not start so (the service refuses it,
# `reserved_command_id`): a JoinSeat sent as `idle:2` was taken for the idle end's retry, and
# the idle end never came.
IDLE_ID, TICK_ID = "idle:", "tick:"
TIMER_ID_PREFIXES = (IDLE_ID, TICK_ID)

# A retired game keeps the results of this many of its last command_ids (a retry that comes
# after retirement, minutes after the game ended, is rare; these few cost ~1 KB a game).
RETIRED_WINDOW = 8
# While a partition is rebuilt, games that ended long ago are retired every this many events,
# so that a partition of many finished games never holds all their states at once.
RETIRE_EVERY_EVENTS = 5000


@dataclass(slots=True)
class Outcome:
    game_id: str
    first_seq: int
    last_seq: int
    version: int
    event_types: tuple[str, ...]
    duplicate: bool = False
    digest: int | None = None  # the command's (command_digest), for a retry to be compared with


# What a game remembers of one of its recent command_ids: (first_seq, last_seq, event_types,
# digest), the digest being command_digest of the command that produced them, so that the
# same command_id sent with another move is refused rather than answered as a retry.
# A tuple of atoms, not an object: CPython's collector stops tracking such tuples after their
# first collection, so the thousands a replica remembers (dedupe_window a game) are not walked
# by every later collection. As Outcome objects they were half of a replica's tracked heap,
# and its collections paused it for up to ~100 ms (docs/performance.md).
Remembered = tuple[int, int, tuple[str, ...], int]

# What a partition keeps of a finished game once it is retired (retire_after_s after its
# end): its version, the results of its last RETIRED_WINDOW command_ids as
# (command_id, first_seq, last_seq, event_types, digest), and the time (ms) of its last event.
# Atoms again, untracked by the collector. forget_after_s after its end it is forgotten: its
# id goes into `forgotten` (forgotten.py), and nothing else of it is kept.
# A command for it is answered from these alone: a retry gets its first result, anything else
# the table's `game_over` (or a version conflict, or `already_exists` for a create), as the
# live game would have answered. Its state is not kept: a read reloads it from the log.
Retired = tuple[int, tuple[tuple[str, int, int, tuple[str, ...], int], ...], int]


@dataclass(slots=True)
class Slot:
    """A game in memory: its state and the results of its recent command_ids, oldest first."""

    state: TableState
    seen: dict[str, Remembered] = field(default_factory=dict)


@dataclass(frozen=True)
class PreparedFork:
    """A fork's events, the state they fold to, and their records (None when the owner does
    not encode them ahead), made off the event loop (PartitionOwner.prepare_fork): for a long
    origin they are a fold of all its events and a record as large, ~0.2 s for 3,000 events,
    which on the partition's loop held every other game of the replica."""

    envs: list[Envelope]
    state: Any
    values: list[bytes] | None
    origin_events: int  # how many of the origin's events the fork carries (too_large's message)


@dataclass
class Pending:
    game_id: str
    command: Command | None  # None with `create` set: a CreateGame
    command_id: str
    expected_version: int | None
    future: asyncio.Future
    create: dict | None = None
    fork: PreparedFork | None = None
    enqueued: float = field(default_factory=time.perf_counter)


class PartitionOwner:
    def __init__(
        self,
        host: TableHost,
        partition: int,
        make_writer: Callable[[], Any],
        *,
        max_batch: int,
        dedupe_window: int,
        on_committed: Callable[[str, TableState], None] | None = None,
        metrics: Any = None,
        on_fenced: Callable[[int], None] | None = None,
        still_assigned: Callable[[], bool] | None = None,
        append_executor: ThreadPoolExecutor | None = None,
        pace: CommitPace | None = None,
        linger_s: float = 0.0,
        retire_after_s: float | None = None,
        forget_after_s: float | None = None,
        idle_end_after_s: float | None = None,
        snapshots: SnapshotStore | None = None,
        snapshot_every: int = 0,
        snapshot_executor: ThreadPoolExecutor | None = None,
        topic: str = "",
        fingerprint: str = "",
        max_record_bytes: int | None = None,
    ):
        self.host = host
        self.partition = partition
        self.status = REBUILDING
        self.games: dict[str, Slot] = {}
        # Finished games are retired from `games` retire_after_s after their last event (None:
        # never), so a long-lived replica's memory holds the games being played, not every
        # game it has ever hosted. `_ended`: games over but not yet retired, in the order they
        # ended, with the time (ms) of their last event.
        self.retired: dict[str, Retired] = {}
        self._ended: dict[str, int] = {}
        self._retire_ms = None if retire_after_s is None else int(retire_after_s * 1000)
        # Retired games are forgotten forget_after_s after their end (None: never): only their
        # ids are kept, in a Bloom filter of a couple of bytes an id (forgotten.py).
        self.forgotten = IdFilter()
        # Games whose log holds an event this replica's rules cannot fold (a newer event
        # type or version, a payload they do not read): each stays out of `games`, with why,
        # and is refused UNAVAILABLE, while the partition's other games are served. A newer
        # replica may read it: until then, no command can land on a state that is not the log's.
        self.unreadable: dict[str, str] = {}
        self._forget_ms = None if forget_after_s is None else int(forget_after_s * 1000)
        # A table not over whose last event is idle_end_after_s old (None or 0: never) is ended
        # by the owner (a ForceEnd, in the log like an operator's), so no abandoned table waits
        # forever in the lobby or mid-game, nor holds memory.
        self._idle_ms = int(idle_end_after_s * 1000) if idle_end_after_s else None
        self._folding = threading.Lock()  # held while the log is folded into the games (_fold_log)
        # The partition's offset up to which its log has been read and folded into the games
        # (the replica's rebuild sets it): a later read, after a revoke and a re-take or a
        # failed append, starts there rather than at the beginning.
        self.log_offset = 0
        self._make_writer = make_writer
        self._writer: Any = None
        self._queue: asyncio.Queue[Pending] = asyncio.Queue()
        self._callers_waiting = 0  # callers' commands in the queue (MAX_QUEUED), not the timers'
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"writer-{partition}")
        # Appends run on this partition's own thread unless the replica's partitions share
        # a pool (CROUPIER_RULES_APPEND_THREADS > 0; see Replica).
        self._append_executor = append_executor or self._executor
        self._max_batch = max_batch
        # Under load a batch is taken no sooner than pace.pause_s after the one before it
        # was answered, so that more commands ride in each transaction (pace.py).
        self._pace = pace
        self._last_done = float("-inf")
        # A batch's first command waits up to linger_s from its arrival for company, when
        # commands come to this partition often enough to expect some (group commit's linger).
        self._linger_s = linger_s
        self._gap = float("inf")  # smoothed seconds between commands' arrivals here
        self._last_arrival: float | None = None
        self._paid = 1.0  # smoothed share of lingers that found company
        self._unproven = 0  # batches taken at once since the last linger, while lingers do not pay
        self.lingers = 0  # batches that lingered
        self._window = dedupe_window
        # The largest record the writer may send (KafkaSettings.max_message_bytes; None: no
        # check, as for the tests' in-memory writers): a command whose records would be larger
        # is refused alone, `too_large`, before the append, rather than failing its batch.
        # With it set, each command's records are encoded here once, and handed to the writer.
        self._max_record = max_record_bytes
        self._event_types: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._task: asyncio.Task | None = None
        self._timer_task: asyncio.Task | None = None
        self._deadlines: dict[str, int] = {}
        # The version at which each game's Tick was last refused by its rules: a table's own
        # deadline (its turn clock, its game's) is tried before its idle end, which comes only
        # when there is none, or when the Tick sent at this version was refused.
        self._ticked: dict[str, int] = {}
        self._heap: list[tuple[int, str]] = []
        self._wake = asyncio.Event()
        # The latest event time (ms) this owner has read from the log or a snapshot, and when
        # (time.monotonic()) it read it: the floor of the owner's clock (now_ms).
        self._latest: tuple[int, float] = (0, 0.0)
        self._warned_ahead = False
        self._on_committed = on_committed
        self._metrics = metrics
        self._on_fenced = on_fenced
        self._still_assigned = still_assigned or (lambda: True)
        # Snapshots (snapshot.py): after snapshot_every events appended or read since the
        # last one, the games are saved as of the last committed append, whose offset and
        # event `_appended` holds, so that the partition's next owner reads only the log
        # after it. Pickled on the loop between commands, compressed and stored on
        # snapshot_executor, one at a time.
        self._snapshots = snapshots if snapshot_every > 0 else None
        self._snapshot_every = snapshot_every
        self._snapshot_executor = snapshot_executor
        self._topic = topic
        self._fingerprint = fingerprint
        self._appended: tuple[int, Envelope] | None = None
        self._since_snapshot = 0
        self._snapshot_task: asyncio.Task | None = None  # the save under way, if any
        self.restored_from: int | None = None  # the offset of the snapshot the rebuild started from

    # -- lifecycle ----------------------------------------------------------------------

    async def start(self, rebuild: Callable[[], Iterable[Envelope]]) -> None:
        """Fence the previous writer, then read the partition, then accept commands."""
        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        self._rebuild = rebuild
        self._writer = await loop.run_in_executor(self._executor, self._make_writer)
        read_started = time.perf_counter()
        count = await loop.run_in_executor(self._executor, self._fold_log, rebuild)
        read_seconds = time.perf_counter() - read_started
        if self.status == LOST:
            raise RuntimeError(f"partition {self.partition} was stopped while it was rebuilt")
        self._since_snapshot += count
        self.status = READY
        for game_id, slot in self.games.items():
            self._schedule(game_id, slot.state)
        self._task = asyncio.create_task(self._run(), name=f"partition-{self.partition}")
        self._timer_task = asyncio.create_task(self._timers(), name=f"timers-{self.partition}")
        elapsed = time.perf_counter() - started
        # seconds: from the start (a new writer, which fences the previous one, is ~1 s of it);
        # read_seconds: reading the partition and folding its events into the games.
        log.info("partition_ready", partition=self.partition, games=len(self.games), retired=len(self.retired),
                 events=count, seconds=round(elapsed, 3), read_seconds=round(read_seconds, 3),
                 snapshot_offset=self.restored_from)
        if self._on_committed:
            for game_id, slot in self.games.items():
                self._on_committed(game_id, slot.state)

    def adopt(self, previous: PartitionOwner) -> None:
        """Take over the games of this partition's previous owner in this replica (it was
        revoked and has come back): only what the log holds beyond them is read again."""
        self.games, self.retired, self._ended = previous.games, previous.retired, previous._ended
        self.forgotten = previous.forgotten
        self.unreadable = previous.unreadable
        self.log_offset = previous.log_offset
        self._latest = max(self._latest, previous._latest)
        self._folding = previous._folding  # its fold of the log, if one is still running, ends first

    def restore(self, snapshot: Snapshot) -> None:
        """Start from a snapshot's games (the rebuild then reads the log from its offset on).
        Only before the partition is READY, on the thread that folds its log."""
        self.games = {game_id: Slot(state, dict(seen)) for game_id, state, seen in snapshot.games}
        self.retired, self._ended = snapshot.retired, snapshot.ended
        self.forgotten = snapshot.forgotten if snapshot.forgotten is not None else IdFilter()
        self.log_offset = snapshot.offset
        self.restored_from = snapshot.offset
        self._saw(max((slot.state.last_time for slot in self.games.values()), default=0))
        self._saw(max(self._ended.values(), default=0))

    def drop_all(self) -> None:
        """Drop every game held (a snapshot that did not match the log, a fault that may have
        left memory half updated): the next read starts from the snapshot or the start."""
        self.games, self.retired, self._ended = {}, {}, {}
        self.forgotten = IdFilter()
        self.unreadable = {}
        self.log_offset = 0
        self.restored_from = None

    def _fold_log(self, read: Callable[[], Iterable[Envelope]]) -> int:
        """Fold the partition's log into the games as it is read; the events folded.

        On the partition's thread, not the event loop: a rebuild after a failover reads and
        folds for seconds, during which the loop goes on serving the replica's other
        partitions. Nothing on the loop touches these games meanwhile: the partition is not
        READY, so no command or read reaches them. Events are not kept: memory holds the
        games (old finished ones retired on the way), never the whole log. A stopped owner's
        fold ends at its next event, and one that adopts its games waits for that."""
        with self._folding:
            count = 0
            for env in read():
                if self.status == LOST:
                    break
                self._fold(env)
                count += 1
                if count % RETIRE_EVERY_EVENTS == 0:
                    # Not the game of this event: the rest of its command may follow it.
                    self.retire_due(keep=env.game_id)
            self.retire_due()
            return count

    def _fold(self, env: Envelope) -> None:
        if env.time > self._latest[0]:
            self._saw(env.time)
        if env.game_id in self.retired:
            return  # ended, and every event of it folded before it was retired
        if self.unreadable and env.game_id in self.unreadable:
            return  # stopped at an event before this one
        slot = self.games.get(env.game_id)
        if slot is None:
            if env.type != TableCreated.TYPE:
                # Not a game's start and no game to add it to. A game forgotten since this
                # owner last read the log (a read again after a failed append starts where
                # memory's log ends, and may meet the rest of it): nothing to do. Anything
                # else is a log without this game's start (a topic made again): the game is
                # left out and refused (a create of its id would start a second log under
                # it), and the partition's other games go on.
                if env.game_id not in self.forgotten:
                    log.error("gap_in_log", game_id=env.game_id, seq=env.seq, version=0, type=env.type)
                    self._cannot_fold(env, "the log holds no start of this game before it")
                return
            try:
                state = self.host.evolve(None, env)
            except Exception as exc:  # noqa: BLE001 - the game's own code, on a record of the log
                self._cannot_fold(env, f"{type(exc).__name__}: {exc}")
                return
            slot = self.games[env.game_id] = Slot(state=state)
        else:
            if env.seq <= slot.state.version:
                if env.seq == slot.state.version and env.hash != slot.state.last_hash:
                    # Not a redelivery: another event at a seq already folded (a writer's bug,
                    # or a record from outside the rules). The first stays, as the projector
                    # keeps it; `croupier audit` of the game names the fault.
                    log.error("seq_conflict", game_id=env.game_id, seq=env.seq, type=clip_text(env.type),
                              why="a second event at a seq already folded")
                return  # already folded (a partition we held before)
            if env.seq != slot.state.version + 1:
                # A command decided on the state before the gap would append a seq the log
                # already holds: the game is left out and refused, the others go on.
                log.error("gap_in_log", game_id=env.game_id, seq=env.seq, version=slot.state.version)
                self._cannot_fold(env, f"the log skips from seq {slot.state.version} to {env.seq}")
                return
            try:
                slot.state = self.host.evolve(slot.state, env)
            except Exception as exc:  # noqa: BLE001 - as above
                self._cannot_fold(env, f"{type(exc).__name__}: {exc}")
                return
        if slot.state.status == OVER:
            self._ended[env.game_id] = slot.state.last_time
        if not env.command_id:
            return
        if env.cause is not None:
            self._remember(slot, env.command_id, env.seq, env.command_end, (env.type,), cause_digest(env.cause))
        else:
            # A later event of the same command: its type joins the remembered result, so a
            # retry answered after a rebuild names every event type, as the first answer did.
            known = slot.seen.get(env.command_id)
            if known is not None and known[0] < env.seq <= known[1]:
                slot.seen[env.command_id] = (known[0], known[1], self._types(known[2] + (env.type,)), known[3])

    def _cannot_fold(self, env: Envelope, problem: str) -> None:
        """A game whose next event this replica cannot fold (its rules fail on it, or the log
        skips): out of memory, refused from now on (`unreadable`), logged for the operators.
        Before, a failing event ended the fold, so the partition's take failed at it on every
        try and none of its games was served."""
        why = f"seq {env.seq} ({env.type} v{env.version}): {problem}"[:300]
        # Every caller of the game is refused with these words (game_unreadable, which the
        # gateway hands to whichever seat sent a move): the game's own code fails naming what
        # it could not place (a KeyError of a card newer content deals), a card of the event,
        # such as the one another seat drew. The caller is told the seq and the event; the
        # log keeps the whole why for the operators.
        slot = self.games.get(env.game_id)
        told = f"seq {env.seq} ({env.type} v{env.version}): " + redacted(
            problem, env, slot.state if slot is not None else None, self.host)
        self.unreadable[env.game_id] = told[:300]
        self.games.pop(env.game_id, None)
        self._ended.pop(env.game_id, None)
        log.error("game_unreadable", partition=self.partition, game_id=env.game_id, seq=env.seq, type=env.type,
                  version=env.version, why=why)

    def _remember(self, slot: Slot, command_id: str, first_seq: int, last_seq: int, event_types: tuple[str, ...],
                  digest: int) -> None:
        seen = slot.seen
        seen[command_id] = (first_seq, last_seq, self._types(event_types), digest)
        if len(seen) > self._window:
            del seen[next(iter(seen))]  # the oldest: a dict keeps insertion order

    def retire_due(self, now_ms: int | None = None, keep: str | None = None) -> int:
        """Retire the finished games whose last event is retire_after_s old (all but `keep`),
        and forget the retired ones forget_after_s old; how many were retired. Cheap when none
        is due: the oldest ended and the oldest retired game are looked at."""
        now_ms = self.now_ms() if now_ms is None else now_ms
        retired = self._retire(now_ms, keep) if self._retire_ms is not None and self._ended else 0
        if self._forget_ms is not None and self.retired:
            self.forget_due(now_ms)
        return retired

    def _retire(self, now_ms: int, keep: str | None) -> int:
        cutoff = now_ms - self._retire_ms
        ended, retired = self._ended, 0
        while ended:
            game_id = next(iter(ended))
            if ended[game_id] > cutoff or game_id == keep:
                break
            del ended[game_id]
            slot = self.games.get(game_id)
            if slot is None or slot.state.status != OVER:
                continue
            del self.games[game_id]
            recent = list(slot.seen.items())[-RETIRED_WINDOW:]
            self.retired[game_id] = (slot.state.version, tuple((cid, *result) for cid, result in recent),
                                     slot.state.last_time)
            self._deadlines.pop(game_id, None)
            self._ticked.pop(game_id, None)
            retired += 1
        return retired

    def forget_due(self, now_ms: int) -> int:
        """Forget the retired games whose last event is forget_after_s old (their ids go into
        `forgotten`); how many. Retired games are kept in the order they were retired, which
        is the order they ended: the first one not due ends the walk."""
        cutoff, retired, forgotten = now_ms - self._forget_ms, self.retired, 0
        while retired:
            game_id = next(iter(retired))
            if retired[game_id][2] > cutoff:
                break
            del retired[game_id]
            self.forgotten.add(game_id)
            forgotten += 1
        return forgotten

    def _types(self, event_types: tuple[str, ...]) -> tuple[str, ...]:
        """One shared tuple for each distinct sequence of event types (a game has few)."""
        known = self._event_types.get(event_types)
        if known is None:
            if len(self._event_types) >= EVENT_TYPE_TUPLES_KEPT:
                self._event_types.clear()
            known = self._event_types[event_types] = event_types
        return known

    async def stop(self, reason: str) -> None:
        self.status = LOST
        for task in (self._task, self._timer_task):
            if task:
                task.cancel()
        while not self._queue.empty():
            item = self._queue.get_nowait()
            if not item.future.done():
                item.future.set_exception(Rejection(NOT_OWNER, f"partition {self.partition} moved ({reason})", NOT_OWNER))
        writer = self._writer
        if writer is not None:
            # Not on the partition's executor: after a broker restart it may be busy for a
            # long time with a recovery (a new writer, a re-read), and the reconcile that
            # stops this partition would wait behind it before taking any other one.
            threading.Thread(target=writer.close, name=f"close-writer-{self.partition}", daemon=True).start()
        self._executor.shutdown(wait=False)
        log.info("partition_released", partition=self.partition, reason=reason, games=len(self.games))

    # -- commands -----------------------------------------------------------------------

    def submit(self, item: Pending) -> None:
        if self.status != READY:
            raise Rejection(UNAVAILABLE if self.status == REBUILDING else NOT_OWNER,
                            f"partition {self.partition} is {self.status}", UNAVAILABLE if self.status == REBUILDING else NOT_OWNER)
        if self._callers_waiting >= MAX_QUEUED:
            raise Rejection("partition_busy", f"partition {self.partition} has {MAX_QUEUED} commands waiting; "
                            "retry the same command_id shortly", UNAVAILABLE)
        self._queue.put_nowait(item)
        self._callers_waiting += 1
        if self._last_arrival is not None:
            gap = item.enqueued - self._last_arrival
            self._gap = gap if self._gap == float("inf") else self._gap + GAP_SMOOTHING * (gap - self._gap)
        self._last_arrival = item.enqueued

    def linger_for(self, first: Pending) -> float:
        """How long a batch whose first command is `first` waits for more before it is taken:
        until linger_s after that command arrived (time it spent queued behind the partition's
        last transaction counts), and only while commands come here at least COMPANY per
        linger on average. A partition that hears from one table now and then never waits;
        nor does one whose lingers have not found company lately, but for a probe every
        PROBE_EVERY batches."""
        if not self._linger_s or self._gap * COMPANY > self._linger_s:
            return 0.0
        if self._paid < COMPANY and self._unproven < PROBE_EVERY:
            return 0.0
        return first.enqueued + self._linger_s - time.perf_counter()

    def _lingered(self, company: bool) -> None:
        self.lingers += 1
        self._unproven = 0
        self._paid += PAID_SMOOTHING * (float(company) - self._paid)

    def _taken(self, item: Pending) -> Pending:
        if not item.command_id.startswith(TIMER_ID_PREFIXES):
            self._callers_waiting -= 1
        return item

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            batch = [await self._queue.get()]
            self._taken(batch[0])
            try:
                if self._pace is not None and self._pace.pause_s > 0:
                    pause = self._last_done + self._pace.pause_s - loop.time()
                    if pause > 0:
                        await asyncio.sleep(pause)  # holding `batch`: a stop now answers it below
                linger = self.linger_for(batch[0])
                if linger > 0:
                    waiting = self._queue.qsize()
                    await asyncio.sleep(linger)  # as above: a stop now answers the batch
                    self._lingered(self._queue.qsize() > waiting)
                elif self._paid < COMPANY:
                    self._unproven += 1
                while len(batch) < self._max_batch and not self._queue.empty():
                    batch.append(self._taken(self._queue.get_nowait()))
                await self._process(loop, batch)
                self._last_done = loop.time()
                if self._ended or (self.retired and self._forget_ms is not None):
                    self.retire_due()
                if self._since_snapshot >= self._snapshot_every and self._snapshots is not None:
                    self.snapshot(loop)
            except asyncio.CancelledError:
                # Stopped (revoked) with this batch taken, maybe in flight: its append may or
                # may not have committed. Answer it as moved (retryable): the next owner reads
                # the log, so a retry of the same command_id gets the original result or is
                # decided afresh, and no caller is left waiting for an answer that never comes.
                self._fail(batch, Rejection(NOT_OWNER, f"partition {self.partition} moved during the append", NOT_OWNER))
                raise
            except Exception:
                # A fault of ours past the decisions (each command's own is answered in
                # _process): the loop must never end, or every game of the partition would
                # wait for good. Answer the batch "retry", forget what memory holds (the
                # fault may have left it half updated: a state without its remembered
                # command, say) and read the partition again, from its snapshot or its start.
                log.exception("partition_batch_failed", partition=self.partition, commands=len(batch))
                self._fail(batch, Rejection(UNAVAILABLE, "the rules service failed on this batch; retry", UNAVAILABLE))
                if self.status != LOST:
                    self.drop_all()
                    self._deadlines.clear()
                    self._ticked.clear()
                    try:
                        await self._recover(loop)
                    except Exception:
                        # The recovery failed too (its own fault, not the broker's, which it
                        # waits out): the partition must not be left REBUILDING with no loop,
                        # every game of it unavailable for good. Let it go, holding nothing
                        # (the owner that takes it next adopts what it holds): the replica's
                        # next reconcile takes it again, read from the log.
                        log.exception("partition_recover_failed", partition=self.partition)
                        self.drop_all()
                        self._let_go()

    async def _process(self, loop, batch: list[Pending]) -> None:
        if self.status == LOST:
            # Revoked or fenced while these waited: the partition's next owner answers them.
            self._fail(batch, Rejection(NOT_OWNER, f"partition {self.partition} moved", NOT_OWNER))
            return
        if any(item.future.done() for item in batch):
            # Commands whose callers gave up before they were decided (cancelled, or timed
            # out and told to retry the same command_id): nobody is left to answer, so they
            # are not decided nor appended, and their retries are decided afresh. Only a done
            # future is dropped: it can never be answered, and every command still waited
            # for is decided below.
            batch = [item for item in batch if not item.future.done()]
            if not batch:
                return
        tentative: dict[str, Slot] = {}
        in_batch: dict[tuple[str, str], Outcome] = {}
        records: list[Envelope] = []
        values: list[bytes] | None = [] if self._max_record is not None else None
        answers: list[tuple[Pending, Outcome | Rejection, Slot | None]] = []
        now = self.now_ms()
        self._saw(now)  # this owner's own times never go back either, should its wall clock be set back
        for item in batch:
            try:
                slot, outcome, envs = self._decide(item, tentative, in_batch, now, values)
            except Rejection as exc:
                answers.append((item, exc, None))
                continue
            except Exception as exc:
                # A command the game's checks let through and its rules then failed on (a
                # bug, found by that input): refused alone, nothing recorded, the rest of the
                # batch and the partition go on. Logged in full for the operators.
                log.exception("decide_failed", game_id=item.game_id, command_id=item.command_id,
                              seat=getattr(item.command, "seat", None))
                answers.append((item, Rejection(
                    "command_not_understood",
                    f"this command could not be judged ({type(exc).__name__}); nothing was recorded", "malformed"), None))
                continue
            if envs:
                records.extend(envs)
            answers.append((item, outcome, slot))
        if records:
            started = time.perf_counter()
            try:
                if values is None:
                    offset = await loop.run_in_executor(self._append_executor, self._writer.append, records)
                else:
                    offset = await loop.run_in_executor(self._append_executor, self._writer.append, records, values)
            except RecordTooLarge as exc:
                # The broker refused a record for its size (its topic's max.message.bytes is
                # below the writers' max_message_bytes): nothing of the batch was committed. A
                # new writer, as after any error, then each command of the batch alone, so
                # that only the one too large is refused, `too_large`, and not retried.
                log.warning("append_too_large", partition=self.partition, commands=len(batch), error=str(exc),
                            hint="set CROUPIER_KAFKA_MAX_MESSAGE_BYTES within the topic's max.message.bytes")
                await self._renew_writer(loop)
                if len(batch) == 1:
                    self._fail(batch, Rejection(
                        "too_large", "the event store refused this command's events as larger than a record may be "
                        f"({exc}); it is malformed, do not retry it", MALFORMED))
                    return
                for item in batch:
                    await self._process(loop, [item])
                return
            except Exception as exc:
                if not _fenced(exc):
                    log.warning("append_failed", partition=self.partition, error=str(exc))
                    self._fail(batch, Rejection(UNAVAILABLE, f"the event store did not take the append: {exc}", UNAVAILABLE))
                    await self._recover(loop)
                    return
                log.warning("writer_fenced", partition=self.partition)
                self.status = LOST
                self._fail(batch, Rejection(NOT_OWNER, "this replica was fenced: the partition has a new owner", NOT_OWNER))
                if self._on_fenced:
                    self._on_fenced(self.partition)
                return
            if self._metrics:
                self._metrics.append_latency.observe(time.perf_counter() - started)
            self._appended = None if offset is None else (offset, records[-1])
            if offset is not None:
                # Memory holds this append (below): a later read of the log (_recover, or the
                # partition taken back) starts after it, not where the last read ended.
                self.log_offset = max(self.log_offset, offset + 1)
            self._since_snapshot += len(records)
        for game_id, slot in tentative.items():
            self.games[game_id] = slot
            self._schedule(game_id, slot.state)
            if slot.state.status == OVER:
                self._ended[game_id] = slot.state.last_time
            if self._on_committed:
                self._on_committed(game_id, slot.state)
        for item, outcome, slot in answers:
            if slot is not None and not outcome.duplicate:
                self._remember(slot, item.command_id, outcome.first_seq, outcome.last_seq, outcome.event_types,
                               outcome.digest)
            if not item.future.done():
                if isinstance(outcome, Rejection):
                    item.future.set_exception(outcome)
                else:
                    item.future.set_result(outcome)

    # -- snapshots ----------------------------------------------------------------------

    def snapshot(self, loop: asyncio.AbstractEventLoop) -> asyncio.Task | None:
        """Save the games as of the last committed append, unless a save is running or no
        append has said where it ended. Taken here, between batches, when the games hold
        exactly the log up to that append; pickled on the loop a slice at a time between
        the commands (snapshot.encode_between), compressed and stored on the snapshot thread."""
        if self._snapshots is None or self._snapshot_task is not None or self._appended is None or self.status != READY:
            return None
        if self.unreadable:
            # A snapshot holds games, not the ids of those left out: a start from it would
            # not know them (and would take a create of the same id). The log is read instead.
            return None
        taken = self.capture()
        self._since_snapshot = 0
        # The task is held here until it is done (the loop keeps only a weak reference).
        self._snapshot_task = loop.create_task(self._save_snapshot(loop, taken))
        self._snapshot_task.add_done_callback(self._snapshot_done)
        return self._snapshot_task

    @property
    def snapshot_task(self) -> asyncio.Task | None:
        """The save of a snapshot under way, if any."""
        return self._snapshot_task

    def capture(self) -> Snapshot:
        """The games as they are now, as of the last committed append (`_appended`): a
        snapshot's contents, copied where later commands change them in place."""
        offset, env = self._appended
        return Snapshot(
            self._topic, self.partition, self._fingerprint, offset, (env.game_id, env.seq, env.hash),
            # `seen` is changed in place by later commands: copied now. States never are.
            games=[(game_id, slot.state, tuple(slot.seen.items())) for game_id, slot in self.games.items()],
            retired=dict(self.retired), ended=dict(self._ended), taken_ms=int(time.time() * 1000),
            # The filter only grows, in place: a copy of its blocks' bytes.
            forgotten=copy.deepcopy(self.forgotten))

    async def _save_snapshot(self, loop: asyncio.AbstractEventLoop, taken: Snapshot) -> dict[str, Any]:
        started = time.perf_counter()
        pieces = await encode_between(taken)
        blob, saved = await loop.run_in_executor(self._snapshot_executor, self._compress_and_store, taken, pieces)
        return {"offset": taken.offset, "games": len(taken.games), "retired": len(taken.retired),
                "forgotten": taken.forgotten.count if taken.forgotten is not None else 0,
                "bytes": len(blob), "seconds": round(time.perf_counter() - started, 3), "saved": saved}

    def _compress_and_store(self, taken: Snapshot, pieces: list[bytes]) -> tuple[bytes, bool]:
        blob = compress(pieces)
        return blob, self._snapshots.save(self._topic, self.partition, taken.offset, blob, taken.taken_ms)

    def _snapshot_done(self, future: asyncio.Future) -> None:
        self._snapshot_task = None
        if future.cancelled():
            return
        exc = future.exception()
        if exc is not None:
            # Only the next rebuild's speed depends on it: try again after as many events.
            log.warning("snapshot_failed", partition=self.partition, error=str(exc))
            if self._metrics:
                self._metrics.snapshots.labels("failed").inc()
            return
        info = future.result()
        log.info("snapshot_saved", partition=self.partition, **info)
        if self._metrics:
            self._metrics.snapshots.labels("saved" if info["saved"] else "superseded").inc()

    # -- the owner's clock -------------------------------------------------------------

    def _saw(self, event_time: int) -> None:
        """An event of this time (ms) was read from the log (or a snapshot) just now. One more
        than SKEW_TRUSTED_MS ahead of this replica's clock is no owner's clock (a record from
        outside the rules, say): it is not taken as the time, which would fire every timer of
        the partition at once and end its tables as abandoned."""
        if not isinstance(event_time, int) or event_time <= self._latest[0]:
            return
        if event_time > time.time() * 1000 + SKEW_TRUSTED_MS:
            if not self._warned_ahead:  # once: a game's every event may be so
                self._warned_ahead = True
                log.warning("event_time_ahead", partition=self.partition, time=event_time,
                            hint="an event of the log is far ahead of this replica's clock; its clock is not set by it")
            return
        self._latest = (event_time, time.monotonic())

    def now_ms(self) -> int:
        """The owner's time (ms): what its commands are decided and recorded at, and what its
        timers wait for. The wall clock, unless it is behind the log: an event another owner
        recorded (its clock ahead of this one's) was written no later than it was read here,
        so the time is at least that event's time plus how long ago it was read (counted on
        the monotonic clock). Deadlines are the log's times (a turn clock runs from the last
        event's), so a clock behind it fired them late by the skew (and a Tick sent on time
        by a correct clock would be refused as not due); and the events it recorded went
        back in time from the ones before them. Its own seals count as read (a wall clock set
        back, by NTP say, does not take its next command before its last; the audit notes a
        log whose times go back). Any time is fine for replay: the recorded
        time is what a replay and an audit decide at."""
        wall = int(time.time() * 1000)
        latest, read_at = self._latest
        if latest <= wall:
            return wall
        return max(wall, latest + int((time.monotonic() - read_at) * 1000))

    # -- timers: deadlines recorded in state fire as Tick commands ---------------------

    def _idle_due(self, state: TableState, deadline: int | None = None) -> int | None:
        """When a table not over is ended as abandoned (None: never). `deadline`: the table's
        own (its turn clock's or its game's, host.deadline), which goes first: a table with a
        turn clock moves by itself, and its clock ends it once its seats stopped playing.
        Before, a clock due with the idle end (a day's clock, MAX_TURN_CLOCK_MS, at the default
        idle limit of a day) or after it never ran out: the table was ended as abandoned."""
        if state.status == OVER:
            return None
        if self._clock_idle(state):
            return state.last_time  # now
        if self._idle_ms is None:
            return None
        idle = state.last_time + self._idle_ms
        return idle if deadline is None else max(idle, deadline)

    def _deadline(self, game_id: str, state: TableState) -> int | None:
        """The table's own deadline (host.deadline), None when the game's code fails on it."""
        try:
            return self.host.deadline(state)
        except Exception:
            # The game's own code (its deadline), called for a state already committed, or
            # read back from the log: were it to raise here, the commit's answer, the
            # partition's start or its recovery would fail with it, over and over, and every
            # game of the partition would go unserved. This game only goes without its
            # game's timer (its idle end, the platform's own, still applies).
            log.exception("deadline_failed", partition=self.partition, game_id=game_id, version=state.version)
            return None

    @staticmethod
    def _clock_idle(state: TableState) -> bool:
        """A table of clock version 1 whose turn clock has moved for every seat, again and
        again, with no seat's command between: its clock moves refresh its last move's time,
        so the idle end by time never came, and the clock played it for good. (Clock version
        2 ends such a table by its own rules: engine/table.py.)"""
        return (state.clock_version < 2 and state.clock_ms > 0
                and state.idle_moves >= CLOCK_IDLE_MOVES_PER_SEAT * state.seats)

    def _schedule(self, game_id: str, state) -> None:
        due = self._deadline(game_id, state)
        idle = self._idle_due(state, due)
        if idle is not None:
            due = idle if due is None else min(due, idle)
        if due is None:
            self._deadlines.pop(game_id, None)
            self._ticked.pop(game_id, None)
            return
        if self._deadlines.get(game_id) != due:
            self._deadlines[game_id] = due
            heapq.heappush(self._heap, (due, game_id))
            if len(self._heap) > 2 * len(self._deadlines) + HEAP_SLACK:
                self._compact_heap()
            self._wake.set()

    def _compact_heap(self) -> None:
        """The heap of only the live deadlines (the superseded entries dropped)."""
        self._heap = [(due, game_id) for game_id, due in self._deadlines.items()]
        heapq.heapify(self._heap)

    async def _timers(self) -> None:
        while True:
            while self._heap and self._deadlines.get(self._heap[0][1]) != self._heap[0][0]:
                heapq.heappop(self._heap)  # superseded
            if not self._heap:
                self._wake.clear()
                await self._wake.wait()
                continue
            due, game_id = self._heap[0]
            delay = (due - self.now_ms()) / 1000
            if delay > 0:
                self._wake.clear()
                try:
                    await asyncio.wait_for(self._wake.wait(), timeout=delay)
                except TimeoutError:
                    pass
                continue
            heapq.heappop(self._heap)
            slot = self.games.get(game_id)
            if slot is None:
                # No longer held (left out as unreadable by a read again, or dropped for one):
                # no timer. Before, it was pushed a second on, again and again, for good. A game
                # that is read again is scheduled by that read (start, _recover).
                self._deadlines.pop(game_id, None)
                self._ticked.pop(game_id, None)
                continue
            # Try again in a second unless the Tick's commit reschedules it first. From now, not
            # from `due`: a deadline long past (a table rebuilt after a long stop) would
            # otherwise fire again at once, over and over, without the loop ever waiting.
            again = max(due, self.now_ms()) + 1000
            self._deadlines[game_id] = again
            heapq.heappush(self._heap, (again, game_id))
            if self.status != READY:
                continue
            future = asyncio.get_running_loop().create_future()
            future.add_done_callback(lambda f: f.exception())  # a refused Tick is fine
            now = self.now_ms()
            state = slot.state
            deadline = self._deadline(game_id, state) if self._idle_ms is not None else None
            idle = self._idle_due(state, deadline)
            if idle is not None and now >= idle and (
                    deadline is None or self._clock_idle(state) or self._ticked.get(game_id) == state.version):
                # Abandoned: nothing happened at this table for idle_end_after_s (and its own
                # deadline, if any, was tried at this version and did not move it), or only its
                # clock moved. At this version only: a seat's move that gets in first keeps it.
                if self._clock_idle(state):
                    reason = f"abandoned: the turn clock made {state.idle_moves} moves in a row"
                else:
                    reason = f"abandoned: no move for {self._idle_ms / 1000:g} s"
                self._queue.put_nowait(
                    Pending(game_id, ForceEnd(reason=reason), f"{IDLE_ID}{state.version}", state.version, future))
                continue
            future.add_done_callback(lambda f, g=game_id, v=state.version: self._tick_answered(g, v, f))
            self._queue.put_nowait(Pending(game_id, Tick(now=now), f"{TICK_ID}{state.version}:{due}", None, future))

    def _tick_answered(self, game_id: str, version: int, future: asyncio.Future) -> None:
        """A Tick the rules refused (not one that failed to reach them: its append failed, the
        partition moved) was tried at this version: the idle end may come now (_timers)."""
        if future.cancelled():
            return
        exc = future.exception()
        if isinstance(exc, Rejection) and exc.kind not in (UNAVAILABLE, NOT_OWNER) and game_id in self._deadlines:
            self._ticked[game_id] = version

    async def _recover(self, loop) -> None:
        """After a failed append: a new writer (its transaction may or may not have
        committed), then read what the log holds now before taking commands again, so
        memory never runs ahead of or behind the log. Retries until the broker is back."""
        self.status = REBUILDING
        self._appended = None  # what the log holds after the failed append is read again first
        delay = 0.2
        while self.status == REBUILDING:
            if not self._still_assigned():
                # The group gave the partition to another replica meanwhile: a new writer
                # here would fence that owner's (and serve from a memory it does not update).
                self._let_go()
                return
            try:
                await self._replace_writer(loop)
                count = await loop.run_in_executor(self._executor, self._fold_log, self._rebuild)
            except Exception as exc:
                if _fenced(exc) or not self._still_assigned():
                    # Fenced by a newer owner, or the group took the partition meanwhile (the
                    # replica then refuses to make its writer): neither is a failure to retry.
                    self._let_go()
                    return
                log.warning("recover_failed", partition=self.partition, error=str(exc))
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            if self.status != REBUILDING:
                return  # stopped meanwhile
            for game_id, slot in self.games.items():
                self._schedule(game_id, slot.state)
                if self._on_committed:
                    self._on_committed(game_id, slot.state)
            self.status = READY
            log.info("partition_recovered", partition=self.partition, events=count)

    async def _replace_writer(self, loop) -> None:
        """Close the writer (if any) and make a new one, whose epoch fences the old."""
        old, self._writer = self._writer, None
        if old is not None:
            await loop.run_in_executor(self._executor, old.close)
        self._writer = await loop.run_in_executor(self._executor, self._make_writer)

    def _let_go(self) -> None:
        """Another owner's writer fenced ours (or the group moved the partition): let it go."""
        self.status = LOST
        if self._on_fenced:
            self._on_fenced(self.partition)

    async def _renew_writer(self, loop) -> None:
        """A new writer after one that failed with nothing committed (a record refused for its
        size fails its whole transaction), the partition serving on: commands queue up
        meanwhile rather than being refused as during a rebuild. As after any failure, the
        new writer's epoch is followed by a read of the log from where memory ends; it finds
        nothing unless another writer appended since (then folded here, on the loop). Any
        trouble on the way: the full recovery (_recover)."""
        if not self._still_assigned():
            await self._recover(loop)  # which lets the partition go
            return
        try:
            await self._replace_writer(loop)
            found = await loop.run_in_executor(self._executor, lambda: list(self._rebuild()))
        except Exception as exc:
            if _fenced(exc):
                self._let_go()
                return
            log.warning("writer_renew_failed", partition=self.partition, error=str(exc))
            await self._recover(loop)
            return
        changed = set()
        for env in found:
            if (slot := self.games.get(env.game_id)) is None or env.seq > slot.state.version:
                self._fold(env)
                changed.add(env.game_id)
        for game_id in changed:
            if (slot := self.games.get(game_id)) is not None:
                self._schedule(game_id, slot.state)
                if self._on_committed:
                    self._on_committed(game_id, slot.state)

    def _fail(self, batch: list[Pending], rejection: Rejection) -> None:
        for item in batch:
            if not item.future.done():
                item.future.set_exception(rejection)

    def _decide(self, item: Pending, tentative: dict[str, Slot], in_batch: dict, now: int,
                values: list[bytes] | None = None):
        host = self.host
        slot = tentative.get(item.game_id) or self.games.get(item.game_id)
        if slot is None and self.unreadable and item.game_id in self.unreadable:
            raise unreadable(item.game_id, self.unreadable[item.game_id])
        prior = in_batch.get((item.game_id, item.command_id))
        if prior is not None:
            self._same_command(item, prior.digest, prior.event_types)
            return slot, Outcome(prior.game_id, prior.first_seq, prior.last_seq, prior.version, prior.event_types, True), []
        known = slot.seen.get(item.command_id) if slot is not None else None
        if known is not None:
            self._same_command(item, known[3], known[2])
            return slot, Outcome(item.game_id, known[0], known[1], known[1], known[2], True), []
        if slot is None and item.game_id in self.retired:
            return self._decide_retired(item)
        if slot is None and item.game_id in self.forgotten:
            # A game that ended long ago (or, rarely, a false positive of the filter: a new
            # id refused, which its caller replaces).
            if item.create is not None or item.fork is not None:
                raise Rejection(ALREADY_EXISTS, f"game id {item.game_id} was used by a game that ended long ago",
                                ALREADY_EXISTS)
            raise Rejection("game_over", "this table has ended", "illegal")
        encoded = None
        if item.create is not None or item.fork is not None:
            if slot is not None:
                raise Rejection(ALREADY_EXISTS, f"game {item.game_id} exists already", ALREADY_EXISTS)
            if item.create is not None:
                c = item.create
                envs = host.create(item.game_id, c["seats"], c["options"], c["seed"], now=now, command_id=item.command_id)
                new = Slot(state=host.fold(envs))
            else:  # made off the loop (prepare_fork)
                envs, new, encoded = item.fork.envs, Slot(state=item.fork.state), item.fork.values
        else:
            if slot is None:
                raise Rejection("no_such_game", f"no game {item.game_id}", NOT_FOUND)
            if item.expected_version is not None and item.expected_version != slot.state.version:
                raise Rejection("version_conflict",
                                f"expected version {item.expected_version}, the game is at {slot.state.version}", CONFLICT,
                                current_version=slot.state.version)
            envs = host.decide(slot.state, item.command, command_id=item.command_id, now=now)
            state = slot.state
            for env in envs:
                state = host.evolve(state, env)
            # `seen` is shared: only committed results are ever written to it.
            new = Slot(state=state, seen=slot.seen)
        if values is not None:
            values.extend(encoded if encoded is not None else self._encoded(item, envs))
        outcome = Outcome(item.game_id, envs[0].seq, envs[-1].seq, envs[-1].seq, tuple(e.type for e in envs),
                          digest=cause_digest(envs[0].cause))
        in_batch[(item.game_id, item.command_id)] = outcome
        tentative[item.game_id] = new
        return new, outcome, envs

    def prepare_fork(self, game_id: str, origin: list[Envelope], seed: str, command_id: str, *,
                     deal: int = DEAL_AGAIN) -> PreparedFork:
        """A fork's events, state and records, made on the calling thread (a worker's: see
        PreparedFork), stamped with the time now; refused as its decide would refuse it
        (a broken or unstarted origin, `too_large`). Whether the fork may be made at all (its
        id free, its command_id new) is still decided on the partition's loop. `deal`: how its
        hidden cards are dealt (TableHost.fork)."""
        envs = self.host.fork(game_id, origin, seed, now=self.now_ms(), command_id=command_id, deal=deal)
        state = self.host.fold(envs)
        values = self._encode(game_id, envs, len(origin)) if self._max_record is not None else None
        return PreparedFork(envs, state, values, len(origin))

    def _encoded(self, item: Pending, envs: list[Envelope]) -> list[bytes]:
        return self._encode(item.game_id, envs, item.fork.origin_events if item.fork is not None else None)

    def _encode(self, game_id: str, envs: list[Envelope], fork_of: int | None) -> list[bytes]:
        """A command's records, encoded; refused `too_large` (malformed: the same command
        is as large every time) if one is larger than the writer may send. `fork_of`: the
        number of origin events a fork carries (None for any other command)."""
        encoded = [encode_record(env) for env in envs]
        key = game_id.encode("utf-8")
        for env, value in zip(envs, encoded, strict=True):
            if not record_fits(value, key, self._max_record):
                if fork_of is not None:
                    what = (f"the fork would carry its origin's {fork_of} events in one record "
                            f"of {len(value):,} bytes")
                    hint = "; fork from an earlier step, or raise the store's limit"
                else:
                    what = f"its {env.type} event would be a record of {len(value):,} bytes"
                    hint = ""
                raise Rejection("too_large", f"this command is too large to record: {what}, and the event store "
                                f"takes at most {self._max_record:,} bytes a record{hint}", MALFORMED)
        return encoded

    def _same_command(self, item: Pending, digest: int | None, event_types: tuple[str, ...]) -> None:
        """Refuse a command whose command_id this game has seen with another command: a retry
        is the same command again, and answering another as its duplicate would tell the
        caller that a command it never made was made (a ForceEnd sent with a move's id was
        told "done" while the table played on). A move is compared by its digest (the move
        and its seat); a create, fork, join, leave or end by the first event it makes, since
        the gateway compares a create's and a join's retries itself. The platform's ticks
        have their own ids."""
        command = item.command
        if item.create is not None or item.fork is not None:
            expected = TableCreated.TYPE
        elif command is None or isinstance(command, TABLE_COMMANDS):
            expected = FIRST_EVENT.get(type(command))
        else:
            if digest is not None and command_digest(self.host.commands.encode(command), command.seat) != digest:
                raise reused(item.command_id)
            return
        if expected is not None and event_types[:1] != (expected,):
            raise reused(item.command_id)

    def _decide_retired(self, item: Pending):
        """A command for a retired game: answered as the finished game would answer it."""
        version, recent, _ = self.retired[item.game_id]
        for command_id, first_seq, last_seq, event_types, digest in recent:
            if command_id == item.command_id:
                self._same_command(item, digest, event_types)
                return None, Outcome(item.game_id, first_seq, last_seq, last_seq, event_types, True), []
        if item.create is not None or item.fork is not None:
            raise Rejection(ALREADY_EXISTS, f"game {item.game_id} exists already", ALREADY_EXISTS)
        if item.expected_version is not None and item.expected_version != version:
            raise Rejection("version_conflict", f"expected version {item.expected_version}, the game is at {version}", CONFLICT,
                            current_version=version)
        raise Rejection("game_over", "this table has ended", "illegal")


# The first event each of the table's own commands makes (_same_command).
FIRST_EVENT = {JoinSeat: "SeatJoined", LeaveSeat: "SeatLeft", ForceEnd: "TableEnded"}


def reused(command_id: str) -> Rejection:
    return Rejection("command_id_reused", f"command_id {command_id} was used by another command of this game; "
                     "a new command needs a new command_id", CONFLICT)


_SECRET_MIN = 3  # shorter strings of a payload (a seat's "0", a symbol code) are no card


def _leaves(value: Any) -> Iterable[str]:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)


def redacted(problem: str, env: Envelope, state: TableState | None, host: TableHost) -> str:
    """`problem` with every string of the event's payload (its cards, a TableCreated's seed)
    and every card the game held hidden from any viewer replaced by "(hidden)": the words a
    caller of a game that cannot be folded is given."""
    secret = {s for s in _leaves(env.payload) if len(s) >= _SECRET_MIN}
    if state is not None and state.game is not None:
        try:
            spec = host.for_version(state.rules_version).spec
            for seat in (None, *range(state.seats)):
                secret.update(s for s in spec.hidden(state.game, seat) if len(s) >= _SECRET_MIN)
        except Exception:  # noqa: BLE001 - the game's code failed already; its payload is still hidden
            pass
    if not secret:
        return problem
    # Whole ids only (a card id holds letters, digits, "-", ".", ":" and "_").
    pattern = re.compile(r"(?<![\w.:-])(?:" + "|".join(map(re.escape, sorted(secret, key=len, reverse=True)))
                         + r")(?![\w.:-])")
    return pattern.sub("(hidden)", problem)


def unreadable(game_id: str, why: str) -> Rejection:
    return Rejection("game_unreadable", f"this rules service cannot read the log of game {game_id} past {why}; "
                     "nothing was recorded (a newer rules service may read it)", UNAVAILABLE)


def command_digest(command: Any, seat: int | None) -> int:
    """A command as a number: its wire form and its seat, hashed. Stable across processes
    (snapshots keep it), and an int of 8 bytes costs a remembered command less than the text."""
    return int.from_bytes(hashlib.blake2b(canonical_bytes([command, seat]), digest_size=8).digest(), "little")


def cause_digest(cause: dict[str, Any] | None) -> int | None:
    """The command_digest of the command a first event's `cause` records."""
    return None if cause is None else command_digest(cause["command"], cause["seat"])


def _fenced(exc: BaseException) -> bool:
    """A fenced writer: the store's writer raises WriterFenced when librdkafka reports that a
    newer writer of the partition took its transactional.id (_FENCED, PRODUCER_FENCED, or a
    produce refused with INVALID_PRODUCER_EPOCH); every other error is retryable."""
    return isinstance(exc, WriterFenced)
