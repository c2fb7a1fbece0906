"""Helpers of the end-to-end tests: whole games played through the gateway, and the truth
(the table's state at every version, from the Kafka log) to check what it sent against."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from croupier.engine import registry

PARTITIONS = 4
OPERATOR_TOKEN = "e2e-operator-token"
SIGNING_KEY = "e2e-signing-key-0123456789abcdef"


def run(coro):
    """Run a coroutine to the end on a fresh loop (the tests are plain functions)."""
    return asyncio.run(coro)


@dataclass
class Played:
    game_type: str
    transport: str
    game_id: str
    seats: list  # SeatRecord per seat (every update kept)
    spectator: object  # SeatRecord of a spectator that stays connected
    reconnecting: object  # SeatRecord of a spectator that drops its stream every few messages


def seats_for(game_type: str) -> int:
    spec = registry.get(game_type)
    return min(spec.max_seats, max(spec.min_seats, 2))


async def _play_one(client, spectator_client, game_type: str, transport: str, seed: int) -> Played:
    from croupier_gateway.bots import SeatRecord, create_and_seat, default_bot, follow, play_seat

    seats = seats_for(game_type)
    names = [default_bot(game_type)] * seats
    if seats > 1:
        names[-1] = "random"
    game_id, tokens = await create_and_seat(client, game_type, names)
    spectator = SeatRecord(None, keep_updates=True)
    reconnecting = SeatRecord(None, keep_updates=True)
    players = [play_seat(client, game_id, seat, token, name, seed=seed, keep_updates=True,
                         reconnect_every=7 if seat == 0 else 0)
               for seat, (token, name) in enumerate(zip(tokens, names))]
    records = await asyncio.gather(*players, follow(spectator_client, game_id, None, spectator),
                                   follow(spectator_client, game_id, None, reconnecting, reconnect_every=3))
    return Played(game_type, transport, game_id, list(records[:seats]), records[seats], records[seats + 1])


def read_game_log(kafka: str, prefix: str, game_type: str, game_id: str) -> list:
    """A game's envelopes, from its partition of its topic."""
    from croupier.rules.settings import KafkaSettings
    from croupier.rules.store import partition_for, read_partition

    settings = KafkaSettings(bootstrap=kafka, topic_prefix=prefix)
    topic = settings.topic(game_type)
    return [env for env in read_partition(settings, topic, partition_for(game_id, PARTITIONS), settle_s=30)
            if env.game_id == game_id]


def states_by_version(kafka: str, prefix: str, game_type: str, game_id: str) -> dict:
    """The table's state after every event, by version: the truth to check views against."""
    from croupier.engine.table import TableHost

    host = TableHost(registry.get(game_type))
    state = None
    out = {}
    for env in read_game_log(kafka, prefix, game_type, game_id):
        state = host.evolve(state, env)
        out[state.version] = state
    return out
