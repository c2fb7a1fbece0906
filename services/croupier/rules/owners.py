"""The owners' table in Redis (which replica serves each partition of a game type), as a
replica writes and reads it: never on the event loop.

The gateway routes by this table, and a NOT_OWNER answer names the owner it holds. Both
were synchronous Redis calls (2 s timeout) on the replica's event loop: a Redis that hung
stalled every partition's commands, 2 s for each rejection that named an owner and each
partition taken or given up. Now the writes go, in order, through one thread of their own,
and the owners are answered from the table as last read, which a thread of its own reads
again every OWNERS_REFRESH_S and soon after an answer that named an owner.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import redis
import structlog

log = structlog.get_logger("croupier.rules")

OWNERS_REFRESH_S = 2.0
# An answer that names an owner asks for a fresh read at most this often.
LOOKUP_REFRESH_S = 0.5

_RELEASE = "if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end return 0"
_ASSERT = ("redis.call('SET', KEYS[2], ARGV[1]) "
           "for i = 2, #ARGV - 1 do redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[#ARGV]) end return 1")


def owners_key(prefix: str, game: str) -> str:
    return f"{prefix}croupier:owners:{game}"


def partitions_key(prefix: str, game: str) -> str:
    return f"{prefix}croupier:partitions:{game}"


class OwnersTable:
    def __init__(self, rds: redis.Redis, prefix: str, game: str, advertise: str, partitions: int):
        self._rds = rds
        self.key = owners_key(prefix, game)
        self.partitions_key = partitions_key(prefix, game)
        self.advertise = advertise
        self.partitions = partitions
        self._release = rds.register_script(_RELEASE)
        self._assert = rds.register_script(_ASSERT)
        # Writes in the order they were asked for (a partition's "ready" before its release).
        self._writes = ThreadPoolExecutor(max_workers=1, thread_name_prefix="owners-write")
        self._reads = ThreadPoolExecutor(max_workers=1, thread_name_prefix="owners-read")
        self._table: dict[int, str] = {}
        self._reading: Future | None = None
        self._read_at = float("-inf")

    # -- writes ---------------------------------------------------------------------------

    def _write(self, what: str, call: Callable[[], Any], **fields: Any) -> Future:
        def run() -> bool:
            try:
                call()
                return True
            except redis.RedisError as exc:
                # Redis carries only the routing table (and snapshots, which the log can stand
                # in for): serve without it; keep_published fills the gaps once it answers.
                log.warning("owner_publish_failed", what=what, error=str(exc), **fields)
                return False

        return self._writes.submit(run)

    def publish_partitions(self) -> Future:
        return self._write("partitions", lambda: self._rds.set(self.partitions_key, self.partitions))

    def publish(self, partition: int, status: str | None) -> Future:
        """Say (status) or unsay (None) that this replica serves the partition. Returns at once."""
        if status:
            return self._write("ready", lambda: self._rds.hset(self.key, str(partition), self.advertise),
                               partition=partition)
        return self._write("release", lambda: self._release(keys=[self.key], args=[str(partition), self.advertise]),
                           partition=partition)

    def assert_owned(self, ready: list[int]) -> Future:
        """Fill the gaps (HSETNX: never over the entry of a replica that took over) for the
        partitions this replica serves, in case Redis lost them (a restart without its data)."""
        args = [self.partitions, *[str(p) for p in ready], self.advertise]
        return self._write("assert", lambda: self._assert(keys=[self.key, self.partitions_key], args=args))

    async def keep_published(self, ready: Callable[[], list[int]]) -> None:
        """Every OWNERS_REFRESH_S: the partitions served, said again, and the table read again.
        An entry that names another replica for a partition this one serves is written over:
        the writes go through a queue, so the "ready" of a replica that has since given the
        partition up can land after its new owner's, and HSETNX alone would never mend it."""
        while True:
            await asyncio.sleep(OWNERS_REFRESH_S)
            serving = ready()
            await asyncio.wrap_future(self.assert_owned(serving))
            reading = self.refresh()
            if reading is not None:
                await asyncio.wrap_future(reading)
            for partition in serving:
                if self._table.get(partition, self.advertise) != self.advertise:
                    log.warning("owner_entry_mended", partition=partition, was=self._table[partition])
                    await asyncio.wrap_future(self.publish(partition, "ready"))

    # -- reads ----------------------------------------------------------------------------

    def __call__(self, partition: int) -> str:
        """The owner of the partition as the table was last read ("" if unknown), and a fresh
        read asked for (at most every LOOKUP_REFRESH_S). Never waits for Redis."""
        self.refresh(LOOKUP_REFRESH_S)
        return self._table.get(partition, "")

    def refresh(self, min_gap_s: float = 0.0) -> Future | None:
        """Read the table again on the reads' thread, unless a read is under way or one began
        less than min_gap_s ago; the read's Future, if one was started."""
        now = time.monotonic()
        if (self._reading is not None and not self._reading.done()) or now - self._read_at < min_gap_s:
            return None
        self._read_at = now
        self._reading = self._reads.submit(self._read)
        return self._reading

    def _read(self) -> None:
        try:
            raw = self._rds.hgetall(self.key)
        except redis.RedisError as exc:
            log.warning("owners_read_failed", error=str(exc))
            return
        self._table = {int(k): v.decode() for k, v in raw.items() if k.isdigit()}

    def close(self, wait_s: float = 5.0) -> None:
        """Let the writes asked for so far (the releases of a replica stopping) finish, for
        up to wait_s, then stop the threads."""
        done = self._writes.submit(lambda: None)
        try:
            done.result(timeout=wait_s)
        except Exception:  # noqa: BLE001 - Redis hung: leave the rest to the broker's next owners
            pass
        self._writes.shutdown(wait=False, cancel_futures=True)
        self._reads.shutdown(wait=False, cancel_futures=True)
