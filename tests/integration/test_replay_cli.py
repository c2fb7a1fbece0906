"""export, audit, replay and fork from the command line, against the real broker."""

from __future__ import annotations

import asyncio
import json
import random
import socket
import uuid

import pytest
from harness import croupier, service_env, start_rules, wait_owned
from rules_driver import play

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


def test_export_audit_replay_and_fork_a_real_game(kafka, redis_url, prefix, tmp_path):
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
        r = croupier(env, "fork", gid, "--at", str(at), "--rules", addr)
        assert r.returncode == 0, r.stderr
        fork_id = json.loads(r.stdout)["game_id"]

        async def go_on():
            client = RulesClient(addr)
            state = await client.call("GetState", rules_pb2.GetStateRequest(game_type=GAME, game_id=fork_id))
            view = json.loads(state.view_json)
            seat = view["to_act"][0]
            legal = await client.call("ListLegalActions", rules_pb2.ListLegalActionsRequest(
                game_type=GAME, game_id=fork_id, seat=seat))
            res = await client.call("HandleCommand", rules_pb2.HandleCommandRequest(
                game_type=GAME, game_id=fork_id, seat=seat, command_id="after-fork", action_json=legal.actions_json[0]))
            await client.close()
            return view, res

        view, res = asyncio.run(go_on())
        assert view["origin"]["game_id"] == gid and view["origin"]["seq"] == at
        assert res.result.version == 3 + (res.result.last_seq - res.result.first_seq)
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
