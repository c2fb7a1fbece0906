"""A partition owner survives its own faults: a command the game's rules fail on (a bug a
player's input found) is refused alone with a clear error, and a fault after the decisions
answers its batch "retry" and reads the partition back from the log; either way the loop
goes on, and every other game of the partition keeps being served. (Before, one such
command ended the partition's loop: every game in it waited for good.)

The owner is driven with an in-memory log (test_commit_pace's writer keeps only counts)."""

from __future__ import annotations

import asyncio
import threading

import pytest
from test_dedupe_window import _a_legal_move, _host, _logged_game  # tests/unit is on sys.path

from croupier.engine.contract import Rejection
from croupier.rules.partition import PartitionOwner, Pending


class LogWriter:
    """A partition's writer over a list: what was appended is what a rebuild reads."""

    def __init__(self, log: list):
        self.log = log
        self.lock = threading.Lock()

    def append(self, envelopes) -> None:
        with self.lock:
            self.log.extend(envelopes)

    def close(self) -> None:
        pass


async def _owner(log: list, **kwargs) -> PartitionOwner:
    owner = PartitionOwner(_host(), 0, lambda: LogWriter(log), max_batch=256, dedupe_window=16, **kwargs)
    await owner.start(lambda: list(log))
    return owner


async def _answer(owner: PartitionOwner, game_id: str, command, command_id: str):
    item = Pending(game_id, command, command_id, None, asyncio.get_running_loop().create_future())
    owner.submit(item)
    return await asyncio.wait_for(item.future, 10)


def test_a_command_the_rules_fail_on_is_refused_alone_and_the_partition_goes_on():
    log = _logged_game(_host(), "a") + _logged_game(_host(), "b")

    async def main():
        owner = await _owner(log)
        decide = owner.host.decide

        def failing(state, command, **kw):
            if kw.get("command_id") == "poison":
                raise TypeError("unhashable type: 'dict'")  # as a check that missed a type would
            return decide(state, command, **kw)

        owner.host.decide = failing
        try:
            with pytest.raises(Rejection) as refused:
                await _answer(owner, "a", _a_legal_move(owner, "a"), "poison")
            before = len(log)
            # The same game and another game of the partition are still served.
            again = await _answer(owner, "a", _a_legal_move(owner, "a"), "m1")
            other = await _answer(owner, "b", _a_legal_move(owner, "b"), "m2")
            return refused.value, before, again, other, len(log)
        finally:
            await owner.stop("test")

    refused, before, again, other, after = asyncio.run(main())
    assert (refused.code, refused.kind) == ("command_not_understood", "malformed")
    assert "TypeError" in refused.message and "nothing was recorded" in refused.message
    assert not again.duplicate and not other.duplicate and after > before


def test_a_fault_after_the_append_answers_retry_and_memory_is_read_back_from_the_log():
    log = _logged_game(_host(), "a") + _logged_game(_host(), "b")
    fail = {"on": True, "above": max(e.seq for e in log if e.game_id == "a")}

    def committed(game_id, state):
        if fail["on"] and game_id == "a" and state.version > fail["above"]:
            fail["on"] = False
            raise RuntimeError("a listener failed")

    async def main():
        owner = await _owner(log, on_committed=committed)
        try:
            move = _a_legal_move(owner, "a")
            with pytest.raises(Rejection) as retry:
                await _answer(owner, "a", move, "m1")
            # Read back from the log: the move that was appended is there, and its retry is
            # answered as the duplicate it is (not decided again on a stale state).
            for _ in range(100):
                if owner.status == "ready":
                    break
                await asyncio.sleep(0.05)
            again = await _answer(owner, "a", move, "m1")
            other = await _answer(owner, "b", _a_legal_move(owner, "b"), "m2")
            return retry.value, again, other, owner.games["a"].state.version, [e.seq for e in log if e.game_id == "a"]
        finally:
            await owner.stop("test")

    retry, again, other, version, seqs = asyncio.run(main())
    assert retry.kind == "unavailable"
    assert again.duplicate and version == seqs[-1]
    assert seqs == list(range(1, len(seqs) + 1))  # nothing twice, no gap
    assert not other.duplicate
