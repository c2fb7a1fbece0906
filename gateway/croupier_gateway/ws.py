"""WebSocket /v1/tables/{game_id}/stream?from_version=N: one viewer's updates.

Each message is {"version": V, "view": {...}, "actions": [...]} for that viewer only (a
seat's own view and legal actions, or a spectator's view and []), read from Redis; V only
grows and no V comes twice, and every change after from_version is sent (see
Gateway.updates), so a client that reconnects with the last V it saw misses nothing and
gets nothing twice. The stream closes with 1000 after the game's final view. A from_version
above the version the game ended at is refused (4400 invalid_from_version); above a running
game's version, the stream waits for the versions above it.

The seat token comes as the `token` query parameter, an `Authorization: Bearer` header, or a
first message {"token": "..."} (send {} to watch as a spectator without waiting); with none
of them within CROUPIER_GATEWAY_WS_AUTH_WAIT_S the stream is a spectator's, and a token
message that comes after that is refused, 4400 `token_too_late` (open the stream again, the
token in its first message), rather than left unread while a seat is shown a spectator's view.
The stream reads nothing else: a message after the first (other than that same auth message
again) is refused, 4400 `unexpected_message`, rather than dropped without a word.
Refusals send {"error": {...}} and close with 4000 + the HTTP status (4400, 4401, 4404...);
a retryable one (4429, 4503) says when to come back in `retry_after_s`, as HTTP's Retry-After.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import structlog
from fastapi import FastAPI
from redis.exceptions import RedisError
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from croupier_gateway.errors import WS_CLOSE_BASE, ApiError, bad_request, store_unavailable
from croupier_gateway.reads import Snapshot
from croupier_gateway.validation import bearer_token, check_game_id

log = structlog.get_logger("croupier.gateway")


def message(snap: Snapshot) -> str:
    return f'{{"actions":{snap.actions},"version":{snap.version},"view":{snap.view}}}'


def register(app: FastAPI, gw: Any) -> None:
    @app.websocket("/v1/tables/{game_id}/stream")
    async def stream(websocket: WebSocket, game_id: str):
        await websocket.accept()
        g = gw()
        try:
            check_game_id(game_id)
            raw_from = websocket.query_params.get("from_version", "0")
            if not (raw_from.isascii() and raw_from.isdigit()) or len(raw_from) > 18:  # not "²"
                raise bad_request("invalid_from_version", "from_version is a non-negative integer", "from_version")
            from_version = int(raw_from)
            token = websocket.query_params.get("token") or _bearer(websocket)
            client = websocket.client.host if websocket.client else None
            g.check_rate(g.rate_key(token, client))
            waited = False  # no credentials came within the auth wait: a spectator's by default
            if token is None:
                token, waited = await _first_message_token(websocket, g.s.ws_auth_wait_s)
            claims = await g.seat_claims(token, game_id, required=False)
            with g.stream_slot(client):
                await _pump(websocket, g.updates(game_id, claims, from_version), g, token, waited)
            await _close(websocket, 1000)
        except (ApiError, RedisError) as exc:
            if isinstance(exc, RedisError):
                exc = store_unavailable()
            body = exc.body()
            if exc.retry_after is not None:
                # What HTTP says in Retry-After: a refusal sent after the upgrade has no header.
                body["error"]["retry_after_s"] = exc.retry_after
            with contextlib.suppress(Exception):
                await websocket.send_text(json.dumps(body))
            await _close(websocket, WS_CLOSE_BASE + exc.http_status)
        except WebSocketDisconnect:
            pass


def _bearer(websocket: WebSocket) -> str | None:
    return bearer_token(websocket.headers.get("authorization"))


AUTH_MESSAGE = 'the first message is JSON: {"token": "..."} or {}'
_NOT_AUTH = object()  # a message that is not {"token": ...} / {}


def _auth_token(text: str | None, *, strict: bool = False) -> Any:
    """The token an auth message ({"token": "..."}, or {} / {"token": null} for a spectator)
    names (None: a spectator's); _NOT_AUTH for any other message. `strict`: an object with
    other keys is not one (the first message has always been let carry them)."""
    if text is None:
        return _NOT_AUTH
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: "[[[[..." nested past the parser's limit
        return _NOT_AUTH
    if not isinstance(data, dict) or not isinstance(data.get("token"), (str, type(None))):
        return _NOT_AUTH
    if strict and set(data) - {"token"}:
        return _NOT_AUTH
    return data.get("token") or None


async def _first_message_token(websocket: WebSocket, wait_s: float) -> tuple[str | None, bool]:
    """The token of the first message, and whether the wait for it ran out (the stream is then
    a spectator's, and a token sent later is refused: _pump)."""
    if wait_s <= 0:
        return None, True
    try:
        incoming = await asyncio.wait_for(websocket.receive(), wait_s)
    except TimeoutError:
        return None, True
    if incoming["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(incoming.get("code", 1000))
    token = _auth_token(incoming.get("text"))  # a binary frame has no text
    if token is _NOT_AUTH:
        raise bad_request("invalid_auth_message", AUTH_MESSAGE, "token")
    return token, False


async def _pump(websocket: WebSocket, updates, g: Any, token: str | None = None, waited: bool = False) -> None:
    """Send updates until they end or the client goes; whichever comes first stops the other.
    A message from the client ends the stream with a refusal (4400), unless it is the
    stream's own auth message again (the same token, or {} on a spectator's):
    `token_too_late` for a token sent after the auth wait made the stream a spectator's,
    `unexpected_message` for anything else."""

    async def send_all():
        try:
            async for snap in updates:
                await websocket.send_text(message(snap))
                g.metrics.stream_messages.inc()
        finally:
            await updates.aclose()

    async def drain():
        # A disconnect ends the stream; so does a message, with a refusal naming it (the
        # stream takes none past its auth message: WebSocket pings are frames, not messages).
        while True:
            incoming = await websocket.receive()
            if incoming["type"] == "websocket.disconnect":
                return
            said = _auth_token(incoming.get("text"), strict=True)
            if said is not _NOT_AUTH and said == token:
                continue  # the auth message again (a spectator's {} that came after the wait, say)
            if said is not _NOT_AUTH and said is not None and token is None and waited:
                raise bad_request("token_too_late",
                                  f"the token came after the {g.s.ws_auth_wait_s:g} s this stream waits for it, and "
                                  "the stream was a spectator's by then: open it again with the token as the first "
                                  "message (or ?token=, or an Authorization header)", "token")
            raise bad_request("unexpected_message",
                              "this stream sends updates and reads no message after the first "
                              '({"token": "..."} or {}); send moves with POST /v1/tables/{game_id}/commands', "message")

    sender = asyncio.create_task(send_all())
    reader = asyncio.create_task(drain())
    try:
        done, _ = await asyncio.wait({sender, reader}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (sender, reader):
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
    if sender in done:
        sender.result()  # re-raise an ApiError (no such game) for the caller
    else:
        reader.result()  # re-raise a refused message for the caller
        raise WebSocketDisconnect(1000)


async def _close(websocket: WebSocket, code: int) -> None:
    if websocket.application_state != WebSocketState.DISCONNECTED and websocket.client_state != WebSocketState.DISCONNECTED:
        with contextlib.suppress(Exception):
            await websocket.close(code)
