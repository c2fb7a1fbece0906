"""The rules service against the real broker: one writer per game, fencing, failover,
idempotent retries, timers."""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid

import grpc
import pytest
from harness import Service, service_env, start_rules, wait_owned
from rules_driver import check_log, play, play_moves, read_log

from croupier.rules.client import RulesClient
from croupier.rules.errors import PROTO_TO_KIND, from_rpc_error
from croupier.rules.settings import KafkaSettings
from croupier.rules.store import PartitionWriter, partition_for
from croupier.v1 import rules_pb2, rules_pb2_grpc

GAME = "expeditions"
PARTITIONS = 4

# Group membership timing on a loaded 2-core machine can outlast a wait (a replica that gets
# no assignment within a minute); each test gets two more tries, which pytest reports.
pytestmark = pytest.mark.flaky(reruns=2, reruns_delay=3)


def topic(prefix: str) -> str:
    return f"{prefix}croupier.events.{GAME}"


def launch(services, kafka, redis_url, prefix, tmp_path, **extra):
    svc, addr = start_rules(GAME, kafka, redis_url, prefix, tmp_path, **extra)
    services.append(svc)
    return svc, addr


def test_commands_are_answered_after_commit_and_retries_append_nothing(kafka, redis_url, prefix, services, tmp_path):
    svc, addr = launch(services, kafka, redis_url, prefix, tmp_path)
    wait_owned(redis_url, prefix, GAME, PARTITIONS, services=[svc])

    async def main():
        client = RulesClient(addr)
        acked = {}
        gid = uuid.uuid4().hex
        await play(client, GAME, gid, 2, 10, acked, random.Random(1))
        # The same command_id again: the original result, nothing appended.
        before = read_log(kafka, topic(prefix), PARTITIONS)[gid]
        state = await client.call("GetState", rules_pb2.GetStateRequest(game_type=GAME, game_id=gid))
        view = json.loads(state.view_json)
        seat = view["to_act"][0]
        legal = await client.call("ListLegalActions", rules_pb2.ListLegalActionsRequest(game_type=GAME, game_id=gid, seat=seat))
        request = rules_pb2.HandleCommandRequest(game_type=GAME, game_id=gid, seat=seat, command_id="retry-me",
                                                 action_json=legal.actions_json[0])
        first = await client.call("HandleCommand", request)
        again = await client.call("HandleCommand", request)
        # The same command_id with another move (the seat to act now): refused, not a retry.
        now = json.loads((await client.call("GetState", rules_pb2.GetStateRequest(game_type=GAME, game_id=gid))).view_json)
        other = await client.call("ListLegalActions", rules_pb2.ListLegalActionsRequest(
            game_type=GAME, game_id=gid, seat=now["to_act"][0]))
        try:
            await client.stub().HandleCommand(rules_pb2.HandleCommandRequest(
                game_type=GAME, game_id=gid, seat=now["to_act"][0], command_id="retry-me",
                action_json=next(a for a in other.actions_json if json.loads(a) != json.loads(request.action_json))))
            reused = None
        except grpc.aio.AioRpcError as error:
            reused = (error.code(), from_rpc_error(error)[0].code)
        after = read_log(kafka, topic(prefix), PARTITIONS)[gid]
        await client.close()
        return acked, before, after, first, again, reused

    acked, before, after, first, again, reused = asyncio.run(main())
    assert reused == (grpc.StatusCode.ABORTED, "command_id_reused")
    assert again.result.duplicate and not first.result.duplicate
    assert (again.result.first_seq, again.result.last_seq) == (first.result.first_seq, first.result.last_seq)
    assert len(after) == len(before) + (first.result.last_seq - first.result.first_seq + 1)
    assert check_log({after[0].game_id: after}, acked) == []


def test_version_conflicts_and_illegal_moves_are_typed_rejections(kafka, redis_url, prefix, services, tmp_path):
    svc, addr = launch(services, kafka, redis_url, prefix, tmp_path)
    wait_owned(redis_url, prefix, GAME, PARTITIONS, services=[svc])

    async def main():
        client = RulesClient(addr)
        gid = uuid.uuid4().hex
        await play(client, GAME, gid, 2, 0, {}, random.Random(2))
        stub = client.stub()
        state = await stub.GetState(rules_pb2.GetStateRequest(game_type=GAME, game_id=gid))
        seat = json.loads(state.view_json)["to_act"][0]
        legal = await stub.ListLegalActions(rules_pb2.ListLegalActionsRequest(game_type=GAME, game_id=gid, seat=seat))
        out = {}
        cases = {
            "conflict": dict(seat=seat, action_json=legal.actions_json[0], expected_version=state.version - 1),
            "wrong_seat": dict(seat=1 - seat, action_json=legal.actions_json[0]),
            "malformed": dict(seat=seat, action_json="{not json"),
            "unknown_type": dict(seat=seat, action_json='{"type":"TakeEverything"}'),
            # Not JSON by its standard (Python's json would take them), and nested past sense.
            "nan": dict(seat=seat, action_json='{"type":"DiscardCard","card":NaN}'),
            "overflow": dict(seat=seat, action_json='{"type":"DiscardCard","card":1e999}'),
            "deep": dict(seat=seat, action_json='{"type":"DiscardCard","card":' + "[" * 700 + "]" * 700 + "}"),
        }
        for name, fields in cases.items():
            try:
                await stub.HandleCommand(rules_pb2.HandleCommandRequest(game_type=GAME, game_id=gid, command_id=name, **fields))
                out[name] = None
            except grpc.aio.AioRpcError as error:
                out[name] = (error.code(), from_rpc_error(error)[0].kind)
        try:
            await stub.GetState(rules_pb2.GetStateRequest(game_type=GAME, game_id="no-such-game"))
        except grpc.aio.AioRpcError as error:
            out["missing"] = (error.code(), from_rpc_error(error)[0].kind)
        # The same cases on a HandleCommands stream: the same kinds, as responses by tag.
        call = stub.HandleCommands()
        names = list(cases)
        for tag, name in enumerate(names):
            await call.write(rules_pb2.HandleCommandsRequest(tag=tag, command=rules_pb2.HandleCommandRequest(
                game_type=GAME, game_id=gid, command_id=f"s-{name}", **cases[name])))
        on_stream = {}
        for _ in names:
            response = await call.read()
            on_stream[names[response.tag]] = PROTO_TO_KIND[response.rejection.kind]
        await call.done_writing()
        rest = await _read_to_end(call)
        after = await stub.GetState(rules_pb2.GetStateRequest(game_type=GAME, game_id=gid))
        await client.close()
        return out, state.version, after.version, on_stream, rest, await call.code()

    out, v_before, v_after, on_stream, rest, code = asyncio.run(main())
    assert on_stream == {name: kind for name, (_, kind) in ((n, out[n]) for n in on_stream)}
    assert rest == [] and code == grpc.StatusCode.OK
    assert out["conflict"] == (grpc.StatusCode.ABORTED, "conflict")
    assert out["wrong_seat"][0] == grpc.StatusCode.FAILED_PRECONDITION
    assert out["malformed"] == (grpc.StatusCode.INVALID_ARGUMENT, "malformed")
    assert out["unknown_type"] == (grpc.StatusCode.INVALID_ARGUMENT, "malformed")
    assert out["nan"] == out["overflow"] == out["deep"] == (grpc.StatusCode.INVALID_ARGUMENT, "malformed")
    assert out["missing"][0] in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.UNAVAILABLE)
    assert v_after == v_before, "a rejected command changed the game"


async def _read_to_end(call) -> list:
    out = []
    while (response := await call.read()) is not grpc.aio.EOF:
        out.append(response)
    return out


def test_moves_on_a_stream_are_answered_once_and_the_stream_ends_cleanly_at_shutdown(
        kafka, redis_url, prefix, services, tmp_path):
    svc, addr = launch(services, kafka, redis_url, prefix, tmp_path)
    wait_owned(redis_url, prefix, GAME, PARTITIONS, services=[svc])

    async def main():
        client = RulesClient(addr)
        gids = [uuid.uuid4().hex for _ in range(3)]
        for n, gid in enumerate(gids):
            await play(client, GAME, gid, 2, 0, {}, random.Random(n))
        stub = client.stub()
        moves = []
        for gid in gids:
            state = await stub.GetState(rules_pb2.GetStateRequest(game_type=GAME, game_id=gid))
            seat = json.loads(state.view_json)["to_act"][0]
            legal = await stub.ListLegalActions(rules_pb2.ListLegalActionsRequest(game_type=GAME, game_id=gid, seat=seat))
            moves.append(rules_pb2.HandleCommandRequest(game_type=GAME, game_id=gid, seat=seat, command_id=f"m-{gid}",
                                                        action_json=legal.actions_json[0], expected_version=state.version))
        call = stub.HandleCommands()
        for tag, move in enumerate(moves):  # three games at once on one stream
            await call.write(rules_pb2.HandleCommandsRequest(tag=tag, command=move))
        first = {}
        for _ in moves:
            response = await call.read()
            first[response.tag] = response.response.result
        await call.write(rules_pb2.HandleCommandsRequest(tag=9, command=moves[0]))  # a retry of the first
        again = await call.read()
        # The replica shuts down while the stream is open: the stream ends, OK, and promptly.
        stopping = asyncio.get_running_loop().run_in_executor(None, svc.stop)
        rest = await _read_to_end(call)
        code = await call.code()
        await stopping
        await client.close()
        return gids, first, again, rest, code

    gids, first, again, rest, code = asyncio.run(main())
    assert sorted(first) == [0, 1, 2] and [first[t].game_id for t in range(3)] == gids
    assert not any(r.duplicate for r in first.values())
    assert again.tag == 9 and again.response.result.duplicate
    assert (again.response.result.first_seq, again.response.result.last_seq) == (first[0].first_seq, first[0].last_seq)
    logs = read_log(kafka, topic(prefix), PARTITIONS)
    assert all(logs[g][-1].seq == first[t].last_seq for t, g in enumerate(gids)), "each move is in the log once"
    assert rest == [] and code == grpc.StatusCode.OK


# "20": group commit's pace on (rules/pace.py), so batches may wait to fill while partitions move.
@pytest.mark.parametrize("commit_interval_ms", ["0", "20"])
def test_two_replicas_rebalance_under_load_lose_nothing(kafka, redis_url, prefix, services, tmp_path, commit_interval_ms):
    pace = {"CROUPIER_RULES_COMMIT_INTERVAL_MS": commit_interval_ms}
    a, addr_a = launch(services, kafka, redis_url, prefix, tmp_path, **pace)
    wait_owned(redis_url, prefix, GAME, PARTITIONS, services=[a])
    acked: dict = {}

    async def main():
        client = RulesClient([addr_a], deadline_s=40)
        games = [uuid.uuid4().hex for _ in range(8)]
        tasks = [asyncio.create_task(play(client, GAME, g, 2, 40, acked, random.Random(i), pause=0.02))
                 for i, g in enumerate(games)]
        await asyncio.sleep(1.5)
        b, addr_b = launch(services, kafka, redis_url, prefix, tmp_path, **pace)
        client.seeds.append(addr_b)
        loop = asyncio.get_running_loop()
        # Forced rebalance: B joins and takes partitions while commands stream in.
        await loop.run_in_executor(None, lambda: _wait_shared(redis_url, prefix, {addr_a, addr_b}, [a, b]))
        await asyncio.sleep(1.0)
        # And again: B leaves gracefully.
        await loop.run_in_executor(None, b.stop)
        made = await asyncio.gather(*tasks)
        await client.close()
        return games, made

    games, made = asyncio.run(main())
    assert sum(made) > 100
    log = read_log(kafka, topic(prefix), PARTITIONS)
    assert set(games) <= set(log)
    assert check_log(log, acked) == []


def _wait_shared(redis_url, prefix, addrs, svcs, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        owners = wait_owned(redis_url, prefix, GAME, PARTITIONS, services=svcs, timeout=timeout)
        if set(owners.values()) == addrs:
            return owners
        time.sleep(0.3)
    raise TimeoutError("partitions were never shared by both replicas")


def test_a_replica_killed_mid_stream_hands_its_games_to_the_other(kafka, redis_url, prefix, services, tmp_path):
    a, addr_a = launch(services, kafka, redis_url, prefix, tmp_path)
    b, addr_b = launch(services, kafka, redis_url, prefix, tmp_path)
    _wait_shared(redis_url, prefix, {addr_a, addr_b}, [a, b])
    acked: dict = {}

    async def main():
        client = RulesClient([addr_a, addr_b], deadline_s=60)
        games = [uuid.uuid4().hex for _ in range(8)]
        tasks = [asyncio.create_task(play(client, GAME, g, 2, 30, acked, random.Random(i), pause=0.02))
                 for i, g in enumerate(games)]
        # Killed mid-play: once the games are under way (a fixed 2 s could outlast all 8
        # games' 30 moves, and the kill then came after the last of them).
        for _ in range(400):
            if len(acked) >= len(games) * 8 or all(t.done() for t in tasks):
                break
            await asyncio.sleep(0.05)
        b.kill()  # SIGKILL: no goodbye to the group
        made = await asyncio.gather(*tasks)
        await client.close()
        return games, made

    games, made = asyncio.run(main())
    # Until every entry names the survivor (its "ready" writes land asynchronously).
    owners = wait_owned(redis_url, prefix, GAME, PARTITIONS, services=[a], owners={addr_a})
    assert set(owners.values()) == {addr_a}
    assert all(m == 30 or m > 0 for m in made)
    log = read_log(kafka, topic(prefix), PARTITIONS)
    assert check_log(log, acked) == []
    # Every game of the killed replica went on after the kill.
    assert all(len(log[g]) > 10 for g in games)


def test_a_zombie_writer_is_fenced_and_its_command_fails(kafka, redis_url, prefix, services, tmp_path):
    a, addr_a = launch(services, kafka, redis_url, prefix, tmp_path)
    wait_owned(redis_url, prefix, GAME, PARTITIONS, services=[a])

    async def setup():
        client = RulesClient(addr_a)
        gid = uuid.uuid4().hex
        await play(client, GAME, gid, 2, 3, {}, random.Random(3))
        await client.close()
        return gid

    gid = asyncio.run(setup())
    partition = partition_for(gid, PARTITIONS)
    # A new writer for that partition (as a new owner would create) fences replica A.
    usurper = PartitionWriter(KafkaSettings(bootstrap=kafka), topic(prefix), partition)
    before = len(read_log(kafka, topic(prefix), PARTITIONS)[gid])

    async def attempt():
        channel = grpc.aio.insecure_channel(addr_a)
        stub = rules_pb2_grpc.RulesServiceStub(channel)
        state = await stub.GetState(rules_pb2.GetStateRequest(game_type=GAME, game_id=gid))
        seat = json.loads(state.view_json)["to_act"][0]
        legal = await stub.ListLegalActions(rules_pb2.ListLegalActionsRequest(game_type=GAME, game_id=gid, seat=seat))
        try:
            await stub.HandleCommand(rules_pb2.HandleCommandRequest(game_type=GAME, game_id=gid, seat=seat,
                                                                     command_id="zombie", action_json=legal.actions_json[0]))
            return None
        except grpc.aio.AioRpcError as error:
            return error.code(), from_rpc_error(error)[0]
        finally:
            await channel.close()

    outcome = asyncio.run(attempt())
    usurper.close()
    assert outcome is not None, "the fenced replica acknowledged a command"
    assert outcome[0] == grpc.StatusCode.UNAVAILABLE and outcome[1].kind == "not_owner"
    after = read_log(kafka, topic(prefix), PARTITIONS)[gid]
    assert len(after) == before and all(e.command_id != "zombie" for e in after)


def test_turn_clock_fires_through_the_service_and_survives_failover(kafka, redis_url, prefix, services, tmp_path):
    a, addr_a = launch(services, kafka, redis_url, prefix, tmp_path)
    wait_owned(redis_url, prefix, GAME, PARTITIONS, services=[a])

    async def main():
        client = RulesClient(addr_a, deadline_s=30)
        gid = uuid.uuid4().hex
        await client.call("CreateGame", rules_pb2.CreateGameRequest(
            game_type=GAME, game_id=gid, seats=2, command_id="c", options={"turn_clock_ms": "1500"}))
        for s in range(2):
            await client.call("JoinSeat", rules_pb2.JoinSeatRequest(game_type=GAME, game_id=gid, seat=s, command_id=f"j{s}"))
        start = (await client.call("GetState", rules_pb2.GetStateRequest(game_type=GAME, game_id=gid))).version
        await asyncio.sleep(4.5)
        mid = (await client.call("GetState", rules_pb2.GetStateRequest(game_type=GAME, game_id=gid))).version
        await client.close()
        return gid, start, mid

    gid, start, mid = asyncio.run(main())
    assert mid > start, "no clock move was made while nobody played"
    # Kill the owner; a new replica rebuilds the game from the log and keeps its clock.
    a.kill()
    b, addr_b = launch(services, kafka, redis_url, prefix, tmp_path)
    wait_owned(redis_url, prefix, GAME, PARTITIONS, services=[b], owners={addr_b}, timeout=60)

    async def later():
        client = RulesClient(addr_b, deadline_s=30)
        v1 = (await client.call("GetState", rules_pb2.GetStateRequest(game_type=GAME, game_id=gid))).version
        await asyncio.sleep(4.0)
        v2 = (await client.call("GetState", rules_pb2.GetStateRequest(game_type=GAME, game_id=gid))).version
        await client.close()
        return v1, v2

    v1, v2 = asyncio.run(later())
    assert v1 >= mid and v2 > v1
    log = read_log(kafka, topic(prefix), PARTITIONS)[gid]
    assert [e.seq for e in log] == list(range(1, len(log) + 1))
    assert any(e.cause and e.cause["command"]["type"] == "Tick" for e in log)


def _gauge(text: str, name: str) -> float:
    """A gauge's value from a Prometheus text exposition."""
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"no {name} in the metrics")


def test_a_finished_game_is_retired_from_memory_and_read_back_from_the_log(kafka, redis_url, prefix, services, tmp_path):
    from urllib.request import urlopen

    from harness import free_port

    from croupier.engine import registry
    from croupier.engine.codec import canonical_json
    from croupier.engine.table import TableHost

    metrics_port = free_port()
    svc, addr = launch(services, kafka, redis_url, prefix, tmp_path, CROUPIER_RULES_RETIRE_AFTER_S="0",
                       CROUPIER_RULES_METRICS_PORT=str(metrics_port))
    wait_owned(redis_url, prefix, GAME, PARTITIONS, services=[svc])

    def scrape() -> str:
        return urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).read().decode()

    async def main():
        client = RulesClient(addr)
        stub = client.stub()
        gid, live = uuid.uuid4().hex, uuid.uuid4().hex
        await play(client, GAME, gid, 2, 6, {}, random.Random(3))
        await play(client, GAME, live, 2, 2, {}, random.Random(4))
        before = scrape()
        end = rules_pb2.ForceEndRequest(game_type=GAME, game_id=gid, command_id="end", reason="test")
        ended = await stub.ForceEnd(end)
        after = scrape()
        views = {}
        for seat in (None, 0, 1):
            request = rules_pb2.GetStateRequest(game_type=GAME, game_id=gid)
            if seat is not None:
                request.seat = seat
            views[seat] = await stub.GetState(request)
        legal = await stub.ListLegalActions(rules_pb2.ListLegalActionsRequest(game_type=GAME, game_id=gid, seat=0))
        again = await stub.ForceEnd(end)
        try:
            await stub.ForceEnd(rules_pb2.ForceEndRequest(game_type=GAME, game_id=gid, command_id="end-2"))
            refused = None
        except grpc.aio.AioRpcError as error:
            refused = (error.code(), from_rpc_error(error)[0].code)
        playing = await stub.GetState(rules_pb2.GetStateRequest(game_type=GAME, game_id=live))
        await client.close()
        return gid, before, after, ended, views, legal, again, refused, playing

    gid, before, after, ended, views, legal, again, refused, playing = asyncio.run(main())
    assert _gauge(before, "croupier_rules_retired_games") == 0 and _gauge(before, "croupier_rules_owned_games") == 2
    assert _gauge(after, "croupier_rules_retired_games") == 1 and _gauge(after, "croupier_rules_owned_games") == 1
    # Read back from the log: what the fold of the log shows each seat and a spectator.
    log = read_log(kafka, topic(prefix), PARTITIONS)[gid]
    host = TableHost(registry.get(GAME))
    state = host.fold(log)
    assert state.status == "over" and state.version == ended.result.version
    for seat, answer in views.items():
        assert answer.version == ended.result.version
        assert answer.view_json == canonical_json(host.view(state, seat))
    assert list(legal.actions_json) == [] and legal.version == ended.result.version
    # Commands: a retry gets its first answer and appends nothing; anything else is refused.
    assert again.result.duplicate and again.result.last_seq == ended.result.last_seq
    assert len(read_log(kafka, topic(prefix), PARTITIONS)[gid]) == len(log)
    assert refused == (grpc.StatusCode.FAILED_PRECONDITION, "game_over")
    assert json.loads(playing.view_json)["status"] == "running"


def test_a_replica_starts_from_snapshots_that_match_the_log_and_ignores_one_that_does_not(
        kafka, redis, redis_url, prefix, services, tmp_path):
    """A replica snapshots its partitions as it plays; the next replica starts from them and
    reads only the log after them, and serves what the whole log says. A snapshot whose last
    event is not where the log has it is ignored, and its partition read from the start."""
    from urllib.request import urlopen

    from harness import free_port

    from croupier.engine import registry
    from croupier.engine.codec import canonical_json
    from croupier.engine.table import TableHost
    from croupier.rules.snapshot import SnapshotStore, decode, encode

    a, addr_a = launch(services, kafka, redis_url, prefix, tmp_path, CROUPIER_RULES_SNAPSHOT_EVERY="5")
    wait_owned(redis_url, prefix, GAME, PARTITIONS, services=[a])
    acked: dict = {}
    games = [uuid.uuid4().hex for _ in range(12)]

    async def first():
        client = RulesClient(addr_a)
        await asyncio.gather(*(play(client, GAME, g, 2, 6, acked, random.Random(i)) for i, g in enumerate(games)))
        await client.close()

    asyncio.run(first())
    a.stop()  # a stopping replica finishes the snapshot it is saving: all are in by now
    written = a.log_path.read_text(errors="replace")
    assert "snapshot_saved" in written and "snapshot_failed" not in written, a.tail()
    store = SnapshotStore(redis, prefix)
    saved = {p: store.load(topic(prefix), p) for p in range(PARTITIONS)}
    saved = {p: decode(blob) for p, got in saved.items() if got is not None for _, blob in [got]}
    log = read_log(kafka, topic(prefix), PARTITIONS)
    assert len(saved) >= 3, f"snapshots of partitions {sorted(saved)} only"
    for p, snap in saved.items():
        held = {gid: state.version for gid, state, _ in snap.games}
        assert snap.partition == p and all(partition_for(gid, PARTITIONS) == p for gid in held)
        assert held and all(0 < v <= len(log[gid]) for gid, v in held.items())
    # One partition's snapshot names another event as its last: it must not be used.
    bad = min(saved)
    wrong = saved[bad]
    wrong.last = (wrong.last[0], wrong.last[1], "0" * 64)
    redis.hset(store.key(topic(prefix), bad), "blob", encode(wrong))

    metrics_port = free_port()
    b, addr_b = launch(services, kafka, redis_url, prefix, tmp_path, CROUPIER_RULES_SNAPSHOT_EVERY="5",
                       CROUPIER_RULES_METRICS_PORT=str(metrics_port))
    wait_owned(redis_url, prefix, GAME, PARTITIONS, services=[b], owners={addr_b})
    metrics = urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).read().decode()
    assert _gauge(metrics, 'croupier_rules_snapshots_total{outcome="used"}') == len(saved) - 1
    assert _gauge(metrics, 'croupier_rules_snapshots_total{outcome="ignored"}') == 1
    ready = [json.loads(line) for line in b.log_path.read_text().splitlines() if '"partition_ready"' in line]
    assert sorted(r["partition"] for r in ready) == list(range(PARTITIONS))
    assert sorted(r["partition"] for r in ready if r["snapshot_offset"] is not None) == sorted(set(saved) - {bad})
    host = TableHost(registry.get(GAME))

    async def second():
        client = RulesClient(addr_b)
        stub = client.stub()
        views = {}
        for g in games:
            for seat in (None, 0, 1):
                request = rules_pb2.GetStateRequest(game_type=GAME, game_id=g)
                if seat is not None:
                    request.seat = seat
                views[g, seat] = (await stub.GetState(request)).view_json
        # A retry of a command from before the snapshots appends nothing and gets its answer.
        retry = await stub.JoinSeat(rules_pb2.JoinSeatRequest(game_type=GAME, game_id=games[0], seat=0, player="p0",
                                                              entropy=f"{games[0]}0", command_id=f"{games[0]}:join0"))
        # And the games go on from where the log left them.
        more = await asyncio.gather(*(play_moves(client, GAME, g, 4, acked, random.Random(100 + i), tag="more")
                                       for i, g in enumerate(games)))
        await client.close()
        return views, retry, more

    views, retry, more = asyncio.run(second())
    for g in games:
        state = host.fold(log[g])
        for seat in (None, 0, 1):
            assert views[g, seat] == canonical_json(host.view(state, seat)), (g, seat)
    assert retry.result.duplicate and (retry.result.first_seq, retry.result.last_seq) == acked[f"{games[0]}:join0"][1:]
    after = read_log(kafka, topic(prefix), PARTITIONS)
    assert check_log(after, acked) == []
    assert sum(more) > 0 and all(len(after[g]) >= len(log[g]) for g in games)
    # `croupier status` shows each partition's snapshot: where its next owner starts.
    import subprocess
    import sys

    from harness import ROOT, service_env

    shown = subprocess.run([sys.executable, "-m", "croupier.cli.main", "status", "--json"], cwd=ROOT,
                           env=service_env(kafka, redis_url, prefix), capture_output=True, text=True, timeout=60)
    assert json.loads(shown.stdout)["kafka_answers"] is True
    status = json.loads(shown.stdout)["games"][GAME]
    assert status["owned"] == PARTITIONS and set(status["snapshots"]) >= {str(p) for p in saved}
    assert all(snap["bytes"] > 0 and 0 <= snap["age_s"] < 600 for snap in status["snapshots"].values())
    assert {p: snap["offset"] for p, snap in status["snapshots"].items()} == {
        str(p): store.describe(topic(prefix), p)["offset"] for p in range(PARTITIONS) if store.describe(topic(prefix), p)}



def test_a_stored_snapshot_is_replaced_only_by_a_later_one(redis, prefix):
    """A stale owner still saving an older snapshot cannot put it back over a newer one."""
    from croupier.rules.snapshot import SnapshotStore

    store = SnapshotStore(redis, prefix)
    assert store.load("events", 0) is None
    assert store.save("events", 0, 10, b"ten")
    assert not store.save("events", 0, 5, b"five") and not store.save("events", 0, 10, b"ten again")
    assert store.load("events", 0) == (10, b"ten")
    assert store.save("events", 0, 11, b"eleven", 1234) and store.load("events", 0) == (11, b"eleven")
    assert store.describe("events", 0) == {"offset": 11, "taken_ms": 1234, "bytes": 6}
    assert store.describe("events", 1) is None
    assert store.load("events", 1) is None


def test_a_forgotten_game_is_read_back_from_the_log_and_its_id_never_reused(kafka, redis_url, prefix, services, tmp_path):
    from urllib.request import urlopen

    from harness import free_port

    from croupier.engine import registry
    from croupier.engine.codec import canonical_json
    from croupier.engine.table import TableHost

    metrics_port = free_port()
    svc, addr = launch(services, kafka, redis_url, prefix, tmp_path, CROUPIER_RULES_RETIRE_AFTER_S="0",
                       CROUPIER_RULES_FORGET_AFTER_S="0", CROUPIER_RULES_METRICS_PORT=str(metrics_port))
    wait_owned(redis_url, prefix, GAME, PARTITIONS, services=[svc])

    async def main():
        client = RulesClient(addr)
        stub = client.stub()
        gid = uuid.uuid4().hex
        await play(client, GAME, gid, 2, 4, {}, random.Random(5))
        ended = await stub.ForceEnd(rules_pb2.ForceEndRequest(game_type=GAME, game_id=gid, command_id="end", reason="t"))
        views = {seat: await stub.GetState(rules_pb2.GetStateRequest(game_type=GAME, game_id=gid, seat=seat))
                 for seat in (0, 1)}
        refusals = []
        for call, request in (
            (stub.CreateGame, rules_pb2.CreateGameRequest(game_type=GAME, game_id=gid, seats=2, command_id="again")),
            (stub.ForceEnd, rules_pb2.ForceEndRequest(game_type=GAME, game_id=gid, command_id="end")),
        ):
            try:
                await call(request)
                refusals.append(None)
            except grpc.aio.AioRpcError as error:
                refusals.append((error.code(), from_rpc_error(error)[0].code))
        await client.close()
        return gid, ended, views, refusals

    gid, ended, views, refusals = asyncio.run(main())
    metrics = urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).read().decode()
    assert _gauge(metrics, "croupier_rules_forgotten_games") == 1 and _gauge(metrics, "croupier_rules_retired_games") == 0
    log = read_log(kafka, topic(prefix), PARTITIONS)[gid]
    host = TableHost(registry.get(GAME))
    state = host.fold(log)
    assert state.version == ended.result.version
    for seat, answer in views.items():
        assert answer.view_json == canonical_json(host.view(state, seat)) and answer.version == state.version
    assert refusals == [(grpc.StatusCode.ALREADY_EXISTS, "already_exists"), (grpc.StatusCode.FAILED_PRECONDITION, "game_over")]
    assert len(read_log(kafka, topic(prefix), PARTITIONS)[gid]) == len(log)  # nothing appended by either


def test_an_abandoned_table_is_ended_by_its_owner(kafka, redis_url, prefix, services, tmp_path):
    """No table waits forever: CROUPIER_RULES_IDLE_END_AFTER_S after its last event a table
    not over (in play, or waiting for players) is ended, with a ForceEnd in its log."""
    svc, addr = launch(services, kafka, redis_url, prefix, tmp_path, CROUPIER_RULES_IDLE_END_AFTER_S="2")
    wait_owned(redis_url, prefix, GAME, PARTITIONS, services=[svc])

    async def main():
        client = RulesClient(addr)
        stub = client.stub()
        playing, waiting = uuid.uuid4().hex, uuid.uuid4().hex
        await play(client, GAME, playing, 2, 2, {}, random.Random(8))
        await stub.CreateGame(rules_pb2.CreateGameRequest(game_type=GAME, game_id=waiting, seats=2, command_id="c"))
        views = {}
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            views = {g: json.loads((await stub.GetState(rules_pb2.GetStateRequest(game_type=GAME, game_id=g))).view_json)
                     for g in (playing, waiting)}
            if all(v["status"] == "over" for v in views.values()):
                break
            await asyncio.sleep(0.5)
        await client.close()
        return playing, waiting, views

    playing, waiting, views = asyncio.run(main())
    log = read_log(kafka, topic(prefix), PARTITIONS)
    for game_id in (playing, waiting):
        assert views[game_id]["status"] == "over", views[game_id]
        ended = [e for e in log[game_id] if e.type == "TableEnded"]
        assert len(ended) == 1 and ended[0].command_id.startswith("idle:")
        assert ended[0].payload["result"]["why"] == "abandoned: no move for 2 s"
        assert ended[0].time - log[game_id][-2].time >= 2000


def test_a_replica_given_a_port_another_process_holds_refuses_to_start(kafka, redis_url, redis, prefix, services,
                                                                       tmp_path):
    """Two replicas on one port would share its connections (SO_REUSEPORT, which grpc sets by
    default, lets both bind): commands for one game type would reach another's replica. A
    replica given a port that is taken, even by a listener that allows sharing it, exits
    with a clear error and publishes nothing."""
    import socket

    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)  # as a grpc server's socket
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    try:
        svc = Service(["serve", "rules", "--game", GAME, "--port", str(port)],
                      service_env(kafka, redis_url, prefix), tmp_path / "busy.log")
        services.append(svc)
        code = svc.proc.wait(90)
    finally:
        holder.close()
    assert code == 1, svc.tail()
    assert f"cannot listen on 127.0.0.1:{port}" in svc.tail()
    assert redis.hgetall(f"{prefix}croupier:owners:{GAME}") == {}
