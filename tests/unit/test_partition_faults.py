"""A partition owner survives its own faults: a command the game's rules fail on (a bug a
player's input found) is refused alone with a clear error, and a fault after the decisions
answers its batch "retry" and reads the partition back from the log; either way the loop
goes on, and every other game of the partition keeps being served. (Before, one such
command ended the partition's loop: every game in it waited for good.)

The owner is driven with an in-memory log (test_commit_pace's writer keeps only counts)."""

from __future__ import annotations

import asyncio
import threading

import pytest
from structlog.testing import capture_logs
from test_dedupe_window import _a_legal_move, _host, _logged_game  # tests/unit is on sys.path

import croupier.rules.partition as partition_mod
from croupier.engine.contract import Rejection
from croupier.rules.partition import PartitionOwner, Pending
from croupier.rules.replica import NotAssigned


class LogWriter:
    """A partition's writer over a list: what was appended is what a rebuild reads."""

    def __init__(self, log: list):
        self.log = log
        self.lock = threading.Lock()

    def append(self, envelopes) -> None:
        with self.lock:
            self.log.extend(envelopes)

    def close(self) -> None:
        pass


async def _owner(log: list, **kwargs) -> PartitionOwner:
    owner = PartitionOwner(_host(), 0, lambda: LogWriter(log), max_batch=256, dedupe_window=16, **kwargs)
    await owner.start(lambda: list(log))
    return owner


async def _answer(owner: PartitionOwner, game_id: str, command, command_id: str):
    item = Pending(game_id, command, command_id, None, asyncio.get_running_loop().create_future())
    owner.submit(item)
    return await asyncio.wait_for(item.future, 10)


def test_a_command_the_rules_fail_on_is_refused_alone_and_the_partition_goes_on():
    log = _logged_game(_host(), "a") + _logged_game(_host(), "b")

    async def main():
        owner = await _owner(log)
        decide = owner.host.decide

        def failing(state, command, **kw):
            if kw.get("command_id") == "poison":
                raise TypeError("unhashable type: 'dict'")  # as a check that missed a type would
            return decide(state, command, **kw)

        owner.host.decide = failing
        try:
            poison = _a_legal_move(owner, "a")
            with capture_logs() as logs, pytest.raises(Rejection) as refused:
                await _answer(owner, "a", poison, "poison")
            before = len(log)
            # Logged for the operators with what finds the player's complaint: game, id, seat.
            failed = [e for e in logs if e["event"] == "decide_failed"]
            assert [(e["game_id"], e["command_id"], e["seat"]) for e in failed] == [("a", "poison", poison.seat)]
            # The same game and another game of the partition are still served.
            again = await _answer(owner, "a", _a_legal_move(owner, "a"), "m1")
            other = await _answer(owner, "b", _a_legal_move(owner, "b"), "m2")
            return refused.value, before, again, other, len(log)
        finally:
            await owner.stop("test")

    refused, before, again, other, after = asyncio.run(main())
    assert (refused.code, refused.kind) == ("command_not_understood", "malformed")
    assert "TypeError" in refused.message and "nothing was recorded" in refused.message
    assert not again.duplicate and not other.duplicate and after > before


def test_a_fault_after_the_append_answers_retry_and_memory_is_read_back_from_the_log():
    log = _logged_game(_host(), "a") + _logged_game(_host(), "b")
    fail = {"on": True, "above": max(e.seq for e in log if e.game_id == "a")}

    def committed(game_id, state):
        if fail["on"] and game_id == "a" and state.version > fail["above"]:
            fail["on"] = False
            raise RuntimeError("a listener failed")

    async def main():
        owner = await _owner(log, on_committed=committed)
        try:
            move = _a_legal_move(owner, "a")
            with pytest.raises(Rejection) as retry:
                await _answer(owner, "a", move, "m1")
            # Read back from the log: the move that was appended is there, and its retry is
            # answered as the duplicate it is (not decided again on a stale state).
            for _ in range(100):
                if owner.status == "ready":
                    break
                await asyncio.sleep(0.05)
            again = await _answer(owner, "a", move, "m1")
            other = await _answer(owner, "b", _a_legal_move(owner, "b"), "m2")
            return retry.value, again, other, owner.games["a"].state.version, [e.seq for e in log if e.game_id == "a"]
        finally:
            await owner.stop("test")

    retry, again, other, version, seqs = asyncio.run(main())
    assert retry.kind == "unavailable"
    assert again.duplicate and version == seqs[-1]
    assert seqs == list(range(1, len(seqs) + 1))  # nothing twice, no gap
    assert not other.duplicate


def test_a_game_whose_deadline_fails_on_a_committed_state_only_goes_without_its_timer():
    # The game's deadline is its own code, called for each state committed or read back.
    # Before, one that raised failed the commit's answer, then the recovery that followed,
    # whose raise ended the partition's loop: REBUILDING for good, every game unavailable.
    log = _logged_game(_host(), "a") + _logged_game(_host(), "b")
    above = max(e.seq for e in log if e.game_id == "a")
    IDLE_S = 10**10

    def failing_on(host):
        deadline = host.deadline

        def failing(state):
            if state.game_id == "a" and state.version > above:
                raise KeyError("turn")  # as a deadline that missed a case of its game would
            return deadline(state)

        host.deadline = failing
        return host

    async def main():
        # An idle end far off (the logged games' events are of time 0): a timer for every game.
        owner = PartitionOwner(failing_on(_host()), 0, lambda: LogWriter(log), max_batch=256, dedupe_window=16,
                               idle_end_after_s=IDLE_S)
        await owner.start(lambda: list(log))
        try:
            moved = await _answer(owner, "a", _a_legal_move(owner, "a"), "m1")
            other = await _answer(owner, "b", _a_legal_move(owner, "b"), "m2")
            after = owner.status, dict(owner._deadlines), owner.games["a"].state.last_time
        finally:
            await owner.stop("test")
        # A partition started from a log holding that state starts, and serves.
        again = PartitionOwner(failing_on(_host()), 0, lambda: LogWriter(log), max_batch=256, dedupe_window=16)
        await again.start(lambda: list(log))
        try:
            started = again.status, set(again._deadlines)
            third = await _answer(again, "b", _a_legal_move(again, "b"), "m3")
        finally:
            await again.stop("test")
        return moved, other, after, started, third

    moved, other, (status, deadlines, last_time), started, third = asyncio.run(main())
    assert not moved.duplicate and not other.duplicate and not third.duplicate
    assert status == "ready"
    assert deadlines["a"] == last_time + IDLE_S * 1000  # its idle end only, the platform's own timer
    assert started[0] == "ready" and "a" not in started[1]


def test_a_recovery_that_fails_lets_the_partition_go_to_be_taken_again():
    # The recovery after a fault (which reads the log again) failed itself: before, the
    # partition's loop ended with it, REBUILDING for good, and the replica never took it
    # again (it looks for lost partitions only).
    log = _logged_game(_host(), "a") + _logged_game(_host(), "b")
    above = max(e.seq for e in log if e.game_id == "a")
    fenced = []

    def committed(game_id, state):
        if game_id == "a" and state.version > above:
            raise RuntimeError("a listener failed")  # every time: the recovery meets it too

    async def main():
        owner = await _owner(log, on_committed=committed, on_fenced=fenced.append)
        try:
            later = _a_legal_move(owner, "b")
            with pytest.raises(Rejection) as retry:
                await _answer(owner, "a", _a_legal_move(owner, "a"), "m1")
            for _ in range(100):
                if owner.status != "rebuilding":
                    break
                await asyncio.sleep(0.05)
            with pytest.raises(Rejection) as moved:
                await _answer(owner, "b", later, "m2")
            return retry.value, owner.status, owner.games, moved.value
        finally:
            await owner.stop("test")

    retry, status, games, moved = asyncio.run(main())
    assert retry.kind == "unavailable"
    assert status == "lost" and fenced == [0]
    assert games == {}  # nothing for the next owner to adopt: it reads the log again
    assert moved.kind == "not_owner"


def test_a_recovery_the_group_cuts_short_lets_the_partition_go_without_a_failure():
    # The append failed, and while the partition recovered the group gave it to another
    # replica: the replica refuses to make the new writer (NotAssigned). That is the group
    # moving the partition, not a recovery that failed: it is let go at once, with no
    # "recover_failed" warning and no retry after a back-off.
    log = _logged_game(_host(), "a")
    assigned = {"now": True}
    made = []

    class FailingWriter(LogWriter):
        def append(self, envelopes) -> None:
            raise RuntimeError("the broker went away")

    def make_writer():
        made.append(1)
        if len(made) == 1:
            return FailingWriter(log)
        assigned["now"] = False  # the revocation came while the recovery asked for a writer
        raise NotAssigned("partition 0 is no longer assigned to this replica")

    async def main():
        owner = PartitionOwner(_host(), 0, make_writer, max_batch=256, dedupe_window=16,
                               still_assigned=lambda: assigned["now"])
        await owner.start(lambda: list(log))
        try:
            with capture_logs() as logs, pytest.raises(Rejection) as retry:
                await _answer(owner, "a", _a_legal_move(owner, "a"), "m1")
            with capture_logs() as later:
                for _ in range(100):
                    if owner.status != "rebuilding":
                        break
                    await asyncio.sleep(0.01)
            return retry.value, owner.status, len(made), [e["event"] for e in logs + later]
        finally:
            await owner.stop("test")

    retry, status, writers, events = asyncio.run(main())
    assert retry.kind == "unavailable"
    assert status == "lost" and writers == 2  # one try at a new writer, not a retry loop
    assert "recover_failed" not in events


def test_a_game_whose_log_holds_an_event_these_rules_cannot_fold_is_refused_and_the_others_served():
    # An event of a newer rules version (or a payload these rules do not read) in one game's
    # log. Before, the exception ended the fold: the partition's take failed at it on every
    # try, and none of its games was served. Now that game alone is left out and refused
    # UNAVAILABLE (a create of its id too: it exists), and the others are served.
    import dataclasses

    log = _logged_game(_host(), "a") + _logged_game(_host(), "b")
    last_a = max((e for e in log if e.game_id == "a"), key=lambda e: e.seq)
    log.append(dataclasses.replace(last_a, seq=last_a.seq + 1, type="FutureEvent", version=9, cause=None))

    async def main():
        with capture_logs() as logs:
            owner = await _owner(log)
        try:
            with pytest.raises(Rejection) as refused:
                await _answer(owner, "a", _a_legal_move(owner, "b"), "m1")
            create = Pending("a", None, "c1", None, asyncio.get_running_loop().create_future(),
                             create={"seats": 2, "options": {}, "seed": "ab" * 32})
            owner.submit(create)
            with pytest.raises(Rejection) as recreated:
                await asyncio.wait_for(create.future, 10)
            other = await _answer(owner, "b", _a_legal_move(owner, "b"), "m2")
            return owner.status, refused.value, recreated.value, other, set(owner.games), logs
        finally:
            await owner.stop("test")

    status, refused, recreated, other, games, logs = asyncio.run(main())
    assert status == "ready" and games == {"b"}
    assert (refused.code, refused.kind) == ("game_unreadable", "unavailable")
    assert f"seq {last_a.seq + 1} (FutureEvent v9)" in refused.message
    assert recreated.code == "game_unreadable"
    assert not other.duplicate
    [line] = [e for e in logs if e["event"] == "game_unreadable"]
    assert (line["game_id"], line["seq"], line["type"]) == ("a", last_a.seq + 1, "FutureEvent")


def test_a_game_whose_log_skips_a_seq_is_refused_not_played_on_from_before_the_gap():
    # Before, the gap was logged and the game kept its state before it: a command decided
    # there appended a seq the log already held (after the events past the gap).
    log = _logged_game(_host(), "a") + _logged_game(_host(), "b")
    a_seqs = [e.seq for e in log if e.game_id == "a"]
    missing = a_seqs[1]
    log = [e for e in log if not (e.game_id == "a" and e.seq == missing)]
    refused = _a_refused_and_b_served(log)
    assert refused.code == "game_unreadable" and f"skips from seq {missing - 1} to {missing + 1}" in refused.message


def _a_refused_and_b_served(log: list) -> Rejection:
    """A partition owner of game a's and game b's log: a's command is refused (the rejection),
    b's is served, and only b is in memory."""

    async def main():
        owner = await _owner(log)
        try:
            with pytest.raises(Rejection) as refused:
                await _answer(owner, "a", _a_legal_move(owner, "b"), "m1")
            other = await _answer(owner, "b", _a_legal_move(owner, "b"), "m2")
            return set(owner.games), refused.value, other
        finally:
            await owner.stop("test")

    games, refused, other = asyncio.run(main())
    assert games == {"b"} and not other.duplicate
    return refused


def test_a_command_whose_caller_gave_up_before_it_was_decided_is_not_appended():
    # A caller that timed out (told to retry the same command_id) or was cancelled: its
    # command waiting in the queue is dropped, not decided and appended for nobody. Its
    # retry, in the same batch here, is decided afresh; another game's command is answered.
    log = _logged_game(_host(), "a") + _logged_game(_host(), "b")

    async def main():
        owner = await _owner(log)
        try:
            loop = asyncio.get_running_loop()
            move_a, move_b = _a_legal_move(owner, "a"), _a_legal_move(owner, "b")
            before = len(log)
            items = [Pending("a", move_a, "m1", None, loop.create_future()),
                     Pending("a", move_a, "m1", None, loop.create_future()),
                     Pending("b", move_b, "m2", None, loop.create_future())]
            items[0].future.cancel()  # the caller gave up while the command waited
            for item in items:  # one batch: the loop takes them all once it runs
                owner.submit(item)
            retry, other = await asyncio.wait_for(asyncio.gather(items[1].future, items[2].future), 10)
            return retry, other, log[before:]
        finally:
            await owner.stop("test")

    retry, other, appended = asyncio.run(main())
    assert not retry.duplicate and not other.duplicate  # the retry was decided, not a duplicate
    assert [(e.game_id, e.command_id) for e in appended] == [("a", "m1"), ("b", "m2")]


def test_a_partition_with_its_queue_full_refuses_more_at_once_and_serves_what_it_holds(monkeypatch):
    # A flood of commands for one partition: before, each was queued however many waited,
    # memory grew without bound, and each waited only to time out before its turn. Past
    # MAX_QUEUED a command is refused at once, retryable, and nothing of it is appended; the
    # commands held are all answered.
    monkeypatch.setattr(partition_mod, "MAX_QUEUED", 3)
    log = _logged_game(_host(), "a")
    release = threading.Event()

    class SlowWriter(LogWriter):
        def append(self, envelopes) -> None:
            release.wait(10)
            super().append(envelopes)

    async def main():
        owner = PartitionOwner(_host(), 0, lambda: SlowWriter(log), max_batch=1, dedupe_window=16)
        await owner.start(lambda: list(log))
        loop = asyncio.get_running_loop()
        try:
            move = _a_legal_move(owner, "a")
            held = []
            # The first is taken into a batch (its append waits); three more fill the queue.
            for i in range(4):
                held.append(Pending("a", move, f"c{i}", None, loop.create_future()))
                owner.submit(held[-1])
                await asyncio.sleep(0.05)
            with pytest.raises(Rejection) as refused:
                owner.submit(Pending("a", move, "c4", None, loop.create_future()))
            before = len(log)
            release.set()
            answers = await asyncio.gather(*(asyncio.wait_for(p.future, 10) for p in held), return_exceptions=True)
            return refused.value, before, answers
        finally:
            release.set()
            await owner.stop("test")

    refused, before, answers = asyncio.run(main())
    assert (refused.code, refused.kind) == ("partition_busy", "unavailable")
    assert "retry" in refused.message
    # Every command held was answered (the first applied, the same move after it refused as
    # illegal or applied, but answered either way), and none was left waiting.
    assert len(answers) == 4 and all(not isinstance(a, asyncio.TimeoutError) for a in answers)
    assert not isinstance(answers[0], BaseException) and answers[0].first_seq == before + 1


def test_the_queue_cap_counts_callers_commands_not_the_timers(monkeypatch):
    # After an outage the owner's timers may queue an overdue Tick for each of thousands of
    # games at once: counted against the cap, they made every caller's command
    # partition_busy until they were drained.
    monkeypatch.setattr(partition_mod, "MAX_QUEUED", 2)
    log = _logged_game(_host(), "a")

    async def main():
        owner = await _owner(log)
        loop = asyncio.get_running_loop()
        try:
            owner._task.cancel()  # nothing is taken from the queue meanwhile
            for i in range(5):  # as _timers queues them
                owner._queue.put_nowait(Pending("a", None, f"{partition_mod.TICK_ID}{i}:0", None, loop.create_future()))
            move = _a_legal_move(owner, "a")
            owner.submit(Pending("a", move, "c0", None, loop.create_future()))
            owner.submit(Pending("a", move, "c1", None, loop.create_future()))
            with pytest.raises(Rejection) as refused:
                owner.submit(Pending("a", move, "c2", None, loop.create_future()))
            return refused.value
        finally:
            await owner.stop("test")

    assert asyncio.run(main()).code == "partition_busy"


@pytest.mark.parametrize("seats", [10**9, 0, True, "2"])
def test_a_game_whose_first_event_claims_impossible_seats_is_refused_and_the_others_served(seats):
    # A TableCreated the rules did not write (anything with access to the topic): before, its
    # seat count was trusted, and a billion seats took the replica's memory on every rebuild
    # of the partition. The projector checked it already; the engine's fold does now, for all.
    import dataclasses

    log = _logged_game(_host(), "a") + _logged_game(_host(), "b")
    first = next(i for i, e in enumerate(log) if e.game_id == "a" and e.seq == 1)
    log[first] = dataclasses.replace(log[first], payload={**log[first].payload, "seats": seats})
    refused = _a_refused_and_b_served(log)
    assert refused.code == "game_unreadable" and "seats" in refused.message


def test_a_second_event_at_a_seq_already_folded_is_told_and_the_first_kept():
    # Before, a rebuild passed over it as a redelivery, in silence (the projector now tells it
    # too: seq_conflict); the game is served from the first, as the projector shows it.
    import dataclasses

    log = _logged_game(_host(), "a") + _logged_game(_host(), "b")
    last_a = max((e for e in log if e.game_id == "a"), key=lambda e: e.seq)
    log.append(dataclasses.replace(last_a, hash="ab" * 32, payload={**last_a.payload}))
    log.append(last_a)  # and a true redelivery, which is not told

    async def main():
        with capture_logs() as logs:
            owner = await _owner(log)
        try:
            version = owner.games["a"].state.version
            last_hash = owner.games["a"].state.last_hash
            served = await _answer(owner, "a", _a_legal_move(owner, "a"), "m1")
            return version, last_hash, served, logs
        finally:
            await owner.stop("test")

    version, last_hash, served, logs = asyncio.run(main())
    assert (version, last_hash) == (last_a.seq, last_a.hash) and not served.duplicate
    conflicts = [e for e in logs if e["event"] == "seq_conflict"]
    assert [(e["game_id"], e["seq"]) for e in conflicts] == [("a", last_a.seq)]
