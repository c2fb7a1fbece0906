"""Finished games leave a replica's memory: retire_after_s after its last event a game that
is over keeps only its version and its last few command results, a command for it is still
answered as the finished game would answer it, a rebuild from the log retires it again
without holding it, and games still being played are never touched.

The owner is driven with the in-memory writer of test_commit_pace; reading a retired game's
state back from the real log is tests/integration/test_rules_service.py's.
"""

from __future__ import annotations

import asyncio
import gc

import pytest
from test_commit_pace import SEED, MemoryWriter  # tests/unit is on sys.path (pytest, rootdir mode)
from test_dedupe_window import _a_legal_move, _host, _logged_game, _send

from croupier.engine.contract import Rejection
from croupier.engine.table import ForceEnd, TableHost
from croupier.rules.partition import RETIRED_WINDOW, PartitionOwner, Pending


def _ended_game(host: TableHost, game_id: str, moves: int = 0) -> list:
    """A game's log: created, seated, `moves` moves, then ended by an operator."""
    envs = _logged_game(host, game_id)
    state = host.fold(envs)
    for i in range(moves):
        seat = host.spec.to_act(state.game)[0]
        batch = host.decide(state, host.legal_actions(state, seat)[0], command_id=f"m{i}", now=0)
        envs += batch
        state = host.fold(batch, state)
    envs += host.decide(state, ForceEnd(reason="test"), command_id="end", now=0)
    return envs


def _unstarted(host: TableHost, retire_after_s: float | None, partition: int = 0, window: int = 16,
               forget_after_s: float | None = None) -> PartitionOwner:
    return PartitionOwner(host, partition, lambda: MemoryWriter(), max_batch=256, dedupe_window=window,
                          retire_after_s=retire_after_s, forget_after_s=forget_after_s)


async def _owner(envelopes: list, retire_after_s: float | None, window: int = 16,
                 forget_after_s: float | None = None) -> PartitionOwner:
    owner = _unstarted(_host(), retire_after_s, window=window, forget_after_s=forget_after_s)
    await owner.start(lambda: envelopes)
    return owner


async def _refusal(owner: PartitionOwner, item: Pending) -> Rejection:
    owner.submit(item)
    with pytest.raises(Rejection) as caught:
        await item.future
    return caught.value


def _pending(game_id: str, command, command_id: str, expected_version: int | None = None, create: dict | None = None):
    return Pending(game_id, command, command_id, expected_version, asyncio.get_running_loop().create_future(), create=create)


def test_a_game_that_ends_is_retired_and_still_answers_as_a_finished_game():
    async def main():
        owner = await _owner(_logged_game(_host(), "g") + _logged_game(_host(), "live"), retire_after_s=0)
        try:
            await _send(owner, "g", _a_legal_move(owner, "g"), "m1")
            ended = await _send(owner, "g", ForceEnd(reason="test"), "end")
            held = set(owner.games)
            retired = dict(owner.retired)
            again = await _send(owner, "g", ForceEnd(reason="test"), "end")
            appended = len(owner._writer.transactions)
            move = await _refusal(owner, _pending("g", ForceEnd(reason="again"), "end-2"))
            stale = await _refusal(owner, _pending("g", ForceEnd(reason="again"), "end-3", expected_version=1))
            create = await _refusal(owner, _pending("g", None, "c-again", create={"seats": 2, "options": {}, "seed": SEED}))
            return (ended, held, retired, again, appended, len(owner._writer.transactions), move, stale, create,
                    set(owner.games))
        finally:
            await owner.stop("test")

    ended, held, retired, again, appended, after, move, stale, create, still = asyncio.run(main())
    assert held == {"live"} and still == {"live"}  # the game still being played stays
    assert set(retired) == {"g"} and retired["g"][0] == ended.version
    # A retry of the command that ended it: the first answer, nothing appended.
    assert again.duplicate and (again.first_seq, again.last_seq, again.event_types) == (
        ended.first_seq, ended.last_seq, ended.event_types)
    assert after == appended
    # Anything else: what the finished game answers.
    assert (move.code, move.kind) == ("game_over", "illegal")
    assert stale.code == "version_conflict"
    assert create.code == "already_exists"


def test_a_finished_game_stays_until_its_time_is_up():
    async def main():
        owner = await _owner(_logged_game(_host(), "g"), retire_after_s=3600)
        try:
            await _send(owner, "g", ForceEnd(reason="test"), "end")
            kept = "g" in owner.games and not owner.retired
            last = owner.games["g"].state.last_time
            early = owner.retire_due(now_ms=last + 3_599_000)
            due = owner.retire_due(now_ms=last + 3_600_000)
            return kept, early, due, set(owner.retired), set(owner.games)
        finally:
            await owner.stop("test")

    kept, early, due, retired, games = asyncio.run(main())
    assert kept and early == 0
    assert due == 1 and retired == {"g"} and games == set()


def test_never_retired_without_a_time():
    async def main():
        owner = await _owner(_ended_game(_host(), "g"), retire_after_s=None)
        try:
            return owner.retire_due(now_ms=10**15), set(owner.games)
        finally:
            await owner.stop("test")

    assert asyncio.run(main()) == (0, {"g"})


def test_a_rebuild_retires_old_finished_games_and_keeps_their_last_results():
    host = _host()
    finished = _ended_game(host, "old", moves=RETIRED_WINDOW + 4)
    playing = _logged_game(host, "playing")

    async def main():
        owner = await _owner(finished + playing, retire_after_s=60)
        try:
            retry = await _send(owner, "old", ForceEnd(reason="test"), "end")
            forgotten = await _refusal(owner, _pending("old", ForceEnd(reason="test"), "join0"))
            return set(owner.games), dict(owner.retired), retry, forgotten
        finally:
            await owner.stop("test")

    games, retired, retry, forgotten = asyncio.run(main())
    assert games == {"playing"} and set(retired) == {"old"}
    version, recent, ended_ms = retired["old"]
    assert version == finished[-1].seq and ended_ms == finished[-1].time
    assert [r[0] for r in recent] == [f"m{i}" for i in range(5, RETIRED_WINDOW + 4)] + ["end"]
    ending = [e for e in finished if e.command_id == "end"]
    assert retry.duplicate and (retry.first_seq, retry.last_seq) == (ending[0].seq, ending[-1].seq)
    # A command older than the retired window is refused as the game is over; never re-run.
    assert forgotten.code == "game_over"
    # Plain data, which the collector stops walking: a collection untracks a tuple once its
    # items are all untracked, so each of the record's four levels takes one.
    for _ in range(4):
        gc.collect()
    assert not gc.is_tracked(retired["old"])


def test_a_partition_taken_back_keeps_its_retired_games_and_reads_only_what_is_new():
    host = _host()
    log = _ended_game(host, "old")

    async def main():
        first = await _owner(log, retire_after_s=0)
        await first.stop("revoked")
        again = _unstarted(host, 0)
        again.adopt(first)
        await again.start(lambda: log)  # the whole partition again: the retired game's events are skipped
        try:
            return set(again.games), set(again.retired)
        finally:
            await again.stop("test")

    assert asyncio.run(main()) == (set(), {"old"})


def test_the_log_is_folded_off_the_event_loop_which_keeps_serving():
    """A rebuild reads and folds on the partition's thread: the loop's other work goes on."""
    import time

    host = _host()
    log = _ended_game(host, "a", moves=40) + _logged_game(host, "b")

    def slow_read():
        for i, env in enumerate(log):
            if i % 5 == 0:
                time.sleep(0.002)  # the broker's pace
            yield env

    async def main():
        ticks = 0

        async def tick():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.001)
                ticks += 1

        ticker = asyncio.create_task(tick())
        owner = _unstarted(host, None)
        started = time.perf_counter()
        await owner.start(slow_read)
        took = time.perf_counter() - started
        ticker.cancel()
        try:
            return ticks, took, {g: s.state.version for g, s in owner.games.items()}
        finally:
            await owner.stop("test")

    ticks, took, versions = asyncio.run(main())
    assert versions == {"a": max(e.seq for e in log if e.game_id == "a"), "b": max(e.seq for e in log if e.game_id == "b")}
    assert took > 0.02 and ticks >= 5, (ticks, took)  # blocked for all of `took` when folded on the loop


def test_a_stopped_owner_stops_folding_and_the_owner_that_adopts_its_games_waits_for_it():
    import threading

    host = _host()
    log = _ended_game(host, "a", moves=20)
    halfway, go_on = threading.Event(), threading.Event()

    def paused_read():
        for i, env in enumerate(log):
            if i == len(log) // 2:
                halfway.set()
                go_on.wait(10)
            yield env

    async def main():
        loop = asyncio.get_running_loop()
        first = _unstarted(host, None)
        starting = asyncio.create_task(first.start(paused_read))
        await loop.run_in_executor(None, halfway.wait, 10)
        await first.stop("revoked")
        second = _unstarted(host, None)
        second.adopt(first)
        resuming = asyncio.create_task(second.start(lambda: iter(log)))
        await asyncio.sleep(0.05)
        waited = not resuming.done() and second.status != "ready"
        go_on.set()
        try:
            await starting
            stopped = None
        except RuntimeError as exc:
            stopped = str(exc)
        await resuming
        try:
            return waited, stopped, second.games["a"].state.version
        finally:
            await second.stop("test")

    waited, stopped, version = asyncio.run(main())
    assert waited and stopped and "stopped" in stopped
    assert version == log[-1].seq


def test_a_replica_forgets_the_games_of_a_partition_that_did_not_come_back():
    """A revoked partition's games are kept a while, for a rebalance that gives it straight
    back, then dropped: a partition that moved to another replica for good does not keep its
    games in this one's memory."""
    from croupier.rules.replica import SUSPENDED_KEEP_S, Replica
    from croupier.rules.settings import RulesSettings

    host = _host()

    async def main():
        replica = Replica(RulesSettings(game="expeditions"), host, "t", 2)
        owners = []
        for p in (0, 1):
            owner = _unstarted(host, None, partition=p)
            await owner.start(lambda p=p: _logged_game(host, f"g{p}"))
            replica.owners[p] = owner
            owners.append(owner)
        await replica.revoke([0])
        revoked_at = replica._suspended[0][1]
        await replica.revoke([1])
        kept = replica.forget_suspended(now=revoked_at + SUSPENDED_KEEP_S / 2)
        replica._suspended[1] = (replica._suspended[1][0], revoked_at + SUSPENDED_KEEP_S)
        dropped = replica.forget_suspended(now=revoked_at + SUSPENDED_KEEP_S + 1)
        return kept, dropped, set(replica._suspended), replica._suspended[1][0] is owners[1]

    kept, dropped, left, same = asyncio.run(main())
    assert kept == [] and dropped == [0]
    assert left == {1} and same


def test_a_retired_game_is_forgotten_after_its_time_and_its_id_is_never_reused():
    """forget_after_s after its end only the id of a finished game is kept: a create with it
    is refused, any command for it is refused as over, and games being played are untouched."""
    host = _host()
    old = _ended_game(host, "old", moves=2)  # its events are stamped at time 0: long ago
    recent = _ended_game(host, "recent")
    playing = _logged_game(host, "playing")

    async def main():
        owner = await _owner(old + recent + playing, retire_after_s=0, forget_after_s=3600)
        try:
            after_rebuild = (set(owner.games), set(owner.retired), owner.forgotten.count)
            create = await _refusal(owner, _pending("old", None, "c-new", create={"seats": 2, "options": {}, "seed": SEED}))
            retry = await _refusal(owner, _pending("old", ForceEnd(reason="again"), "end"))
            # A game that ends now is retired, and forgotten only an hour after its end.
            await _send(owner, "playing", ForceEnd(reason="test"), "end-playing")
            owner.retire_due()
            now_ms = owner.retired["playing"][2]
            kept = (set(owner.retired), owner.forget_due(now_ms + 3_599_000))
            gone = (owner.forget_due(now_ms + 3_600_000), set(owner.retired), "playing" in owner.forgotten)
            return after_rebuild, create, retry, kept, gone
        finally:
            await owner.stop("test")

    after_rebuild, create, retry, kept, gone = asyncio.run(main())
    # Both finished games ended at time 0 (selfplay's clock): forgotten by the rebuild.
    assert after_rebuild == ({"playing"}, set(), 2)
    assert create.code == "already_exists"
    assert retry.code == "game_over"  # its results are gone with it: refused, never re-run
    assert kept == ({"playing"}, 0)
    assert gone == (1, set(), True)


def test_forgotten_ids_are_never_missed_and_rarely_confused():
    from croupier.rules.forgotten import ERROR_RATE, FIRST_CAPACITY, IdFilter

    ids = IdFilter()
    assert "anything" not in ids and ids.nbytes == 0  # nothing allocated until an id is added
    added = [f"expeditions-{i:016x}" for i in range(3 * FIRST_CAPACITY)]  # fills two blocks, starts a third
    for game_id in added:
        ids.add(game_id)
    assert all(game_id in ids for game_id in added)
    others = [f"journey-{i:016x}" for i in range(100_000)]
    confused = sum(game_id in ids for game_id in others)
    assert confused <= 100_000 * ERROR_RATE * 3 * 2  # three blocks, with room for chance
    assert len(ids) == len(added) and ids.nbytes < 3 * len(added)  # under 3 bytes an id
    import pickle
    again = pickle.loads(pickle.dumps(ids))
    assert all(game_id in again for game_id in added[::97]) and len(again) == len(added)


def test_a_table_with_no_event_for_idle_end_after_s_is_ended_as_abandoned():
    """No table waits forever: one whose last event is older than the limit (the logged
    game's events are stamped at time 0) is ended by its owner with a ForceEnd in the log;
    one that has just been played is not."""
    host = _host()

    async def main():
        owner = PartitionOwner(host, 0, lambda: MemoryWriter(), max_batch=256, dedupe_window=16,
                               idle_end_after_s=3600)
        await owner.start(lambda: _logged_game(host, "idle") + host.create("open", 2, {}, SEED, now=0, command_id="c"))
        try:
            item = _pending("new", None, "c-new", create={"seats": 2, "options": {}, "seed": SEED})
            owner.submit(item)
            await item.future
            for _ in range(200):
                if all(owner.games[g].state.status == "over" for g in ("idle", "open")):
                    break
                await asyncio.sleep(0.01)
            return {g: owner.games[g].state for g in ("idle", "open", "new")}
        finally:
            await owner.stop("test")

    states = asyncio.run(main())
    for game_id in ("idle", "open"):  # a game being played and a table still waiting for players
        state = states[game_id]
        assert state.status == "over" and state.end_reason == "forced", game_id
        assert state.result["why"] == "abandoned: no move for 3600 s"
    assert states["new"].status == "open"


def test_a_version_1_table_its_turn_clock_plays_alone_is_ended_as_abandoned():
    """Clock version 1 plays a seat's first legal action at its deadline, for good: each clock
    move is an event, so the idle end by time never came. After CLOCK_IDLE_MOVES_PER_SEAT
    clock moves a seat in a row its owner ends it (clock version 2 ends such a table itself);
    a v1 table whose seats still move is not ended."""
    import time

    from croupier.engine import registry
    from croupier.engine.contract import Tick
    from croupier.engine.table import CLOCK_IDLE_MOVES_PER_SEAT, JoinSeat

    host = TableHost(registry.get("expeditions"))
    v1 = host.for_version(1)
    def table(game_id: str, clock_moves: int) -> list:
        # Stamped so that the last clock move was 30 s ago and the next is due in 30 s.
        now = int(time.time() * 1000) - clock_moves * 60_000 - 30_000
        log = v1.create(game_id, 2, {"turn_clock_ms": 60_000}, SEED, now=now, command_id=f"{game_id}-c")
        st = v1.fold(log)
        for s in range(2):
            more = v1.decide(st, JoinSeat(seat=s, player=f"p{s}", entropy="e"), now=now, command_id=f"{game_id}-j{s}")
            log, st = log + more, v1.fold(more, st)
        for n in range(clock_moves):
            at = v1.deadline(st)
            more = v1.decide(st, Tick(now=at), now=at, command_id=f"{game_id}-t{n}")
            log, st = log + more, v1.fold(more, st)
        assert st.status == "running" and st.idle_moves == clock_moves
        return log

    limit = CLOCK_IDLE_MOVES_PER_SEAT * 2

    async def main():
        owner = PartitionOwner(host, 0, lambda: MemoryWriter(), max_batch=256, dedupe_window=16,
                               idle_end_after_s=None)
        await owner.start(lambda: table("alone", limit) + table("played", limit - 1))
        try:
            for _ in range(300):
                if owner.games["alone"].state.status == "over":
                    break
                await asyncio.sleep(0.01)
            return owner.games["alone"].state, owner.games["played"].state
        finally:
            await owner.stop("test")

    alone, played = asyncio.run(main())
    assert alone.status == "over" and alone.end_reason == "forced"
    assert alone.result["why"] == f"abandoned: the turn clock made {limit} moves in a row"
    assert played.status == "running"
