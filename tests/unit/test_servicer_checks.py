"""The rules servicer's checks of what a caller sends, before any game or store is touched:
an id of any length is refused as it is, and nothing of it is hashed or kept."""

from __future__ import annotations

import asyncio
import contextlib

import grpc
from servicer_fakes import GAME, Owners, call, servicer, stop  # tests/unit is on sys.path
from structlog.testing import capture_logs

from croupier.rules.store import _cached_partition, partition_for
from croupier.v1 import rules_pb2


def _id_in(partitions, prefix="g") -> str:
    n = 0
    while partition_for(f"{prefix}{n}", 4) not in partitions:
        n += 1
    return f"{prefix}{n}"


def test_a_huge_game_id_is_refused_without_an_owner_lookup_or_a_cache_entry():
    owners = Owners()

    async def main():
        svc, parts = await servicer(owners=owners)
        try:
            before = _cached_partition.cache_info().currsize
            huge = "x" * 900_000
            answers = [await call(svc.GetState, rules_pb2.GetStateRequest(game_type=GAME, game_id=huge + str(i)))
                       for i in range(3)]
            legal = await call(svc.ListLegalActions, rules_pb2.ListLegalActionsRequest(game_type=GAME, game_id=huge))
            grown = _cached_partition.cache_info().currsize - before
            # An unknown id of an owned partition: NOT_FOUND, and still no owner lookup.
            missing = await call(svc.GetState, rules_pb2.GetStateRequest(game_type=GAME, game_id=_id_in((0, 1))))
            asked_before_redirect = list(owners.asked)
            elsewhere = _id_in((2, 3))
            moved = await call(svc.GetState, rules_pb2.GetStateRequest(game_type=GAME, game_id=elsewhere))
            return answers, legal, grown, missing, asked_before_redirect, moved, elsewhere
        finally:
            await stop(parts)

    answers, legal, grown, missing, asked, moved, elsewhere = asyncio.run(main())
    for answer in [*answers, legal]:
        assert answer.code == grpc.StatusCode.INVALID_ARGUMENT
        rejection, owner = answer.rejection()
        assert rejection.code == "invalid_game_id" and owner == ""
    assert grown == 0, "a refused id was kept in the partition cache"
    assert missing.code == grpc.StatusCode.NOT_FOUND and missing.rejection()[1] == ""
    assert asked == [], "an owner was looked up for an answer that names none"
    assert moved.code == grpc.StatusCode.UNAVAILABLE
    assert moved.rejection()[0].kind == "not_owner" and moved.rejection()[1] == "10.0.0.9:50051"
    assert owners.asked[-1] == partition_for(elsewhere, 4)


def test_partition_for_answers_ids_of_any_length_but_caches_only_short_ones():
    from kafka.partitioner.default import murmur2

    long_id = "y" * 5000
    before = _cached_partition.cache_info().currsize
    assert partition_for(long_id, 6) == (murmur2(long_id.encode()) & 0x7FFFFFFF) % 6
    assert _cached_partition.cache_info().currsize == before
    assert partition_for("short-id", 6) == (murmur2(b"short-id") & 0x7FFFFFFF) % 6


def test_a_callers_command_id_in_the_timers_namespace_is_refused_and_the_idle_end_comes():
    """The owner's idle end is `idle:{version}`: a JoinSeat sent as `idle:2` was taken for it
    (a table command's duplicate is not compared), and the table was never ended."""
    from croupier.engine.table import OVER, JoinSeat
    from croupier.rules.errors import Refusal
    from croupier.rules.partition import PartitionOwner

    async def main():
        svc, parts = await servicer(owned=(0, 1, 2, 3))
        # The owner of every partition ends a table after 0.3 s without a move.
        for owner in parts.values():
            owner._idle_ms = 300
        try:
            gid = "idle-target"
            created = await call(svc.CreateGame, rules_pb2.CreateGameRequest(game_type=GAME, game_id=gid, seats=2,
                                                                            command_id="c"))
            joined = await call(svc.JoinSeat, rules_pb2.JoinSeatRequest(game_type=GAME, game_id=gid, seat=0,
                                                                       command_id="idle:2"))
            try:  # as a move on a HandleCommands stream is written (no context: a Refusal)
                await svc._write("HandleCommand", None, GAME, gid, "tick:2:0", command=JoinSeat(seat=1))
                streamed = None
            except Refusal as refusal:
                streamed = refusal.rejection
            owner: PartitionOwner = parts[partition_for(gid, 4)]
            for _ in range(200):
                if owner.games[gid].state.status == OVER:
                    break
                await asyncio.sleep(0.05)
            return created, joined, streamed, owner.games[gid].state
        finally:
            await stop(parts)

    created, joined, streamed, state = asyncio.run(main())
    assert created.result.version == 1
    assert joined.code == grpc.StatusCode.INVALID_ARGUMENT
    assert joined.rejection()[0].code == "reserved_command_id"
    assert streamed is not None and (streamed.code, streamed.kind) == ("reserved_command_id", "malformed")
    assert state.status == "over" and state.players == (None, None)
    assert state.result["why"].startswith("abandoned")


def test_echoed_values_are_clipped_and_every_message_is_bounded():
    from croupier.engine import registry
    from croupier.engine.contract import ECHO_CHARS, Rejection, echo
    from croupier.engine.table import TableHost
    from croupier.rules.errors import MAX_MESSAGE_BYTES, bounded, to_proto

    assert echo("x" * 10_000) == repr("x" * 10_000)[: ECHO_CHARS - 1] + "…"
    assert echo(10**5000).endswith("…") or echo(10**5000) == "<int>"
    host = TableHost(registry.get(GAME))
    for options in ({"turn_clock_ms": "9" * 5000}, {"turn_clock_ms": "0" * 5000 + "1500"}, {"board": "b" * 10**5},
                    {f"o{i}": 1 for i in range(5000)}):
        try:
            parsed = host.parse_options(options)
        except Rejection as exc:
            assert exc.code == "invalid_option" and len(exc.message) < 600, exc.message
        else:
            assert parsed["turn_clock_ms"] == 1500  # leading zeros, as before
    long = Rejection("x", "é" * 5000, "malformed")
    assert len(bounded(long.message).encode()) <= MAX_MESSAGE_BYTES
    assert len(to_proto(long).message.encode()) <= MAX_MESSAGE_BYTES
    assert bounded("short") == "short"


def test_log_reads_check_first_fold_off_the_loop_and_are_bounded(monkeypatch):
    """ForkGame checks its command_id (and the rest) before reading the origin's log; a read
    of a retired game's log is folded on a worker thread; and past MAX_LOG_READS reads at
    once the next is refused, retryable, rather than queued behind them."""
    import threading

    from test_dedupe_window import _logged_game

    from croupier.engine import registry
    from croupier.engine.table import TableHost
    from croupier.rules import service

    host = TableHost(registry.get(GAME))
    gid = _id_in((0,), prefix="retired")
    log = _logged_game(host, gid)
    reads, release, folded_on = [], threading.Event(), []

    def read_game(settings, game_id, game_types, settle_s=5.0):
        reads.append(game_id)
        release.wait(30)
        return [env for env in log if env.game_id == game_id]

    monkeypatch.setattr(service, "read_game", read_game)

    async def main():
        svc, parts = await servicer(owned=(0, 1, 2, 3))
        fold = svc.host.fold

        def spy(envelopes, state=None):
            folded_on.append(threading.get_ident())
            return fold(envelopes, state)

        svc.host.fold = spy
        parts[0].retired[gid] = (log[-1].seq, (), 0)
        try:
            bad = {}
            for name, cid in (("empty", ""), ("reserved", "idle:3"), ("long", "c" * 129)):
                bad[name] = await call(svc.ForkGame, rules_pb2.ForkGameRequest(
                    game_type=GAME, game_id="fork-1", origin_game_id=gid, at_seq=3, command_id=cid))
            read_before = list(reads)
            busy = [asyncio.create_task(call(svc.GetState, rules_pb2.GetStateRequest(game_type=GAME, game_id=gid)))
                    for _ in range(service.MAX_LOG_READS)]
            while len(reads) < service.MAX_LOG_READS:
                await asyncio.sleep(0.01)
            refused = await call(svc.GetState, rules_pb2.GetStateRequest(game_type=GAME, game_id=gid))
            # A caller that gives up (its deadline) does not free its read's place: the read
            # goes on on its thread, and a retry must not start another beside it.
            busy[0].cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await busy[0]
            after_cancel = await call(svc.GetState, rules_pb2.GetStateRequest(game_type=GAME, game_id=gid))
            release.set()
            views = await asyncio.gather(*busy[1:])
            return bad, read_before, (refused, after_cancel), views
        finally:
            release.set()
            await stop(parts)

    bad, read_before, refused, views = asyncio.run(main())
    assert read_before == [], "the origin's log was read for a fork refused on its command_id"
    assert {name: answer.rejection()[0].code for name, answer in bad.items()} == {
        "empty": "invalid_command_id", "reserved": "reserved_command_id", "long": "invalid_command_id"}
    for answer in refused:
        assert answer.code == grpc.StatusCode.UNAVAILABLE and answer.rejection()[0].code == "log_reads_busy"
    assert all(v.version == log[-1].seq for v in views)
    assert folded_on and threading.main_thread().ident not in folded_on


def test_a_not_owner_answer_never_names_the_replica_giving_it():
    """Just after a replica gives a partition up, the owners' table as it last read it may
    still name the replica itself: naming it would send the caller straight back."""
    itself = Owners("10.0.0.5:50051")
    itself.advertise = itself.address  # as OwnersTable has it: this replica's own address

    async def main():
        svc, parts = await servicer(owned=(0, 1), owners=itself)
        try:
            return await call(svc.GetState, rules_pb2.GetStateRequest(game_type=GAME, game_id=_id_in((2, 3))))
        finally:
            await stop(parts)

    moved = asyncio.run(main())
    assert moved.code == grpc.StatusCode.UNAVAILABLE
    assert moved.rejection()[0].kind == "not_owner" and moved.rejection()[1] == ""


def test_a_lost_partition_answers_moved_and_a_committed_create_is_answered_though_the_partition_moved_since():
    """A partition this replica gave up (lost: revoked or fenced, its reconcile to come) is
    answered NOT_OWNER naming the owner, as its owner's submit would, not UNAVAILABLE with no
    owner. And a create or fork already committed is answered with its result even if its
    partition stopped being ready meanwhile: looking its owner up again raised, and the
    caller got UNKNOWN for a command that had committed."""
    from croupier.rules.partition import LOST

    async def main():
        svc, parts = await servicer(owned=(0, 1))
        gid = _id_in((0,), prefix="created")
        owner = parts[0]

        def revoked_on_commit(game_id, state):
            if game_id == gid:
                owner.status = LOST  # as the membership's on_revoke may, on its own thread

        owner._on_committed = revoked_on_commit
        try:
            created = await call(svc.CreateGame, rules_pb2.CreateGameRequest(game_type=GAME, game_id=gid, seats=2,
                                                                            command_id="c"))
            seed_hash = owner.games[gid].state.seed_hash
            read = await call(svc.GetState, rules_pb2.GetStateRequest(game_type=GAME, game_id=gid))
            joined = await call(svc.JoinSeat, rules_pb2.JoinSeatRequest(game_type=GAME, game_id=gid, seat=0,
                                                                       command_id="j"))
            return created, seed_hash, read, joined
        finally:
            await stop(parts)

    created, seed_hash, read, joined = asyncio.run(main())
    assert created.result.version == 1 and not created.result.duplicate
    assert created.seed_hash == seed_hash != ""
    for moved in (read, joined):
        assert moved.code == grpc.StatusCode.UNAVAILABLE
        assert moved.rejection()[0].kind == "not_owner" and moved.rejection()[1] == "10.0.0.9:50051"


def test_a_fork_is_made_off_the_event_loop_and_a_too_large_one_is_refused_before_it_queues(monkeypatch):
    """A fork is its origin's whole log folded and carried in one record: for a long origin
    ~0.2 s of work, which on the partition's loop held every other game of the replica. It
    is made on a worker thread now; the loop only decides whether it may be made (its id
    free) and appends it. One too large to record is refused there too, never queued."""
    import threading

    from test_dedupe_window import _logged_game

    from croupier.engine import registry
    from croupier.engine.table import TableHost
    from croupier.rules import service

    host = TableHost(registry.get(GAME))
    origin_id = "origin"
    log = _logged_game(host, origin_id)
    at = log[-1].seq  # the end of the join that started the game
    monkeypatch.setattr(service, "read_game", lambda settings, game_id, game_types, settle_s=5.0:
                        [env for env in log if env.game_id == game_id])
    made_on: list[tuple[str, int]] = []

    async def main():
        svc, parts = await servicer(owned=(0, 1, 2, 3))
        fork, fold = svc.host.fork, svc.host.fold

        def fork_spy(game_id, *args, **kwargs):
            made_on.append(("fork", threading.get_ident()))
            return fork(game_id, *args, **kwargs)

        def fold_spy(envelopes, state=None):
            envelopes = list(envelopes)
            if envelopes and envelopes[0].type == "TableCreated" and envelopes[0].game_id.startswith("fork"):
                made_on.append(("fold", threading.get_ident()))
            return fold(envelopes, state)

        svc.host.fork, svc.host.fold = fork_spy, fold_spy
        try:
            forked = await call(svc.ForkGame, rules_pb2.ForkGameRequest(
                game_type=GAME, game_id=_id_in((0, 1, 2, 3), prefix="fork"), origin_game_id=origin_id, at_seq=at,
                command_id="f1"))
            small = _id_in((1,), prefix="forksmall")
            queued = []
            submit = parts[1].submit
            parts[1].submit = lambda item: (queued.append(item.command_id), submit(item))[1]
            parts[1]._max_record = 200  # far below the fork's one record
            too_large = await call(svc.ForkGame, rules_pb2.ForkGameRequest(
                game_type=GAME, game_id=small, origin_game_id=origin_id, at_seq=at, command_id="f2"))
            return forked, too_large, queued, parts[1].games.get(small)
        finally:
            await stop(parts)

    forked, too_large, queued, held = asyncio.run(main())
    assert not hasattr(forked, "code"), (forked.code, forked.details)
    # TableCreated, TableForked and the events of the fork's new deal of the hidden cards.
    assert forked.result.version > 2 and forked.seed_hash
    assert {what for what, _ in made_on} == {"fork", "fold"}
    assert threading.main_thread().ident not in {thread for _, thread in made_on}, "a fork was made on the loop"
    assert too_large.code == grpc.StatusCode.INVALID_ARGUMENT and too_large.rejection()[0].code == "too_large"
    assert queued == [] and held is None


def test_a_fork_the_rules_fail_on_is_refused_as_not_understood_not_as_a_read_to_retry(monkeypatch):
    """A bug that making a fork finds (an exception that is not a rejection) is refused as the
    partition refuses such a command, `command_not_understood` (do not retry), not answered
    UNAVAILABLE as if the origin's log could not be read (which the gateway retries)."""
    from test_dedupe_window import _logged_game

    from croupier.engine import registry
    from croupier.engine.table import TableHost
    from croupier.rules import service

    log = _logged_game(TableHost(registry.get(GAME)), "origin")
    monkeypatch.setattr(service, "read_game", lambda settings, game_id, game_types, settle_s=5.0: list(log))

    async def main():
        svc, parts = await servicer(owned=(0, 1, 2, 3))

        def failing(*args, **kwargs):
            raise TypeError("unhashable type: 'dict'")

        svc.host.fork = failing
        try:
            return await call(svc.ForkGame, rules_pb2.ForkGameRequest(
                game_type=GAME, game_id="fork-x", origin_game_id="origin", at_seq=log[-1].seq, command_id="f"))
        finally:
            await stop(parts)

    refused = asyncio.run(main())
    assert refused.code == grpc.StatusCode.INVALID_ARGUMENT
    rejection, _ = refused.rejection()
    assert rejection.code == "command_not_understood" and "TypeError" in rejection.message


def test_a_leave_with_an_expected_version_is_refused_at_another_version_and_a_seen_one_answered_whatever_it():
    """LeaveSeat's expected_version, as HandleCommand's: a leave at another version is refused
    ABORTED (version_conflict), and a command_id seen before is answered with its result,
    marked duplicate, whatever version it names (the gateway retries an unmarked leave so).
    Before, the field did not exist and a leave was taken at any version."""

    async def main():
        svc, parts = await servicer(owned=(0, 1))
        gid = _id_in((0, 1), prefix="leave")
        try:
            await call(svc.CreateGame, rules_pb2.CreateGameRequest(game_type=GAME, game_id=gid, seats=2, command_id="c"))
            joined = await call(svc.JoinSeat, rules_pb2.JoinSeatRequest(game_type=GAME, game_id=gid, seat=0,
                                                                       player="a", command_id="j"))
            at = joined.result.version

            def leave(command_id, expected=None):
                request = rules_pb2.LeaveSeatRequest(game_type=GAME, game_id=gid, seat=0, command_id=command_id)
                if expected is not None:
                    request.expected_version = expected
                return call(svc.LeaveSeat, request)

            stale = await leave("l", at - 1)
            still_seated = parts[partition_for(gid, 4)].games[gid].state.players[0] is not None
            left = await leave("l", at)
            again = await leave("l", at - 1)
            empty = await leave("l2", left.result.version)
            return at, stale, still_seated, left, again, empty
        finally:
            await stop(parts)

    at, stale, still_seated, left, again, empty = asyncio.run(main())
    assert still_seated, "a leave at a stale version was taken"
    assert stale.code == grpc.StatusCode.ABORTED and stale.rejection()[0].code == "version_conflict"
    assert left.result.version == at + 1 and not left.result.duplicate
    assert again.result.duplicate and again.result.version == left.result.version
    # A fresh leave of the free seat at its version: refused as the seat is free.
    assert empty.rejection()[0].code == "seat_empty"


def test_every_refused_command_is_logged_with_its_game_command_id_and_seat():
    """Operators follow a player's complaint through the logs by game, command id and seat:
    each refusal says all three, whether the action was not understood (before, those were
    counted but never logged) or the game refused it; a caller's huge id is clipped."""

    async def main():
        svc, parts = await servicer(owned=(0, 1))
        gid = _id_in((0, 1), prefix="logged")
        try:
            await call(svc.CreateGame, rules_pb2.CreateGameRequest(game_type=GAME, game_id=gid, seats=2, command_id="c"))
            with capture_logs() as logs:
                garbled = await call(svc.HandleCommand, rules_pb2.HandleCommandRequest(
                    game_type=GAME, game_id=gid, seat=1, command_id="m-garbled", action_json="{not json"))
                early = await call(svc.HandleCommand, rules_pb2.HandleCommandRequest(
                    game_type=GAME, game_id=gid, seat=1, command_id="m-early", action_json='{"type": "SkipMove"}'))
                huge = await call(svc.JoinSeat, rules_pb2.JoinSeatRequest(
                    game_type=GAME, game_id=gid, seat=0, player="a", command_id="j" * 100_000))
            return gid, garbled, early, huge, [e for e in logs if e["event"] == "command_rejected"]
        finally:
            await stop(parts)

    gid, garbled, early, huge, logged = asyncio.run(main())
    assert garbled.code == grpc.StatusCode.INVALID_ARGUMENT and early.code == grpc.StatusCode.FAILED_PRECONDITION
    assert huge.code == grpc.StatusCode.INVALID_ARGUMENT
    by_id = {e["command_id"][:10]: e for e in logged}
    assert set(by_id) == {"m-garbled", "m-early", "j" * 10}
    assert by_id["m-garbled"]["seat"] == 1 and by_id["m-garbled"]["code"] == "malformed_json"
    assert by_id["m-early"]["seat"] == 1 and by_id["m-early"]["rpc"] == "HandleCommand"
    assert all(e["game_id"] == gid for e in logged)
    assert by_id["j" * 10]["seat"] == 0 and len(by_id["j" * 10]["command_id"]) <= 128


def test_the_state_of_a_game_its_replica_cannot_read_is_refused_as_unreadable_not_as_no_game():
    """A game left out of memory at an event these rules cannot fold is not "no such game"
    (a client would take that for gone): its state is refused UNAVAILABLE, saying why."""
    import dataclasses

    from test_dedupe_window import GAME as LOGGED_GAME
    from test_dedupe_window import _host, _logged_game

    assert LOGGED_GAME == GAME
    gid = _id_in((0,), prefix="unread")
    log = _logged_game(_host(), gid)
    log.append(dataclasses.replace(log[-1], seq=log[-1].seq + 1, type="FutureEvent", version=9, cause=None))

    async def main():
        svc, parts = await servicer(owned=(0,), logs={0: log})
        try:
            return await call(svc.GetState, rules_pb2.GetStateRequest(game_type=GAME, game_id=gid, seat=0))
        finally:
            await stop(parts)

    answer = asyncio.run(main())
    assert answer.code == grpc.StatusCode.UNAVAILABLE
    assert answer.rejection()[0].code == "game_unreadable"


def test_control_characters_in_a_players_name_entropy_or_a_force_ends_reason_are_refused_and_nothing_is_recorded():
    """The gateway refuses them (check_text); operators calling the rules service directly
    had them recorded in the log (a NUL, a terminal escape in a player's name) for every
    replay and screen to show."""
    from croupier.rules.store import partition_for

    async def main():
        logs: dict[int, list] = {p: [] for p in range(4)}
        svc, parts = await servicer(owned=(0, 1, 2, 3), logs=logs)
        try:
            gid = "texts"
            await call(svc.CreateGame, rules_pb2.CreateGameRequest(game_type=GAME, game_id=gid, seats=2, command_id="c"))
            before = len(logs[partition_for(gid, 4)])
            refused = [
                await call(svc.JoinSeat, rules_pb2.JoinSeatRequest(game_type=GAME, game_id=gid, seat=0,
                                                                  player="eve\x1b[2J", command_id="j1")),
                await call(svc.JoinSeat, rules_pb2.JoinSeatRequest(game_type=GAME, game_id=gid, seat=0, player="eve",
                                                                  entropy="a\x00b", command_id="j2")),
                await call(svc.ForceEnd, rules_pb2.ForceEndRequest(game_type=GAME, game_id=gid, reason="x\ny",
                                                                  command_id="f1")),
            ]
            after = len(logs[partition_for(gid, 4)])
            joined = await call(svc.JoinSeat, rules_pb2.JoinSeatRequest(game_type=GAME, game_id=gid, seat=0,
                                                                       player="eve é", entropy="", command_id="j3"))
            return refused, before, after, joined
        finally:
            await stop(parts)

    refused, before, after, joined = asyncio.run(main())
    codes = [(r.code, r.rejection()[0].code) for r in refused]
    assert codes == [(grpc.StatusCode.INVALID_ARGUMENT, "invalid_player"),
                     (grpc.StatusCode.INVALID_ARGUMENT, "invalid_entropy"),
                     (grpc.StatusCode.INVALID_ARGUMENT, "invalid_reason")], codes
    assert after == before, "a refused request was appended"
    assert joined.result.version == 2


def test_a_game_type_with_control_characters_is_refused_malformed_and_not_echoed():
    """It was answered NOT_FOUND wrong_game_type with the caller's bytes (a NUL, a terminal
    escape) in the message, on every RPC."""

    async def main():
        svc, parts = await servicer()
        try:
            bad = "exp\x1b[2J\x00"
            return [
                await call(svc.GetState, rules_pb2.GetStateRequest(game_type=bad, game_id="g1")),
                await call(svc.ListLegalActions, rules_pb2.ListLegalActionsRequest(game_type=bad, game_id="g1")),
                await call(svc.CreateGame, rules_pb2.CreateGameRequest(game_type=bad, game_id="g1", seats=2,
                                                                      command_id="c")),
                await call(svc.HandleCommand, rules_pb2.HandleCommandRequest(
                    game_type=bad, game_id="g1", command_id="m", action_json='{"type":"SkipMove"}')),
                await call(svc.ForkGame, rules_pb2.ForkGameRequest(game_type=bad, game_id="g2", origin_game_id="g1",
                                                                  at_seq=1, command_id="k")),
                await call(svc.GetState, rules_pb2.GetStateRequest(game_type="virtues", game_id="g1")),
            ]
        finally:
            await stop(parts)

    *refused, other = asyncio.run(main())
    for answer in refused:
        rejection = answer.rejection()[0]
        assert (answer.code, rejection.code) == (grpc.StatusCode.INVALID_ARGUMENT, "invalid_game_type"), rejection
        assert "\x1b" not in rejection.message and "\x00" not in rejection.message and "\x1b" not in answer.details
    assert other.code == grpc.StatusCode.NOT_FOUND and other.rejection()[0].code == "wrong_game_type"


def test_a_table_command_sent_with_another_commands_command_id_is_refused_not_answered_as_done():
    """The partition compares a seen command_id's command only for moves: a ForceEnd sent
    with a move's command_id was answered OK (duplicate, the move's events), and the table
    played on though its caller was told it had ended; a leave with a join's, a join with
    the create's, likewise."""
    import json

    async def main():
        svc, parts = await servicer(owned=(0, 1, 2, 3))
        try:
            gid = "reused"
            await call(svc.CreateGame, rules_pb2.CreateGameRequest(game_type=GAME, game_id=gid, seats=2, command_id="c"))
            refused_join = await call(svc.JoinSeat, rules_pb2.JoinSeatRequest(game_type=GAME, game_id=gid, seat=0,
                                                                             player="a", command_id="c"))
            await call(svc.JoinSeat, rules_pb2.JoinSeatRequest(game_type=GAME, game_id=gid, seat=0, player="a",
                                                               command_id="j0"))
            refused_leave = await call(svc.LeaveSeat, rules_pb2.LeaveSeatRequest(game_type=GAME, game_id=gid, seat=0,
                                                                                command_id="j0"))
            await call(svc.JoinSeat, rules_pb2.JoinSeatRequest(game_type=GAME, game_id=gid, seat=1, player="b",
                                                               command_id="j1"))
            view = json.loads((await call(svc.GetState, rules_pb2.GetStateRequest(game_type=GAME, game_id=gid))).view_json)
            seat = view["to_act"][0]
            legal = await call(svc.ListLegalActions, rules_pb2.ListLegalActionsRequest(game_type=GAME, game_id=gid,
                                                                                       seat=seat))
            moved = await call(svc.HandleCommand, rules_pb2.HandleCommandRequest(
                game_type=GAME, game_id=gid, seat=seat, command_id="m1", action_json=legal.actions_json[0]))
            refused_end = await call(svc.ForceEnd, rules_pb2.ForceEndRequest(game_type=GAME, game_id=gid, reason="x",
                                                                            command_id="m1"))
            still = json.loads((await call(svc.GetState, rules_pb2.GetStateRequest(game_type=GAME,
                                                                                   game_id=gid))).view_json)
            ended = await call(svc.ForceEnd, rules_pb2.ForceEndRequest(game_type=GAME, game_id=gid, reason="x",
                                                                      command_id="end"))
            retried = await call(svc.ForceEnd, rules_pb2.ForceEndRequest(game_type=GAME, game_id=gid, reason="x",
                                                                        command_id="end"))
            return refused_join, refused_leave, moved, refused_end, still, ended, retried
        finally:
            await stop(parts)

    refused_join, refused_leave, moved, refused_end, still, ended, retried = asyncio.run(main())
    for refused in (refused_join, refused_leave, refused_end):
        assert refused.code == grpc.StatusCode.ABORTED, refused
        assert refused.rejection()[0].code == "command_id_reused"
    assert moved.result.version > 0 and not moved.result.duplicate
    assert still["status"] == "running"
    assert list(ended.result.event_types) == ["TableEnded"] and not ended.result.duplicate
    assert retried.result.duplicate and retried.result.version == ended.result.version


def test_a_move_of_another_game_type_is_refused_as_the_wrong_game_type_not_as_a_malformed_move():
    """The action was decoded with this service's game before the game type was looked at:
    a virtues move sent to the expeditions service was answered INVALID_ARGUMENT
    malformed_command ("unknown message type"), on a unary call and on a stream."""
    from croupier.rules.errors import Refusal

    async def main():
        svc, parts = await servicer()
        try:
            request = rules_pb2.HandleCommandRequest(game_type="virtues", game_id="g1", seat=0, command_id="m",
                                                     action_json='{"type":"DrawCard"}')
            unary = await call(svc.HandleCommand, request)
            try:
                await svc._command(request, None)
                streamed = None
            except Refusal as refusal:
                streamed = refusal.rejection
            return unary, streamed
        finally:
            await stop(parts)

    unary, streamed = asyncio.run(main())
    assert unary.code == grpc.StatusCode.NOT_FOUND and unary.rejection()[0].code == "wrong_game_type"
    assert streamed is not None and (streamed.code, streamed.kind) == ("wrong_game_type", "not_found")
