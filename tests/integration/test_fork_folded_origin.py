"""ForkGame reads its origin's log as the rules services fold it.

A record at a seq already folded (a record written again, or put there from outside the
rules) is passed over by every reader of the log: the rules services, the projector, replay
and audit. ForkGame checked `at_seq` against the last record's seq and cut the log by seq as
recorded, so a game with such a record at its end could be forked only up to that record's
seq (`bad_seq` past it), and a fork at or past it carried the record twice and was refused
`origin_corrupt`. The game its players saw is forked now."""

from __future__ import annotations

import asyncio
import json
import uuid

from confluent_kafka import Producer
from harness import played_as, start_rules, wait_owned

from croupier.rules.client import RulesClient
from croupier.rules.store import encode_record, partition_for
from croupier.v1 import rules_pb2

GAME = "virtues"
PARTITIONS = 4  # harness.service_env's


def test_a_game_whose_log_holds_a_record_written_again_is_forked_as_it_was_played(
        kafka, redis_url, prefix, services, tmp_path):
    svc, addr = start_rules(GAME, kafka, redis_url, prefix, tmp_path)
    services.append(svc)
    wait_owned(redis_url, prefix, GAME, PARTITIONS, services=[svc])
    origin = f"{GAME}-{uuid.uuid4().hex[:16]}"
    game = played_as(origin, GAME, seed=11)
    middle = game[len(game) // 2]
    # Steps a fork may be made at: the last event of a command, the game not over yet.
    steps = [env.seq for env, after in zip(game, game[1:]) if env.command_id != after.command_id
             and after.type != "TableEnded" and env.seq > middle.seq]
    assert len(steps) >= 2, steps
    first_step, last_step = steps[0], steps[-1]
    producer = Producer({"bootstrap.servers": kafka})
    for env in [*game, middle]:  # the game, then a copy of one of its middle events
        producer.produce(f"{prefix}croupier.events.{GAME}", encode_record(env), key=origin.encode(),
                         partition=partition_for(origin, PARTITIONS))
    assert producer.flush(30) == 0

    async def main():
        client = RulesClient(addr, deadline_s=30)
        try:
            forks = {}
            for at in (first_step, last_step):
                fork = f"{GAME}-{uuid.uuid4().hex[:16]}"
                await client.call("ForkGame", rules_pb2.ForkGameRequest(
                    game_type=GAME, game_id=fork, origin_game_id=origin, at_seq=at, command_id=f"f{at}"))
                got = await client.call("GetState", rules_pb2.GetStateRequest(game_type=GAME, game_id=fork))
                forks[at] = json.loads(got.view_json)
            return forks
        finally:
            await client.close()

    forks = asyncio.run(main())
    # Each fork is the game at its step, past the copied event's seq: the first step after
    # it, and the last before the end.
    assert set(forks) == {first_step, last_step}
    for at, view in forks.items():
        assert view, f"no view of the fork at {at}"
