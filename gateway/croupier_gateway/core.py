"""What the gateway does, whatever the protocol: HTTP (app.py), WebSocket (ws.py) and gRPC
(grpc_api.py) are thin faces over this.

Writes go to the rules replica that owns the game (routing.py); reads come from the
projector's read models in Redis (reads.py). A seat acts only through its signed token, and
the seat of a command is the token's, never the request's. Input is checked here before any
rules service sees it, so bad input is a 400 and never reaches a game.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping
from typing import Any

import structlog
from redis.exceptions import RedisError

from croupier.engine import registry
from croupier.engine.bots import bot_names
from croupier.engine.codec import canonical_json
from croupier.engine.contract import GameSpec, Rejection
from croupier.engine.table import MAX_ENTROPY, MAX_PLAYER_NAME, TableHost, table_options
from croupier.projector.keys import Keys
from croupier.rules.errors import BUSY, RETRYABLE
from croupier.v1 import rules_pb2
from croupier_gateway.errors import ApiError, bad_request, forbidden, not_found, unauthenticated
from croupier_gateway.fanout import Fanout
from croupier_gateway.feed import FeedHub
from croupier_gateway.holders import HolderCache
from croupier_gateway.metrics import GatewayMetrics
from croupier_gateway.operators import OperatorDesk
from croupier_gateway.ratelimit import RateLimiter
from croupier_gateway.reads import ReadStore, SeatTaken, Snapshot, holds, left_by, table_summary
from croupier_gateway.routing import Router
from croupier_gateway.settings import GatewaySettings
from croupier_gateway.tokens import SeatClaims, TokenError, TokenSigner
from croupier_gateway.validation import (
    JSON_INT_MAX,
    JSON_INT_MIN,
    MAX_ACTION_CHARS,
    MAX_LIST,
    MAX_OFFSET,
    MAX_OPTIONS,
    MAX_REMEMBERED_ACTION,
    MAX_WAIT_S,
    NEW_GAME_WAIT_S,
    STATUSES,
    check_command_id,
    check_game_id,
    check_join_command_id,
    check_seat,
    check_text,
    check_unicode,
    is_unicode,
    option_text,
    wide_int,
)

log = structlog.get_logger("croupier.gateway")

PLAYER_REPLAYS_AT_ONCE = 4

CHECKED_ACTIONS = 50_000  # well-formed actions remembered (forgotten all at once past this)
# Tries of a create whose table id the gateway chooses (a new id after an already_exists).
CREATE_ATTEMPTS = 3
GRANT_ATTEMPTS = 3  # tries to record a committed join's token (grant_seat) before a 503
SPECTATED_KEPT = 100_000
SPENT_KEPT = 100_000  # joins known here to be marked used (forgotten all at once past this: marked again)
STREAM_FULL_RETRY_S = 5.0  # Retry-After of a stream refused for the stream caps (a slot frees as a stream ends)  # game ids known open to spectators (the oldest forgotten past this)


class SeatLost(ApiError):
    """seat_claims' refusal of a token that verifies, for this table, but no longer holds its
    seat: the 401 every caller gets, with the claims and the seat's holder record (None: no
    record) for a caller that answers some of these itself (Gateway.leave)."""

    def __init__(self, claims: SeatClaims, record: str | None):
        super().__init__("unauthenticated", "unauthenticated", "this token no longer holds its seat")
        self.claims = claims
        self.record = record


class Gateway(OperatorDesk):
    def __init__(self, settings: GatewaySettings, redis: Any, *, router: Router | None = None,
                 hub: FeedHub | None = None, metrics: GatewayMetrics | None = None):
        self.s = settings
        self.redis = redis
        self.keys = Keys(settings.key_prefix)
        self.metrics = metrics or GatewayMetrics()
        self.reads = ReadStore(redis, self.keys)
        self.router = router or Router(redis, self.keys, deadline_s=settings.rules_deadline_s,
                                       owners_ttl_s=settings.owners_ttl_s, metrics=self.metrics,
                                       command_streams=settings.command_streams)
        self.hub = hub or FeedHub(redis, self.keys)
        self.holders = HolderCache(self.hub, self.keys, settings.seat_cache_s)
        self.fanout = Fanout(self.reads, self.hub, settings.stream_poll_s, self.holders)
        self.signer = TokenSigner(settings.signing_key, settings.previous_signing_key)
        self.limiter = RateLimiter(settings.rate_limit_per_s, settings.rate_limit_burst)
        factor = settings.rate_limit_address_factor
        self.address_limiter = RateLimiter(settings.rate_limit_per_s * factor, int(settings.rate_limit_burst * factor))
        self.started = time.time()
        self._types: OrderedDict[str, str] = OrderedDict()
        self._hosts: dict[str, TableHost] = {}
        self._checked_actions: set[tuple[str, int, str]] = set()  # (game type, seat, action) the codec accepted
        self.open_streams = 0
        self.metrics.streams.set_function(lambda: self.open_streams)
        self.streams_by_address: dict[str, int] = {}
        # Players' replays read a game's log from Kafka (a partition from its start): at most
        # this many at once per gateway, the rest told to come back (replay_routes.py).
        self.player_replays = asyncio.Semaphore(PLAYER_REPLAYS_AT_ONCE)
        # Games a spectator may see (not forks, or forks whose origins are over: that never
        # changes back), so that only a fork's first spectators look its origins up.
        self._spectated: OrderedDict[str, None] = OrderedDict()
        self._spent: set[tuple[str, int, int]] = set()  # (game, seat, join) marked used in Redis (_spend)

    async def close(self) -> None:
        await self.fanout.close()
        await self.hub.close()
        await self.router.close()

    # -- callers --------------------------------------------------------------------------

    @contextlib.contextmanager
    def stream_slot(self, address: str | None):
        """One of the gateway's streams, for the time it is open: refused (503) when the
        gateway or the client's address holds its maximum."""
        key = address or "?"
        if self.open_streams >= self.s.max_streams:
            raise ApiError("unavailable", "too_many_streams", "this gateway serves its maximum of streams",
                           retry_after_s=STREAM_FULL_RETRY_S)
        if self.streams_by_address.get(key, 0) >= self.s.max_streams_per_address:
            raise ApiError("unavailable", "too_many_streams_from_address",
                           f"this address holds {self.s.max_streams_per_address} streams already",
                           retry_after_s=STREAM_FULL_RETRY_S)
        self.open_streams += 1
        self.streams_by_address[key] = self.streams_by_address.get(key, 0) + 1
        try:
            yield
        finally:
            self.open_streams -= 1
            left = self.streams_by_address[key] - 1
            if left:
                self.streams_by_address[key] = left
            else:
                del self.streams_by_address[key]

    def rate_key(self, token: str | None, address: str | None) -> tuple[str, str | None]:
        """Whom a request counts against: its token if it is one of ours, else its address;
        and, for a seat's token, its address too (check_rate)."""
        addr = f"addr:{address or '?'}"
        if token:
            if self.s.operator_token and hmac.compare_digest(token.encode(), self.s.operator_token.encode()):
                return "operator", None
            try:
                return f"seat:{self.signer.verify(token).jti}", addr
            except TokenError:
                pass
        return addr, None

    def check_rate(self, key: tuple[str, str | None]) -> None:
        """A request of `key` (rate_key): a seat's counts against the seat, and against its
        address at address_factor times the rate."""
        bucket, address = key
        wait = self.limiter.take(bucket)
        if wait <= 0 and address is not None:
            wait = self.address_limiter.take(address)
        if wait > 0:
            self.metrics.rate_limited.inc()
            raise ApiError("rate_limited", "rate_limited", f"too many requests; retry in {wait:.2f} s",
                           retry_after_s=wait)

    def check_operator(self, token: str | None) -> None:
        if not self.s.operator_token:
            raise unauthenticated("operator routes are disabled (CROUPIER_OPERATOR_TOKEN is not set)")
        if not token:
            raise unauthenticated("an operator token is required (Authorization: Bearer <token>)")
        if not hmac.compare_digest(token.encode(), self.s.operator_token.encode()):
            raise unauthenticated("this is not the operator token")

    async def seat_claims(self, token: str | None, game_id: str, *, required: bool = True) -> SeatClaims | None:
        """The seat a token holds at this table; None for no token when not required. A token
        of a join, once it holds its seat here, marks that join used (_spend)."""
        claims = await self._seat_claims(token, game_id, required=required)
        if claims is not None and claims.join:
            await self._spend(game_id, claims)
        return claims

    async def _spend(self, game_id: str, claims: SeatClaims) -> None:
        """Record (once per join and process) that a token of this join has been used: its
        caller has the token, so a join sent again with the join's command_id is no retry of a
        lost answer, and gets no token (Gateway.join: join_in_use). A guessed command_id then
        takes a seat only before its player's first request. Redis failing here is logged, not
        answered: the request is the player's, and the next one marks it."""
        key = (game_id, claims.seat, claims.join)
        if key in self._spent:
            return
        try:
            await self.reads.mark_join_used(game_id, claims.seat, claims.join, self.s.token_ttl_s)
        except RedisError as exc:
            log.warning("join_use_unmarked", game_id=game_id, seat=claims.seat, error=type(exc).__name__)
            return
        if len(self._spent) >= SPENT_KEPT:
            self._spent.clear()
        self._spent.add(key)

    async def _seat_claims(self, token: str | None, game_id: str, *, required: bool = True) -> SeatClaims | None:
        if not token:
            if required:
                raise unauthenticated("a seat token is required (Authorization: Bearer <token>)")
            return None
        try:
            claims = self.signer.verify(token)
        except TokenError as exc:
            raise unauthenticated(str(exc)) from None
        if claims.game_id != game_id:
            raise forbidden("wrong_table", "this token is for another table")
        if self.holders.get(game_id, claims.seat) == claims.jti:
            return claims  # as the last read said, and no holder change heard of since (holders.py)
        stamp, read_at = self.holders.stamp(game_id), self.holders.now()
        holder, version, joined = await self.reads.holder_and_join(game_id, claims.seat)
        if holder == claims.jti:
            # The record may lag the log (a leave whose record failed, the next join not
            # recorded yet): the read models, which name the join that holds the seat, decide.
            if not holds(version, joined, claims.join):
                raise SeatLost(claims, holder)
            self.holders.put(game_id, claims.seat, holder, stamp, read_at)
        else:
            if holder is not None or not claims.join:
                raise SeatLost(claims, holder)
            # No record at all (Redis lost its data): the read models, rebuilt from the log,
            # name the join that holds the seat; a token of that join still holds it. Until
            # they show that join (a rebuild under way) the answer is "retry", not "no".
            version, joined = await self.reads.joined_at(game_id, claims.seat)
            if version < claims.join:
                raise ApiError("unavailable", "seats_restoring", "this table's seats are being restored; retry shortly",
                               retry_after_s=1.0)
            if joined != claims.join:
                raise SeatLost(claims, holder)
        return claims

    # -- games ----------------------------------------------------------------------------

    def spec(self, game_type: Any, field: str = "game_type") -> GameSpec:
        if not isinstance(game_type, str) or game_type not in registry.GAME_IDS:
            raise bad_request("unknown_game", f"game_type is one of {', '.join(registry.GAME_IDS)}", field)
        return registry.get(game_type)

    def host(self, game_type: str) -> TableHost:
        host = self._hosts.get(game_type)
        if host is None:
            host = self._hosts[game_type] = TableHost(registry.get(game_type))
        return host

    def games(self) -> list[dict[str, Any]]:
        out = []
        for spec in registry.all_games():
            out.append({
                "id": spec.id, "name": spec.name, "summary": spec.summary,
                "min_seats": spec.min_seats, "max_seats": spec.max_seats, "rules_version": spec.rules_version,
                "bots": bot_names(spec), "cooperative": spec.cooperative,
                "options": [
                    {"name": o.name, "default": o.default, "doc": o.doc,
                     "choices": list(o.choices) if o.choices is not None else None,
                     "minimum": o.minimum, "maximum": o.maximum}
                    for o in spec.options
                ],
                # The table's own options (the turn clock), which every game takes beside its own.
                "table_options": table_options(),
            })
        return out

    def _remember_type(self, game_id: str, game_type: str) -> None:
        self._types[game_id] = game_type
        self._types.move_to_end(game_id)
        while len(self._types) > 100_000:
            self._types.popitem(last=False)

    async def game_type_of(self, game_id: str) -> str:
        check_game_id(game_id)
        known = self._types.get(game_id)
        if known:
            return known
        game_type = await self.reads.game_type(game_id)
        if not game_type:
            # Not projected yet (just created elsewhere): ids this gateway makes name their type.
            # Not remembered: any id of that shape is taken for a table here (the rules service
            # then answers no_such_game), and a remembered id is one whose spectators wait for
            # it to appear (snapshot, updates); a join that succeeds remembers it.
            game_type = next((g for g in registry.GAME_IDS if game_id.startswith(g + "-")), None)
            if not game_type:
                raise not_found("no_such_game", f"no game {game_id}")
            return game_type
        if game_type not in registry.GAME_IDS:
            raise not_found("no_such_game", f"no game {game_id}")
        self._remember_type(game_id, game_type)
        return game_type

    async def _call(self, game_type: str, game_id: str, method: str, request: Any) -> Any:
        try:
            return await self.router.call(game_type, game_id, method, request)
        except Rejection as rej:
            raise ApiError.from_rejection(rej) from None

    async def wait_projected(self, game_id: str, version: int, timeout_s: float | None = None) -> bool:
        """Wait (bounded) until the read models show `version`, so a read that follows sees it.
        Redis being away ends the wait (False): the command it follows is committed, and its
        answer must not become an error."""
        try:
            return await self._wait_projected(game_id, version, timeout_s)
        except RedisError as exc:
            log.warning("projection_wait_failed", game_id=game_id, error=type(exc).__name__)
            return False

    async def _wait_projected(self, game_id: str, version: int, timeout_s: float | None) -> bool:
        timeout_s = self.s.projection_wait_s if timeout_s is None else timeout_s
        current = await self.reads.version(game_id)
        if current is not None and current >= version:
            return True
        if timeout_s <= 0:
            return False
        deadline = time.monotonic() + timeout_s
        async with self.hub.watch(game_id) as watch:
            while True:
                current = await self.reads.version(game_id)
                if current is not None and current >= version:
                    return True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                await watch.wait(min(remaining, 0.25))
                if watch.version >= version:
                    return True  # the projector publishes a version once it is written

    # -- tables ---------------------------------------------------------------------------

    async def create_table(self, game_type: Any, seats: Any, options: Any, command_id: Any = None) -> dict[str, Any]:
        spec = self.spec(game_type)
        if seats is None:
            seats = spec.min_seats
        if not isinstance(seats, int) or isinstance(seats, bool) or not spec.min_seats <= seats <= spec.max_seats:
            raise bad_request("invalid_seats", f"{spec.id} is for {spec.min_seats} to {spec.max_seats} seats", "seats")
        options = options or {}
        if not isinstance(options, Mapping) or len(options) > MAX_OPTIONS:
            raise bad_request("invalid_options", f"options is an object of at most {MAX_OPTIONS} entries", "options")
        for name, value in options.items():
            if not isinstance(name, str) or not is_unicode(name):
                raise bad_request("invalid_option", "an option name is a string of Unicode text", "options")
            if not isinstance(value, (str, int, bool)) or isinstance(value, float):
                raise bad_request("invalid_option", "an option value is a string, integer or boolean", f"options.{name}")
            if isinstance(value, str):
                check_unicode(value, "invalid_option", f"options.{name}")
        try:
            parsed = self.host(spec.id).parse_options(dict(options))
        except Rejection as rej:
            raise ApiError.from_rejection(rej, field="options") from None
        cid, game_id = self.new_table_id(spec.id, f"create:{spec.id}", command_id)
        for attempt in range(CREATE_ATTEMPTS):
            request = rules_pb2.CreateGameRequest(game_type=spec.id, game_id=game_id, seats=seats,
                                                  options={k: option_text(v) for k, v in options.items()},
                                                  command_id=f"create:{cid}")
            try:
                response = await self._call(spec.id, game_id, "CreateGame", request)
                break
            except ApiError as exc:
                # An id may, rarely, be refused as one used long ago (the rules' filter of
                # forgotten games answers "maybe" for a few ids never used): take the next.
                # Derived from the caller's command_id, the next is derived too (the same
                # request walks the same ids, so its retry finds the table it made); else a
                # new random one.
                if exc.code != "already_exists" or attempt == CREATE_ATTEMPTS - 1:
                    raise
                if command_id:
                    _, game_id = self.new_table_id(spec.id, f"create:{spec.id}", command_id, attempt + 1)
                else:
                    game_id = f"{spec.id}-{secrets.token_hex(8)}"
        self._remember_type(game_id, spec.id)
        version = int(response.result.version)
        await self.wait_projected(game_id, version)
        if response.result.duplicate:
            # A retry gets the table it made; the same command_id with other seats or options
            # is another request, which that table is not.
            meta = await self.reads.meta(game_id)
            if meta and (int(meta.get("seats") or 0) != seats or meta.get("options") != canonical_json(parsed)):
                raise ApiError("conflict", "command_id_reused",
                               f"this command_id already created {game_id} with {meta.get('seats')} seats and options "
                               f"{meta.get('options')}; a table with other seats or options needs a new command_id")
        log.info("table_created", game_id=game_id, game_type=spec.id, seats=seats)
        return {"game_id": game_id, "game_type": spec.id, "seats": seats, "seed_hash": response.seed_hash,
                "version": version}

    async def grant_seat(self, game_id: str, seat: int, *, join: int = 0,
                         jti: str | None = None) -> tuple[str, SeatClaims]:
        """A new seat token, made the seat's holder (the token before it stops working, and
        every gateway hears so on the game's feed). `join`: the seq of the SeatJoined it rests
        on (0: none, a fork's seat). `jti`: the holder's own id again (a renewal: the holder
        does not change, and its record is kept as long as the new token lives)."""
        token, claims = self.signer.issue(game_id, seat, self.s.token_ttl_s, jti=jti, join=join)
        if jti is None:
            await self.reads.set_holder(game_id, seat, claims.jti, self.s.token_ttl_s)
        elif not await self.reads.renew_holder(game_id, seat, jti, self.s.token_ttl_s):
            # Left (and maybe taken by another) since the renewal checked the token: the
            # record is the new holder's, and the renewal is refused like any request of a
            # token that no longer holds its seat.
            self.holders.forget(game_id)
            raise unauthenticated("this token no longer holds its seat")
        self.holders.forget(game_id)
        return token, claims

    async def _grant_joined(self, game_id: str, seat: int, joined: int, cid: str) -> tuple[str, SeatClaims]:
        """grant_seat for a join that is committed: its token is the only way to use or leave
        the seat, so a Redis fault is tried again, and then answered with the command_id
        whose retry gets the token (the gateway made one up if the caller sent none: a retry
        with another would find the seat taken, by this join)."""
        for attempt in range(GRANT_ATTEMPTS):
            try:
                return await self.grant_seat(game_id, seat, join=joined)
            except RedisError:
                if attempt + 1 == GRANT_ATTEMPTS:
                    raise ApiError("unavailable", "store_unavailable",
                                   f"seat {seat} is joined, but its token could not be recorded; retry the join "
                                   f"with command_id {cid!r} to get it", retry_after_s=1.0) from None
                await asyncio.sleep(0.1 * (attempt + 1))
        raise AssertionError("unreachable")

    def new_table_id(self, game_type: str, request: str, command_id: Any, attempt: int = 0) -> tuple[str, str]:
        """(command id, table id) of a new table. With the caller's command_id, a retry of the
        same request names the same table (an HMAC of the request and the id), so the rules
        service answers it as a duplicate instead of making a second table. `attempt`: the
        next such id, for one refused as used long ago."""
        if command_id:
            cid = check_command_id(command_id)
            salt = f":{attempt}" if attempt else ""
            digest = hmac.new(self.s.signing_key.encode(), f"{request}:{cid}{salt}".encode(), "sha256")
            return cid, f"{game_type}-{digest.hexdigest()[:16]}"
        return secrets.token_hex(12), f"{game_type}-{secrets.token_hex(8)}"

    async def list_tables(self, game_type: Any, status: Any, limit: int, offset: int) -> dict[str, Any]:
        types = list(registry.GAME_IDS) if game_type in (None, "") else [self.spec(game_type).id]
        status = status or "open"
        if status not in STATUSES:
            raise bad_request("invalid_status", f"status is one of {', '.join(STATUSES)}", "status")
        limit, offset = self._page(limit, offset)
        ids: list[str] = []
        for gt in types:
            key = {"open": self.keys.lobby, "running": self.keys.running, "over": self.keys.finished}[status](gt)
            # Open tables oldest first (fill the lobby in order), the others newest first.
            ids.extend(await self.reads.listing(key, 0, offset + limit, newest_first=status != "open"))
        metas = await self.reads.metas(ids)
        rows = [table_summary(gid, m) for gid, m in zip(ids, metas) if m]
        rows = [row for row in rows if not row["origin"] or await self._fork_listed(row)]
        rows.sort(key=lambda t: t["created"], reverse=status != "open")
        return {"tables": rows[offset:offset + limit]}

    def _page(self, limit: Any, offset: Any, max_offset: int = MAX_OFFSET) -> tuple[int, int]:
        if not isinstance(limit, int) or not 1 <= limit <= MAX_LIST:
            raise bad_request("invalid_limit", f"limit is 1..{MAX_LIST}", "limit")
        if not isinstance(offset, int) or not 0 <= offset <= max_offset:
            raise bad_request("invalid_offset", f"offset is 0..{max_offset} (narrow the listing by game_type "
                              "and status for more)", "offset")
        return limit, offset

    async def get_table(self, game_id: str) -> dict[str, Any]:
        check_game_id(game_id)
        meta = await self.reads.meta(game_id)
        if not meta:
            raise not_found("no_such_game", f"no game {game_id}")
        summary = table_summary(game_id, meta)
        if summary["result"] is not None and summary["origin"] and not await self._fork_listed(summary):
            # A fork over while a game of its origins is still played: its result (scores, the
            # cards left in a deck...) tells of that game's hidden cards. Its seats have it in
            # their views; the public facts, which anyone with its id may read, leave it out
            # until the spectators may see the fork (_check_spectator).
            summary["result"] = None
        return summary

    async def join(self, game_id: str, seat: Any, player: Any = None, bot: Any = None, entropy: Any = None,
                   command_id: Any = None) -> dict[str, Any]:
        check_game_id(game_id)
        seat = check_seat(seat)
        player = check_text(player, "player", MAX_PLAYER_NAME)
        entropy = check_text(entropy, "entropy", MAX_ENTROPY)
        cid = check_join_command_id(command_id)
        game_type = await self.game_type_of(game_id)
        if bot not in (None, ""):
            if not isinstance(bot, str) or bot not in bot_names(registry.get(game_type)):
                raise bad_request("unknown_bot", f"bot is one of {', '.join(bot_names(registry.get(game_type)))}", "bot")
        meta = await self.reads.meta(game_id)
        if meta and seat >= int(meta.get("seats") or 0):
            raise bad_request("no_such_seat", f"this table has seats 0..{int(meta.get('seats') or 0) - 1}", "seat")
        request = rules_pb2.JoinSeatRequest(game_type=game_type, game_id=game_id, seat=seat, player=player,
                                            bot=bot or "", entropy=entropy, command_id=f"join:{seat}:{cid}")
        response = await self._call(game_type, game_id, "JoinSeat", request)
        self._remember_type(game_id, game_type)  # a table, even if not projected yet
        # The join's batch starts with its SeatJoined event (the start and deal may follow).
        joined = int(response.result.first_seq)
        version = int(response.result.version)
        if response.result.duplicate:
            # A retried join (its answer was lost) gets a token only while that join still
            # holds the seat: once it was left, the command_id must not take the seat back
            # from whoever holds it now. A leave answers after its projection, so the read
            # models show every leave acknowledged before this retry.
            await self.wait_projected(game_id, version)
            projected, holding = await self.reads.joined_at(game_id, seat)
            if projected < version:
                # The read models are behind the join itself (a projector catching up after a
                # broker restart, a rebuild): they cannot tell yet, so "retry", not "no".
                raise ApiError("unavailable", "seats_restoring",
                               "this table's seats are being restored; retry shortly", retry_after_s=1.0)
            if holding != joined:
                raise ApiError("conflict", "join_undone",
                               f"this join of seat {seat} was undone by a leave (the seat is free or someone else's "
                               "now); join again with a new command_id")
            # The rules service answers a join's command_id seen before whatever that join
            # carries (the comparison of a join's retry is the gateway's): a retry is the same
            # player or bot again. Else anyone sending that id (a client that makes ids as
            # another does) got the seat with a new token, and its holder's hidden cards.
            await self._same_join(game_id, seat, player, bot or None)
            if await self.reads.join_used(game_id, seat, joined):
                # A token of this join has been used: its caller got the answer, and whoever
                # sends the join again now (its command_id guessed) must not get the seat.
                raise ApiError("conflict", "join_in_use",
                               f"seat {seat} was given to this join and its token has been used since: sending the "
                               "join again does not give the seat again (its holder keeps it); a join of your own "
                               "needs a new command_id")
        token, claims = await self._grant_joined(game_id, seat, joined, cid)
        if not response.result.duplicate:  # (a duplicate's projection was confirmed above)
            await self.wait_projected(game_id, version)
        log.info("seat_joined", game_id=game_id, seat=seat)
        return {"game_id": game_id, "seat": seat, "token": token, "expires_at": claims.exp, "version": version}

    async def _same_join(self, game_id: str, seat: int, player: str, bot: str | None) -> None:
        """Refuses (409 command_id_reused) a join answered as a duplicate whose player or bot
        is not the seat's, as the read models name them (projected at the join's version)."""
        meta = await self.reads.meta(game_id) or {}
        try:
            seated = json.loads(meta.get("players") or "null")[seat]
        except (ValueError, TypeError, IndexError, KeyError):
            seated = None
        if not isinstance(seated, dict):
            raise ApiError("unavailable", "seats_restoring", "this table's seats are being restored; retry shortly",
                           retry_after_s=1.0)
        if (seated.get("player") or "") != player or (seated.get("bot") or None) != bot:
            raise ApiError("conflict", "command_id_reused",
                           f"this command_id already joined seat {seat} for another player; a join of your own "
                           "needs a new command_id")

    async def renew_seat(self, token: str | None, game_id: str, seat: Any) -> dict[str, Any]:
        """A new token for the seat this (still valid) token holds, a full lifetime from now,
        for a game that outlasts a token (turn clocks run up to a day a move). It keeps the
        token's id, so the seat's holder does not change: the old token, and every stream open
        with it, goes on until its own expiry. Signed with the current key (a rotation's)."""
        check_game_id(game_id)
        seat = check_seat(seat)
        claims = await self.seat_claims(token, game_id)
        if claims.seat != seat:
            raise forbidden("wrong_seat", "this token is for another seat")
        new, renewed = await self.grant_seat(game_id, seat, join=claims.join, jti=claims.jti)
        log.info("seat_renewed", game_id=game_id, seat=seat)
        return {"game_id": game_id, "seat": seat, "token": new, "expires_at": renewed.exp}

    async def leave(self, token: str | None, game_id: str, seat: Any, command_id: Any = None) -> dict[str, Any]:
        check_game_id(game_id)
        seat = check_seat(seat)
        try:
            claims = await self.seat_claims(token, game_id)
        except SeatLost as exc:
            # The seat's record says this very token left it (left_mark): this is a retry of
            # that leave whose answer was lost (a dropped connection, a timeout), and it gets
            # that answer again. A record that still names the token, the read models showing
            # the seat free: a leave committed but never marked, whose retry the rules
            # service's dedupe may answer (_leave_unmarked). Anything else (another holder, no
            # record, the bare mark of an earlier gateway, which does not say whose leave it
            # was) stays a 401.
            if exc.claims.seat != seat:
                raise
            left = left_by(exc.record)
            if left is None and exc.record == exc.claims.jti and command_id is not None:
                return await self._leave_unmarked(exc, game_id, seat, command_id)
            if left is None or left[0] != exc.claims.jti:
                raise
            version = left[1]
            await self.wait_projected(game_id, version)
            log.info("seat_leave_repeated", game_id=game_id, seat=seat)
            return {"game_id": game_id, "seat": seat, "version": version, "duplicate": True}
        if claims.seat != seat:
            raise forbidden("wrong_seat", "this token is for another seat")
        game_type = await self.game_type_of(game_id)
        cid = check_command_id(command_id, required=False)
        request = rules_pb2.LeaveSeatRequest(game_type=game_type, game_id=game_id, seat=seat,
                                             command_id=f"leave:{seat}:{cid}")
        response = await self._call(game_type, game_id, "LeaveSeat", request)
        version = int(response.result.version)
        if response.result.duplicate and version <= claims.join:
            # The command_id's leave came before this token's join: an earlier holder's leave
            # of the seat with the same id (ids are namespaced by seat, not by holder), and
            # nothing was done now. Marked, it would unseat a player the log still seats.
            raise ApiError("conflict", "command_id_reused",
                           f"this command_id was the leave of an earlier holder of seat {seat}; you still hold "
                           "the seat: leave with a new command_id")
        await self._mark_left(game_id, seat, claims.jti, version)
        await self.wait_projected(game_id, version)
        return {"game_id": game_id, "seat": seat, "version": version, "duplicate": bool(response.result.duplicate)}

    async def _leave_unmarked(self, lost: SeatLost, game_id: str, seat: int, command_id: Any) -> dict[str, Any]:
        """A retried leave whose first try committed but was never marked (the answer lost
        before drop_holder: the router's deadline ran out after the commit, or Redis failed),
        the read models having caught up since: the seat's record still names the token, and
        the read models show the seat free. The leave goes to the rules service again, with
        the same command_id and the version at which the read models show the seat free as its
        expected_version: a command_id seen before is answered (duplicate) whatever the
        version, and a fresh leave cannot remove anyone, since at that version the seat is
        free (seat_empty) and at any later one the version differs (version_conflict: someone
        may have joined since). A refusal is the 401 it would have been."""
        claims = lost.claims
        cid = check_command_id(command_id, required=False)
        # One read of the record and the seat's join: still this token's record, and the read
        # models past the token's join and naming no join for the seat (0: left; a missing
        # field, as from a projector that does not write it, proves nothing).
        holder, version, joined = await self.reads.holder_and_join(game_id, seat)
        if holder != claims.jti or version is None or version < claims.join or joined != 0:
            raise lost
        game_type = await self.game_type_of(game_id)
        request = rules_pb2.LeaveSeatRequest(game_type=game_type, game_id=game_id, seat=seat,
                                             command_id=f"leave:{seat}:{cid}", expected_version=version)
        try:
            response = await self.router.call(game_type, game_id, "LeaveSeat", request)
        except Rejection as rej:
            if rej.kind in RETRYABLE or rej.code in BUSY:
                raise ApiError.from_rejection(rej) from None  # no answer yet: the client retries
            log.info("seat_leave_retry_refused", game_id=game_id, seat=seat, code=rej.code)
            raise lost from None
        result = response.result
        left_at = int(result.version)
        if result.duplicate and left_at <= claims.join:
            # The command_id's leave came before this token's join (a former holder's leave
            # with the same command_id): not this token's.
            raise lost
        if not result.duplicate:
            # Cannot be: the seat is free at the expected version. Committed all the same, so
            # it is answered as the leave it is.
            log.error("seat_leave_retry_committed", game_id=game_id, seat=seat, version=left_at)
        await self._mark_left(game_id, seat, claims.jti, left_at)
        await self.wait_projected(game_id, left_at)
        log.info("seat_leave_repeated", game_id=game_id, seat=seat, unmarked=True)
        return {"game_id": game_id, "seat": seat, "version": left_at, "duplicate": bool(result.duplicate)}

    async def _mark_left(self, game_id: str, seat: int, jti: str, version: int) -> None:
        """drop_holder after a committed leave. Redis failing is logged, not answered: the
        leave is committed, and once projected the read models refuse the token anyway (whose
        retry _leave_unmarked answers)."""
        try:
            await self.reads.drop_holder(game_id, seat, jti, self.s.token_ttl_s, version=version)
        except RedisError as exc:
            log.warning("seat_leave_unmarked", game_id=game_id, seat=seat, version=version, error=type(exc).__name__)
        self.holders.forget(game_id)

    # -- play -----------------------------------------------------------------------------

    async def snapshot(self, game_id: str, claims: SeatClaims | None, *, min_version: int = 0,
                       wait_s: float = 0.0, address: str | None = None) -> Snapshot:
        """The caller's view (a spectator's without a seat), waiting up to wait_s for min_version.
        A wait holds one of the caller's address's stream slots (stream_slot) while it lasts:
        a long poll is a stream too."""
        check_game_id(game_id)
        seat = claims.seat if claims else None
        join = claims.join if claims else 0
        jti = claims.jti if claims else None
        snap = await self._snapshot(game_id, seat, join, jti)
        if snap is None and (claims is not None or game_id in self._types):
            # Created or joined here a moment ago, not projected yet: wait for it a little.
            await self.wait_projected(game_id, 1, NEW_GAME_WAIT_S)
            snap = await self._snapshot(game_id, seat, join, jti)
        if snap is None:
            raise not_found("no_such_game", f"no game {game_id}")
        if claims is None:
            await self._check_spectator(game_id)
        if snap.version >= min_version or wait_s <= 0:
            return snap
        deadline = time.monotonic() + min(wait_s, MAX_WAIT_S)
        with self.stream_slot(address):
            async with self.hub.watch(game_id) as watch:
                while True:
                    snap = await self._snapshot(game_id, seat, join, jti) or snap
                    remaining = deadline - time.monotonic()
                    if snap.version >= min_version or remaining <= 0 or snap.status == "over":
                        return snap
                    await watch.wait(min(remaining, self.s.stream_poll_s))

    async def _fork_listed(self, row: dict[str, Any]) -> bool:
        """Whether the public listings show a fork: only once its origins are over (as
        _check_spectator), by the read models alone (no log read for a listing)."""
        if row["game_id"] in self._spectated:
            return True
        from croupier_gateway.replay_routes import origin_over

        return await origin_over(self, row["origin"], read_logs=False)

    async def _check_spectator(self, game_id: str) -> None:
        """Refuses a spectator a fork whose origin (or the origin's origin...) is still being
        played: the cards laid in a fork (by its seats, or by its turn clock alone) are that
        running game's hidden cards, dealt again (so they tell nothing of where they lie
        there; but a fork made before 2026-12-03 kept its origin's hands and decks). Called
        after the game's views were found, so its meta is there to read."""
        if game_id in self._spectated:
            self._spectated.move_to_end(game_id)
            return
        from croupier_gateway.replay_routes import fork_of_running_game, origin_over

        meta = await self.reads.meta(game_id)
        if meta is None:
            return  # gone meanwhile (a rebuild): the read that follows finds nothing either
        raw = meta.get("origin") or ""
        if raw:
            if self.player_replays.locked():  # an origin's status may take a read of its log
                raise ApiError("unavailable", "replays_busy", "this gateway is reading other logs; retry shortly",
                               retry_after_s=2)
            try:
                origin = json.loads(raw)
            except ValueError:
                origin = {"game_id": ""}  # unreadable: taken as not over
            async with self.player_replays:
                if not isinstance(origin, dict) or not await origin_over(self, origin):
                    raise fork_of_running_game()
        self._spectated[game_id] = None
        if len(self._spectated) > SPECTATED_KEPT:
            self._spectated.popitem(last=False)

    async def _snapshot(self, game_id: str, seat: int | None, join: int, jti: str | None = None) -> Snapshot | None:
        """reads.snapshot, with a token's join checked against the read models (the holders'
        record may still name a token whose seat another join has taken: a leave whose record
        failed, a join not recorded yet), and its jti against the holders' record, in the same
        transaction as the view: a long poll or a stream's first read begun before its token
        lost the seat (a fork's seat issued to another, which no join tells) reads again and
        again, and must not be handed the new holder's view."""
        try:
            return await self.reads.snapshot(game_id, seat, join, jti)
        except SeatTaken:
            raise unauthenticated("this token no longer holds its seat") from None

    async def submit(self, token: str | None, game_id: str, command_id: Any, expected_version: Any,
                     action: Any, *, wait: bool = True) -> dict[str, Any]:
        check_game_id(game_id)
        cid = check_command_id(command_id)
        if expected_version is not None and (not isinstance(expected_version, int) or isinstance(expected_version, bool)
                                             or not 0 <= expected_version < 2**63):
            raise bad_request("invalid_expected_version", "expected_version is a non-negative integer", "expected_version")
        if not isinstance(action, Mapping) or not isinstance(action.get("type"), str):
            raise bad_request("invalid_action", 'action is an object with a string "type"', "action")
        claims = await self.seat_claims(token, game_id)
        game_type = await self.game_type_of(game_id)
        try:
            if wide_int(action):
                # Else checked here as the integer it is, and read by the rules service as a
                # float: refused there (or worse) with nothing naming the action.
                raise bad_request("invalid_action", "an integer in an action is within 64 bits "
                                  f"({JSON_INT_MIN}..{JSON_INT_MAX})", "action")
            action_json = canonical_json(action)
            # Before the codec, whose refusals may quote the action, and the rules request,
            # which cannot carry a lone surrogate (a JSON escape such as "\\ud800").
            check_unicode(action_json, "invalid_action", "action")
            if len(action_json) > MAX_ACTION_CHARS:
                raise ApiError("too_large", "action_too_large",
                               f"an action is at most {MAX_ACTION_CHARS} characters of JSON", field="action")
            checked = (game_type, claims.seat, action_json)
            if checked not in self._checked_actions:
                # The game's codec decides whether an action is well formed, from the action
                # and the seat alone: an action seen before need not be decoded again.
                self.host(game_type).decode_action(dict(action), claims.seat)
                if len(action_json) <= MAX_REMEMBERED_ACTION:
                    if len(self._checked_actions) >= CHECKED_ACTIONS:
                        self._checked_actions.clear()
                    self._checked_actions.add(checked)
        except Rejection as rej:
            raise ApiError.from_rejection(rej, field="action") from None
        except (TypeError, ValueError, RecursionError):
            raise bad_request("invalid_action", "action must be plain JSON, nested at most a few levels", "action") from None
        request = rules_pb2.HandleCommandRequest(game_type=game_type, game_id=game_id, seat=claims.seat,
                                                 command_id=f"s{claims.seat}:{cid}", action_json=action_json)
        if expected_version is not None:
            request.expected_version = expected_version
        response = await self._call(game_type, game_id, "HandleCommand", request)
        result = response.result
        if wait:
            await self.wait_projected(game_id, int(result.version))
        return {"game_id": game_id, "seat": claims.seat, "version": int(result.version),
                "first_seq": int(result.first_seq), "last_seq": int(result.last_seq), "duplicate": bool(result.duplicate)}

    async def updates(self, game_id: str, claims: SeatClaims | None, from_version: int) -> AsyncIterator[Snapshot]:
        """The caller's view each time it changes after from_version: strictly increasing
        versions, none twice, ending after the game is over (a from_version above the version a
        game ended at is refused, invalid_from_version). Subscribes before it reads, so
        an update between the read and the subscription cannot be lost. After the first
        read, the game's room (fanout.py) reads the views of all its streams here at once
        and hands this one its own seat's."""
        check_game_id(game_id)
        seat = claims.seat if claims else None
        join = claims.join if claims else 0
        jti = claims.jti if claims else None
        async with self.fanout.viewer(game_id, seat, from_version, jti, join) as viewer:
            # A table this gateway has just created or joined may not be projected yet.
            appear_by = time.monotonic() + (NEW_GAME_WAIT_S if claims or game_id in self._types else 0)
            snap = await self._snapshot(game_id, seat, join, jti)
            while snap is None:
                if time.monotonic() >= appear_by:
                    raise not_found("no_such_game", f"no game {game_id}")
                await viewer.wait(0.1)
                snap = await self._snapshot(game_id, seat, join, jti)
            if claims is None:
                await self._check_spectator(game_id)
            if from_version > snap.version and snap.status == "over":
                raise _past_the_end(from_version, snap.version)
            # Above a running game's version, it waits: the read models may be behind what a
            # client was shown (Redis back without its last second, a rebuild refolding).
            if snap.version > viewer.seen:
                viewer.seen = snap.version
            if snap.version > viewer.last:
                viewer.last = snap.version
                yield snap
                if snap.status == "over":
                    return
            elif snap.status == "over":
                return  # nothing newer will ever come
            while True:
                snap = viewer.take()
                if snap is None:
                    if viewer.over_at is not None:
                        # The game ended at or below where the stream was asked to start.
                        if from_version > viewer.over_at:
                            raise _past_the_end(from_version, viewer.over_at)
                        return
                    await viewer.wait(None)
                    continue
                yield snap
                if snap.status == "over":
                    return


def _past_the_end(from_version: int, final: int) -> ApiError:
    """A stream asked to start after a version the game never reached: it ended at `final`."""
    return bad_request("invalid_from_version", f"from_version {from_version} is above the version the game "
                       f"ended at ({final})", "from_version")
