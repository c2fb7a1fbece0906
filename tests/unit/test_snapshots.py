"""Partition snapshots: an owner saves its games as of a committed append, and a new owner
that starts from the snapshot and the log after it holds exactly what a rebuild from the
whole log holds, and answers the same (retries of commands from before the snapshot too).

The owner is driven with an in-memory log standing in for the partition; snapshots against
the real broker and Redis, and a snapshot the log does not match, are
tests/integration/test_rules_service.py's.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from test_dedupe_window import _a_legal_move, _host, _logged_game, _send  # tests/unit is on sys.path
from test_retired_games import _ended_game

from croupier.engine.table import ForceEnd
from croupier.rules.partition import PartitionOwner
from croupier.rules.snapshot import FORMAT, MAGIC, RETIRED_CHUNK, Snapshot, compress, decode, encode, encode_between, fingerprint


class LogWriter:
    """A partition's writer over an in-memory log: each append adds its envelopes and
    answers the offset of the last, as the store's writer does."""

    def __init__(self, log: list):
        self.log = log
        self.lock = threading.Lock()

    def append(self, envelopes) -> int:
        with self.lock:
            self.log.extend(envelopes)
            return len(self.log) - 1

    def close(self) -> None:
        pass


class DictStore:
    """Stands in for SnapshotStore (Redis): keeps only a snapshot of a later offset."""

    def __init__(self):
        self.saved: dict[tuple[str, int], tuple[int, bytes]] = {}
        self.saves = 0

    def save(self, topic: str, partition: int, offset: int, blob: bytes, taken_ms: int = 0) -> bool:
        self.saves += 1
        stored = self.saved.get((topic, partition))
        if stored is not None and stored[0] >= offset:
            return False
        self.saved[(topic, partition)] = (offset, blob)
        return True


FP = fingerprint("expeditions", 1)


def _owner(log: list, store: DictStore | None, every: int, executor=None, retire_after_s=None) -> PartitionOwner:
    # Games forgotten an hour after their end: the bots' games, stamped at time 0, are.
    return PartitionOwner(_host(), 0, lambda: LogWriter(log), max_batch=256, dedupe_window=16,
                          snapshots=store, snapshot_every=every, snapshot_executor=executor,
                          topic="events", fingerprint=FP, retire_after_s=retire_after_s, forget_after_s=3600)


def _held(owner: PartitionOwner) -> dict:
    return {gid: (slot.state, dict(slot.seen)) for gid, slot in owner.games.items()}


async def _wait_saved(store: DictStore, saves: int) -> None:
    for _ in range(500):
        if store.saves >= saves:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("no snapshot was saved")


def test_a_restored_owner_holds_what_a_rebuild_from_the_whole_log_holds():
    host = _host()
    log = _logged_game(host, "a") + _logged_game(host, "b") + _ended_game(host, "done", moves=2)
    store = DictStore()
    executor = ThreadPoolExecutor(max_workers=1)
    sent = {}

    async def main():
        owner = _owner(log, store, every=len(log) + 1, executor=executor, retire_after_s=0)
        await owner.start(lambda: list(log))
        try:
            # The rebuild's events count toward the next snapshot: the first append takes it.
            sent["a0"] = _a_legal_move(owner, "a")
            await _send(owner, "a", sent["a0"], "a0")
            await _wait_saved(store, 1)
            offset, blob = store.saved[("events", 0)]
            snapshot_held = _held(owner)
            await _send(owner, "a", _a_legal_move(owner, "a"), "a1")
            # After the snapshot: more commands, one ending a game (it retires at once).
            await _send(owner, "b", _a_legal_move(owner, "b"), "b0")
            await _send(owner, "b", ForceEnd(reason="test"), "b-end")
            return offset, blob, snapshot_held, _held(owner), dict(owner.retired)
        finally:
            await owner.stop("test")

    offset, blob, snapshot_held, final, retired = asyncio.run(main())
    executor.shutdown()
    snapshot = decode(blob)
    last = log[offset]
    assert snapshot.offset == offset and snapshot.last == (last.game_id, last.seq, last.hash)
    assert snapshot.fingerprint == FP and (snapshot.topic, snapshot.partition) == ("events", 0)
    assert {gid: (state, dict(seen)) for gid, state, seen in snapshot.games} == snapshot_held
    # Ended long before the snapshot: forgotten (its id only), in the snapshot too.
    assert set(snapshot.retired) == set() and "done" in snapshot.forgotten and snapshot.forgotten.count == 1
    assert set(retired) == {"b"}  # ended just now: retired, not forgotten

    async def restored():
        """A new owner from the snapshot and the log after it (its own last event first, as
        the replica reads it) against one that reads the whole log."""
        fresh = _owner([], None, every=0, retire_after_s=0)
        fresh.restore(decode(blob))
        await fresh.start(lambda: log[offset:])
        whole = _owner([], None, every=0, retire_after_s=0)
        await whole.start(lambda: list(log))
        try:
            again = await _send(fresh, "a", sent["a0"], "a0")  # a retry of the snapshot's last command
            assert "done" in fresh.forgotten and "done" in whole.forgotten
            return fresh.restored_from, _held(fresh), dict(fresh.retired), _held(whole), dict(whole.retired), again
        finally:
            await fresh.stop("test")
            await whole.stop("test")

    restored_from, fresh_held, fresh_retired, whole_held, whole_retired, again = asyncio.run(restored())
    assert restored_from == offset
    assert fresh_held == whole_held == final
    assert fresh_retired == whole_retired
    assert again.duplicate and again.first_seq == log[[e.command_id for e in log].index("a0")].seq


def test_a_snapshot_copies_what_later_commands_change():
    host = _host()
    log = _logged_game(host, "a")
    store = DictStore()
    executor = ThreadPoolExecutor(max_workers=1)
    gate = threading.Event()
    executor.submit(gate.wait)  # the snapshot is encoded only after the commands below

    async def main():
        owner = _owner(log, store, every=1, executor=executor)
        await owner.start(lambda: list(log))
        try:
            await _send(owner, "a", _a_legal_move(owner, "a"), "a0")
            taken_seen = dict(owner.games["a"].seen)
            taken_state = owner.games["a"].state
            taken_offset = len(log) - 1
            for i in range(1, 4):
                await _send(owner, "a", _a_legal_move(owner, "a"), f"a{i}")
            gate.set()
            await _wait_saved(store, 1)
            return taken_seen, taken_state, taken_offset
        finally:
            await owner.stop("test")

    taken_seen, taken_state, taken_offset = asyncio.run(main())
    executor.shutdown()
    snapshot = decode(store.saved[("events", 0)][1])
    [(gid, state, seen)] = snapshot.games
    assert gid == "a" and state == taken_state and dict(seen) == taken_seen
    assert "a0" in dict(seen) and "a3" not in dict(seen)
    assert snapshot.offset == taken_offset < len(log) - 1 and log[taken_offset].seq == state.version


def test_the_fingerprint_names_the_game_its_rules_version_and_the_format_and_every_retired_game_comes_back():
    assert fingerprint("expeditions", 1) == FP  # the same code, the same fingerprint
    assert len({FP, fingerprint("expeditions", 2), fingerprint("journey", 1)}) == 3
    # Retired games are encoded in chunks: every one comes back, in order.
    retired = {f"g{i}": (i, (("c", 1, i, ("Moved",)),), i * 10) for i in range(2 * RETIRED_CHUNK + 7)}
    blob = encode(Snapshot("events", 0, FP, 7, ("g", 1, "h"), retired=retired))
    back = decode(blob)
    assert back.offset == 7 and back.retired == retired and list(back.retired) == list(retired)
    import pickle
    import zlib
    raw = zlib.decompress(blob)
    assert raw.startswith(MAGIC)
    head = pickle.loads(raw[len(MAGIC) + 4:len(MAGIC) + 4 + int.from_bytes(raw[len(MAGIC):len(MAGIC) + 4], "big")])
    assert head[0] == FORMAT and head[-2:] == (0, 3)  # no live game, the retired ones in 3 chunks
    # Another format, or bytes of no format (format 1 was a single pickle), are refused: the
    # replica then reads the log instead.
    newer = pickle.dumps((FORMAT + 1, *head[1:]))
    with pytest.raises(ValueError, match="format"):
        decode(zlib.compress(MAGIC + len(newer).to_bytes(4, "big") + newer))
    with pytest.raises(ValueError, match="format"):
        decode(zlib.compress(pickle.dumps(((1, *head[1:9]), [], []))))
    with pytest.raises(ValueError, match="cut short"):
        decode(zlib.compress(raw[:-10]))


def test_a_snapshot_pickled_between_commands_lets_the_loop_serve_and_decodes_the_same():
    """The owner pickles on its event loop, a slice at a time: other tasks run in between
    (each waits at most one slice), and the bytes are the same as encoding in one go."""
    retired = {f"r{i}": (i, (("c", 1, i, ("Moved",)),), i * 10) for i in range(3 * RETIRED_CHUNK)}
    games = [(f"g{i}", {"cards": list(range(200)), "n": i}, (("c", (1, 1, ("Moved",))),)) for i in range(2000)]
    snapshot = Snapshot("events", 0, FP, 7, ("g", 1, "h"), games=games, retired=retired, taken_ms=5)

    async def main() -> tuple[list[bytes], int]:
        served = 0
        stop = asyncio.Event()

        async def other_work() -> None:
            nonlocal served
            while not stop.is_set():
                served += 1
                await asyncio.sleep(0)

        other = asyncio.create_task(other_work())
        await asyncio.sleep(0)
        before = served
        pieces = await encode_between(snapshot, slice_s=0.0005)
        during = served - before
        stop.set()
        await other
        return pieces, during

    pieces, served_during = asyncio.run(main())
    assert served_during >= 5  # the loop ran the other task between slices, not only after
    assert compress(pieces) == encode(snapshot)
    back = decode(compress(pieces))
    assert back.games == games and back.retired == retired and back.offset == 7
