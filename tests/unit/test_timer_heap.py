"""The timers' heap holds about as many entries as there are deadlines: each commit that
moves a game's deadline (every command, with an idle limit) pushed an entry, and the
superseded ones left only when they reached the top, so one quiet table with a day's idle
limit kept 50,000 entries for 50,000 commands."""

from __future__ import annotations

import asyncio
import dataclasses

from test_dedupe_window import _host, _logged_game  # tests/unit is on sys.path
from test_record_limits import SizedWriter

from croupier.rules.partition import HEAP_SLACK, PartitionOwner


def test_superseded_deadlines_do_not_pile_up_in_the_heap():
    log = _logged_game(_host(), "a") + _logged_game(_host(), "b")

    async def main():
        owner = PartitionOwner(_host(), 0, lambda: SizedWriter(log), max_batch=256, dedupe_window=16,
                               idle_end_after_s=86400)
        await owner.start(lambda: list(log))
        try:
            state = owner.games["a"].state
            sizes = []
            for n in range(1, 50_001):  # a command a time, each moving the table's idle end
                owner._schedule("a", dataclasses.replace(state, last_time=state.last_time + n))
                sizes.append(len(owner._heap))
            return sizes, dict(owner._deadlines), sorted(owner._heap)
        finally:
            await owner.stop("test")

    sizes, deadlines, heap = asyncio.run(main())
    assert max(sizes) <= 2 * len(deadlines) + HEAP_SLACK + 1
    # Every live deadline is still in the heap, at its time.
    assert set(deadlines.items()) <= {(game_id, due) for due, game_id in heap}
    assert deadlines["a"] == 86_400_000 + max(e.time for e in log if e.game_id == "a") + 50_000
