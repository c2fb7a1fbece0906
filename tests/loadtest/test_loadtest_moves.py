"""A move's retries, against an in-process fake of the gateway client
(loadtest_fakes.FakeGateway; nothing here touches Kafka or Redis): a move still refused after
its tries fails (play_seat raises) instead of leaving its seat waiting for ever, and a command
is timed once, from its first try to its acknowledgement."""

from __future__ import annotations

import asyncio
import types

import pytest
from loadtest_fakes import FakeGateway, run_guarded

from croupier_gateway.bots import create_and_seat, play_seat
from croupier_gateway.client import GatewayError
from croupier_gateway.loadtest import Tally, TimedClient


def test_play_seat_gives_up_on_a_move_refused_every_time(quick_backoff):
    """No newer view comes for a move that was never made: returning quietly left the seat,
    and its table, waiting for ever. It raises instead (status 0: `follow` resumes a stream on
    a 429 or a 503, and would swallow one)."""
    fake = FakeGateway(refuse=lambda kind, game_id, tries: GatewayError(429, "rate_limited", "slow down")
                       if kind == "move" else None)

    async def scenario():
        game_id, tokens = await create_and_seat(fake, "journey", ["random", "random"])
        await asyncio.gather(*(play_seat(fake, game_id, s, t, "random") for s, t in enumerate(tokens)))

    with pytest.raises(GatewayError) as caught:
        run_guarded(scenario)
    assert (caught.value.status, caught.value.code) == (0, "gave_up")
    assert "429 rate_limited after 20 tries" in str(caught.value)
    assert max(fake.tries.values()) == 20


def test_a_command_is_timed_from_its_first_try_across_its_retries():
    """Every call takes one second of the fake's clock and the first two tries of every
    command are refused (429): each command took three seconds, retries included."""
    fake = FakeGateway(moves=6, step=1.0, refuse=lambda kind, game_id, tries:
                       GatewayError(429, "rate_limited", "slow down") if tries <= 2 else None)
    owner = types.SimpleNamespace(tally=Tally())
    timed = TimedClient(fake, owner, "journey")
    timed.clock = fake.clock

    async def scenario():
        game_id, tokens = await create_and_seat(timed, "journey", ["random", "random"])
        await asyncio.gather(*(play_seat(timed, game_id, s, t, "random") for s, t in enumerate(tokens)))

    run_guarded(scenario)
    kinds = owner.tally.kinds
    assert {k: h.count for k, h in kinds.items()} == {"create_table": 1, "join_seat": 2, "Step": 6}
    for kind, h in kinds.items():
        assert h.min_us == h.max_us == 3e6, kind
    assert owner.tally.rate_limited == 2 * 9
    assert timed.first_try == {}  # nothing left behind once acknowledged
