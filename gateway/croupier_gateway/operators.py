"""What operators may do, behind the operator credential (app.py checks it): list and
search games, read any game's full state, force-end a stuck table, and the services' health.
Mixed into core.Gateway; the replay and audit routes (issue 12) live in replay_routes.py."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import grpc
import structlog
from grpc_health.v1 import health_pb2, health_pb2_grpc

from croupier.engine import registry
from croupier.v1 import rules_pb2
from croupier_gateway.errors import ApiError, bad_request, not_found
from croupier_gateway.reads import table_summary
from croupier_gateway.validation import GAME_ID_RE, STATUSES, check_command_id, check_game_id, check_seat, check_text

OPERATOR_MAX_OFFSET = 100_000
# The rules service's refusals of a fork's step: past the log's end, inside one command's events.
FORK_POINT_CODES = frozenset({"bad_seq", "mid_command"})

log = structlog.get_logger("croupier.gateway")


MAX_SCAN = 20_000  # listing entries one operator listing looks at, at most
PAGE = 500  # ... read this many at a time


class OperatorDesk:
    async def operator_games(self, game_type: Any, status: Any, q: Any, limit: int, offset: int) -> dict[str, Any]:
        if game_type not in (None, ""):
            game_type = self.spec(game_type).id
        if status not in (None, "") and status not in STATUSES:
            raise bad_request("invalid_status", f"status is one of {', '.join(STATUSES)}", "status")
        q = check_text(q, "q", 64).lower()
        limit, offset = self._page(limit, offset, OPERATOR_MAX_OFFSET)  # behind the operator token
        if game_type and status:
            key = {"open": self.keys.lobby, "running": self.keys.running, "over": self.keys.finished}[status](game_type)
        else:
            key = self.keys.all_games()

        def filtered_out(row: dict) -> bool:
            return bool(game_type and row["game_type"] != game_type or status and row["status"] != status)

        rows: list[dict] = []
        if q and offset == 0 and GAME_ID_RE.match(q):
            # A whole game id is looked up, however deep in the listing the game is.
            meta = await self.reads.meta(q)
            row = table_summary(q, meta) if meta else None
            if row and not filtered_out(row):
                return {"games": [row], "scanned": 0, "total": await self.reads.count(key), "truncated": False}
        skipped = scanned = 0
        max_scan, page = MAX_SCAN, PAGE
        position = 0
        ended = False
        while len(rows) < limit and scanned < max_scan:
            members = await self.reads.listing(key, position, page)
            if not members:
                ended = True
                break
            position += len(members)
            scanned += len(members)
            ended = len(members) < page
            ids = [m.split(":", 1)[1] if key == self.keys.all_games() and ":" in m else m for m in members]
            for gid, meta in zip(ids, await self.reads.metas(ids)):
                if not meta:
                    continue
                row = table_summary(gid, meta)
                if filtered_out(row):
                    continue
                if q and q not in gid.lower() and not any(
                        isinstance(p, dict) and q in str(p.get("player", "")).lower() for p in row["players"]):
                    continue
                if skipped < offset:
                    skipped += 1
                    continue
                rows.append(row)
                if len(rows) >= limit:
                    break
        # truncated: the scan stopped at MAX_SCAN entries with the page not full, so games
        # further down the listing that match were not looked at (narrow the filters).
        return {"games": rows, "scanned": scanned, "total": await self.reads.count(key),
                "truncated": not ended and len(rows) < limit}

    async def operator_game(self, game_id: str) -> dict[str, Any]:
        check_game_id(game_id)
        meta = await self.reads.meta(game_id)
        if not meta:
            raise not_found("no_such_game", f"no game {game_id}")
        summary = table_summary(game_id, meta)
        raw = await self.reads.all_views(game_id)
        views: dict[str, Any] = {}
        actions: dict[str, Any] = {}
        for name, value in raw.items():
            if name.startswith("actions:"):
                actions[name.split(":", 1)[1]] = json.loads(value)
            else:
                views[name] = json.loads(value)
        game_type = summary["game_type"]
        owner = ""
        if game_type in registry.GAME_IDS:
            owner = await self.router.owner_of(game_type, game_id)
        return {"table": summary, "views": views, "actions": actions, "owner": owner}

    async def force_end(self, game_id: str, reason: Any, command_id: Any = None) -> dict[str, Any]:
        check_game_id(game_id)
        reason = check_text(reason, "reason", 200) or "ended by an operator"
        game_type = await self.game_type_of(game_id)
        cid = check_command_id(command_id, required=False)
        request = rules_pb2.ForceEndRequest(game_type=game_type, game_id=game_id, reason=reason,
                                            command_id=f"force:{cid}")
        response = await self._call(game_type, game_id, "ForceEnd", request)
        version = int(response.result.version)
        await self.wait_projected(game_id, version)
        log.info("table_force_ended", game_id=game_id, reason=reason)
        return {"game_id": game_id, "version": version}

    async def fork(self, game_id: str, at: Any, command_id: Any = None, *, keep_cards: bool = False) -> dict[str, Any]:
        """A new table that starts from step `at` of a game (its log up to there, verbatim,
        the hidden cards dealt again unless `keep_cards`, then fresh randomness), seated with
        the origin's players; `seat_token` gives its seats to whoever the operator chooses.
        With a command_id, a retry names the same fork (an HMAC of the id, as for a create)
        and is answered as a duplicate."""
        check_game_id(game_id)
        if not isinstance(at, int) or isinstance(at, bool) or not 1 <= at <= 2**62:
            raise bad_request("invalid_at", "at is a step (seq) of the game, from 1", "at")
        game_type = await self.game_type_of(game_id)
        # A fork that keeps the cards is another table than the one dealt again.
        cid, new_id = self.new_table_id(game_type, f"fork:{game_id}:{at}" + (":kept" if keep_cards else ""), command_id)
        request = rules_pb2.ForkGameRequest(game_type=game_type, game_id=new_id, origin_game_id=game_id, at_seq=at,
                                            command_id=f"fork:{cid}", keep_cards=keep_cards)
        try:
            response = await self._call(game_type, new_id, "ForkGame", request)
        except ApiError as error:
            if error.code in FORK_POINT_CODES and error.field is None:
                error.field = "at"  # the rules service checks the step against the log: its refusal is of `at`
            raise
        self._remember_type(new_id, game_type)
        version = int(response.result.version)
        await self.wait_projected(new_id, version)
        meta = await self.reads.meta(new_id)
        log.info("table_forked", game_id=new_id, origin=game_id, at=at, keep_cards=keep_cards)
        return {"game_id": new_id, "game_type": game_type, "seats": int(meta.get("seats") or 0) if meta else 0,
                "origin": {"game_id": game_id, "seq": at}, "version": version, "keep_cards": keep_cards}

    async def seat_token(self, game_id: str, seat: Any) -> dict[str, Any]:
        """A seat token for a seat of a fork, for the operator to play it or hand it on. A
        fork's seats are filled from its origin's players and nobody joined them, so without
        this nobody could play a fork. Each token issued takes the seat from the one before
        (whose streams end at once). Never for a table players joined: their seats are theirs."""
        check_game_id(game_id)
        seat = check_seat(seat)
        meta = await self.reads.meta(game_id)
        if not meta:
            raise not_found("no_such_game", f"no game {game_id}")
        summary = table_summary(game_id, meta)
        if not summary["origin"]:
            raise ApiError("illegal", "not_a_fork",
                           "operators get seat tokens only for forked tables; a table players joined keeps its seats")
        if seat >= summary["seats"]:
            raise bad_request("no_such_seat", f"this table has seats 0..{summary['seats'] - 1}", "seat")
        if summary["status"] == "over":
            raise ApiError("illegal", "game_over", "this table has ended")
        token, claims = await self.grant_seat(game_id, seat)
        log.info("operator_seat_token", game_id=game_id, seat=seat)
        return {"game_id": game_id, "seat": seat, "token": token, "expires_at": claims.exp, "version": summary["version"]}

    async def health(self, *, deep: bool = False) -> dict[str, Any]:
        """Redis, the projector's lag, and who owns which partitions; with deep, ask every
        rules replica's gRPC health service too."""
        out: dict[str, Any] = {"gateway": {"ok": True, "uptime_s": round(time.time() - self.started, 1),
                                           "streams": self.open_streams, "feed_channels": self.hub.channels}}
        try:
            await asyncio.wait_for(self.redis.ping(), 2)
            out["redis"] = {"ok": True}
        except Exception as exc:
            out["redis"] = {"ok": False, "error": type(exc).__name__}
            out["ok"] = False
            return out
        lag_raw = await self.redis.hgetall(self.keys.lag())
        lag = {k.decode(): int(v) for k, v in lag_raw.items()}
        out["projector"] = {"ok": bool(lag), "lag": sum(lag.values()) if lag else None, "partitions": len(lag)}
        rules: dict[str, Any] = {}
        for game_type in registry.GAME_IDS:
            entry = await self.router.owners(game_type, refresh=True)
            addresses = sorted(set(entry.owners.values()))
            info: dict[str, Any] = {"partitions": entry.partitions, "owned": len(entry.owners),
                                    "replicas": addresses,
                                    "ok": bool(entry.partitions) and len(entry.owners) >= entry.partitions}
            if deep and addresses:
                info["replica_health"] = {a: await self._grpc_health(a) for a in addresses}
                info["ok"] = info["ok"] and all(v == "SERVING" for v in info["replica_health"].values())
            rules[game_type] = info
        out["rules"] = rules
        out["ok"] = out["redis"]["ok"] and all(r["ok"] for r in rules.values())
        return out

    async def _grpc_health(self, address: str) -> str:
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                stub = health_pb2_grpc.HealthStub(channel)
                reply = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=1.0)
                return health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
        except Exception as exc:
            return f"unreachable ({type(exc).__name__})"
