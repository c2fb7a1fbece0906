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
of them within CROUPIER_GATEWAY_WS_AUTH_WAIT_S the stream is a spectator's.
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
            if token is None:
                token = await _first_message_token(websocket, g.s.ws_auth_wait_s)
            claims = await g.seat_claims(token, game_id, required=False)
            with g.stream_slot(client):
                await _pump(websocket, g.updates(game_id, claims, from_version), g)
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


async def _first_message_token(websocket: WebSocket, wait_s: float) -> str | None:
    if wait_s <= 0:
        return None
    try:
        text = await asyncio.wait_for(websocket.receive_text(), wait_s)
    except TimeoutError:
        return None
    except KeyError:  # a binary frame
        raise bad_request("invalid_auth_message", 'the first message is JSON: {"token": "..."} or {}', "token") from None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: "[[[[..." nested past the parser's limit
        raise bad_request("invalid_auth_message", 'the first message is JSON: {"token": "..."} or {}', "token") from None
    if not isinstance(data, dict) or not isinstance(data.get("token"), (str, type(None))):
        raise bad_request("invalid_auth_message", 'the first message is JSON: {"token": "..."} or {}', "token")
    return data.get("token") or None


async def _pump(websocket: WebSocket, updates, g: Any) -> None:
    """Send updates until they end or the client goes; whichever comes first stops the other."""

    async def send_all():
        try:
            async for snap in updates:
                await websocket.send_text(message(snap))
                g.metrics.stream_messages.inc()
        finally:
            await updates.aclose()

    async def drain():
        # Clients may send anything (pings, acks); a disconnect ends the stream.
        while True:
            incoming = await websocket.receive()
            if incoming["type"] == "websocket.disconnect":
                return

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
        raise WebSocketDisconnect(1000)


async def _close(websocket: WebSocket, code: int) -> None:
    if websocket.application_state != WebSocketState.DISCONNECTED and websocket.client_state != WebSocketState.DISCONNECTED:
        with contextlib.suppress(Exception):
            await websocket.close(code)
