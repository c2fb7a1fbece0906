"""A command_id names one command: sent again with the same move it is a retry (the first
answer, nothing appended); sent by the same seat with another move it is refused with 409
`command_id_reused`, over HTTP and over gRPC (the gateway gives each seat ids of its own), so a client that reuses ids by mistake hears
so instead of being told that a move it never made was made."""

from __future__ import annotations

import pytest

from croupier_gateway.bots import create_and_seat
from croupier_gateway.client import GatewayError, GrpcGateway, HttpGateway
from e2e_helpers import read_game_log, run


@pytest.mark.parametrize("transport", ["http", "grpc"])
def test_a_command_id_sent_with_another_move_is_refused(stack_services, transport):
    game = "expeditions" if "expeditions" in stack_services.games else stack_services.games[0]

    async def to_act(client, game_id, tokens):
        """The seat to act, its token and its legal actions."""
        for seat, token in enumerate(tokens):
            actions = await client.actions(game_id, token)
            if actions["actions"]:
                return seat, token, actions["actions"]
        raise AssertionError("nobody may act")

    async def main():
        client = (HttpGateway(stack_services.http_url) if transport == "http"
                  else GrpcGateway(stack_services.grpc_address, timeout_s=60))
        try:
            game_id, tokens = await create_and_seat(client, game, ["random", "random"])
            seat, token, actions = await to_act(client, game_id, tokens)
            move, other = actions[0], actions[1]
            first = await client.submit(game_id, token, "move-1", move)
            again = await client.submit(game_id, token, "move-1", move)
            # The same seat, the same command_id, another of the moves it had.
            try:
                await client.submit(game_id, token, "move-1", other)
                refused = None
            except GatewayError as error:
                refused = error
            view = await client.view(game_id, token)
            return game_id, seat, first, again, refused, view["version"]
        finally:
            await client.close()

    game_id, seat, first, again, refused, version = run(main())
    assert not first["duplicate"] and again["duplicate"]
    assert again["version"] == first["version"]
    assert refused is not None and (refused.status, refused.code) == (409, "command_id_reused")
    # Nothing of the refused command is in the log: the game is where the first move left it.
    log = read_game_log(stack_services.kafka, stack_services.prefix, game, game_id)
    assert version == first["version"] == log[-1].seq
    assert [e.seq for e in log if e.command_id == f"s{seat}:move-1"] == list(range(first["first_seq"], first["last_seq"] + 1))
