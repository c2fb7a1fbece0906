"""The HTTP+JSON face of the gateway (FastAPI), with the WebSocket stream beside it.

`create_app(settings, redis=..., router=...)` builds it, so tests can hand in their own
clients. Every refusal has the body {"error": {code, message, kind, field?}} and the status
its kind fixes (errors.py): 400 bad input (with the field), 401/403, 404, 409 version
conflict, 413 too large, 422 illegal move (the rule's code and message), 429 rate limited
(with Retry-After), 503 retry later.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Annotated, Any, Literal

import structlog
from fastapi import APIRouter, Depends, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from redis.exceptions import RedisError
from starlette.exceptions import HTTPException as StarletteHTTPException

from croupier_gateway import models
from croupier_gateway.core import Gateway
from croupier_gateway.errors import ApiError, store_unavailable
from croupier_gateway.routing import Router
from croupier_gateway.settings import GatewaySettings
from croupier_gateway.validation import GAME_ID_RE, MAX_OFFSET, bearer_token

log = structlog.get_logger("croupier.gateway")

# FastAPI's words for a body it could not parse other than as a JSON syntax error (fastapi/routing.py).
BODY_UNREADABLE = "There was an error parsing the body"

GameId = Annotated[str, Path(pattern=GAME_ID_RE.pattern, min_length=1, max_length=128, description="The table's id")]
Seat = Annotated[int, Path(ge=0, le=63, description="A seat number, from 0")]
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": models.ErrorOut, "description": text}
    for code, text in ((400, "Bad input; `field` names the part at fault"), (401, "No valid token"),
                       (403, "The token does not allow this"), (404, "No such table"),
                       (409, "Version conflict, or the id exists"), (413, "The body is too large"),
                       (422, "An illegal move: the rule's code and message"), (429, "Rate limited; see Retry-After"),
                       (503, "Retry shortly (a replica is starting or moving)"))
}


def bearer(request: Request) -> str | None:
    """The request's token (Authorization: Bearer <token>); a header in another form is a
    401 (validation.bearer_token)."""
    return bearer_token(request.headers.get("authorization"))


def error_response(exc: ApiError) -> JSONResponse:
    headers = {}
    if exc.retry_after is not None:
        headers["Retry-After"] = str(exc.retry_after)
    if exc.kind == "unauthenticated":
        headers["WWW-Authenticate"] = "Bearer"
    return JSONResponse(exc.body(), status_code=exc.http_status, headers=headers)


def _field(loc: tuple | list) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    return ".".join(parts) or "body"


class BodyLimit:
    """Refuses bodies over `max_bytes` with 413 before the app reads them."""

    def __init__(self, app: Any, max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or ())
        declared = headers.get(b"content-length")
        too_large = ApiError("too_large", "body_too_large", f"a request body is at most {self.max_bytes} bytes")
        if declared is not None:
            try:
                if int(declared) > self.max_bytes:
                    return await error_response(too_large)(scope, receive, send)
            except ValueError:
                bad = ApiError("malformed", "bad_content_length", "Content-Length is not a number")
                return await error_response(bad)(scope, receive, send)
        body = bytearray()
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body.extend(message.get("body", b""))
            more = message.get("more_body", False)
            if len(body) > self.max_bytes:
                return await error_response(too_large)(scope, receive, send)
        sent = False

        async def replay():
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        return await self.app(scope, replay, send)


# Our pages load only their own scripts, styles and API; no page of ours may be framed (a
# framed table page could be clicked through by the page around it). /watch's inline
# script and style carry a nonce of their own (watch.py). FastAPI's /docs, which loads its
# assets from a CDN, is left without a policy.
PAGE_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
               "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "
               "frame-ancestors 'none'")


class SecurityHeaders:
    """Every answer: no MIME sniffing and no Referer (a page's address may name a game).
    The web client's pages (/web, /watch): a Content-Security-Policy and no framing."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope.get("path", "")
        page = path == "/web" or path.startswith(("/web/", "/watch/"))

        async def send_(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                names = {k.lower() for k, _ in headers}
                extra = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer")]
                if page:
                    extra += [(b"content-security-policy", PAGE_POLICY.encode()), (b"x-frame-options", b"DENY")]
                headers += [(k, v) for k, v in extra if k not in names]
                message = {**message, "headers": headers}
            await send(message)

        return await self.app(scope, receive, send_)


class Metrics:
    """Counts requests by route template and status, and times them."""

    def __init__(self, app: Any, gateway_ref: Any):
        self.app = app
        self.gateway_ref = gateway_ref

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = time.perf_counter()
        status = {"code": 500}

        async def send_(message):
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_)
        finally:
            gw = self.gateway_ref()
            if gw is not None:
                route = scope.get("route")
                path = getattr(route, "path", None) or "unmatched"
                gw.metrics.requests.labels(scope["method"], path, str(status["code"])).inc()
                gw.metrics.latency.labels(scope["method"], path).observe(time.perf_counter() - started)


async def _unless_disconnected(request: Request, waiting):
    """Await `waiting` (a long poll), but stop it as soon as the client hangs up (then None): else
    its wait (up to 30 s) and the stream slot of its address outlived the client, and a client
    that polls, gives up and polls again held a slot for each."""
    task = asyncio.ensure_future(waiting)
    gone = asyncio.ensure_future(_disconnected(request))
    try:
        await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
    if not task.done():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return None
    return task.result()


async def _disconnected(request: Request) -> None:
    """Returns once the client has closed the connection (the ASGI receive channel says so;
    a GET's empty body comes first)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


def create_app(settings: GatewaySettings, *, redis: Any = None, router: Router | None = None,
               gateway: Gateway | None = None) -> FastAPI:
    holder: dict[str, Gateway] = {}
    if gateway is not None:
        holder["gw"] = gateway

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        own = "gw" not in holder
        if own:
            client = redis or settings.redis_client()
            holder["gw"] = Gateway(settings, client, router=router)
        try:
            yield
        finally:
            if own:
                gw = holder.pop("gw")
                await gw.close()
                if redis is None:
                    await gw.redis.aclose()

    app = FastAPI(
        title="Croupier gateway",
        version="1.0.0",
        summary="Tables, seats, views and moves of Croupier's card games.",
        description=(
            "The public door of Croupier. Create a table, join a seat (you get a signed seat token), "
            "read your view and legal actions, and submit moves. `WebSocket /v1/tables/{game_id}/stream"
            "?from_version=N` streams your view after every change, strictly increasing versions from N on. "
            "The same API is served over gRPC (croupier.v1.GatewayService)."
        ),
        lifespan=lifespan,
    )
    app.state.holder = holder

    def gw() -> Gateway:
        return holder["gw"]

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError):
        return error_response(exc)

    @app.exception_handler(RedisError)
    async def _store_down(request: Request, exc: RedisError):
        log.warning("store_unavailable", path=request.url.path, error=type(exc).__name__)
        return error_response(store_unavailable())

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        errors = exc.errors()
        first = errors[0] if errors else {}
        message = str(first.get("msg", "invalid request"))
        if first.get("type") == "json_invalid":  # its loc is ("body", <character offset>)
            offset = (first.get("loc") or ("body", "?"))[-1]
            return error_response(ApiError("malformed", "invalid_json",
                                           f"the body is not JSON (at character {offset}): {message}", field="body"))
        field = _field(first.get("loc", ()))
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if field == "body" and first.get("type") == "model_attributes_type" and not (
                content_type == "application/json" or content_type.endswith("+json")):
            # FastAPI reads a body as JSON only when it says it is: `curl -d '{...}'` sends
            # application/x-www-form-urlencoded, and its valid JSON was refused in words that
            # did not say what to change.
            return error_response(ApiError("malformed", "invalid_content_type",
                                           "a body is JSON, sent with Content-Type: application/json (this one came "
                                           f"as {content_type[:60] or 'no content type'})", field="body"))
        if first.get("type") == "extra_forbidden":
            # The field is the client's own name (any text, any length): not made into a code,
            # which is one of ours, and not echoed at length.
            field = field if len(field) <= 100 else field[:100] + "…"
            return error_response(ApiError("malformed", "unknown_field", f"{field}: this request has no such field",
                                           field=field))
        code = f"invalid_{field.split('.')[0]}"
        return error_response(ApiError("malformed", code, f"{field}: {message}", field=field))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException):
        kinds = {400: "malformed", 401: "unauthenticated", 403: "forbidden", 404: "not_found", 413: "too_large",
                 429: "rate_limited"}
        if exc.status_code == 400 and exc.detail == BODY_UNREADABLE:
            # FastAPI's refusal of a body its parser failed on other than as bad JSON syntax: bytes
            # that are not UTF-8, JSON nested past the parser's depth (a RecursionError).
            return error_response(ApiError("malformed", "invalid_json", "the body is not JSON this gateway reads: "
                                           "UTF-8 text, nested at most a few hundred levels", field="body"))
        if exc.status_code in kinds:
            return error_response(ApiError(kinds[exc.status_code], "http_" + str(exc.status_code), str(exc.detail)))
        return JSONResponse({"error": {"code": f"http_{exc.status_code}", "message": str(exc.detail),
                                       "kind": "malformed"}}, status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))

    async def limited(request: Request) -> None:
        client = request.client.host if request.client else None
        g = gw()
        g.check_rate(g.rate_key(bearer(request), client))

    v1 = APIRouter(prefix="/v1", dependencies=[Depends(limited)], responses=ERRORS)

    @v1.get("/games", response_model=models.GamesOut, tags=["tables"], summary="The games hosted here")
    async def list_games():
        return {"games": gw().games()}

    @v1.post("/tables", status_code=201, response_model=models.CreatedOut, tags=["tables"],
             summary="Create a table")
    async def create_table(body: models.CreateTable):
        return await gw().create_table(body.game_type, body.seats, body.options, body.command_id)

    @v1.get("/tables", response_model=models.TablesOut, tags=["tables"], summary="List tables (open ones by default)")
    async def list_tables(
        game_type: Annotated[str | None, Query(max_length=64)] = None,
        status: Literal["open", "running", "over"] = "open",
        limit: Annotated[int, Query(ge=1, le=200)] = 50,
        offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    ):
        return await gw().list_tables(game_type, status, limit, offset)

    @v1.get("/tables/{game_id}", response_model=models.TableOut, tags=["tables"], summary="One table's public facts")
    async def get_table(game_id: GameId):
        return await gw().get_table(game_id)

    @v1.post("/tables/{game_id}/seats/{seat}", status_code=201, response_model=models.JoinedOut, tags=["tables"],
             summary="Join a seat; returns its seat token")
    async def join_seat(game_id: GameId, seat: Seat, body: models.JoinSeat | None = None):
        body = body or models.JoinSeat()
        return await gw().join(game_id, seat, body.player, body.bot, body.entropy, body.command_id)

    @v1.post("/tables/{game_id}/seats/{seat}/renew", response_model=models.RenewedOut, tags=["tables"],
             summary="A new token for your seat (seat token), a full lifetime from now")
    async def renew_seat(request: Request, game_id: GameId, seat: Seat):
        return await gw().renew_seat(bearer(request), game_id, seat)

    @v1.delete("/tables/{game_id}/seats/{seat}", response_model=models.LeftOut, tags=["tables"],
               summary="Leave a seat before the game starts (seat token)")
    async def leave_seat(request: Request, game_id: GameId, seat: Seat, body: models.LeaveSeat | None = None):
        return await gw().leave(bearer(request), game_id, seat, body.command_id if body else None)

    @v1.get("/tables/{game_id}/view", response_model=models.ViewOut, tags=["play"],
            summary="Your view (with a seat token), or a spectator's (without)")
    async def get_view(
        request: Request, game_id: GameId,
        min_version: Annotated[int, Query(ge=0, le=2**62, description="Wait until the game reaches this version")] = 0,
        timeout_s: Annotated[float, Query(ge=0, le=30, description="How long to wait for min_version")] = 10.0,
    ):
        g = gw()
        claims = await g.seat_claims(bearer(request), game_id, required=False)
        reading = g.snapshot(game_id, claims, min_version=min_version, wait_s=timeout_s,
                             address=request.client.host if request.client else None)
        snap = await (_unless_disconnected(request, reading) if min_version and timeout_s else reading)
        if snap is None:  # nobody reads this answer; 499 is what proxies log for a client gone first
            return Response(status_code=499)
        seat = "null" if claims is None else str(claims.seat)
        return Response(f'{{"seat":{seat},"version":{snap.version},"view":{snap.view}}}',
                        media_type="application/json")

    @v1.get("/tables/{game_id}/actions", response_model=models.ActionsOut, tags=["play"],
            summary="Your legal actions now (seat token)")
    async def get_actions(request: Request, game_id: GameId):
        g = gw()
        claims = await g.seat_claims(bearer(request), game_id)
        snap = await g.snapshot(game_id, claims)
        return Response(f'{{"actions":{snap.actions},"seat":{claims.seat},"version":{snap.version}}}',
                        media_type="application/json")

    @v1.post("/tables/{game_id}/commands", response_model=models.CommandOut, tags=["play"],
             summary="Submit a move (seat token); the seat is the token's")
    async def submit_command(
        request: Request, game_id: GameId, body: models.SubmitCommand,
        wait: Annotated[bool, Query(description="Answer once the views show the move")] = True,
    ):
        return await gw().submit(bearer(request), game_id, body.command_id, body.expected_version, body.action,
                                 wait=wait)

    op = APIRouter(prefix="/operator", tags=["operator"])

    async def operator(request: Request) -> None:
        gw().check_operator(bearer(request))

    op_auth = [Depends(operator)]

    @op.get("/games", response_model=models.OperatorGamesOut, dependencies=op_auth,
            summary="List and search games (by type, status, id or player name)")
    async def operator_games(
        game_type: Annotated[str | None, Query(max_length=64)] = None,
        status: Literal["open", "running", "over"] | None = None,
        q: Annotated[str | None, Query(max_length=64, description="Part of a game id or player name")] = None,
        limit: Annotated[int, Query(ge=1, le=200)] = 50,
        offset: Annotated[int, Query(ge=0, le=100_000)] = 0,
    ):
        return await gw().operator_games(game_type, status, q, limit, offset)

    @op.get("/games/{game_id}", response_model=models.OperatorGameOut, dependencies=op_auth,
            summary="A game's full state: every seat's view and actions, and its owner")
    async def operator_game(game_id: GameId):
        return await gw().operator_game(game_id)

    @op.post("/games/{game_id}/force-end", response_model=models.ForceEndOut, dependencies=op_auth,
             summary="End a stuck table")
    async def force_end(game_id: GameId, body: models.ForceEnd | None = None):
        body = body or models.ForceEnd()
        return await gw().force_end(game_id, body.reason, body.command_id)

    @op.post("/games/{game_id}/fork", response_model=models.ForkOut, status_code=201, dependencies=op_auth,
             summary="A new table that starts from a step of this game, seated with its players")
    async def fork(game_id: GameId, body: models.Fork):
        return await gw().fork(game_id, body.at, body.command_id, keep_cards=body.keep_cards)

    @op.post("/games/{game_id}/seats/{seat}/token", response_model=models.SeatTokenOut, dependencies=op_auth,
             summary="A seat token for a seat of a forked table (to play the fork); the seat's previous token stops working")
    async def seat_token(game_id: GameId, seat: Seat):
        return await gw().seat_token(game_id, seat)

    @op.get("/health", dependencies=op_auth, summary="Health of Redis, the projector and every rules replica")
    async def operator_health():
        report = await gw().health(deep=True)
        return JSONResponse(report, status_code=200 if report.get("ok") else 503)

    # Replay and audit (issue 12) add their routes to the operator router here, behind the
    # same operator credential: see croupier_gateway/replay_routes.py.
    from croupier_gateway import replay_routes

    replay_routes.register(op, op_auth, gw)
    replay_routes.register_player(v1, gw, bearer)

    v1.include_router(op)
    app.include_router(v1)

    from croupier_gateway import ws

    ws.register(app, gw)

    @app.get("/healthz", tags=["service"], summary="Liveness and Redis")
    async def healthz():
        g = gw()
        try:
            await g.redis.ping()
        except Exception as exc:
            return JSONResponse({"ok": False, "redis": type(exc).__name__}, status_code=503)
        return {"ok": True}

    if not settings.metrics_port:  # else on a listener of its own (serve.py)
        @app.get("/metrics", tags=["service"], summary="Prometheus metrics", response_class=Response)
        async def metrics():
            return Response(generate_latest(gw().metrics.registry), media_type=CONTENT_TYPE_LATEST)

    # The web client (docs/web.md): static pages that use only the public API above, so a
    # page gets exactly what the gateway gives its seat (or a spectator, or an operator).
    from fastapi.staticfiles import StaticFiles

    from croupier_gateway.web import WEB_DIR

    app.mount("/web", StaticFiles(directory=WEB_DIR, html=True), name="web")

    @app.get("/", include_in_schema=False)
    async def home():
        return RedirectResponse("/web/", status_code=307)

    @app.get("/watch/{game_id}", include_in_schema=False)
    async def watch_page(game_id: GameId):
        import secrets

        from croupier_gateway.watch import page

        nonce = secrets.token_urlsafe(16)
        policy = PAGE_POLICY.replace("script-src 'self'", f"script-src 'nonce-{nonce}'").replace(
            "style-src 'self'", f"style-src 'nonce-{nonce}'")
        return HTMLResponse(page(game_id, nonce), headers={"Content-Security-Policy": policy})

    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    if settings.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=list(settings.cors_origins),
                           allow_methods=["GET", "POST", "DELETE"], allow_headers=["Authorization", "Content-Type"],
                           max_age=600)
    app.add_middleware(SecurityHeaders)
    app.add_middleware(Metrics, gateway_ref=lambda: holder.get("gw"))
    return app
