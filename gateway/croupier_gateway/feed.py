"""The change feed: the projector publishes a game's new version on `feed:{game_id}` after
each update. One pub/sub connection per gateway process carries every game that someone
watches here; each watcher is woken (not queued to: a slow watcher just re-reads the
latest), and a watch is only returned once Redis has confirmed the subscription, so a read
made after it cannot miss an update published after that read.

Pub/sub may drop a message (a reconnect); watchers therefore also wake on a timer and
re-read, so nothing is missed for long even then.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import structlog
from redis.exceptions import ConnectionError as RedisConnectionError

from croupier.projector.keys import Keys

log = structlog.get_logger("croupier.gateway")


class Watch:
    """Woken on every published update of one game."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def notify(self) -> None:
        self._event.set()

    async def wait(self, timeout: float) -> bool:
        """True if notified, False on timeout. Clears the notification."""
        try:
            await asyncio.wait_for(self._event.wait(), timeout)
            return True
        except TimeoutError:
            return False
        finally:
            self._event.clear()


class FeedHub:
    def __init__(self, redis: Any, keys: Keys, *, confirm_timeout_s: float = 5.0):
        self.redis = redis
        self.keys = keys
        self.confirm_timeout_s = confirm_timeout_s
        self._pubsub: Any = None
        self._reader: asyncio.Task | None = None
        self._watches: dict[str, set[Watch]] = {}
        self._confirmed: dict[str, asyncio.Event] = {}
        self._lock = asyncio.Lock()
        self._closed = False

    @property
    def channels(self) -> int:
        return len(self._watches)

    @contextlib.asynccontextmanager
    async def watch(self, game_id: str) -> AsyncIterator[Watch]:
        channel = self.keys.feed(game_id)
        watch = Watch()
        await self._add(channel, watch)
        try:
            yield watch
        finally:
            await self._remove(channel, watch)

    async def _add(self, channel: str, watch: Watch) -> None:
        async with self._lock:
            if self._pubsub is None:
                self._pubsub = self.redis.pubsub()
            watchers = self._watches.get(channel)
            if watchers is None:
                watchers = self._watches[channel] = set()
                confirmed = self._confirmed[channel] = asyncio.Event()
                try:
                    await self._pubsub.subscribe(channel)
                except Exception as exc:
                    # The connection is being made again (Redis restarted) while the reader
                    # waits on it; redis-py may say so with a RuntimeError. The reader
                    # re-subscribes what is watched; this caller gets a retryable error.
                    del self._watches[channel]
                    self._confirmed.pop(channel, None)
                    raise RedisConnectionError(f"the change feed is reconnecting: {exc}") from None
                if self._reader is None or self._reader.done():
                    self._reader = asyncio.create_task(self._read(), name="feed-reader")
            else:
                confirmed = self._confirmed[channel]
            watchers.add(watch)
        try:
            await asyncio.wait_for(confirmed.wait(), self.confirm_timeout_s)
        except TimeoutError:
            await self._remove(channel, watch)
            raise

    async def _remove(self, channel: str, watch: Watch) -> None:
        async with self._lock:
            watchers = self._watches.get(channel)
            if watchers is None:
                return
            watchers.discard(watch)
            if not watchers:
                del self._watches[channel]
                self._confirmed.pop(channel, None)
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
                self._wake_all()  # anything may have been missed: everyone re-reads
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)
                await self._resubscribe()
                continue
            if message is None:
                continue
            kind = message.get("type")
            channel = message.get("channel")
            if isinstance(channel, bytes):
                channel = channel.decode()
            if kind == "message":
                for watch in list(self._watches.get(channel, ())):
                    watch.notify()
            elif kind == "subscribe":
                confirmed = self._confirmed.get(channel)
                if confirmed is not None:
                    confirmed.set()

    async def _resubscribe(self) -> None:
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

    def _wake_all(self) -> None:
        for watchers in self._watches.values():
            for watch in watchers:
                watch.notify()

    async def close(self) -> None:
        self._closed = True
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(BaseException):
                await self._reader
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()
