"""A partition owner whose clock is behind the log's last event times (the previous owner's
clock was ahead) fires the log's deadlines on time, not late by the skew.

Deadlines are the log's times (a turn clock runs out clock_ms after the table's last event,
as its previous owner recorded it). The owner waited for its own wall clock to reach them, so
with its clock 4 s behind a 1 s turn clock ran out after 5 s; the events it recorded were
also timed before the ones the log held. Its clock (PartitionOwner.now_ms) is now at least
the latest event time it read plus how long ago it read it. Replays are unaffected: they
decide at the recorded times."""

from __future__ import annotations

import asyncio
import time

from test_commit_pace import MemoryWriter  # tests/unit is on sys.path
from test_dedupe_window import _host
from test_timers_review_idle_vs_clock import _clocked, _until_over

from croupier.engine.envelope import Envelope
from croupier.rules.partition import SKEW_TRUSTED_MS, PartitionOwner

SKEW_MS = 4000  # the previous owner's clock was this far ahead of this replica's


class KeepingWriter(MemoryWriter):
    def __init__(self):
        super().__init__()
        self.records: list[Envelope] = []

    def append(self, envelopes) -> None:
        super().append(envelopes)
        self.records.extend(envelopes)


def test_an_owner_behind_the_logs_clock_runs_a_turn_clock_out_on_time():
    host = _host()
    wall = int(time.time() * 1000)
    log = _clocked(host, "skewed", 1000, wall + SKEW_MS)  # written "now" by a clock 4 s ahead
    last_time = log[-1].time
    writer = KeepingWriter()

    async def main():
        owner = PartitionOwner(host, 0, lambda: writer, max_batch=256, dedupe_window=16)
        await owner.start(lambda: list(log))
        started = time.monotonic()
        try:
            states = await _until_over(owner, ("skewed",), seconds=3.0)
            return states["skewed"], time.monotonic() - started, owner.now_ms()
        finally:
            await owner.stop("test")

    state, took, now = asyncio.run(main())
    assert state.status == "over" and state.end_reason == "forfeit", (state.status, took)
    assert took < 2.5, took  # the 1 s clock, not 1 s + the skew
    ended = writer.records[-1]
    assert ended.type == "TableEnded" and ended.time >= last_time + 1000  # due by the log's clock
    assert now >= last_time  # the owner's time never goes back before the log's


def test_an_event_far_ahead_of_every_clock_does_not_set_the_owners_time():
    host = _host()
    wall = int(time.time() * 1000)
    log = _clocked(host, "far", 1000, wall + 2 * SKEW_TRUSTED_MS)  # no owner's clock: a foreign record

    async def main():
        owner = PartitionOwner(host, 0, lambda: MemoryWriter(), max_batch=256, dedupe_window=16)
        await owner.start(lambda: list(log))
        try:
            return owner.now_ms()
        finally:
            await owner.stop("test")

    now = asyncio.run(main())
    assert now < wall + SKEW_TRUSTED_MS


def test_an_owner_whose_wall_clock_is_set_back_never_seals_a_command_before_the_last(monkeypatch):
    # NTP stepping the clock back, say: the owner's own commands kept their order only when
    # another owner's events were read; the audit notes a log whose times go back.
    from test_commit_pace import _create

    from croupier.engine.audit import audit
    from croupier.engine.table import JoinSeat
    from croupier.rules.partition import Pending

    host = _host()
    writer = KeepingWriter()
    real = time.time

    async def main():
        owner = PartitionOwner(host, 0, lambda: writer, max_batch=256, dedupe_window=16)
        await owner.start(lambda: [])
        loop = asyncio.get_running_loop()
        try:
            first = _create(loop, "g-back")
            owner.submit(first)
            await first.future
            monkeypatch.setattr(time, "time", lambda: real() - 5.0)  # the wall clock set back 5 s
            join = Pending("g-back", JoinSeat(seat=0, player="p0", entropy="e"), "j0", None, loop.create_future())
            owner.submit(join)
            await join.future
        finally:
            await owner.stop("test")

    asyncio.run(main())
    created, joined = writer.records[0], writer.records[-1]
    assert joined.time >= created.time, (created.time, joined.time)
    assert audit(writer.records).notes == []
