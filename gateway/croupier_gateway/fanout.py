"""One view read per game per update, for every stream of that game on this gateway, and
none at all when the update's message carries the views.

A `Room` is one game's streams here. It is the one watcher of the game's change feed among
them. The projector's message after an update carries the game's version, status and every
viewer's view and legal actions (croupier.projector.feed): the room hands each stream the
view of its own seat (a spectator's view to spectators), never another's, straight from it.
On any other message (a reconnect of the feed, a projector of an earlier version that sends
the version alone) it reads the same, in one transaction, from Redis. A stream waits on its
own `Viewer`, which keeps only the newest snapshot it has not sent (a slow stream skips to
the latest, as before).

Nothing is handed out or read when the message names a version that every viewer has
already seen (the projector publishes after it writes, so the read models hold at least
that version), or says only that the seat holders changed. The room also re-reads every
`poll_s` without a message, should pub/sub drop one. A read that fails with a Redis error
is made again at the next poll or message (whatever the message: a read, not the message's
views, since the failed one may have been a check of the seats' holders); READ_ATTEMPTS
failing in a row end the room, its streams get the error (a 503, as before) and a new
stream makes a new room.

The read also refreshes the seat holders' cache (holders.py) for the room's seats; a room fed
by messages leaves it to the commands' own check, which reads a holder once its entry is
older than the cache's TTL.

A seated stream holds its token's jti. A `seats` message (a gateway changed a holder of the
game) makes the room read, and every read compares the holders with its seated streams: a
stream whose token no longer holds its seat (left, or left and taken by someone else) ends
with `unauthenticated` at once, before the seat's next view could reach it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import structlog
from redis.exceptions import RedisError

from croupier.projector import feed
from croupier_gateway.errors import unauthenticated
from croupier_gateway.feed import FeedHub, Watch
from croupier_gateway.holders import HolderCache
from croupier_gateway.reads import SPECTATOR, ReadStore, Snapshot, _text, holds, is_left

log = structlog.get_logger("croupier.gateway")

SPECTATOR_FIELD = SPECTATOR.encode()
# Reads of a room that may fail in a row (a Redis error each) before its streams get the
# error: one passing fault (a dropped connection, a failover) must not end every stream of
# the game at once.
READ_ATTEMPTS = 3


class Viewer(Watch):
    """One stream's place in a room: woken when the room has something for it."""

    __slots__ = ("seat", "jti", "join", "last", "seen", "pending", "error", "over_at")

    def __init__(self, seat: int | None, last: int, jti: str | None = None, join: int = 0) -> None:
        super().__init__()
        self.seat = seat
        self.jti = jti  # the token's, for a seat: the stream lasts while it holds the seat
        self.join = join  # the seq of the token's join (0: unknown): the same, by the read models
        self.last = last  # the newest version this stream has sent (or was asked to start after)
        self.seen = -1  # the newest version a read for this viewer has found
        self.pending: Snapshot | None = None  # newer than `last`, not taken yet
        self.error: BaseException | None = None
        # The final version, when the game ended at or below `last` (a stream asked to start
        # after a version the game never reached): nothing will ever be sent, so it ends.
        self.over_at: int | None = None

    def take(self) -> Snapshot | None:
        """The newest snapshot after `last` (which it becomes), if any; raises the room's error."""
        if self.error is not None:
            raise self.error
        snap = self.pending
        self.pending = None
        if snap is None or snap.version <= self.last:
            return None
        self.last = snap.version
        return snap

    def offer(self, snap: Snapshot) -> None:
        if snap.version > self.seen:
            self.seen = snap.version
        if snap.version > self.last and (self.pending is None or snap.version > self.pending.version):
            self.pending = snap
            self.notify()
        elif snap.status == "over" and snap.version <= self.last and self.over_at is None:
            self.over_at = snap.version
            self.notify()


class Room(Watch):
    __slots__ = ("fanout", "game_id", "channel", "viewers", "ready", "task", "closed")

    def __init__(self, fanout: Fanout, game_id: str) -> None:
        super().__init__()
        self.fanout = fanout
        self.game_id = game_id
        self.channel = fanout.hub.keys.feed(game_id)
        self.viewers: set[Viewer] = set()
        self.ready = asyncio.get_running_loop().create_future()
        self.task: asyncio.Task | None = None
        self.closed = False  # its loop has ended (or is ending): a new stream makes a new room

    async def run(self) -> None:
        hub = self.fanout.hub
        try:
            await hub.add(self.channel, self)
        except BaseException as exc:
            self._fail(exc)
            if isinstance(exc, asyncio.CancelledError):
                self.ready.cancel()
                raise
            self.ready.set_exception(exc)
            self.ready.exception()  # marked retrieved: the viewers waiting on it raise it
            return
        self.ready.set_result(None)
        try:
            poll_s = self.fanout.poll_s
            failures = 0  # reads failed in a row
            while self.viewers:
                notified = await self.wait(poll_s)
                if notified:
                    need = self._must_read()
                    if not failures:  # (after a failed read, only a read will do)
                        if need is None:
                            continue
                        if isinstance(need, bytes) and self.offer(need):
                            continue
                try:
                    await self.read()
                    failures = 0
                except RedisError as exc:
                    failures += 1
                    if failures >= READ_ATTEMPTS:
                        raise
                    log.warning("room_read_failed", game_id=self.game_id, failures=failures, error=str(exc))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            self._fail(exc)
            if not isinstance(exc, Exception):
                raise
        finally:
            # Out of the registry before the first await: the loop may end with streams still
            # counting on it (the read dropped the last one, whose own cleanup waits until its
            # consumer asks for more; a slow send delays that), and a stream joining meanwhile
            # would wait on a room that never reads again.
            self._close()
            await asyncio.shield(hub.remove(self.channel, self))

    def _must_read(self) -> bytes | None | bool:
        """What the messages since the last wait call for: None, nothing; the views message
        of the newest version they named, to hand out; True, a read."""
        version, other, views, seats = self.version, self.other, self.views, self.seats
        self.version, self.other, self.views, self.seats = 0, False, None, False
        if other or seats and any(v.jti is not None for v in self.viewers):
            return True  # (a holder change: the read checks the seated streams' tokens)
        if not version:
            return None  # only a change of seat holders: the views are the same
        if all(v.seen >= version for v in self.viewers):
            return None
        return views if views is not None else True

    def offer(self, message: bytes) -> bool:
        """Hand every viewer its own view from a views message (croupier.projector.feed);
        False, and nothing handed out, if the message lacks one of them (then: a read)."""
        views = feed.decode(message)
        if views is None:
            return False
        fields = views.fields
        snaps: dict[int | None, Snapshot] = {}
        for v in self.viewers:
            if v.seat in snaps:
                continue
            if v.seat is None:
                view, actions = fields.get(SPECTATOR_FIELD), b"[]"
            else:
                key = str(v.seat).encode()
                view, actions = fields.get(key), fields.get(b"actions:" + key)
            if view is None or actions is None:
                return False
            snaps[v.seat] = Snapshot(views.version, views.status, view.decode(), actions.decode())
        for v in list(self.viewers):
            v.offer(snaps[v.seat])
        return True

    async def read(self) -> None:
        viewers = list(self.viewers)
        if not viewers:
            return
        fields: list[str] = []
        index: dict[int | None, int] = {}
        for v in viewers:
            if v.seat not in index:
                index[v.seat] = len(fields)
                if v.seat is None:
                    fields.append(SPECTATOR)
                else:
                    fields.append(str(v.seat))
                    fields.append(f"actions:{v.seat}")
        # The seats' holders come along (one command more in the same transaction): the
        # holder cache stays fresh at every update, so the next command of a seat costs no read.
        # They also end the streams of tokens that no longer hold their seats.
        holders = self.fanout.holders
        seats = [seat for seat in index if seat is not None]
        stamp = None
        if seats and holders is not None:
            stamp, read_at = holders.stamp(self.game_id), holders.now()
        joins = [seat for seat in seats if any(v.seat == seat and v.join for v in viewers)]
        version, status, values, held, joined = await self.fanout.reads.views_and_holders(
            self.game_id, fields, seats, joins)
        holder_of = dict(zip(seats, held))
        joined_of = dict(zip(joins, joined))
        if stamp is not None:
            # Only holders a stream here vouches for: its token is the record's, and the read
            # models (when they know its join) name that join. The record alone may lag the log
            # (a leave whose record failed): cached, it would let the old token act.
            vouched = {(v.seat, v.jti) for v in viewers
                       if v.jti is not None and holds(version, joined_of.get(v.seat), v.join)}
            for seat, jti in holder_of.items():
                if jti is not None and not is_left(jti) and (seat, jti) in vouched:
                    holders.put(self.game_id, seat, jti, stamp, read_at)
        for v in viewers:
            # No record at all (Redis lost its data) proves nothing: the commands' own check
            # falls back to the read models then; a record of another holder, or of a leave, does.
            # Nor does the holders' record alone: a leave whose record failed, or a join not
            # recorded yet, leaves it naming the old token while the read models (written with
            # the views, in the same transaction as this read) name the join that holds the seat.
            if (v.jti is not None and holder_of.get(v.seat) not in (None, v.jti)
                    or v.seat is not None and not holds(version, joined_of.get(v.seat), v.join)):
                self.viewers.discard(v)
                v.error = unauthenticated("this token no longer holds its seat")
                v.notify()
        viewers = [v for v in viewers if v.error is None]
        if version is None:
            return
        snaps: dict[int | None, Snapshot | None] = {}
        for seat, i in index.items():
            view = values[i]
            if view is None:
                snaps[seat] = None
                continue
            actions = values[i + 1] if seat is not None else None
            snaps[seat] = Snapshot(version, status, _text(view), _text(actions) if actions else "[]")
        for v in viewers:
            snap = snaps.get(v.seat)
            if snap is not None:
                v.offer(snap)

    def _close(self) -> None:
        self.closed = True
        self.fanout._drop(self)

    def _fail(self, exc: BaseException) -> None:
        self._close()
        for v in self.viewers:
            v.error = exc
            v.notify()


class Fanout:
    def __init__(self, reads: ReadStore, hub: FeedHub, poll_s: float, holders: HolderCache | None = None):
        self.reads = reads
        self.hub = hub
        self.poll_s = poll_s
        self.holders = holders
        self._rooms: dict[str, Room] = {}

    @property
    def rooms(self) -> int:
        return len(self._rooms)

    @contextlib.asynccontextmanager
    async def viewer(self, game_id: str, seat: int | None, last: int, jti: str | None = None,
                     join: int = 0) -> AsyncIterator[Viewer]:
        """A place in the game's room; returns once the room's feed subscription is confirmed,
        so a read made after it misses no update. With the jti of a seat's token, the place
        lasts while that token holds the seat."""
        viewer = Viewer(seat, last, jti, join)
        room = self._rooms.get(game_id)
        if room is None or room.closed or room.task is not None and room.task.done():
            room = self._rooms[game_id] = Room(self, game_id)
            room.viewers.add(viewer)
            room.task = asyncio.create_task(room.run(), name=f"room-{game_id}")
        else:
            room.viewers.add(viewer)
        try:
            await asyncio.shield(room.ready)
            yield viewer
        finally:
            room.viewers.discard(viewer)
            if not room.viewers:
                self._drop(room)
                if room.task is not None and not room.task.done():
                    room.notify()  # its loop sees no viewers and ends, unsubscribing

    def _drop(self, room: Room) -> None:
        if self._rooms.get(room.game_id) is room:
            del self._rooms[room.game_id]

    async def close(self) -> None:
        rooms = list(self._rooms.values())
        self._rooms.clear()
        for room in rooms:
            if room.task is not None:
                room.task.cancel()
        for room in rooms:
            if room.task is not None:
                with contextlib.suppress(BaseException):
                    await room.task
