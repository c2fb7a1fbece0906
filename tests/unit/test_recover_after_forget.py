"""A partition recovers from a failed append even when a game it played has been forgotten
since it last read the log. Before, the read after the failure started where the owner's
first rebuild had ended, met the forgotten game's later events, and failed on them again and
again: the partition stayed "rebuilding" and every table of it answered 503 until the
replica restarted. Now memory's log advances with each append (the read starts after it),
and a read that meets a forgotten game's events anyway (an append whose offset the broker
did not report) passes over them."""

from __future__ import annotations

import asyncio
import threading

import pytest
from test_dedupe_window import _a_legal_move, _host, _logged_game  # tests/unit is on sys.path

from croupier.engine.contract import Rejection
from croupier.engine.table import ForceEnd
from croupier.rules.partition import READY, PartitionOwner, Pending


class FlakyWriter:
    """Appends to a list (offsets are list indices); fails once when told to."""

    fail_next = False

    def __init__(self, log: list, report_offsets: bool):
        self.log, self.report_offsets, self.lock = log, report_offsets, threading.Lock()

    def append(self, envelopes):
        with self.lock:
            if FlakyWriter.fail_next:
                FlakyWriter.fail_next = False
                raise RuntimeError("the broker went away mid-transaction")
            self.log.extend(envelopes)
            return len(self.log) - 1 if self.report_offsets else None

    def close(self) -> None:
        pass


async def _answer(owner: PartitionOwner, game_id: str, command, command_id: str):
    item = Pending(game_id, command, command_id, None, asyncio.get_running_loop().create_future())
    owner.submit(item)
    return await asyncio.wait_for(item.future, 10)


@pytest.mark.parametrize("report_offsets", [True, False], ids=["offsets-reported", "offsets-unknown"])
def test_a_failed_append_after_a_game_was_forgotten_recovers_the_partition(report_offsets):
    log = _logged_game(_host(), "gone") + _logged_game(_host(), "b")
    reads: list[int] = []

    async def main():
        owner = PartitionOwner(_host(), 0, lambda: FlakyWriter(log, report_offsets), max_batch=64,
                               dedupe_window=16, retire_after_s=0, forget_after_s=0)  # "a day later"

        def rebuild():
            start = owner.log_offset
            reads.append(start)
            yield from list(log[start:])
            owner.log_offset = len(log)

        await owner.start(rebuild)
        try:
            # "gone" is played on after the rebuild, ends, is retired and then forgotten.
            await _answer(owner, "gone", _a_legal_move(owner, "gone"), "m1")
            await _answer(owner, "gone", ForceEnd(reason="over"), "end")
            owner.retire_due()
            owner.forget_due(2**62)
            assert "gone" in owner.forgotten and "gone" not in owner.games
            FlakyWriter.fail_next = True
            with pytest.raises(Rejection) as failed:
                await _answer(owner, "b", _a_legal_move(owner, "b"), "mb")
            for _ in range(100):
                if owner.status == READY:
                    break
                await asyncio.sleep(0.05)
            status = owner.status
            move = await _answer(owner, "b", _a_legal_move(owner, "b"), "mb2")
            late = None
            try:
                await _answer(owner, "gone", _a_legal_move(owner, "b"), "m2")
            except Rejection as exc:
                late = exc
            return failed.value, status, move, late, "gone" in owner.games
        finally:
            await owner.stop("test")

    failed, status, move, late, gone_back = asyncio.run(main())
    assert failed.code == "unavailable"
    assert status == READY
    assert not move.duplicate and move.version > 0
    assert late is not None and late.code == "game_over"
    assert not gone_back  # the forgotten game is not brought back half-folded
    if report_offsets:
        # The read after the failure started after the last append memory holds.
        first_append_end = len(_logged_game(_host(), "gone")) + len(_logged_game(_host(), "b"))
        assert reads[1] > first_append_end
