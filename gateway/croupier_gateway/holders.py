"""A cache of seat holders, so that a command does not cost a Redis round trip to check its
token's seat.

Only an agreement is cached: `get` gives the jti last read for a seat, and the gateway uses
it only to accept a token of that same jti; any other token is checked against Redis as
before, so a new holder is never refused because of the cache. The danger is the other way:
a token whose seat was left (or left and taken again) must not act for long on a stale entry.
So an entry is used only

- while this gateway's subscription to the game's change feed is live (`FeedHub.stamp`): a
  gateway changes a seat holder and publishes `seats` on the game's feed channel in one
  transaction (reads.py), and that message gives the channel a new stamp, which retires every
  entry read under the old one (a read that was on its way when the message came is not
  stored either); a reconnect of the feed retires them all;
- for at most `ttl_s` after the Redis read it came from, for whatever changes a holder
  without that message (a gateway of an older version, a hand-made change in Redis);
- and this gateway's own joins and leaves retire the game's entries at once.

A token that lost its seat is therefore refused once this gateway has heard the `seats`
message of the change (as soon as it hears of a new version of the game from the same
feed), and in any case `ttl_s` after it was last read. ttl_s = 0 turns the cache off.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


class HolderCache:
    def __init__(self, hub: Any, keys: Any, ttl_s: float, *, max_entries: int = 100_000,
                 clock: Callable[[], float] = time.monotonic):
        self.hub = hub
        self.keys = keys
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._clock = clock
        self._entries: dict[tuple[str, int], tuple[str, int, float]] = {}  # (game, seat) -> (jti, stamp, read at)

    def get(self, game_id: str, seat: int) -> str | None:
        """The jti cached for the seat, if it may still be trusted; else None."""
        entry = self._entries.get((game_id, seat))
        if entry is None:
            return None
        jti, stamp, at = entry
        if stamp != self.hub.stamp(self.keys.feed(game_id)) or self._clock() - at >= self.ttl_s:
            del self._entries[(game_id, seat)]
            return None
        return jti

    def stamp(self, game_id: str) -> int | None:
        """Taken before a Redis read whose answer may be stored; None: it may not be."""
        if self.ttl_s <= 0:
            return None
        return self.hub.stamp(self.keys.feed(game_id))

    def put(self, game_id: str, seat: int, jti: str, stamp: int | None, read_at: float) -> None:
        """Store what a read begun at read_at under `stamp` found, unless the feed has said
        since that holders changed (or its subscription ended)."""
        if stamp is None or stamp != self.hub.stamp(self.keys.feed(game_id)):
            return
        entries = self._entries
        if len(entries) >= self.max_entries:
            for key in list(entries)[: max(1, self.max_entries // 10)]:
                del entries[key]
        entries[(game_id, seat)] = (jti, stamp, read_at)

    def now(self) -> float:
        return self._clock()

    def forget(self, game_id: str) -> None:
        """This gateway changed the game's holders: retire its entries (and other readers' reads)."""
        self.hub.touch(self.keys.feed(game_id))  # entries carry the old stamp: never used again

    def __len__(self) -> int:
        return len(self._entries)
