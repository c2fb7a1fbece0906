"""A timer of a game the owner no longer holds is dropped, not retried every second for good.

A game left out of memory while its partition is served (a read again after a failed append
met an event of it that cannot be folded: a gap, an event its rules cannot read) kept its
deadline: each time it came up the timer found no game, pushed it a second later and went on,
so the partition's timer woke every second for that game, for as long as the owner held the
partition. A game that is read again is scheduled by the read (start, recovery)."""

from __future__ import annotations

import asyncio
import dataclasses
import threading

from test_dedupe_window import _a_legal_move, _host, _logged_game  # tests/unit is on sys.path

from croupier.rules.partition import PartitionOwner, Pending


class FailingOnceWriter:
    """A writer over a list whose first append fails after something else wrote `extra`."""

    failed = False

    def __init__(self, log: list, extra: list):
        self.log, self.extra = log, extra
        self.lock = threading.Lock()

    def append(self, envelopes) -> None:
        with self.lock:
            if not FailingOnceWriter.failed:
                FailingOnceWriter.failed = True
                self.log.extend(self.extra)
                raise RuntimeError("broker away")
            self.log.extend(envelopes)

    def close(self) -> None:
        pass


def test_the_timer_of_a_game_left_out_after_a_read_again_is_dropped():
    log = _logged_game(_host(), "a") + _logged_game(_host(), "b")
    last_a = [e for e in log if e.game_id == "a"][-1]
    # Another writer's record of "a" past a gap: the read after the failed append leaves "a" out.
    gap = dataclasses.replace(last_a, seq=last_a.seq + 5)
    FailingOnceWriter.failed = False

    async def main():
        # The logged games' events are of time 0: every game's idle end is long past, and
        # far off would do as well; an idle limit of 10**10 s keeps them from firing.
        owner = PartitionOwner(_host(), 0, lambda: FailingOnceWriter(log, [gap]), max_batch=256, dedupe_window=16,
                               idle_end_after_s=10**10)
        await owner.start(lambda: list(log))
        try:
            assert set(owner._deadlines) == {"a", "b"}
            # Game a's deadline made due at once, as any deadline comes due in time.
            owner._deadlines["a"] = 0
            owner._heap.append((0, "a"))
            owner._heap.sort()
            item = Pending("b", _a_legal_move(owner, "b"), "m1", None, asyncio.get_running_loop().create_future())
            # Stop the timer from firing game a's deadline before the failed append is read back.
            owner._timer_task.cancel()
            owner.submit(item)
            try:
                await asyncio.wait_for(item.future, 10)
            except Exception:  # noqa: BLE001 - the failed append: retry
                pass
            for _ in range(200):
                if owner.status == "ready":
                    break
                await asyncio.sleep(0.02)
            assert "a" in owner.unreadable and "a" not in owner.games
            owner._timer_task = asyncio.create_task(owner._timers())
            await asyncio.sleep(0.3)
            return dict(owner._deadlines), [game_id for _, game_id in owner._heap]
        finally:
            await owner.stop("test")

    deadlines, heap = asyncio.run(main())
    assert "a" not in deadlines, deadlines
    assert "b" in deadlines
