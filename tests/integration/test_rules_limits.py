"""The rules service against the real broker and Redis: what a caller sends cannot hurt the
partition or other games. A command whose record would be larger than the event store takes
is refused alone (`too_large`, INVALID_ARGUMENT), never answered "retry" while its partition
rebuilds; the same when the broker's own limit is the smaller one."""

from __future__ import annotations

import asyncio
import random
import uuid

import grpc
import pytest
from harness import start_rules, wait_owned
from rules_driver import check_log, play, play_moves, read_log

from croupier.engine.contract import Rejection
from croupier.rules.client import RulesClient
from croupier.rules.errors import from_rpc_error
from croupier.rules.store import partition_for
from croupier.v1 import rules_pb2

GAME = "expeditions"
PARTITIONS = 4
# An expeditions game of 40 moves is a log of ~25 KB: its fork carries it in one record.
SMALL = 16_384

pytestmark = pytest.mark.flaky(reruns=2, reruns_delay=3)




def topic(prefix: str) -> str:
    return f"{prefix}croupier.events.{GAME}"


def launch(services, kafka, redis_url, prefix, tmp_path, **extra):
    svc, addr = start_rules(GAME, kafka, redis_url, prefix, tmp_path, **extra)
    services.append(svc)
    wait_owned(redis_url, prefix, GAME, PARTITIONS, services=[svc])
    return svc, addr


async def _refusal(call, request) -> tuple[grpc.StatusCode, str, str] | None:
    try:
        await call(request, timeout=20)
        return None
    except grpc.aio.AioRpcError as error:
        rejection = from_rpc_error(error)[0]
        return error.code(), rejection.code, rejection.message


def _neighbour(game_id: str) -> str:
    """Another game id of the same partition."""
    while True:
        other = uuid.uuid4().hex
        if partition_for(other, PARTITIONS) == partition_for(game_id, PARTITIONS):
            return other


def _too_large_fork_and_reason(kafka, redis_url, prefix, addr):
    async def main():
        client = RulesClient(addr)
        stub = client.stub()
        acked: dict = {}
        origin = uuid.uuid4().hex
        await play(client, GAME, origin, 2, 40, acked, random.Random(7))
        state = await stub.GetState(rules_pb2.GetStateRequest(game_type=GAME, game_id=origin))
        fork_id = _neighbour(origin)
        fork = await _refusal(stub.ForkGame, rules_pb2.ForkGameRequest(
            game_type=GAME, game_id=fork_id, origin_game_id=origin, at_seq=state.version, command_id="fork"))
        # Several forks at once, by a client that retries what it is told to retry (a fork
        # past the replica's concurrent log reads is told so), with a game of the same
        # partition played meanwhile: each fork is refused too_large, and the other game's
        # moves are all taken.
        other = _neighbour(origin)
        forks = [client.call("ForkGame", rules_pb2.ForkGameRequest(
            game_type=GAME, game_id=_neighbour(origin), origin_game_id=origin, at_seq=state.version,
            command_id=f"fork{i}")) for i in range(5)]
        played = asyncio.create_task(play(client, GAME, other, 2, 10, acked, random.Random(8)))
        forked = await asyncio.gather(*forks, return_exceptions=True)
        made = await played
        reason = await _refusal(stub.ForceEnd, rules_pb2.ForceEndRequest(
            game_type=GAME, game_id=origin, command_id="end", reason="x" * 300_000))
        # The origin is still served, and takes an operator's end with a reason of 200.
        more = await play_moves(client, GAME, origin, 2, acked, random.Random(9), tag="after")
        ended = await stub.ForceEnd(rules_pb2.ForceEndRequest(game_type=GAME, game_id=origin, command_id="end2",
                                                              reason="r" * 200))
        await client.close()
        return origin, fork_id, fork, forked, made, reason, more, ended, acked

    origin, fork_id, fork, forked, made, reason, more, ended, acked = asyncio.run(main())
    assert fork is not None and fork[:2] == (grpc.StatusCode.INVALID_ARGUMENT, "too_large"), fork
    assert "fork from an earlier step" in fork[2] or "refused" in fork[2]
    assert all(isinstance(f, Rejection) and (f.code, f.kind) == ("too_large", "malformed") for f in forked), forked
    assert made > 0
    assert reason is not None and reason[:2] == (grpc.StatusCode.INVALID_ARGUMENT, "invalid_reason"), reason
    assert more > 0 and not ended.result.duplicate
    log = read_log(kafka, topic(prefix), PARTITIONS)
    assert fork_id not in log and check_log(log, acked) == []
    assert log[origin][-1].payload["result"]["why"] == "r" * 200


def test_a_fork_above_the_writers_record_limit_is_refused_alone(kafka, redis_url, prefix, services, tmp_path):
    _, addr = launch(services, kafka, redis_url, prefix, tmp_path, CROUPIER_KAFKA_MAX_MESSAGE_BYTES=str(SMALL))
    _too_large_fork_and_reason(kafka, redis_url, prefix, addr)


def test_a_record_the_broker_refuses_for_its_size_is_that_commands_refusal(kafka, redis_url, prefix, services,
                                                                           tmp_path):
    """The topic takes smaller records than the writers send (max.message.bytes set on it):
    the broker's MSG_SIZE_TOO_LARGE is the fork's refusal, not a failure of the store."""
    from kafka.admin import KafkaAdminClient, NewTopic

    admin = KafkaAdminClient(bootstrap_servers=kafka)
    try:
        admin.create_topics([NewTopic(topic(prefix), num_partitions=PARTITIONS, replication_factor=1,
                                      topic_configs={"max.message.bytes": str(SMALL)})])
    finally:
        admin.close()
    _, addr = launch(services, kafka, redis_url, prefix, tmp_path)
    _too_large_fork_and_reason(kafka, redis_url, prefix, addr)


def test_long_echoed_input_gets_a_typed_rejection_not_resource_exhausted(kafka, redis_url, prefix, services, tmp_path):
    """A rejection's message echoes what was sent; sent long, the answer outgrew gRPC's
    metadata limit and reached the caller as RESOURCE_EXHAUSTED with no rejection, which the
    clients take for "retry". And a turn clock of thousands of digits is refused cleanly,
    without a traceback in the replica's log."""
    svc, addr = launch(services, kafka, redis_url, prefix, tmp_path)

    async def main():
        client = RulesClient(addr)
        stub = client.stub()
        gid = uuid.uuid4().hex
        await stub.CreateGame(rules_pb2.CreateGameRequest(game_type=GAME, game_id=gid, seats=2, command_id="c"))

        def create(**fields):
            return rules_pb2.CreateGameRequest(game_id=uuid.uuid4().hex, seats=2, command_id="c",
                                               **{"game_type": GAME, **fields})

        cases = {
            "game_type": (stub.CreateGame, create(game_type="g" * 9000)),
            "game_type_fork": (stub.ForkGame, rules_pb2.ForkGameRequest(
                game_type="g" * 9000, game_id=uuid.uuid4().hex, origin_game_id=gid, at_seq=1, command_id="f")),
            "game_type_read": (stub.GetState, rules_pb2.GetStateRequest(game_type="é" * 60, game_id=gid)),
            "bot": (stub.JoinSeat, rules_pb2.JoinSeatRequest(game_type=GAME, game_id=gid, seat=0, bot="b" * 100_000,
                                                             command_id="j")),
            "option_value": (stub.CreateGame, create(options={"board": "é" * 100_000})),
            "game_option_value": (stub.CreateGame, create(options={"strict_start": "x" * 100_000})),
            "unknown_options": (stub.CreateGame, create(options={f"opt{i:05d}": "1" for i in range(5000)})),
            "clock_digits": (stub.CreateGame, create(options={"turn_clock_ms": "9" * 5000})),
            "action_type": (stub.HandleCommand, rules_pb2.HandleCommandRequest(
                game_type=GAME, game_id=gid, seat=0, command_id="m", action_json='{"type":"' + "T" * 15000 + '"}')),
        }
        out = {}
        for name, (method, request) in cases.items():
            try:
                await method(request, timeout=20)
                out[name] = None
            except grpc.aio.AioRpcError as error:
                rejection = from_rpc_error(error)[0]
                has_rejection = any(key == "croupier-rejection-bin" for key, _ in (error.trailing_metadata() or ()))
                out[name] = (error.code(), rejection.code, len(rejection.message.encode()), has_rejection)
        await client.close()
        return out

    out = asyncio.run(main())
    expected = {
        "game_type": "invalid_game_type", "game_type_fork": "invalid_game_type", "game_type_read": "wrong_game_type",
        "bot": "unknown_bot", "option_value": "invalid_option", "game_option_value": "invalid_option",
        "unknown_options": "invalid_option", "clock_digits": "invalid_option", "action_type": "malformed_command",
    }
    for name, code in expected.items():
        assert out[name] is not None and out[name][1] == code and out[name][3], (name, out[name])
        assert out[name][2] <= 1024, (name, out[name])
        assert out[name][0] == (grpc.StatusCode.NOT_FOUND if code == "wrong_game_type" else grpc.StatusCode.INVALID_ARGUMENT)
    written = svc.log_path.read_text(errors="replace")
    assert "Traceback" not in written and "decide_failed" not in written, svc.tail()


@pytest.fixture
def private_redis(tmp_path):
    """A Redis of this test's own (Debian's redis-server), which it may stop (SIGSTOP: a
    Redis that hangs, connections open and unanswered) without touching anyone else's."""
    import shutil
    import signal
    import subprocess
    import time

    import redis as redis_lib
    from harness import free_port

    server = shutil.which("redis-server") or "/usr/bin/redis-server"
    port = free_port()
    proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    url = f"redis://127.0.0.1:{port}/0"
    client = redis_lib.Redis.from_url(url, socket_timeout=2)
    for _ in range(100):
        try:
            client.ping()
            break
        except redis_lib.RedisError:
            time.sleep(0.1)
    yield url, proc
    proc.send_signal(signal.SIGCONT)
    proc.terminate()
    proc.wait(10)


def test_a_hung_redis_never_stalls_the_event_loop(kafka, private_redis, prefix, services, tmp_path):
    """Answers that name an owner and the owners' table's writes were synchronous Redis calls
    (2 s timeout) on the replica's event loop: with Redis hung, each unknown game's GetState
    stalled every partition's commands for 2 s, one after another."""
    import signal

    url, redis_proc = private_redis
    svc, addr = start_rules(GAME, kafka, url, prefix, tmp_path, CROUPIER_RULES_SNAPSHOT_EVERY="0")
    services.append(svc)
    wait_owned(url, prefix, GAME, PARTITIONS, services=[svc])

    async def main():
        client = RulesClient(addr)
        stub = client.stub()
        gid = uuid.uuid4().hex
        await stub.CreateGame(rules_pb2.CreateGameRequest(game_type=GAME, game_id=gid, seats=2, command_id="c"))
        redis_proc.send_signal(signal.SIGSTOP)
        try:
            # Five unknown games (each answer used to ask Redis for an owner: 2 s) and a join
            # of another game, all at once: each is answered well within its deadline.
            reads = [stub.GetState(rules_pb2.GetStateRequest(game_type=GAME, game_id=uuid.uuid4().hex), timeout=4)
                     for _ in range(5)]
            join = stub.JoinSeat(rules_pb2.JoinSeatRequest(game_type=GAME, game_id=gid, seat=0, command_id="j0"),
                                 timeout=4)
            answers = await asyncio.gather(*reads, join, return_exceptions=True)
        finally:
            redis_proc.send_signal(signal.SIGCONT)
        await client.close()
        return answers

    answers = asyncio.run(main())
    *reads, join = answers
    assert all(isinstance(r, grpc.aio.AioRpcError) and r.code() == grpc.StatusCode.NOT_FOUND for r in reads), reads
    assert not isinstance(join, Exception), join
    assert join.result.version > 1


def test_the_owners_table_is_written_in_order_and_read_without_waiting_for_redis(private_redis, prefix):
    """OwnersTable (rules/owners.py) against a real Redis that hangs: a publish returns at
    once and lands, in order, once Redis answers; a lookup answers from the table as last read."""
    import signal

    import redis as redis_lib

    from croupier.rules.owners import OwnersTable

    url, redis_proc = private_redis
    rds = redis_lib.Redis.from_url(url, socket_timeout=2)
    table = OwnersTable(rds, prefix, GAME, "10.0.0.1:1", PARTITIONS)
    rds.hset(table.key, "3", "10.0.0.2:2")
    table.refresh().result(10)
    assert table(3) == "10.0.0.2:2" and table(1) == ""
    redis_proc.send_signal(signal.SIGSTOP)
    try:
        writes = [table.publish(1, "ready"), table.publish(2, "ready"), table.publish(2, None)]
        seen = table(3)  # answered from the table, though Redis does not answer
        pending = [w.done() for w in writes]
    finally:
        redis_proc.send_signal(signal.SIGCONT)
    results = [w.result(30) for w in writes]
    assert seen == "10.0.0.2:2"
    assert pending == [False, False, False]
    # The first write may have timed out while Redis hung (logged; keep_published fills the
    # gap); the later ones landed, in order: partition 2 said and then released.
    stored = {k.decode(): v.decode() for k, v in redis_lib.Redis.from_url(url).hgetall(table.key).items()}
    assert results[1:] == [True, True] and "2" not in stored
    table.assert_owned([1]).result(10)
    assert redis_lib.Redis.from_url(url).hget(table.key, "1") == b"10.0.0.1:1"
    table.close()
