"""The change feed: the projector publishes a game's new version, with its views
(croupier.projector.feed), on `feed:{game_id}` after each update, and a gateway publishes
`seats` there (in the same transaction as the write) whenever it changes the game's seat
holders. One pub/sub connection per gateway process
carries every game that someone watches here; each watcher is woken (not queued to: a slow
watcher just re-reads the latest), and a watch is only returned once Redis has confirmed the
subscription, so a read made after it cannot miss an update published after that read.

Pub/sub may drop a message (a reconnect); watchers therefore also wake on a timer and
re-read, so nothing is missed for long even then. After a pub/sub error the watchers of each
game are woken once its subscription is confirmed again, not before (a re-read before it could
miss an update published in between), and a watch made meanwhile waits for that confirmation.

The hub also stamps every game whose subscription is live here (confirmed since the
connection was last made): a new stamp on each `seats` message and none at all while the
subscription is down. A seat holder cached under a stamp is as fresh as the feed: it stops
being used the moment this gateway hears of a holder change (see holders.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator
from typing import Any

import structlog
from redis.exceptions import ConnectionError as RedisConnectionError

from croupier.projector import feed
from croupier.projector.keys import Keys

log = structlog.get_logger("croupier.gateway")

SEATS = b"seats"  # what a gateway publishes after changing a game's seat holders
_stamps = itertools.count(1)


def _timed_out(waiter: asyncio.Future) -> None:
    if not waiter.done():
        waiter.set_result(False)


class Watch:
    """Woken on every published update of one game.

    Between two waits it remembers what the messages said: the highest version named
    (`version`), the raw views message of that version if it came with one (`views`, see
    croupier.projector.feed), whether one said something else (`other`: a reconnect, an
    unknown payload), and whether any came at all."""

    __slots__ = ("_notified", "_waiter", "version", "views", "other", "seats")

    def __init__(self) -> None:
        self._notified = False
        self._waiter: asyncio.Future | None = None
        self.version = 0
        self.views: bytes | None = None
        self.other = False
        self.seats = False  # a message said the seat holders changed

    def notify(self, version: int | None = None, seats: bool = False, views: bytes | None = None) -> None:
        """A message: `version` if it named one (with `views`, the projector's message that
        carries them); seats=True for a holder change (with a version too: the projector's
        message of an update that changed who holds a seat); none of these: anything."""
        if version is not None:
            if version > self.version:
                self.version = version
                self.views = views
            elif version == self.version and views is not None:
                self.views = views
        if seats:
            self.seats = True
        elif version is None:
            self.other = True
        self._notified = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(True)

    async def wait(self, timeout: float | None) -> bool:
        """True if notified (since the last wait, or now), False on timeout. Clears the
        notification; `version` and `other` are left for the caller to read and reset."""
        if self._notified:
            self._notified = False
            return True
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        handle = loop.call_later(timeout, _timed_out, waiter) if timeout is not None else None
        try:
            return await waiter
        finally:
            if handle is not None:
                handle.cancel()
            self._waiter = None
            self._notified = False


class FeedHub:
    def __init__(self, redis: Any, keys: Keys, *, confirm_timeout_s: float = 5.0):
        self.redis = redis
        self.keys = keys
        self.confirm_timeout_s = confirm_timeout_s
        self._pubsub: Any = None
        self._reader: asyncio.Task | None = None
        self._watches: dict[str, set[Watch]] = {}
        self._confirmed: dict[str, asyncio.Event] = {}
        self._stamps: dict[str, int] = {}  # channel -> stamp, for live subscriptions only
        self._lost: set[str] = set()  # channels whose subscription a pub/sub error ended
        self._lock = asyncio.Lock()
        self._closed = False

    @property
    def channels(self) -> int:
        return len(self._watches)

    def stamp(self, channel: str) -> int | None:
        """The channel's current stamp while its subscription is live here; None otherwise."""
        return self._stamps.get(channel)

    def touch(self, channel: str) -> None:
        """A new stamp for the channel (this process changed the game's seat holders)."""
        if channel in self._stamps:
            self._stamps[channel] = next(_stamps)

    @contextlib.asynccontextmanager
    async def watch(self, game_id: str) -> AsyncIterator[Watch]:
        channel = self.keys.feed(game_id)
        watch = Watch()
        await self.add(channel, watch)
        try:
            yield watch
        finally:
            await self.remove(channel, watch)

    async def add(self, channel: str, watch: Watch) -> None:
        """Watch a channel; returns once Redis has confirmed its subscription."""
        async with self._lock:
            if self._pubsub is None:
                self._pubsub = self.redis.pubsub()
            watchers = self._watches.get(channel)
            if watchers is None:
                watchers = self._watches[channel] = set()
                confirmed = self._confirmed[channel] = asyncio.Event()
                try:
                    await self._pubsub.subscribe(channel)
                except BaseException as exc:
                    # Nothing stays registered, whatever ended the subscribe: an empty entry
                    # would make the next watch of the game wait on a confirmation never asked for.
                    del self._watches[channel]
                    self._confirmed.pop(channel, None)
                    if not isinstance(exc, Exception):
                        raise  # cancelled
                    # The connection is being made again (Redis restarted) while the reader
                    # waits on it; redis-py may say so with a RuntimeError. The reader
                    # re-subscribes what is watched; this caller gets a retryable error.
                    raise RedisConnectionError(f"the change feed is reconnecting: {exc}") from None
                if self._reader is None or self._reader.done():
                    self._reader = asyncio.create_task(self._read(), name="feed-reader")
            else:
                confirmed = self._confirmed[channel]
            watchers.add(watch)
        try:
            if not confirmed.is_set():
                await asyncio.wait_for(confirmed.wait(), self.confirm_timeout_s)
        except BaseException as exc:  # a timeout, or the caller cancelled: nothing stays registered
            await asyncio.shield(self.remove(channel, watch))
            if isinstance(exc, TimeoutError):
                # The store's error, as the callers know it (a 503, and a committed command's
                # answer not turned into an error), not a bare TimeoutError (a 500).
                raise RedisConnectionError(
                    f"the change feed did not confirm {channel} within {self.confirm_timeout_s:g} s") from None
            raise

    async def remove(self, channel: str, watch: Watch) -> None:
        async with self._lock:
            watchers = self._watches.get(channel)
            if watchers is None:
                return
            watchers.discard(watch)
            if not watchers:
                del self._watches[channel]
                self._confirmed.pop(channel, None)
                self._stamps.pop(channel, None)
                self._lost.discard(channel)
                if self._pubsub is not None and not self._closed:
                    try:
                        await self._pubsub.unsubscribe(channel)
                    except Exception as exc:  # the reader reconnects and re-subscribes what is left
                        log.warning("feed_unsubscribe_failed", error=str(exc))

    async def _read(self) -> None:
        backoff = 0.05
        while not self._closed and self._watches:
            try:
                message = await self._pubsub.get_message(timeout=0.2)
                backoff = 0.05
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("feed_read_failed", error=str(exc))
                # Messages may be lost until the subscriptions are confirmed again: no stamps,
                # and no watch returns before its confirmation. The watchers are woken when it
                # comes (anything may have been missed); woken now, they would re-read before
                # the new SUBSCRIBE, and miss what is published in between.
                self._stamps.clear()
                for confirmed in self._confirmed.values():
                    confirmed.clear()
                self._lost.update(self._watches)
                while True:
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, 2.0)
                    if self._closed or await self._resubscribe():
                        break
                continue
            if message is None:
                continue
            kind = message.get("type")
            channel = message.get("channel")
            if isinstance(channel, bytes):
                channel = channel.decode()
            if kind == "message":
                watchers = self._watches.get(channel)
                if not watchers:
                    continue
                data = message.get("data")
                version = seats = views = None
                if data == SEATS:
                    seats = True
                    if channel in self._stamps:
                        self._stamps[channel] = next(_stamps)
                elif isinstance(data, bytes) and (version := feed.version_of(data)) is not None:
                    views = data
                    if feed.JOINED in data:  # the update changed who holds a seat
                        seats = True
                        if channel in self._stamps:
                            self._stamps[channel] = next(_stamps)
                else:
                    try:
                        version = int(data)  # a projector of an earlier version: the number alone
                    except (TypeError, ValueError):
                        pass
                for watch in list(watchers):
                    watch.notify(version, bool(seats), views)
            elif kind == "subscribe":
                watchers = self._watches.get(channel)
                if watchers is not None:
                    self._stamps[channel] = next(_stamps)
                confirmed = self._confirmed.get(channel)
                if confirmed is not None:
                    confirmed.set()
                if channel in self._lost:  # made again after an error: its watchers re-read now
                    self._lost.discard(channel)
                    for watch in list(watchers or ()):
                        watch.notify()

    async def _resubscribe(self) -> bool:
        """A new pub/sub connection, subscribed to every watched channel; False if the
        SUBSCRIBE failed (the reader tries again: a connection left with no subscription
        would hear nothing, and confirm nothing, for good)."""
        async with self._lock:
            try:
                if self._pubsub is not None:
                    await self._pubsub.aclose()
            except Exception:
                pass
            self._pubsub = self.redis.pubsub()
            channels = list(self._watches)
            if channels:
                try:
                    await self._pubsub.subscribe(*channels)
                except Exception as exc:
                    log.warning("feed_resubscribe_failed", error=str(exc))
                    return False
            return True

    async def close(self) -> None:
        self._closed = True
        self._stamps.clear()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(BaseException):
                await self._reader
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()
