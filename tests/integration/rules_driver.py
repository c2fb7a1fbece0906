"""Plays games through the rules service API with random legal moves, recording every
acknowledged command, and checks the log afterwards."""

from __future__ import annotations

import asyncio
import json
import random
from collections import defaultdict

from croupier.engine.envelope import verify_chain
from croupier.rules.client import RulesClient
from croupier.rules.settings import KafkaSettings
from croupier.rules.store import read_partition
from croupier.v1 import rules_pb2


async def play(client: RulesClient, game: str, game_id: str, seats: int, moves: int, acked: dict, rng: random.Random,
               pause: float = 0.0) -> int:
    """Create, seat and play up to `moves` moves; returns moves made."""
    r = await client.call("CreateGame", rules_pb2.CreateGameRequest(game_type=game, game_id=game_id, seats=seats,
                                                                     command_id=f"{game_id}:create"))
    acked[f"{game_id}:create"] = (game_id, r.result.first_seq, r.result.last_seq)
    for s in range(seats):
        cid = f"{game_id}:join{s}"
        r = await client.call("JoinSeat", rules_pb2.JoinSeatRequest(game_type=game, game_id=game_id, seat=s,
                                                                     player=f"p{s}", entropy=f"{game_id}{s}", command_id=cid))
        acked[cid] = (game_id, r.result.first_seq, r.result.last_seq)
    return await play_moves(client, game, game_id, moves, acked, rng, pause=pause)


async def play_moves(client: RulesClient, game: str, game_id: str, moves: int, acked: dict, rng: random.Random,
                     pause: float = 0.0, tag: str = "m") -> int:
    """Up to `moves` moves of a created, seated game (command ids `{game_id}:{tag}{i}`);
    returns moves made."""
    made = 0
    for i in range(moves):
        state = await client.call("GetState", rules_pb2.GetStateRequest(game_type=game, game_id=game_id))
        view = json.loads(state.view_json)
        if view["status"] != "running" or not view["to_act"]:
            break
        seat = view["to_act"][0]
        legal = await client.call("ListLegalActions", rules_pb2.ListLegalActionsRequest(game_type=game, game_id=game_id, seat=seat))
        if legal.version != state.version:
            continue
        action = rng.choice(list(legal.actions_json))
        cid = f"{game_id}:{tag}{i}"
        r = await client.call("HandleCommand", rules_pb2.HandleCommandRequest(
            game_type=game, game_id=game_id, seat=seat, command_id=cid, action_json=action, expected_version=legal.version))
        acked[cid] = (game_id, r.result.first_seq, r.result.last_seq)
        made += 1
        if pause:
            await asyncio.sleep(pause)
    return made


def read_log(kafka: str, topic: str, partitions: int) -> dict[str, list]:
    settings = KafkaSettings(bootstrap=kafka)
    games: dict[str, list] = defaultdict(list)
    for p in range(partitions):
        for env in read_partition(settings, topic, p, settle_s=30):
            games[env.game_id].append(env)
    return games


def check_log(games: dict[str, list], acked: dict) -> list[str]:
    """Problems: gaps, duplicate seqs, broken chains, acknowledged commands missing."""
    problems = []
    for game_id, envs in games.items():
        seqs = [e.seq for e in envs]
        if seqs != list(range(1, len(seqs) + 1)):
            problems.append(f"{game_id}: seqs {seqs[:50]}")
        fault = verify_chain(envs)
        if fault:
            problems.append(f"{game_id}: chain {fault}")
    for cid, (game_id, first, last) in acked.items():
        envs = games.get(game_id, [])
        got = [e for e in envs if first <= e.seq <= last]
        if len(got) != last - first + 1 or any(e.command_id != cid for e in got):
            problems.append(f"acknowledged {cid} ({first}..{last}) is not in the log as acknowledged")
    counts = defaultdict(int)
    for envs in games.values():
        for e in envs:
            if e.cause is not None and e.command_id:
                counts[(e.game_id, e.command_id)] += 1
    problems.extend(f"{k} appended {n} times" for k, n in counts.items() if n > 1)
    return problems
