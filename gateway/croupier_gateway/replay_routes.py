"""Replay, audit and export over HTTP (issue 12), read back from the Kafka log.

Operators (behind the operator credential) may export, audit and replay any game as any
viewer. A player may replay the game of their seat token: while the game runs, only as
their own seat (what that seat saw); once it is over, the full record is open, so as any
seat. Spectators replay as spectators. A fork's hands and decks are its origin's hidden
cards at the fork's step, dealt again (forks made before 2026-12-03 kept them as they lay),
so its record opens only once its origin is over too (and the origin's origin, for a fork of
a fork): a fork that ends before the game it was made from shows none of that game's hidden
cards while it is still played. The log is read with croupier.rules.store.read_game
in a worker thread; the engine's audit and replay (croupier.engine.audit) do the rest.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse, Response

from croupier.engine.audit import MAX_SEQ, audit, check_origin, folded, fork_origin, moves, step_end, view_as
from croupier.engine.contract import Rejection
from croupier.engine.envelope import Envelope
from croupier_gateway.errors import ApiError

GameId = Annotated[str, Path(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9._:-]+$")]
Viewer = Annotated[str, Query(alias="as", pattern=r"^(spectator|operator|[0-9]{1,2})$",
                              description="a seat number, spectator or operator")]
ToSeq = Annotated[int | None, Query(ge=1, le=MAX_SEQ, description="the step (seq) to stop at; default the end. A seq inside "
                                                 "one command's events stops after that command (the answer's `to`)")]


async def _log(gw: Any, game_id: str) -> list[Envelope]:
    from croupier.rules.settings import KafkaSettings
    from croupier.rules.store import LOG_UNREADABLE, read_game

    game_type = await gw.game_type_of(game_id)
    settings = KafkaSettings.from_env()
    try:
        envelopes = await asyncio.get_running_loop().run_in_executor(None, read_game, settings, game_id, [game_type])
    except LOG_UNREADABLE as exc:
        # Kafka away at the start of the read, or gone in the middle of it (a read that
        # fails or stalls): nothing is wrong with the request, and the log is intact; the
        # same request works later.
        raise ApiError("unavailable", "event_store_unavailable", f"the event log cannot be read now: {exc}",
                       retry_after_s=5) from None
    if not envelopes:
        raise ApiError("not_found", "no_such_game", f"no events for game {game_id}")
    return envelopes


# Forks of forks followed at most this deep before the record is taken as still closed.
MAX_FORK_DEPTH = 32


async def _record_open(gw: Any, envelopes: list[Envelope]) -> bool:
    """Whether the game's full record may be replayed as any seat: it is over, and so is
    every game of its fork chain (read from the listings, else from the origin's log)."""
    if not _over(envelopes):
        return False
    return await origin_over(gw, _origin_of(envelopes))


def _over(envelopes: Sequence[Envelope]) -> bool:
    """Whether the game ended, in its log as every reader folds it: a TableEnded put at a seq
    already folded (from outside the rules) ends nothing, and opens no record."""
    try:
        return any(env.type == "TableEnded" for env in folded(envelopes))
    except Rejection:  # a seq missing: the game is folded no further, so it never ended
        return False


def _origin_of(envelopes: Sequence[Envelope]) -> Any:
    return (envelopes[0].payload or {}).get("origin") if envelopes and envelopes[0].type == "TableCreated" else None


def _while_running() -> ApiError:
    return ApiError("forbidden", "replay_while_running", "while the game runs you may replay only as your own seat")


def fork_of_running_game() -> ApiError:
    return ApiError("forbidden", "fork_of_running_game",
                    "this table is a fork of a game still being played: spectators may watch or replay it "
                    "once that game is over")


async def origin_over(gw: Any, origin: Any, *, read_logs: bool = True) -> bool:
    """Whether every game of a fork's chain of origins is over (True for no origin: a game
    that is not a fork): read from the listings, else from the origin's log. A fork starts
    from its origin's hands and decks, so until then it shows that game's hidden cards.
    Without read_logs (a listing), by the read models alone: an origin they do not hold is
    taken as not over, and one they hold without naming its own origin as no fork."""
    for _ in range(MAX_FORK_DEPTH):
        if not isinstance(origin, dict) or not origin.get("game_id"):
            return True
        origin_id = str(origin["game_id"])
        meta = await gw.reads.meta(origin_id)
        if meta and meta.get("status"):
            if meta.get("status") != "over":
                return False
            raw = meta.get("origin") or ""
            if raw or "origin" in meta or not read_logs:
                try:
                    origin = json.loads(raw) if raw else None
                except ValueError:
                    if read_logs:
                        raise
                    origin = None  # as table_summary reads it
                continue
        if not read_logs:
            return False
        # Not in the read models (or projected before they named a fork's origin): its log.
        try:
            logged = await _log(gw, origin_id)
        except ApiError:
            return False
        if not _over(logged):
            return False
        origin = _origin_of(logged)
    return False


def _replay(envelopes: list[Envelope], to: int | None, viewer: str) -> dict[str, Any]:
    try:
        return {"game_id": envelopes[0].game_id, "to": step_end(envelopes, to), "as": viewer,
                "view": view_as(envelopes, to, viewer), "moves": moves(envelopes, to, viewer)}
    except Rejection as exc:
        if exc.code == "log_gap":  # the log, not the request: no field of it is at fault
            raise ApiError("illegal", exc.code, exc.message) from None
        raise ApiError("malformed", exc.code, exc.message, field="as") from None


def register(router: APIRouter, auth: Sequence[Any], gw: Callable[[], Any]) -> None:
    @router.get("/games/{game_id}/export", dependencies=auth, summary="The game's events as JSON lines, from Kafka",
                response_class=Response)
    async def export(game_id: GameId):
        envelopes = await _log(gw(), game_id)
        body = "\n".join(env.to_json() for env in envelopes) + "\n"
        return Response(body, media_type="application/x-ndjson",
                        headers={"content-disposition": f'attachment; filename="{game_id}.jsonl"'})

    @router.get("/games/{game_id}/audit", dependencies=auth,
                summary="Check the log: seq, hash chain, seed, every draw, re-execution")
    async def audit_game(game_id: GameId):
        g = gw()
        envelopes = await _log(g, game_id)
        report = await asyncio.get_running_loop().run_in_executor(None, audit, envelopes)
        origin = fork_origin(envelopes)
        if origin is not None and report.ok:
            # A fork's log carries its origin's up to the fork's step, which holds by itself:
            # checked against the origin's own log too, as `croupier audit FORK` does. An
            # origin with no log is a fault; one out of reach now leaves origin_checked false.
            try:
                origin_log = await _log(g, origin["game_id"])
            except ApiError as exc:
                origin_log = [] if exc.code == "no_such_game" else None
            if origin_log is not None:
                check_origin(report, envelopes, origin_log)
        return JSONResponse(report.as_dict())

    @router.get("/games/{game_id}/replay", dependencies=auth,
                summary="The game at step `to` as a viewer saw it, and its moves in words")
    async def replay_operator(game_id: GameId, to: ToSeq = None, viewer: Viewer = "operator"):
        envelopes = await _log(gw(), game_id)
        return JSONResponse(_replay(envelopes, to, viewer))


def register_player(router: APIRouter, gw: Callable[[], Any], bearer: Callable[[Request], str | None]) -> None:
    @router.get("/tables/{game_id}/replay", tags=["play"],
                summary="Replay your table: as your seat while it runs, as any seat once it is over")
    async def replay_player(request: Request, game_id: GameId, to: ToSeq = None,
                            viewer: Annotated[str | None, Query(alias="as", pattern=r"^(spectator|[0-9]{1,2})$")] = None):
        g = gw()
        claims = await g.seat_claims(bearer(request), game_id, required=False)
        # The read models first: an id no table has is answered without reading Kafka, and
        # only a few players' replays read the log at once (anyone may ask for one).
        meta = await g.reads.meta(game_id)
        if not meta:
            raise ApiError("not_found", "no_such_game", f"no game {game_id}")
        own = "spectator" if claims is None else str(claims.seat)
        who = viewer or own
        if who != own and meta.get("status") in ("open", "running"):
            raise _while_running()  # refused by the read models: no log read for it
        if g.player_replays.locked():
            raise ApiError("unavailable", "replays_busy", "this gateway is reading other replays; retry shortly",
                           retry_after_s=2)
        async with g.player_replays:
            envelopes = await _log(g, game_id)
        over = _over(envelopes)
        if who != own and not await _record_open(g, envelopes):
            if over:
                raise ApiError("forbidden", "replay_while_origin_runs",
                               "this table is a fork of a game still being played: until that game is over "
                               "you may replay it only as your own seat")
            raise _while_running()
        if claims is None and not await origin_over(g, _origin_of(envelopes)):
            raise fork_of_running_game()
        if over and to is None:
            to = folded(envelopes)[-1].seq  # the end as folded, not a record written again
        return JSONResponse(_replay(envelopes, to, who))


__all__ = ["register", "register_player"]
