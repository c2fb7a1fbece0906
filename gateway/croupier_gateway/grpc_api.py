"""The gRPC face of the gateway: croupier.v1.GatewayService (proto/croupier/v1/gateway.proto).

Same core, same checks, same errors as HTTP: a refusal aborts with the status its kind maps
to and a croupier.v1.Rejection in the trailing metadata `croupier-rejection-bin`. The
handlers are registered by hand rather than through the generated helper so that a request
whose bytes do not parse is an INVALID_ARGUMENT, like any other bad input, and not the
INTERNAL that grpc answers by default.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import structlog
from google.protobuf.message import DecodeError
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection
from redis.exceptions import RedisError

from croupier.engine.codec import canonical_json, loads
from croupier.rules.errors import KIND_TO_PROTO, REJECTION_METADATA
from croupier.runtime import GRPC_SERVER_OPTIONS, listen
from croupier.tagged import answer_each
from croupier.v1 import events_pb2, gateway_pb2
from croupier_gateway.core import Gateway
from croupier_gateway.errors import ApiError, bad_request, store_unavailable
from croupier_gateway.validation import bearer_token

log = structlog.get_logger("croupier.gateway")

SERVICE = gateway_pb2.DESCRIPTOR.services_by_name["GatewayService"]
PLAY_MOVES_IN_FLIGHT = 32  # a Play stream's moves being answered or waiting to be sent
# How long a Play call may wait for its `start`. Not the WebSocket's short token wait (a
# WebSocket without a token goes on as a spectator; a Play without start is refused), which
# a client on a busy machine missed: 10 s bounds an idle call all the same.
PLAY_START_WAIT_S = 10.0
STATUS_TO_PROTO = {
    "open": gateway_pb2.TABLE_STATUS_OPEN,
    "running": gateway_pb2.TABLE_STATUS_RUNNING,
    "over": gateway_pb2.TABLE_STATUS_OVER,
}
PROTO_TO_STATUS = {v: k for k, v in STATUS_TO_PROTO.items()}


def _game_option(o: dict[str, Any]) -> gateway_pb2.GameOption:
    """An option as GET /v1/games lists it, as gRPC's GameOption (its bounds when it has them)."""
    bounds = {k: o[k] for k in ("minimum", "maximum") if o.get(k) is not None}
    return gateway_pb2.GameOption(name=o["name"], doc=o["doc"], default_json=json.dumps(o["default"]),
                                  choices_json=json.dumps(o["choices"]) if o["choices"] else "", **bounds)


class _Unparsable:
    """Stands for a request whose bytes are not the method's message."""


def _safe_deserializer(cls: type) -> Callable[[bytes], Any]:
    def parse(data: bytes) -> Any:
        try:
            return cls.FromString(data)
        except (DecodeError, ValueError, TypeError, RuntimeError):
            return _Unparsable()

    return parse


def _token(context: grpc.aio.ServicerContext) -> str | None:
    """The call's token (`authorization: Bearer <token>` metadata); another form is
    UNAUTHENTICATED (validation.bearer_token), not a call without a token."""
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str):
            return bearer_token(value)
    return None


def _peer(context: grpc.aio.ServicerContext, trusted: str = "") -> str:
    """The client's address: the connection's, or, when that is a trusted proxy
    (CROUPIER_GATEWAY_FORWARDED_ALLOW_IPS), the last address its X-Forwarded-For names that
    is not a trusted proxy too (as uvicorn reads it for HTTP)."""
    peer = context.peer() or ""
    # "ipv4:127.0.0.1:5555" / "ipv6:[::1]:5555"
    host = peer.split(":", 1)[1] if ":" in peer else peer
    host = host.rsplit(":", 1)[0].strip("[]")
    proxies = {p.strip() for p in trusted.split(",") if p.strip()}
    if proxies and ("*" in proxies or host in proxies):
        forwarded = next((v for k, v in context.invocation_metadata() or () if k == "x-forwarded-for"), "")
        for hop in reversed([h.strip() for h in str(forwarded).split(",") if h.strip()]):
            if "*" not in proxies and hop in proxies:
                continue
            return hop
    return host


def table_message(row: dict[str, Any]) -> gateway_pb2.Table:
    return gateway_pb2.Table(
        game_id=row["game_id"], game_type=row["game_type"],
        status=STATUS_TO_PROTO.get(row["status"], gateway_pb2.TABLE_STATUS_UNSPECIFIED),
        version=row["version"], seats=row["seats"], free_seats=row["free_seats"],
        players_json=canonical_json(row["players"]), options_json=canonical_json(row["options"]),
        seed_hash=row["seed_hash"], created_ms=row["created"], updated_ms=row["updated"],
        result_json=canonical_json(row["result"]) if row.get("result") is not None else "",
        end_reason=row.get("end_reason") or "",
    )


class GatewayServicer:
    def __init__(self, gateway: Gateway):
        self.gw = gateway

    async def ListGames(self, request, context, token):

        games = []
        for g in self.gw.games():
            games.append(gateway_pb2.GameInfo(
                id=g["id"], name=g["name"], summary=g["summary"], min_seats=g["min_seats"], max_seats=g["max_seats"],
                rules_version=g["rules_version"], bots=g["bots"], cooperative=g["cooperative"],
                options=[_game_option(o) for o in g["options"]],
                table_options=[_game_option(o) for o in g["table_options"]],
            ))
        return gateway_pb2.ListGamesResponse(games=games)

    async def CreateTable(self, request, context, token):
        out = await self.gw.create_table(request.game_type, int(request.seats) or None, dict(request.options),
                                         request.command_id or None)
        return gateway_pb2.CreateTableResponse(**out)

    async def ListTables(self, request, context, token):
        if request.status not in (0, *PROTO_TO_STATUS):
            raise bad_request("invalid_status", "status is OPEN, RUNNING or OVER", "status")
        out = await self.gw.list_tables(request.game_type or None, PROTO_TO_STATUS.get(request.status, "open"),
                                        int(request.limit) or 50, int(request.offset))
        return gateway_pb2.ListTablesResponse(tables=[table_message(t) for t in out["tables"]])

    async def GetTable(self, request, context, token):
        return gateway_pb2.GetTableResponse(table=table_message(await self.gw.get_table(request.game_id)))

    async def JoinTable(self, request, context, token):
        out = await self.gw.join(request.game_id, request.seat, request.player, request.bot or None, request.entropy,
                                 request.command_id or None)
        return gateway_pb2.JoinTableResponse(**out)

    async def LeaveTable(self, request, context, token):
        out = await self.gw.leave(token, request.game_id, request.seat, request.command_id or None)
        # LeaveTableResponse has no `duplicate`: a retry of a leave gets the first one's fields.
        return gateway_pb2.LeaveTableResponse(game_id=out["game_id"], seat=out["seat"], version=out["version"])

    async def RenewSeat(self, request, context, token):
        return gateway_pb2.RenewSeatResponse(**await self.gw.renew_seat(token, request.game_id, request.seat))

    async def GetView(self, request, context, token):
        claims = await self.gw.seat_claims(token, request.game_id, required=False)
        snap = await self.gw.snapshot(request.game_id, claims, min_version=int(request.min_version),
                                      wait_s=min(int(request.timeout_ms), 30_000) / 1000,
                                      address=_peer(context, self.gw.s.forwarded_allow_ips))
        response = gateway_pb2.GetViewResponse(version=snap.version, view_json=snap.view)
        if claims is not None:
            response.seat = claims.seat
        return response

    async def ListActions(self, request, context, token):
        claims = await self.gw.seat_claims(token, request.game_id)
        snap = await self.gw.snapshot(request.game_id, claims)
        return gateway_pb2.ListActionsResponse(version=snap.version, seat=claims.seat,
                                               actions_json=[canonical_json(a) for a in loads(snap.actions)])

    async def SubmitCommand(self, request, context, token):
        return await self.submit(request, token)

    async def submit(self, request, token) -> gateway_pb2.SubmitCommandResponse:
        """A move (SubmitCommand, or a move on Play); raises ApiError."""
        if len(request.action_json) > self.gw.s.max_body_bytes:
            raise ApiError("too_large", "action_too_large", f"action_json is at most {self.gw.s.max_body_bytes} bytes",
                           field="action_json")
        try:
            action = json.loads(request.action_json)
        except (ValueError, RecursionError):
            raise bad_request("invalid_action", "action_json is not JSON", "action_json") from None
        expected = request.expected_version if request.HasField("expected_version") else None
        if expected is not None and expected >= 2**63:
            raise bad_request("invalid_expected_version", "expected_version is too large", "expected_version")
        out = await self.gw.submit(token, request.game_id, request.command_id, expected, action,
                                   wait=not request.no_wait)
        return gateway_pb2.SubmitCommandResponse(**out)

    async def StreamUpdates(self, request, context, token) -> AsyncIterator[gateway_pb2.StreamUpdatesResponse]:
        claims = await self.gw.seat_claims(token, request.game_id, required=False)
        with self.gw.stream_slot(_peer(context, self.gw.s.forwarded_allow_ips)):
            async for update in self._updates(request.game_id, claims, int(request.from_version)):
                yield update

    async def _updates(self, game_id: str, claims, from_version: int) -> AsyncIterator[gateway_pb2.StreamUpdatesResponse]:
        """The caller's view after every change (StreamUpdates, and Play's updates). A
        RedisError goes up to the stream's handler, which answers store_unavailable."""
        async for snap in self.gw.updates(game_id, claims, from_version):
            self.gw.metrics.stream_messages.inc()
            yield _update(snap)

    async def Play(self, requests, context, token) -> AsyncIterator[gateway_pb2.PlayResponse]:
        """StreamUpdates and SubmitCommand on one stream (gateway.proto): the updates and the
        moves' answers (croupier.tagged.answer_each, a Task per move) go out as they come."""
        # Counted from the moment it opens, and its `start` waited for PLAY_START_WAIT_S: a
        # client that opens Play and sends nothing holds no slot for good.
        with self.gw.stream_slot(_peer(context, self.gw.s.forwarded_allow_ips)):
            async for item in self._play(requests, context, token):
                yield item

    async def _play(self, requests, context, token) -> AsyncIterator[gateway_pb2.PlayResponse]:
        try:
            first = await asyncio.wait_for(anext(aiter(requests), None), PLAY_START_WAIT_S)
        except TimeoutError:
            raise bad_request("play_start_first", f"Play's first request, `start`, did not come within "
                              f"{PLAY_START_WAIT_S:g} s", "start") from None
        if first is None or isinstance(first, _Unparsable) or first.WhichOneof("kind") != "start":
            raise bad_request("play_start_first", "the first request on Play is `start`", "start")
        game_id, from_version = first.start.game_id, int(first.start.from_version)
        claims = await self.gw.seat_claims(token, game_id, required=False)
        peer = _peer(context, self.gw.s.forwarded_allow_ips)
        moves_ok = self.gw.metrics.grpc.labels("PlayMove", "OK")
        move_latency = self.gw.metrics.grpc_latency.labels("PlayMove")

        def accept(message) -> None:
            if isinstance(message, _Unparsable) or message.WhichOneof("kind") != "move":
                raise bad_request("play_moves_only", "after `start`, Play takes only `move` requests", "move")

        async def move(message) -> gateway_pb2.PlayResponse:
            started = time.perf_counter()
            answer = gateway_pb2.PlayAnswer(tag=message.move.tag)
            try:
                command = message.move.command
                if command.game_id and command.game_id != game_id:
                    raise bad_request("wrong_game", f"this stream plays {game_id}", "game_id")
                command.game_id = game_id
                self.gw.check_rate(self.gw.rate_key(token, peer))
                try:
                    answer.response.CopyFrom(await self.submit(command, token))
                except RedisError:
                    raise store_unavailable() from None
                moves_ok.inc()
            except ApiError as exc:
                answer.rejection.CopyFrom(_rejection(exc))
                answer.status_code = exc.grpc_status.value[0]
                # What SubmitCommand's trailing metadata would have said (_rejection_metadata).
                if exc.retry_after_ms is not None:
                    answer.retry_after_ms = min(exc.retry_after_ms, 2**32 - 1)
                if exc.current_version is not None:
                    answer.current_version = exc.current_version
                self.gw.metrics.grpc.labels("PlayMove", exc.grpc_status.name).inc()
            move_latency.observe(time.perf_counter() - started)
            return gateway_pb2.PlayResponse(answer=answer)

        updates = (gateway_pb2.PlayResponse(update=u) async for u in self._updates(game_id, claims, from_version))
        # At most PLAY_MOVES_IN_FLIGHT moves answered or waiting to be sent: a client that
        # sends and does not read is not read from either.
        async for item in answer_each(requests, move, accept=accept, also=updates, max_in_flight=PLAY_MOVES_IN_FLIGHT):
            yield item


def _update(snap: Any) -> gateway_pb2.StreamUpdatesResponse:
    return gateway_pb2.StreamUpdatesResponse(version=snap.version, view_json=snap.view,
                                             actions_json=[canonical_json(a) for a in loads(snap.actions)])


def _rejection(exc: ApiError) -> events_pb2.Rejection:
    return events_pb2.Rejection(kind=KIND_TO_PROTO.get(exc.kind, events_pb2.REJECTION_KIND_UNSPECIFIED),
                                code=exc.code, message=exc.message, current_version=exc.current_version)


def _rejection_metadata(exc: ApiError) -> tuple[tuple[str, Any], ...]:
    """The Rejection, and for a refusal that says when to retry (rate limited, stream caps,
    a store or partition away) `retry-after` in whole seconds, as HTTP's header; for a
    version_conflict, `current-version`: the game's version now (the HTTP body's
    current_version)."""
    metadata: tuple[tuple[str, Any], ...] = ((REJECTION_METADATA, _rejection(exc).SerializeToString()),)
    if exc.retry_after is not None:
        metadata += (("retry-after", str(exc.retry_after)),)
    if exc.current_version is not None:
        metadata += (("current-version", str(exc.current_version)),)
    return metadata


def _unary(gw: Gateway, name: str, fn: Callable) -> Callable:
    ok_count = gw.metrics.grpc.labels(name, "OK")
    latency = gw.metrics.grpc_latency.labels(name)

    async def handler(request, context):
        started = time.perf_counter()
        code = "OK"
        try:
            if isinstance(request, _Unparsable):
                raise bad_request("unparsable_request", f"the request is not a {name}Request message", "request")
            token = _token(context)
            gw.check_rate(gw.rate_key(token, _peer(context, gw.s.forwarded_allow_ips)))
            try:
                return await fn(request, context, token)
            except RedisError:
                raise store_unavailable() from None
        except ApiError as exc:
            code = exc.grpc_status.name
            context.set_trailing_metadata(_rejection_metadata(exc))
            await context.abort(exc.grpc_status, f"{exc.code}: {exc.message}")
        finally:
            (ok_count if code == "OK" else gw.metrics.grpc.labels(name, code)).inc()
            latency.observe(time.perf_counter() - started)

    return handler


def _streaming(gw: Gateway, name: str, fn: Callable) -> Callable:
    async def handler(request, context):
        code = "OK"
        try:
            if isinstance(request, _Unparsable):
                raise bad_request("unparsable_request", f"the request is not a {name}Request message", "request")
            token = _token(context)
            gw.check_rate(gw.rate_key(token, _peer(context, gw.s.forwarded_allow_ips)))
            try:
                async for item in fn(request, context, token):
                    yield item
            except RedisError:
                raise store_unavailable() from None
        except ApiError as exc:
            code = exc.grpc_status.name
            context.set_trailing_metadata(_rejection_metadata(exc))
            await context.abort(exc.grpc_status, f"{exc.code}: {exc.message}")
        finally:
            gw.metrics.grpc.labels(name, code).inc()

    return handler


def generic_handler(gw: Gateway) -> grpc.GenericRpcHandler:
    servicer = GatewayServicer(gw)
    handlers = {}
    for method in SERVICE.methods:
        request_cls = getattr(gateway_pb2, method.input_type.name)
        response_cls = getattr(gateway_pb2, method.output_type.name)
        fn = getattr(servicer, method.name)
        if method.client_streaming:
            handlers[method.name] = grpc.stream_stream_rpc_method_handler(
                _streaming(gw, method.name, fn), request_deserializer=_safe_deserializer(request_cls),
                response_serializer=response_cls.SerializeToString)
        elif method.server_streaming:
            handlers[method.name] = grpc.unary_stream_rpc_method_handler(
                _streaming(gw, method.name, fn), request_deserializer=_safe_deserializer(request_cls),
                response_serializer=response_cls.SerializeToString)
        else:
            handlers[method.name] = grpc.unary_unary_rpc_method_handler(
                _unary(gw, method.name, fn), request_deserializer=_safe_deserializer(request_cls),
                response_serializer=response_cls.SerializeToString)
    return grpc.method_handlers_generic_handler(SERVICE.full_name, handlers)


async def start_server(gw: Gateway, host: str, port: int) -> tuple[grpc.aio.Server, int]:
    """Start the gateway's gRPC server (with health and reflection); returns it and its port."""
    limit = max(gw.s.max_body_bytes * 2, 64 * 1024)
    server = grpc.aio.server(options=[("grpc.max_receive_message_length", limit), *GRPC_SERVER_OPTIONS])
    server.add_generic_rpc_handlers((generic_handler(gw),))
    health = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    reflection.enable_server_reflection(
        (SERVICE.full_name, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME),
        server)
    bound = listen(server, f"{host}:{port}")  # ListenError: one clear line, not grpc's own
    await server.start()
    await health.set("", health_pb2.HealthCheckResponse.SERVING)
    await health.set(SERVICE.full_name, health_pb2.HealthCheckResponse.SERVING)
    return server, bound
