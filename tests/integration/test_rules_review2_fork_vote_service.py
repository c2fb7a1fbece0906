"""Through the rules service on the real broker: a fork of a delve table made during its route
vote, after the origin's vote deadline has passed, gets a vote that runs its whole time from
the fork (delve rules version 4). Before, the fork kept the origin's deadline and its owner's
timer closed the fork's vote at once."""

from __future__ import annotations

import asyncio
import json
import time
import uuid

import pytest
from harness import start_rules, wait_owned

from croupier.rules.client import RulesClient
from croupier.v1 import rules_pb2

GAME = "delve"
PARTITIONS = 4
VOTE_S = 5

pytestmark = pytest.mark.flaky(reruns=2, reruns_delay=3)


def test_a_fork_made_after_its_origins_vote_deadline_votes_for_the_whole_vote_time(
        kafka, redis_url, prefix, services, tmp_path):
    svc, addr = start_rules(GAME, kafka, redis_url, prefix, tmp_path)
    services.append(svc)
    wait_owned(redis_url, prefix, GAME, PARTITIONS, services=[svc])

    async def state(client, gid):
        got = await client.call("GetState", rules_pb2.GetStateRequest(game_type=GAME, game_id=gid))
        return got.version, json.loads(got.view_json)

    async def main():
        client = RulesClient(addr, deadline_s=30)
        try:
            origin = uuid.uuid4().hex
            await client.call("CreateGame", rules_pb2.CreateGameRequest(
                game_type=GAME, game_id=origin, seats=2, command_id="c", options={"vote_seconds": str(VOTE_S)}))
            for s in range(2):
                await client.call("JoinSeat", rules_pb2.JoinSeatRequest(
                    game_type=GAME, game_id=origin, seat=s, command_id=f"j{s}"))
            at, view = await state(client, origin)
            assert view["game"]["stage"] == "route" and view["game"]["vote"]["deadline"] is not None
            await asyncio.sleep(VOTE_S + 1.5)  # the origin's vote deadline has passed
            fork = uuid.uuid4().hex
            forked_at = int(time.time() * 1000)
            await client.call("ForkGame", rules_pb2.ForkGameRequest(
                game_type=GAME, game_id=fork, origin_game_id=origin, at_seq=at, command_id="f"))
            first, view = await state(client, fork)
            deadline = view["game"]["vote"]["deadline"]
            await asyncio.sleep(2.5)  # before: the fork's vote was closed by its first timer
            second, _ = await state(client, fork)
            await asyncio.sleep(VOTE_S)  # its own deadline has passed: the fork's timer decides
            third, view_after = await state(client, fork)
            return forked_at, first, deadline, second, third, view_after
        finally:
            await client.close()

    forked_at, first, deadline, second, third, view_after = asyncio.run(main())
    assert deadline >= forked_at + VOTE_S * 1000 - 1000, (deadline, forked_at)
    assert second == first, "the fork's vote closed before its time"
    assert third > first  # nobody voted: the fork's vote restarted at its own deadline
    assert view_after["game"]["vote"]["deadline"] > deadline
