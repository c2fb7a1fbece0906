"""A join's command_id is its secret retry key: the same join sent again (the same player and
bot, which every viewer of the table can read) gets the seat and a new token, and with it the
seat's hidden cards. Nothing stopped a client choosing an id anyone could guess ("join-1"),
and then anyone who guessed it took the seat. A join's command_id shorter than 16 characters
is now refused (400 / INVALID_ARGUMENT `command_id_too_short`) before any rules service sees
it; the ids the project's own clients make pass."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import grpc
import pytest
from test_gateway_http import bearer, create, error  # tests/gateway is on sys.path

from croupier.rules.errors import REJECTION_METADATA
from croupier.v1 import events_pb2, gateway_pb2, gateway_pb2_grpc
from croupier_gateway.client import GrpcGateway, _command_id
from croupier_gateway.core import Gateway
from croupier_gateway.errors import ApiError
from croupier_gateway.grpc_api import start_server
from croupier_gateway.validation import JOIN_COMMAND_ID_MIN

WEB_API = Path(__file__).resolve().parents[2] / "gateway" / "croupier_gateway" / "web" / "static" / "js" / "api.js"


def joins(router):
    return [request for method, request in router.calls if method == "JoinSeat"]


@pytest.mark.parametrize("cid", ["join-1", "a", "0123456789abcde"])
def test_a_guessable_join_command_id_is_refused_before_any_rules_service_sees_it(client, fake_stack, cid):
    router = fake_stack[3]
    gid = create(client)
    r = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "alice", "command_id": cid})
    err = error(r, 400)
    assert err["code"] == "command_id_too_short" and err["field"] == "command_id"
    assert str(JOIN_COMMAND_ID_MIN) in err["message"]
    assert joins(router) == []
    assert client.get(f"/v1/tables/{gid}").json()["free_seats"] == 2


def test_a_long_join_command_id_still_retries_to_the_same_seat(client):
    gid = create(client)
    cid = "0123456789abcdef"  # JOIN_COMMAND_ID_MIN characters exactly
    first = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "alice", "command_id": cid})
    assert first.status_code == 201, first.text
    again = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "alice", "command_id": cid})
    assert again.status_code == 201, again.text
    assert client.get(f"/v1/tables/{gid}/view", headers=bearer(again.json()["token"])).json()["seat"] == 0
    # A join without a command_id gets one of the gateway's own (secret) and the seat.
    assert client.post(f"/v1/tables/{gid}/seats/1", json={"player": "bob"}).status_code == 201


def test_a_guessable_join_command_id_is_invalid_argument_over_grpc(fake_stack):
    settings, aredis, _, router = fake_stack

    async def main():
        gw = Gateway(settings, aredis, router=router)
        server, port = await start_server(gw, "127.0.0.1", 0)
        client = GrpcGateway(f"127.0.0.1:{port}", timeout_s=10)
        try:
            gid = (await client.create_table("pebbles", 2))["game_id"]
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = gateway_pb2_grpc.GatewayServiceStub(channel)
                try:
                    await stub.JoinTable(gateway_pb2.JoinTableRequest(game_id=gid, seat=0, player="alice",
                                                                      command_id="join-1"))
                    refused = None
                except grpc.aio.AioRpcError as exc:
                    refused = exc
            joined = await client.join(gid, 0, player="alice")  # the client's own id
            return refused, joined
        finally:
            await client.close()
            await server.stop(0)
            await gw.close()

    refused, joined = asyncio.run(main())
    assert refused is not None, "a join with command_id join-1 was taken"
    assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT
    rejection = events_pb2.Rejection.FromString(dict(refused.trailing_metadata())[REJECTION_METADATA])
    assert rejection.code == "command_id_too_short"
    assert joined["seat"] == 0 and joined["token"]
    assert len(joins(router)) == 1  # the refused one never reached the rules service


def test_the_projects_clients_make_join_ids_long_enough():
    """croupier_gateway.client (the bots, croupier play, the demo, the load test: they send
    its ids, or a uuid4().hex of their own), and the web client's newId()."""
    assert len(_command_id(None)) >= JOIN_COMMAND_ID_MIN
    source = WEB_API.read_text()
    new_id = re.search(r"export function newId\(\) \{(.*?)\n\}", source, re.S).group(1)
    size = int(re.search(r"new Uint8Array\((\d+)\)", new_id).group(1))
    assert "padStart(2" in new_id and 2 * size >= JOIN_COMMAND_ID_MIN  # hex of `size` random bytes


# A floor on the id's length cannot tell a long guessable id from a random one. So a second
# line: a join sent again gets the seat only while no token of that join has been used. Its
# first caller then has the token (the answer was not lost), and whoever sends the join again
# is not retrying a lost answer: 409 join_in_use, and the holder keeps the seat. A guessed id
# takes a seat only in the moment between a join and its player's first request.


def test_a_join_whose_token_was_used_is_not_given_again(client, fake_stack):
    sredis = fake_stack[2]
    gw = client.app.state.holder["gw"]
    gid = create(client)
    cid = "alice-join-of-seat-0"  # long enough, and guessable all the same
    first = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "alice", "command_id": cid})
    assert first.status_code == 201, first.text
    # Its answer lost (the token never used): the retry gets the seat, with a new token.
    again = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "alice", "command_id": cid})
    assert again.status_code == 201, again.text
    token = again.json()["token"]
    assert client.get(f"/v1/tables/{gid}/view", headers=bearer(token)).json()["seat"] == 0  # used
    stolen = client.post(f"/v1/tables/{gid}/seats/0", json={"player": "alice", "command_id": cid})
    err = error(stolen, 409)
    assert err["code"] == "join_in_use" and "token" not in stolen.json()
    # the holder keeps the seat, and its token
    assert sredis.hget(gw.reads.seats_key(gid), "0").decode() == gw.signer.verify(token).jti
    assert client.get(f"/v1/tables/{gid}/actions", headers=bearer(token)).json()["seat"] == 0


def test_a_token_used_through_one_gateway_stops_the_joins_retry_through_another(fake_stack):
    settings, aredis, _, router = fake_stack

    async def main():
        a, b = Gateway(settings, aredis, router=router), Gateway(settings, aredis, router=router)
        try:
            gid = (await a.create_table("pebbles", 2, {}))["game_id"]
            cid = "bob-join-of-seat-1-xx"
            joined = await b.join(gid, 1, "bob", None, "e", cid)
            again = await b.join(gid, 1, "bob", None, "e", cid)  # not used yet: a retry
            await a.seat_claims(again["token"], gid)  # a request of its holder, through a
            try:
                await b.join(gid, 1, "bob", None, "e", cid)
            except ApiError as exc:
                return joined, exc
            return joined, None
        finally:
            await a.close()
            await b.close()

    joined, refused = asyncio.run(main())
    assert joined["token"] and refused is not None and refused.code == "join_in_use"
    assert (refused.http_status, refused.grpc_status) == (409, grpc.StatusCode.ABORTED)


def test_the_mark_of_a_used_join_expires_with_the_seat_holders(fake_stack):
    """Made where Redis had lost the holders' record, it is not a key that lives for ever."""
    settings, aredis, sredis, router = fake_stack

    async def main():
        gw = Gateway(settings, aredis, router=router)
        try:
            await gw.reads.mark_join_used("pebbles-0000000000000000", 0, 3, 60)
            return await gw.reads.join_used("pebbles-0000000000000000", 0, 3), \
                await gw.reads.join_used("pebbles-0000000000000000", 0, 4)
        finally:
            await gw.close()

    assert asyncio.run(main()) == (True, False)
    assert 0 < sredis.ttl(Gateway(settings, aredis, router=router).reads.seats_key("pebbles-0000000000000000")) <= 60
