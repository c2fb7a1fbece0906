"""What the gateway reads from Redis: the projector's read models, and its own seat holders.

Every read of a view is one transaction (MULTI/EXEC) over the game's meta and views hashes,
which the projector writes in one script, so a version always comes with the view and the
actions of that same version.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from redis.exceptions import RedisError, WatchError
from redis.exceptions import TimeoutError as RedisTimeoutError

from croupier.projector.keys import Keys
from croupier_gateway.feed import SEATS

SPECTATOR = "spectator"
LEFT = "-"  # the seat holder record of a seat that was left, as gateways before left_mark wrote it
LEFT_PREFIX = "left:"  # the record of a seat that was left: left:{jti}:{version} (left_mark)
# Beside a seat's holder, `used:{seat}:{join}`: a token of that join (the seq of its SeatJoined)
# has been used, so a retry of the join is no retry of a lost answer (Gateway.join).
USED_PREFIX = "used:"


class SeatTaken(Exception):
    """A seat token's join no longer holds its seat, as the read models say."""

    def __init__(self, game_id: str, seat: int):
        super().__init__(f"seat {seat} of {game_id} is held by another join")


def holds(version: int | None, joined: int | None, join: int) -> bool:
    """Whether the join of seq `join` still holds its seat, by the read models at `version`
    naming `joined` as the seat's join: until they show that join (version below it) they
    prove nothing, nor does a record they lack."""
    return not join or version is None or version < join or joined is None or joined == join


def left_mark(jti: str, version: int) -> str:
    """The seat holder record of a seat whose holder `jti` left it, committed at `version`:
    a retry of that leave (its answer lost) is answered from it. A jti never holds ":"
    (secrets.token_urlsafe), so no holder's record is ever taken for a leave's."""
    return f"{LEFT_PREFIX}{jti}:{int(version)}"


def left_by(raw: str | None) -> tuple[str, int] | None:
    """(jti, version) of the leave a holder record names; None for a holder, no record, or the
    bare LEFT of an earlier gateway (a leave, but whose is not known)."""
    if raw is None or not raw.startswith(LEFT_PREFIX):
        return None
    jti, sep, version = raw[len(LEFT_PREFIX):].rpartition(":")
    if not sep or not jti or not version.isdigit():
        return None
    return jti, int(version)


def is_left(raw: str | None) -> bool:
    """Whether a holder record marks the seat left: left_mark's form, or the bare LEFT that
    gateways before it wrote (still in Redis during a rolling upgrade)."""
    return raw is not None and (raw == LEFT or raw.startswith(LEFT_PREFIX))


def _int(raw: Any) -> int | None:
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


META_FIELDS = ("version", "status", "game_type", "seats", "players", "free_seats", "result", "end_reason",
               "seed_hash", "options", "created", "updated")


def _text(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


@dataclass(frozen=True)
class Snapshot:
    """One viewer's view of a game at one version (raw canonical JSON from Redis)."""

    version: int
    status: str
    view: str
    actions: str  # JSON list; "[]" for spectators


def table_summary(game_id: str, meta: dict[str, str]) -> dict[str, Any]:
    """The public facts of a table (what a lobby may show): never views, never the seed."""

    def num(name: str) -> int:
        try:
            return int(meta.get(name) or 0)
        except ValueError:
            return 0

    def js(name: str, default: Any) -> Any:
        raw = meta.get(name)
        if not raw:
            return default
        try:
            return json.loads(raw)
        except ValueError:
            return default

    status = meta.get("status", "")
    out = {
        "game_id": game_id,
        "game_type": meta.get("game_type", ""),
        "status": status,
        "version": num("version"),
        "seats": num("seats"),
        "free_seats": num("free_seats"),
        "players": js("players", []),
        "options": js("options", {}),
        "seed_hash": meta.get("seed_hash", ""),
        "created": num("created"),
        "updated": num("updated"),
        "result": js("result", None) if status == "over" else None,
        "end_reason": (meta.get("end_reason") or None) if status == "over" else None,
        "origin": js("origin", None),
    }
    return out


class ReadStore:
    def __init__(self, redis: Any, keys: Keys):
        self.r = redis  # redis.asyncio.Redis (bytes responses)
        self.k = keys

    def seats_key(self, game_id: str) -> str:
        # Not under g:{id}: a projector rebuild drops the read models, not the seat holders.
        return f"{self.k.p}gw:seats:{{{game_id}}}"

    async def meta(self, game_id: str) -> dict[str, str] | None:
        raw = await self.r.hgetall(self.k.meta(game_id))
        if not raw:
            return None
        return {_text(k): _text(v) for k, v in raw.items()}

    async def metas(self, game_ids: list[str]) -> list[dict[str, str] | None]:
        if not game_ids:
            return []
        pipe = self.r.pipeline(transaction=False)
        for gid in game_ids:
            pipe.hgetall(self.k.meta(gid))
        out = []
        for raw in await pipe.execute():
            out.append({_text(k): _text(v) for k, v in raw.items()} if raw else None)
        return out

    async def game_type(self, game_id: str) -> str | None:
        value = await self.r.hget(self.k.meta(game_id), "game_type")
        return _text(value) if value else None

    async def version(self, game_id: str) -> int | None:
        value = await self.r.hget(self.k.meta(game_id), "version")
        return int(value) if value is not None else None

    async def snapshot(self, game_id: str, seat: int | None, join: int = 0, jti: str | None = None) -> Snapshot | None:
        """The seat's (None: a spectator's) view. With `join`, the seq of the join a seat token
        was issued for: raises SeatTaken if the read models, at or after that join, name
        another join (or a leave) as the seat's, read in the same transaction as the view.
        With `jti`, the token's id: raises SeatTaken too if the seat holders' record names
        another token or a leave (a fork's seat given to another by an operator has no join
        the read models could tell apart), read in the same transaction."""
        fields = [SPECTATOR] if seat is None else [str(seat), f"actions:{seat}"]
        joins = (seat,) if seat is not None and join else ()
        seats = (seat,) if seat is not None and jti is not None else ()
        version, status, values, held, joined = await self.views_and_holders(game_id, fields, seats, joins)
        if joins and not holds(version, joined[0], join):
            raise SeatTaken(game_id, seat)
        if seats and held[0] is not None and held[0] != jti:  # (no record at all proves nothing)
            raise SeatTaken(game_id, seat)
        if version is None or values[0] is None:
            return None
        actions = values[1] if seat is not None else None
        return Snapshot(version, status, _text(values[0]), _text(actions) if actions else "[]")

    async def views(self, game_id: str, fields: list[str]) -> tuple[int | None, str, list[Any]]:
        """(version, status, the views hash's `fields`) in one transaction; version None: not projected."""
        version, status, values, _, _ = await self.views_and_holders(game_id, fields, ())
        return version, status, values

    async def views_and_holders(self, game_id: str, fields: list[str], seats: Sequence[int],
                                joins: Sequence[int] = ()) -> tuple[int | None, str, list[Any], list[str | None],
                                                                    list[int | None]]:
        """views(), the holders of `seats` (as holder() gives them) and the joins the read
        models name for the seats `joins` (the seq of the SeatJoined holding each; 0: left;
        None: not recorded), in one transaction."""
        commands = [("HMGET", self.k.meta(game_id), "version", "status", *(f"joined:{s}" for s in joins)),
                    ("HMGET", self.k.views(game_id), *fields)]
        if seats:
            commands.append(("HMGET", self.seats_key(game_id), *map(str, seats)))
        replies = await self._transaction(commands)
        (version, status, *joined_raw), values = replies[0], replies[1]
        holders = [_text(h) if h is not None else None for h in replies[2]] if seats else []
        joined = [_int(j) for j in joined_raw]
        if version is None:
            return None, "", values, holders, joined
        return int(version), _text(status or b""), values, holders, joined

    async def _transaction(self, commands: list[tuple]) -> list[Any]:
        """MULTI, the commands, EXEC on one pooled connection: the replies of the commands.
        What redis-py's pipeline does, without its per-call machinery (this is on the path of
        every update of every game): one time bound for the whole exchange, raw replies (no
        response callbacks)."""
        pool = self.r.connection_pool
        conn = await pool.get_connection()
        try:
            timeout = conn.socket_timeout or None
            try:
                async with asyncio.timeout(timeout):
                    await conn.send_packed_command(conn.pack_commands([("MULTI",), *commands, ("EXEC",)]),
                                                   check_health=False)
                    for _ in range(len(commands) + 1):  # OK, then QUEUED for each
                        await conn.read_response(timeout=math.inf)
                    replies = await conn.read_response(timeout=math.inf)
            except TimeoutError:
                raise RedisTimeoutError("Timeout reading from Redis") from None
        except BaseException:
            # Mid-transaction (an error, a timeout, a cancel): the connection cannot be reused as it is.
            await conn.disconnect()
            raise
        finally:
            await pool.release(conn)
        if replies is None:
            raise RedisError("the transaction was aborted")
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        return replies

    async def all_views(self, game_id: str) -> dict[str, str]:
        raw = await self.r.hgetall(self.k.views(game_id))
        return {_text(k): _text(v) for k, v in raw.items()}

    async def listing(self, key: str, offset: int, limit: int, *, newest_first: bool = True) -> list[str]:
        if newest_first:
            ids = await self.r.zrevrange(key, offset, offset + limit - 1)
        else:
            ids = await self.r.zrange(key, offset, offset + limit - 1)
        return [_text(i) for i in ids]

    async def count(self, key: str) -> int:
        return int(await self.r.zcard(key))

    # -- seat holders ---------------------------------------------------------------------

    async def set_holder(self, game_id: str, seat: int, jti: str, ttl_s: int) -> None:
        """Record the seat's holder and say so on the game's feed, in one transaction (every
        gateway's cache of holders hears of the change: holders.py)."""
        key = self.seats_key(game_id)
        pipe = self.r.pipeline(transaction=True)
        pipe.hset(key, str(seat), jti)
        pipe.expire(key, ttl_s, gt=True)
        pipe.expire(key, ttl_s, nx=True)
        pipe.publish(self.k.feed(game_id), SEATS)
        await pipe.execute()

    async def renew_holder(self, game_id: str, seat: int, jti: str, ttl_s: int) -> bool:
        """set_holder for a renewal: the record keeps `jti` for ttl_s more, only if it still
        names `jti` (or nothing: Redis lost it, and the read models vouched for the token);
        False, and nothing written, if it names another token or a leave. Read and written
        under WATCH: a leave and another player's join landing between a renewal's check of
        its token and this write were overwritten by it, the new holder refused for good."""
        key = self.seats_key(game_id)
        async with self.r.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(key)
                    current = await pipe.hget(key, str(seat))
                    if current is not None and _text(current) != jti:
                        await pipe.unwatch()
                        return False
                    pipe.multi()
                    pipe.hset(key, str(seat), jti)
                    pipe.expire(key, ttl_s, gt=True)
                    pipe.expire(key, ttl_s, nx=True)
                    pipe.publish(self.k.feed(game_id), SEATS)
                    await pipe.execute()
                    return True
                except WatchError:
                    continue

    async def mark_join_used(self, game_id: str, seat: int, join: int, ttl_s: int) -> None:
        """Record that a token of the join of seq `join` has been used (a field of its own per
        join, so a late mark of an earlier join never hides a later one's); the record lives as
        long as the seat holders' (a key made here expires too)."""
        key = self.seats_key(game_id)
        pipe = self.r.pipeline(transaction=True)
        pipe.hset(key, f"{USED_PREFIX}{seat}:{int(join)}", "1")
        pipe.expire(key, ttl_s, nx=True)
        await pipe.execute()

    async def join_used(self, game_id: str, seat: int, join: int) -> bool:
        """Whether a token of the join of seq `join` has been used (mark_join_used)."""
        return bool(await self.r.hexists(self.seats_key(game_id), f"{USED_PREFIX}{seat}:{int(join)}"))

    async def holder(self, game_id: str, seat: int) -> str | None:
        """The jti holding the seat; after a leave, a record is_left() tells (left_by() names
        the jti that left and the version of its leave); None when nothing is recorded."""
        value = await self.r.hget(self.seats_key(game_id), str(seat))
        return _text(value) if value is not None else None

    async def holder_and_join(self, game_id: str, seat: int) -> tuple[str | None, int | None, int | None]:
        """holder(), with the read models' version and the join they name for the seat (as
        views_and_holders gives it), in one transaction."""
        (holder,), (version, joined) = await self._transaction([
            ("HMGET", self.seats_key(game_id), str(seat)),
            ("HMGET", self.k.meta(game_id), "version", f"joined:{seat}")])
        return (_text(holder) if holder is not None else None), _int(version), _int(joined)

    async def joined_at(self, game_id: str, seat: int) -> tuple[int, int]:
        """(version, seq of the SeatJoined event that holds the seat then; 0: free) from the
        read models, which the projector rebuilds from the log; (0, 0) if not projected."""
        version, joined = await self.r.hmget(self.k.meta(game_id), "version", f"joined:{seat}")
        try:
            return (int(version) if version is not None else 0), (int(joined) if joined is not None else 0)
        except ValueError:
            return 0, 0

    async def drop_holder(self, game_id: str, seat: int, jti: str, ttl_s: int, *, version: int) -> bool:
        """Mark the seat left by `jti` at `version` (the leave's committed version: left_mark), if
        `jti` still holds it (or nothing is recorded), and say so on the feed; False if the record
        names anything else now (another token, a leave), which is left as it is. Read and
        written under WATCH: in two plain steps, a join of the seat landing between them was
        overwritten with the leave, and its holder's token refused for good. A mark, not a
        deletion: with no record the gateway would fall back to the read models, which may not
        show the leave yet; and the mark names the token and version, so that a retry of this
        leave gets its answer again (Gateway.leave)."""
        key = self.seats_key(game_id)
        async with self.r.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(key)  # a holder written meanwhile makes the EXEC fail, and we look again
                    current = await pipe.hget(key, str(seat))
                    if current is not None and _text(current) != jti:
                        await pipe.unwatch()
                        return False
                    fresh = current is None
                    pipe.multi()
                    pipe.hset(key, str(seat), left_mark(jti, version))
                    if fresh:  # Redis lost the record (or never had it): this one expires too
                        pipe.expire(key, ttl_s, nx=True)
                    pipe.publish(self.k.feed(game_id), SEATS)
                    await pipe.execute()
                    return True
                except WatchError:
                    continue
