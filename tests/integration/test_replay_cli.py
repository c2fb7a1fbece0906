"""export, audit, replay and fork from the command line, against the real broker."""

from __future__ import annotations

import asyncio
import json
import random
import socket
import uuid

import pytest
from harness import croupier, service_env, start_rules, wait_owned
from rules_driver import play, play_moves

from croupier.rules.client import RulesClient
from croupier.v1 import rules_pb2

GAME = "expeditions"


@pytest.fixture
def prefix(redis):
    value = f"r{uuid.uuid4().hex[:10]}."
    yield value
    keys = list(redis.scan_iter(match=f"{value}*"))
    if keys:
        redis.delete(*keys)


def test_export_audit_replay_and_fork_a_real_game(kafka, redis_url, redis, prefix, tmp_path):
    rules, addr = start_rules(GAME, kafka, redis_url, prefix, tmp_path)
    try:
        wait_owned(redis_url, prefix, GAME, 4, services=[rules])
        gid = uuid.uuid4().hex

        async def setup():
            client = RulesClient(addr)
            await play(client, GAME, gid, 2, 60, {}, random.Random(4))
            await client.close()

        asyncio.run(setup())
        env = service_env(kafka, redis_url, prefix)

        out = tmp_path / "game.jsonl"
        r = croupier(env, "export", gid, "--out", str(out))
        assert r.returncode == 0, r.stderr
        lines = out.read_text().splitlines()
        assert len(lines) > 60 and [json.loads(x)["seq"] for x in lines] == list(range(1, len(lines) + 1))

        r = croupier(env, "audit", gid)
        assert r.returncode == 0 and "clean" in r.stdout, r.stdout + r.stderr
        r = croupier(env, "audit", "--file", str(out), "--json")
        assert r.returncode == 0 and json.loads(r.stdout)["ok"] is True

        tampered = tmp_path / "tampered.jsonl"
        rows = [json.loads(x) for x in lines]
        forged = [dict(x) for x in rows]
        forged[40] = {**rows[40], "payload": {**rows[40]["payload"], "forged": True}}
        tampered.write_text("\n".join(json.dumps(x) for x in forged) + "\n")
        r = croupier(env, "audit", "--file", str(tampered), "--json")
        assert r.returncode == 1
        assert json.loads(r.stdout)["first_fault"]["seq"] == rows[40]["seq"]

        r = croupier(env, "replay", gid, "--to", "30", "--as", "0", "--json")
        assert r.returncode == 0, r.stderr
        replay = json.loads(r.stdout)
        # After the whole command seq 30 is part of (its `to`).
        start = [x for x in rows[:30] if x["cause"] is not None][-1]
        end = start["seq"] + start["cause"]["events"] - 1
        assert end >= 30 and replay["to"] == end
        assert replay["view"]["version"] == end and replay["view"]["you"] == 0 and len(replay["moves"]) > 5
        r = croupier(env, "replay", gid, "--as", "7")
        assert r.returncode == 2 and "seat 7" in r.stderr

        at = next(x["seq"] - 1 for x in rows[40:] if x["cause"] is not None)  # where a command's events end
        # no replica answers at that address: retryable, so 75 (not 2, bad input), nothing forked
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            closed = f"127.0.0.1:{s.getsockname()[1]}"
        r = croupier(env, "fork", gid, "--at", str(at), "--rules", closed)
        assert r.returncode == 75 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
        assert "run it again with --command-id" in r.stderr, r.stderr  # how to retry without a second fork
        r = croupier(env, "fork", gid, "--at", str(at), "--rules", addr)
        assert r.returncode == 0, r.stderr
        fork_id = json.loads(r.stdout)["game_id"]
        # Its id names its type, as the gateway's do (how the gateway finds a new table's type).
        assert fork_id.startswith(f"{GAME}-"), fork_id

        # Retry-safe: the same --command-id names the same fork, made once. The retry finds
        # the replica through Redis, whose owners are stale but one: each is tried in turn.
        r = croupier(env, "fork", gid, "--at", str(at), "--rules", addr, "--command-id", "op-fork-1")
        assert r.returncode == 0, r.stderr
        made = json.loads(r.stdout)
        assert made["game_id"].startswith(f"{GAME}-") and made["game_id"] != fork_id and made["duplicate"] is False
        owners_key = f"{prefix}croupier:owners:{GAME}"
        live = redis.hgetall(owners_key)
        with redis.pipeline() as tx:  # a whole table at once: the replica's refresh only fills gaps
            tx.delete(owners_key)
            tx.hset(owners_key, mapping={**{str(p): closed for p in range(3)}, "3": addr})
            tx.execute()
        try:
            r = croupier(env, "fork", gid, "--at", str(at), "--command-id", "op-fork-1")
        finally:
            with redis.pipeline() as tx:
                tx.delete(owners_key)
                tx.hset(owners_key, mapping=live)
                tx.execute()
        assert r.returncode == 0, r.stdout + r.stderr
        again = json.loads(r.stdout)
        assert (again["game_id"], again["version"], again["duplicate"]) == (made["game_id"], made["version"], True)
        # --keep-cards: another table, with the origin's hidden cards as they lay (the default
        # deals them again with the fork's own seed).
        r = croupier(env, "fork", gid, "--at", str(at), "--rules", addr, "--command-id", "op-fork-1", "--keep-cards")
        assert r.returncode == 0, r.stderr
        kept = json.loads(r.stdout)
        assert kept["keep_cards"] is True and made["keep_cards"] is False and kept["game_id"] != made["game_id"]
        origin_at = []
        for seat in (0, 1):
            r = croupier(env, "replay", gid, "--to", str(at), "--as", str(seat), "--json")
            assert r.returncode == 0, r.stderr
            origin_at.append(json.loads(r.stdout)["view"]["game"])

        async def seat_views(client, game_id):
            return [json.loads((await client.call("GetState", rules_pb2.GetStateRequest(
                game_type=GAME, game_id=game_id, seat=seat))).view_json)["game"] for seat in (0, 1)]

        async def go_on():
            client = RulesClient(addr)
            hands = {g: await seat_views(client, g) for g in (fork_id, kept["game_id"])}
            state = await client.call("GetState", rules_pb2.GetStateRequest(game_type=GAME, game_id=fork_id))
            view = json.loads(state.view_json)
            seat = view["to_act"][0]
            legal = await client.call("ListLegalActions", rules_pb2.ListLegalActionsRequest(
                game_type=GAME, game_id=fork_id, seat=seat))
            res = await client.call("HandleCommand", rules_pb2.HandleCommandRequest(
                game_type=GAME, game_id=fork_id, seat=seat, command_id="after-fork", action_json=legal.actions_json[0]))
            await client.close()
            return view, res, hands

        view, res, hands = asyncio.run(go_on())
        assert view["origin"]["game_id"] == gid and view["origin"]["seq"] == at
        assert res.result.version == view["version"] + 1 + (res.result.last_seq - res.result.first_seq)
        # Each seat of the kept fork sees what it saw in the origin at that step; the fork
        # dealt again holds other cards.
        assert hands[kept["game_id"]] == origin_at and hands[fork_id] != origin_at
        r = croupier(env, "audit", fork_id)
        assert r.returncode == 0, r.stdout + r.stderr
    finally:
        rules.stop()


def test_export_all_of_a_topic_kafka_does_not_have_is_one_line_and_exit_2(kafka, redis_url, prefix):
    """A wrong CROUPIER_TOPIC_PREFIX (here one nothing was ever logged under) named the
    missing topic only in a TimeoutError traceback, exit 1: it is bad input, as for
    `export GAME_ID` of a game not there, so one line naming the topic and the prefix, exit 2
    (not 75: the broker answered; asking again will not help)."""
    env = service_env(kafka, redis_url, prefix)
    r = croupier(env, "export", "--all", "--game", "journey", timeout=90)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and r.stdout == "", r.stderr
    [line] = [x for x in r.stderr.splitlines() if x.strip()]
    assert f"no topic {prefix}croupier.events.journey" in line and "CROUPIER_TOPIC_PREFIX" in line, line


def test_a_fork_retried_after_the_service_forgot_its_command_id_answers_the_same_fork(kafka, redis_url, prefix,
                                                                                      tmp_path):
    """Past the rules service's window of remembered command ids, the retry's derived id is
    refused as taken: the fork of that id is read from the log, and if its own command is
    this one (the same command_id, origin and step), that is the answer, not an error and
    not a second fork."""
    rules, addr = start_rules(GAME, kafka, redis_url, prefix, tmp_path, CROUPIER_RULES_DEDUPE_WINDOW="1")
    try:
        wait_owned(redis_url, prefix, GAME, 4, services=[rules])
        gid = uuid.uuid4().hex

        async def setup():
            client = RulesClient(addr)
            await play(client, GAME, gid, 2, 6, {}, random.Random(5))
            await client.close()

        asyncio.run(setup())
        env = service_env(kafka, redis_url, prefix)
        r = croupier(env, "export", gid)
        rows = [json.loads(x) for x in r.stdout.splitlines()]
        at = rows[-1]["seq"]
        r = croupier(env, "fork", gid, "--at", str(at), "--rules", addr, "--command-id", "op-2")
        assert r.returncode == 0, r.stderr
        made = json.loads(r.stdout)

        async def one_move_on():  # the fork's own command id leaves the window of 1
            client = RulesClient(addr)
            await play_moves(client, GAME, made["game_id"], 1, {}, random.Random(6))
            await client.close()

        asyncio.run(one_move_on())
        r = croupier(env, "fork", gid, "--at", str(at), "--rules", addr, "--command-id", "op-2")
        assert r.returncode == 0, r.stdout + r.stderr
        again = json.loads(r.stdout)
        assert (again["game_id"], again["version"], again["duplicate"]) == (made["game_id"], made["version"], True)
        # Another command id at the same step is another fork.
        r = croupier(env, "fork", gid, "--at", str(at), "--rules", addr, "--command-id", "op-3")
        assert r.returncode == 0 and json.loads(r.stdout)["game_id"] != made["game_id"], r.stderr
    finally:
        rules.stop()
