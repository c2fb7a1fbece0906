"""Clients of the gateway, over HTTP (+WebSocket) and over gRPC, with one interface:
used by the bots driver, `croupier play`, the demos and the tests.

Each update is an `Update(version, view, actions)`. A refusal raises `GatewayError` with the
HTTP status it maps to (the gRPC client maps the status code back), its code and message.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import grpc
import httpx

from croupier.engine.codec import canonical_json, loads
from croupier.rules.errors import REJECTION_METADATA
from croupier.tagged import StreamEnded, TaggedCall
from croupier.v1 import events_pb2, gateway_pb2, gateway_pb2_grpc

GRPC_TO_HTTP = {
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.FAILED_PRECONDITION: 422,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 503,
    # A call the server shed before any handler ran (see croupier.runtime): retry it. This
    # client never cancels a unary call itself except by cancelling the task awaiting it.
    grpc.StatusCode.CANCELLED: 503,
}
RETRYABLE_STATUS = (429, 503)
# A join or create that answers 503 may still have been done (the rules service committed it,
# then the answer was lost, or Redis failed before the seat's token was recorded): the clients
# send each one with a command id and try again with the same id, which the gateway answers
# with the same table or the same seat (and a token), never a second one. Without that, a
# seat joined that way would be held by nobody who has its token.
CALL_TRIES = 6
CALL_BACKOFF_S = (0.25, 0.5, 1.0, 2.0, 2.0)


async def _retrying(call, retry: bool):
    """call() again (the same request, the same command id) while it answers 503."""
    for attempt in range(CALL_TRIES if retry else 1):
        try:
            return await call()
        except GatewayError as exc:
            if exc.status != 503 or attempt == (CALL_TRIES if retry else 1) - 1:
                raise
            await asyncio.sleep(CALL_BACKOFF_S[min(attempt, len(CALL_BACKOFF_S) - 1)])
    raise AssertionError("unreachable")


def _command_id(given: str | None) -> str:
    import uuid

    return given or uuid.uuid4().hex


class GatewayError(Exception):
    """A refusal. `retry_after_s`: how long the gateway said to wait (Retry-After, the
    `retry-after` metadata, a Play answer's retry_after_ms), None if it did not; and for a
    version_conflict, `current_version`: the game's version now."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None, *,
                 retry_after_s: float | None = None, current_version: int | None = None):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.retry_after_s = retry_after_s
        self.current_version = current_version


def _number(value: Any, kind: type = float) -> Any:
    """A number the gateway sent as text (a header, metadata), or None."""
    try:
        return kind(value)
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class Update:
    version: int
    view: dict[str, Any]
    actions: list[dict[str, Any]]

    @property
    def over(self) -> bool:
        return self.view.get("status") == "over"


class HttpGateway:
    """The HTTP+JSON API, and the WebSocket stream."""

    def __init__(self, base_url: str, *, timeout_s: float = 30.0, operator_token: str | None = None,
                 max_connections: int = 100):
        self.base_url = base_url.rstrip("/")
        # httpx keeps at most max_connections open; more requests at once wait for one.
        self.http = httpx.AsyncClient(base_url=self.base_url, timeout=timeout_s,
                                      limits=httpx.Limits(max_connections=max_connections,
                                                          max_keepalive_connections=max_connections))
        self.operator_token = operator_token

    async def close(self) -> None:
        await self.http.aclose()

    async def request(self, method: str, path: str, *, token: str | None = None, json_body: Any = None,
                      params: Mapping[str, Any] | None = None) -> Any:
        headers = {"authorization": f"Bearer {token}"} if token else {}
        response = await self.http.request(method, path, json=json_body, params=params, headers=headers)
        if response.status_code >= 400:
            retry_after = _number(response.headers.get("retry-after"))
            try:
                err = response.json()["error"]
                current = err.get("current_version")
                raise GatewayError(response.status_code, err.get("code", ""), err.get("message", ""), err.get("field"),
                                   retry_after_s=retry_after,
                                   current_version=current if isinstance(current, int) else None)
            except (ValueError, KeyError, TypeError, AttributeError):
                raise GatewayError(response.status_code, "http_error", response.text[:200],
                                   retry_after_s=retry_after) from None
        return response.json()

    async def games(self) -> list[dict]:
        return (await self.request("GET", "/v1/games"))["games"]

    async def create_table(self, game_type: str, seats: int | None = None, options: Mapping[str, Any] | None = None,
                           command_id: str | None = None, *, retry: bool = True) -> dict:
        body: dict[str, Any] = {"game_type": game_type, "options": dict(options or {}),
                                "command_id": _command_id(command_id)}
        if seats is not None:
            body["seats"] = seats
        return await _retrying(lambda: self.request("POST", "/v1/tables", json_body=body), retry)

    async def list_tables(self, game_type: str | None = None, status: str = "open", limit: int = 50) -> list[dict]:
        params: dict[str, Any] = {"status": status, "limit": limit}
        if game_type:
            params["game_type"] = game_type
        return (await self.request("GET", "/v1/tables", params=params))["tables"]

    async def table(self, game_id: str) -> dict:
        return await self.request("GET", f"/v1/tables/{game_id}")

    async def join(self, game_id: str, seat: int, player: str = "", bot: str | None = None,
                   entropy: str = "", command_id: str | None = None, *, retry: bool = True) -> dict:
        body = {"player": player, "entropy": entropy, "command_id": _command_id(command_id)}
        if bot:
            body["bot"] = bot
        return await _retrying(lambda: self.request("POST", f"/v1/tables/{game_id}/seats/{seat}", json_body=body), retry)

    async def leave(self, game_id: str, seat: int, token: str, command_id: str | None = None, *,
                    retry: bool = True) -> dict:
        """Leave the seat (before the game starts). Sent with a command id and tried again with
        it on a 503: a retry of a leave that was done answers as the first did ("duplicate")."""
        body = {"command_id": _command_id(command_id)}
        return await _retrying(lambda: self.request("DELETE", f"/v1/tables/{game_id}/seats/{seat}", token=token,
                                                    json_body=body), retry)

    async def renew(self, game_id: str, seat: int, token: str) -> dict:
        """A new token for the seat, a full lifetime from now (the old one holds it too)."""
        return await self.request("POST", f"/v1/tables/{game_id}/seats/{seat}/renew", token=token)

    async def view(self, game_id: str, token: str | None = None, *, min_version: int = 0,
                   timeout_s: float = 0) -> dict:
        params = {"min_version": min_version, "timeout_s": timeout_s}
        return await self.request("GET", f"/v1/tables/{game_id}/view", token=token, params=params)

    async def actions(self, game_id: str, token: str) -> dict:
        return await self.request("GET", f"/v1/tables/{game_id}/actions", token=token)

    async def submit(self, game_id: str, token: str, command_id: str, action: Mapping[str, Any], *,
                     expected_version: int | None = None, wait: bool = True) -> dict:
        body: dict[str, Any] = {"command_id": command_id, "action": dict(action)}
        if expected_version is not None:
            body["expected_version"] = expected_version
        return await self.request("POST", f"/v1/tables/{game_id}/commands", token=token, json_body=body,
                                  params={"wait": "true" if wait else "false"})

    def stream_url(self, game_id: str, from_version: int, token: str | None) -> str:
        url = self.base_url.replace("http://", "ws://", 1).replace("https://", "wss://", 1)
        url = f"{url}/v1/tables/{game_id}/stream?from_version={from_version}"
        if token:
            url += f"&token={token}"
        return url

    async def updates(self, game_id: str, token: str | None = None, from_version: int = 0) -> AsyncIterator[Update]:
        """The stream; ends after the game's final view. Raises GatewayError on a refusal and
        ConnectionError if the connection drops (resume with the last version seen)."""
        from websockets.asyncio.client import connect
        from websockets.exceptions import ConnectionClosed

        async with connect(self.stream_url(game_id, from_version, token), open_timeout=10,
                           max_size=16 * 1024 * 1024) as ws:
            if token is None:
                await ws.send("{}")  # a spectator: no need to wait for the token grace period
            while True:
                try:
                    text = await ws.recv()
                except ConnectionClosed as closed:
                    code = closed.rcvd.code if closed.rcvd else 1006
                    if code == 1000:
                        return
                    raise ConnectionError(f"stream closed with {code}") from None
                data = loads(text)
                if "error" in data:
                    err = data["error"]
                    status = {"malformed": 400, "unauthenticated": 401, "forbidden": 403, "not_found": 404,
                              "rate_limited": 429}.get(err.get("kind"), 503)
                    raise GatewayError(status, err.get("code", ""), err.get("message", ""), err.get("field"),
                                       retry_after_s=_number(err.get("retry_after_s")))
                yield Update(data["version"], data["view"], data["actions"])


STATUS_BY_NUMBER = {code.value[0]: code for code in grpc.StatusCode}


def _as_update(item: gateway_pb2.StreamUpdatesResponse) -> Update:
    return Update(item.version, loads(item.view_json), [loads(a) for a in item.actions_json])


class GrpcGateway:
    """The same over gRPC (croupier.v1.GatewayService). A seat's updates come on a Play
    stream, and while it is open the seat's moves go on it too (`play_streams=False`: the
    separate StreamUpdates and SubmitCommand calls; a gateway without Play gets those)."""

    def __init__(self, address: str, *, timeout_s: float = 30.0, play_streams: bool = True):
        self.address = address
        self.timeout_s = timeout_s
        self.channel = grpc.aio.insecure_channel(address)
        self.stub = gateway_pb2_grpc.GatewayServiceStub(self.channel)
        self.play_streams = play_streams
        self._sessions: dict[tuple[str, str], TaggedCall] = {}  # (game, seat token) -> its open Play

    async def close(self) -> None:
        await self.channel.close()

    @staticmethod
    def _error(error: grpc.aio.AioRpcError) -> GatewayError:
        code, message = error.code().name.lower(), error.details() or ""
        retry_after = current = None
        for key, value in error.trailing_metadata() or ():
            if key == REJECTION_METADATA:
                rej = events_pb2.Rejection.FromString(value)
                code, message = rej.code, rej.message
            elif key == "retry-after":
                retry_after = _number(value)
            elif key == "current-version":
                current = _number(value, int)
        return GatewayError(GRPC_TO_HTTP.get(error.code(), 500), code, message, retry_after_s=retry_after,
                            current_version=current)

    def _stream_error(self, error: grpc.aio.AioRpcError) -> Exception:
        """A stream's end: dropped (reconnect and resume) or refused (a GatewayError)."""
        if error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
            return ConnectionError(f"stream ended: {error.code().name}")
        return self._error(error)

    async def _call(self, method: str, request: Any, token: str | None = None, timeout_s: float | None = None) -> Any:
        metadata = (("authorization", f"Bearer {token}"),) if token else ()
        try:
            return await getattr(self.stub, method)(request, metadata=metadata, timeout=timeout_s or self.timeout_s)
        except grpc.aio.AioRpcError as error:
            raise self._error(error) from None

    async def games(self) -> list[dict]:
        response = await self._call("ListGames", gateway_pb2.ListGamesRequest())
        return [{"id": g.id, "name": g.name, "min_seats": g.min_seats, "max_seats": g.max_seats, "bots": list(g.bots)}
                for g in response.games]

    async def create_table(self, game_type: str, seats: int | None = None, options: Mapping[str, Any] | None = None,
                           command_id: str | None = None, *, retry: bool = True) -> dict:
        opts = {k: ("true" if v is True else "false" if v is False else str(v)) for k, v in (options or {}).items()}
        request = gateway_pb2.CreateTableRequest(
            game_type=game_type, seats=seats or 0, options=opts, command_id=_command_id(command_id))
        r = await _retrying(lambda: self._call("CreateTable", request), retry)
        return {"game_id": r.game_id, "game_type": r.game_type, "seats": r.seats, "seed_hash": r.seed_hash,
                "version": r.version}

    async def table(self, game_id: str) -> dict:
        t = (await self._call("GetTable", gateway_pb2.GetTableRequest(game_id=game_id))).table
        return {"game_id": t.game_id, "game_type": t.game_type, "version": t.version, "seats": t.seats,
                "free_seats": t.free_seats, "status": gateway_pb2.TableStatus.Name(t.status).split("_")[-1].lower(),
                "players": json.loads(t.players_json or "[]"),
                "result": json.loads(t.result_json) if t.result_json else None}

    async def join(self, game_id: str, seat: int, player: str = "", bot: str | None = None,
                   entropy: str = "", command_id: str | None = None, *, retry: bool = True) -> dict:
        request = gateway_pb2.JoinTableRequest(game_id=game_id, seat=seat, player=player, bot=bot or "",
                                               entropy=entropy, command_id=_command_id(command_id))
        r = await _retrying(lambda: self._call("JoinTable", request), retry)
        return {"game_id": r.game_id, "seat": r.seat, "token": r.token, "expires_at": r.expires_at,
                "version": r.version}

    async def leave(self, game_id: str, seat: int, token: str, command_id: str | None = None, *,
                    retry: bool = True) -> dict:
        request = gateway_pb2.LeaveTableRequest(game_id=game_id, seat=seat, command_id=_command_id(command_id))
        r = await _retrying(lambda: self._call("LeaveTable", request, token), retry)
        return {"game_id": r.game_id, "seat": r.seat, "version": r.version}

    async def renew(self, game_id: str, seat: int, token: str) -> dict:
        r = await self._call("RenewSeat", gateway_pb2.RenewSeatRequest(game_id=game_id, seat=seat), token)
        return {"game_id": r.game_id, "seat": r.seat, "token": r.token, "expires_at": r.expires_at}

    async def view(self, game_id: str, token: str | None = None, *, min_version: int = 0,
                   timeout_s: float = 0) -> dict:
        r = await self._call("GetView", gateway_pb2.GetViewRequest(
            game_id=game_id, min_version=min_version, timeout_ms=int(timeout_s * 1000)), token,
            timeout_s=self.timeout_s + timeout_s)
        return {"version": r.version, "seat": r.seat if r.HasField("seat") else None, "view": json.loads(r.view_json)}

    async def actions(self, game_id: str, token: str) -> dict:
        r = await self._call("ListActions", gateway_pb2.ListActionsRequest(game_id=game_id), token)
        return {"version": r.version, "seat": r.seat, "actions": [json.loads(a) for a in r.actions_json]}

    async def submit(self, game_id: str, token: str, command_id: str, action: Mapping[str, Any], *,
                     expected_version: int | None = None, wait: bool = True) -> dict:
        request = gateway_pb2.SubmitCommandRequest(game_id=game_id, command_id=command_id,
                                                   action_json=canonical_json(dict(action)), no_wait=not wait)
        if expected_version is not None:
            request.expected_version = expected_version
        session = self._sessions.get((game_id, token))
        answer = None
        if session is not None and session.open:
            try:
                answer = (await session.ask(lambda tag: gateway_pb2.PlayRequest(
                    move=gateway_pb2.PlayMove(tag=tag, command=request)), self.timeout_s)).answer
            except TimeoutError:
                raise GatewayError(503, "deadline_exceeded", "the gateway did not answer the move in time") from None
            except StreamEnded:
                pass  # the stream ended first: the move goes unary below, with the same command_id
        if answer is not None and answer.HasField("rejection"):
            status = STATUS_BY_NUMBER.get(answer.status_code, grpc.StatusCode.UNKNOWN)
            raise GatewayError(GRPC_TO_HTTP.get(status, 500), answer.rejection.code, answer.rejection.message,
                               retry_after_s=answer.retry_after_ms / 1000 if answer.retry_after_ms else None,
                               current_version=answer.current_version if answer.HasField("current_version") else None)
        r = answer.response if answer is not None else await self._call("SubmitCommand", request, token)
        return {"game_id": r.game_id, "seat": r.seat, "version": r.version, "first_seq": r.first_seq,
                "last_seq": r.last_seq, "duplicate": r.duplicate}

    async def updates(self, game_id: str, token: str | None = None, from_version: int = 0) -> AsyncIterator[Update]:
        metadata = (("authorization", f"Bearer {token}"),) if token else ()
        if token and self.play_streams:
            async for update in self._play(game_id, token, from_version, metadata):
                if update is None:  # the gateway predates Play: the separate calls from now on
                    break
                yield update
            else:
                return
        call = self.stub.StreamUpdates(gateway_pb2.StreamUpdatesRequest(game_id=game_id, from_version=from_version),
                                       metadata=metadata)
        try:
            async for item in call:
                yield _as_update(item)
        except grpc.aio.AioRpcError as error:
            raise self._stream_error(error) from None
        finally:
            call.cancel()

    async def _play(self, game_id: str, token: str, from_version: int, metadata: Any) -> AsyncIterator[Update | None]:
        updates: asyncio.Queue = asyncio.Queue()
        session = TaggedCall(self.stub.Play(metadata=metadata),
                             lambda r: r.answer.tag if r.WhichOneof("kind") == "answer" else None,
                             on_other=lambda r: updates.put_nowait(r.update),
                             on_end=lambda error: updates.put_nowait(error or grpc.aio.EOF))
        session.send(gateway_pb2.PlayRequest(start=gateway_pb2.StreamUpdatesRequest(game_id=game_id,
                                                                                  from_version=from_version)))
        key = (game_id, token)
        self._sessions[key] = session
        received = False
        try:
            while (item := await updates.get()) is not grpc.aio.EOF:
                if isinstance(item, grpc.aio.AioRpcError):
                    if item.code() == grpc.StatusCode.UNIMPLEMENTED:
                        self.play_streams = False
                        yield None
                        return
                    if item.code() == grpc.StatusCode.INTERNAL and not received:
                        # grpc.aio reports INTERNAL in place of the server's status when the
                        # opening write loses a race with it (grpc/grpc#36066): whatever the
                        # real status, StreamUpdates gives it again, or this stream's updates.
                        yield None
                        return
                    raise self._stream_error(item)
                received = True
                yield _as_update(item)
        finally:
            if self._sessions.get(key) is session:
                del self._sessions[key]
            await session.close()


def connect(url: str, **kwargs: Any) -> HttpGateway | GrpcGateway:
    """http(s)://host:port for HTTP, grpc://host:port for gRPC."""
    if url.startswith("grpc://"):
        return GrpcGateway(url[len("grpc://"):], **kwargs)
    return HttpGateway(url, **kwargs)


async def sleep_backoff(attempt: int) -> None:
    await asyncio.sleep(min(0.05 * 2**attempt, 1.0))
