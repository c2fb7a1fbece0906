"""A command whose records are larger than the event store takes is refused alone,
`too_large` (malformed: never retried), and the rest of its batch commits: before, Kafka's
refusal failed the whole batch, the partition rebuilt (every game of it unavailable), and
the command was answered "retry the same command_id", so its clients retried it for 15 s.

The owner is driven with an in-memory log; tests/integration/test_rules_limits.py sends the
same through the service to the real broker."""

from __future__ import annotations

import asyncio
import threading

import pytest
from test_dedupe_window import _a_legal_move, _host, _logged_game  # tests/unit is on sys.path

from croupier.engine.contract import Rejection
from croupier.engine.table import ForceEnd
from croupier.rules.partition import READY, PartitionOwner, Pending
from croupier.rules.store import RECORD_OVERHEAD, RecordTooLarge

LIMIT = 4096


class SizedWriter:
    """An in-memory writer that refuses, as the broker does, a transaction holding a record
    above `broker_limit` bytes (nothing of it is kept); the transactions it took, by size."""

    def __init__(self, log: list, broker_limit: int | None = None):
        self.log, self.broker_limit = log, broker_limit
        self.transactions: list[int] = []
        self.values_given: list[bool] = []
        self.lock = threading.Lock()

    def append(self, envelopes, values=None):
        with self.lock:
            self.values_given.append(values is not None)
            if self.broker_limit is not None and values is not None and max(map(len, values)) > self.broker_limit:
                raise RecordTooLarge("append failed: Broker: Message size too large")
            self.log.extend(envelopes)
            self.transactions.append(len(envelopes))
            return len(self.log) - 1

    def close(self) -> None:
        pass


async def _owner(log: list, writer: SizedWriter, **kwargs) -> PartitionOwner:
    owner = PartitionOwner(_host(), 0, lambda: writer, max_batch=256, dedupe_window=16, **kwargs)
    await owner.start(lambda: list(log))
    return owner


async def _batch(owner: PartitionOwner, *items: tuple[str, object, str]) -> list:
    """The items submitted together (one batch: the loop takes them once this yields), and
    each one's outcome or Rejection."""
    loop = asyncio.get_running_loop()
    pending = [Pending(game_id, command, cid, None, loop.create_future()) for game_id, command, cid in items]
    for item in pending:
        owner.submit(item)
    return await asyncio.wait_for(asyncio.gather(*(p.future for p in pending), return_exceptions=True), 30)


def test_a_command_above_the_record_limit_is_refused_alone_before_the_append():
    log = _logged_game(_host(), "a") + _logged_game(_host(), "b")
    writer = SizedWriter(log)

    async def main():
        owner = await _owner(log, writer, max_record_bytes=LIMIT)
        try:
            before = len(log)
            huge, move = await _batch(owner, ("a", ForceEnd(reason="x" * 10_000), "end"),
                                      ("b", _a_legal_move(owner, "b"), "m1"))
            # The refused command's game is untouched and goes on.
            again = (await _batch(owner, ("a", _a_legal_move(owner, "a"), "m2")))[0]
            return huge, move, again, before, owner.status, owner.games["a"].state.status
        finally:
            await owner.stop("test")

    huge, move, again, before, status, a_status = asyncio.run(main())
    assert isinstance(huge, Rejection) and (huge.code, huge.kind) == ("too_large", "malformed")
    assert f"{LIMIT:,} bytes a record" in huge.message
    assert not isinstance(move, Exception) and not move.duplicate
    assert not isinstance(again, Exception) and not again.duplicate
    assert status == READY and a_status == "running"
    assert writer.transactions == [move.last_seq - move.first_seq + 1, again.last_seq - again.first_seq + 1]
    assert all(writer.values_given)  # encoded once, by the owner
    assert all(e.command_id != "end" for e in log[before:])


def test_a_fork_above_the_record_limit_says_so():
    host = _host()
    origin = _logged_game(host, "o")
    log = list(origin)
    writer = SizedWriter(log)

    async def main():
        owner = await _owner(log, writer, max_record_bytes=LIMIT)
        try:
            with pytest.raises(Rejection) as refused:
                owner.prepare_fork("f", origin, "ab" * 32, "fork")  # as ForkGame makes it, off the loop
            return refused.value
        finally:
            await owner.stop("test")

    refused = asyncio.run(main())
    assert (refused.code, refused.kind) == ("too_large", "malformed")
    assert f"its origin's {len(origin)} events" in refused.message and "earlier step" in refused.message


def test_a_record_the_broker_refuses_for_its_size_is_that_commands_refusal():
    """The store's limit is below the writers' (a topic with a smaller max.message.bytes):
    the broker's MSG_SIZE_TOO_LARGE refuses the command alone; the others of its batch commit."""
    log = _logged_game(_host(), "a") + _logged_game(_host(), "b")
    writer = SizedWriter(log, broker_limit=LIMIT)

    async def main():
        owner = await _owner(log, writer, max_record_bytes=1_000_000)
        try:
            command = _a_legal_move(owner, "b")
            huge, move = await _batch(owner, ("a", ForceEnd(reason="x" * 10_000), "end"), ("b", command, "m1"))
            retry = (await _batch(owner, ("b", command, "m1")))[0]
            return huge, move, retry, owner.status
        finally:
            await owner.stop("test")

    huge, move, retry, status = asyncio.run(main())
    assert isinstance(huge, Rejection) and (huge.code, huge.kind) == ("too_large", "malformed")
    assert "do not retry" in huge.message
    assert not isinstance(move, Exception) and not move.duplicate
    assert retry.duplicate and (retry.first_seq, retry.last_seq) == (move.first_seq, move.last_seq)
    assert status == READY
    assert all(e.command_id != "end" for e in log)


def test_the_record_check_leaves_room_for_the_records_framing():
    from croupier.rules.store import record_fits

    assert record_fits(b"x" * (LIMIT - RECORD_OVERHEAD - 1), b"k", LIMIT)
    assert not record_fits(b"x" * (LIMIT - RECORD_OVERHEAD), b"k", LIMIT)
