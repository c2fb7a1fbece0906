"""Hidden cards stay hidden: for random games and random moments, no response and no stream
message to a seat (or to a spectator) contains a card hidden from it."""

from __future__ import annotations

import json
import random
import uuid

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from croupier.engine import registry
from croupier.engine.selfplay import leaks
from e2e_helpers import run, states_by_version


def hidden_from(state, seat):
    spec = registry.get(state.game_type)
    if state.game is None:
        return frozenset()
    return spec.hidden(state.game, seat)


@pytest.mark.parametrize("game_type", registry.GAME_IDS)
def test_no_stream_message_shows_a_hidden_card(played, stack_services, game_type):
    for transport in ("http", "grpc"):
        game = played[(game_type, transport)]
        states = states_by_version(stack_services.kafka, stack_services.prefix, game_type, game.game_id)
        checked = 0
        for record in [*game.seats, game.spectator, game.reconnecting]:
            for update in record.updates:
                hidden = hidden_from(states[update.version], record.seat)
                found = leaks([update.view, update.actions], hidden)
                assert not found, f"{transport} seat {record.seat} v{update.version} sees {sorted(found)[:5]}"
                checked += 1
        assert checked > 0


async def _moment(stack, game_type: str, seats: int, moves: int, rng: random.Random) -> list[tuple]:
    """Play `moves` random legal moves, then read everything a seat or a spectator can read.
    Returns (seat, version, payload, allowed) for each response; `allowed` are the strings
    the caller itself sent (an error may echo them)."""
    from croupier_gateway.client import GatewayError, GrpcGateway, HttpGateway

    http = HttpGateway(stack.http_url)
    grpc_ = GrpcGateway(stack.grpc_address)
    out: list[tuple] = []
    try:
        created = await http.create_table(game_type, seats)
        gid = created["game_id"]
        tokens = [(await http.join(gid, s, player=f"p{s}", entropy=uuid.uuid4().hex))["token"] for s in range(seats)]
        made = 0
        while made < moves:
            spectator = await http.view(gid)
            view = spectator["view"]
            if view["status"] != "running" or not view["to_act"]:
                break
            seat = rng.choice(view["to_act"])
            actions = (await http.actions(gid, tokens[seat]))["actions"]
            if not actions:
                continue
            try:
                await http.submit(gid, tokens[seat], uuid.uuid4().hex, rng.choice(actions),
                                  expected_version=spectator["version"])
                made += 1
            except GatewayError as exc:
                assert exc.status == 409, exc
        # the moment: everything each seat can read, and a spectator
        for seat in [None, *range(seats)]:
            token = tokens[seat] if seat is not None else None
            v = await http.view(gid, token)
            out.append((seat, v["version"], v, frozenset()))
            g = await grpc_.view(gid, token)
            out.append((seat, g["version"], g, frozenset()))
            async for update in http.updates(gid, token, 0):
                out.append((seat, update.version, [update.view, update.actions], frozenset()))
                break
            async for update in grpc_.updates(gid, token, 0):
                out.append((seat, update.version, [update.view, update.actions], frozenset()))
                break
            table = await http.table(gid)
            out.append((seat, table["version"], table, frozenset()))
            listed = await http.list_tables(game_type, status=table["status"] if table["status"] != "over" else "over")
            out.append((seat, table["version"], listed, frozenset()))
            if seat is not None:
                a = await http.actions(gid, token)
                out.append((seat, a["version"], a, frozenset()))
                # another seat's moves, sent as this seat's: refused, and the refusal may name
                # only what this seat sent
                other = (seat + 1) % seats
                for action in (await http.actions(gid, tokens[other]))["actions"][:3]:
                    try:
                        await http.submit(gid, token, uuid.uuid4().hex, action)
                    except GatewayError as exc:
                        sent = frozenset(s for s in json.dumps(action).split('"'))
                        out.append((seat, a["version"], {"code": exc.code, "message": exc.message}, sent))
                    else:
                        break  # legal for this seat too (a shared move): the game moved on
    finally:
        await http.close()
        await grpc_.close()
    return [(gid, *row) for row in out]


# Each example plays a table through the real stack: few examples, and no shrinking (slow).
@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck),
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(game_type=st.sampled_from(registry.GAME_IDS), moves=st.integers(0, 40), seed=st.integers(0, 2**32))
def test_no_response_at_a_random_moment_shows_a_hidden_card(stack_services, game_type, moves, seed):
    spec = registry.get(game_type)
    seats = random.Random(seed).randint(spec.min_seats, min(spec.max_seats, 4))
    rows = run(_moment(stack_services, game_type, seats, moves, random.Random(seed)))
    gid = rows[0][0]
    states = states_by_version(stack_services.kafka, stack_services.prefix, game_type, gid)
    for _, seat, version, payload, allowed in rows:
        state = states[max(v for v in states if v <= version)]
        hidden = hidden_from(state, seat) - allowed
        text_leaks = {card for card in hidden if card in json.dumps(payload)} if isinstance(payload, dict) and "code" in payload else set()
        found = leaks(payload, hidden) | text_leaks
        assert not found, f"seat {seat} at v{version} was shown {sorted(found)[:5]} in {str(payload)[:300]}"
