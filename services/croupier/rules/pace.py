"""Group commit's pace: how long a partition's next batch waits to fill.

A transaction costs the replica and the broker about as much for one command as for twenty,
so under load fewer, fuller transactions are what lets a replica take more commands. Waiting
to fill a batch costs latency, though, and buys nothing while the replica has time to spare.
The pace therefore follows how busy the replica's event loop is (the share of wall time its
thread spends on the CPU, sampled every WINDOW_S): no wait while it is at most half busy,
rising to the full interval (CROUPIER_RULES_COMMIT_INTERVAL_MS) as it nears saturation.
"""

from __future__ import annotations

import asyncio
import time

WINDOW_S = 0.05  # how often the loop's busy share is sampled
SMOOTHING = 0.3  # weight of the newest sample in the moving average
IDLE_SHARE = 0.5  # below this busy share, batches do not wait


class CommitPace:
    def __init__(self, interval_s: float):
        self.interval_s = interval_s
        self.busy = 0.0  # smoothed share of wall time the loop's thread was on the CPU
        self.pause_s = 0.0  # what a partition's next batch waits after the one before it
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        if self.interval_s > 0 and self._task is None:
            self._task = asyncio.create_task(self._sample(), name="commit-pace")

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    def update(self, share: float) -> None:
        self.busy += SMOOTHING * (share - self.busy)
        level = (self.busy - IDLE_SHARE) / (1 - IDLE_SHARE)
        self.pause_s = self.interval_s * min(1.0, max(0.0, level))

    async def _sample(self) -> None:
        # Runs on the loop's own thread, so thread_time() is the loop's CPU time.
        cpu, wall = time.thread_time(), time.monotonic()
        while True:
            await asyncio.sleep(WINDOW_S)
            cpu2, wall2 = time.thread_time(), time.monotonic()
            if wall2 > wall:
                self.update((cpu2 - cpu) / (wall2 - wall))
            cpu, wall = cpu2, wall2
