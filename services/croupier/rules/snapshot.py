"""Snapshots of a partition's games, so that a rebuild reads only the log written since.

Optional, and never the truth: the log alone is always enough. A snapshot holds what a
partition owner had folded up to one event of its log (the last event of a committed append,
named by its offset and its game_id, seq and hash), and a new owner that finds one starts from
it and reads the log from that event on. It is used only if every check passes, and otherwise
ignored (the partition is then read from its start, as without snapshots):

- its format, and a fingerprint of the code that folds the games (the game's package and the
  engine): a deploy that changes either ignores the snapshots written before it;
- its topic and partition;
- the log still holds, at the snapshot's offset, the very event it names: a topic deleted and
  made again, or a snapshot from another cluster, does not match.

Snapshots live in Redis (one key per topic and partition), beside the owners the replicas
publish there; a lost or flushed key costs one full read of the partition. A write replaces
the key only with a snapshot of a later offset, so a stale owner (fenced, still finishing a
snapshot) cannot put an older one back over a newer.

They are pickled: Redis is the platform's own store, written only by its services (the
projector keeps its pickled states there too), and the fingerprint keeps a snapshot from being
unpickled into code that changed since it was written.
"""

from __future__ import annotations

import asyncio
import hashlib
import pickle
import time
import zlib
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import croupier.engine
import croupier.games

FORMAT = 2
# The start of a snapshot's bytes once decompressed (format 2 on; format 1 was one pickle).
MAGIC = b"croupier-snapshot\n"
RETIRED_CHUNK = 500
# How long encode_between pickles before it lets the event loop serve again.
ENCODE_SLICE_S = 0.001

# Only this snapshot, if its offset is past the stored one (ARGV: offset, blob, taken_ms).
_SAVE_IF_NEWER = (
    "local stored = redis.call('HGET', KEYS[1], 'offset') "
    "if stored and tonumber(stored) >= tonumber(ARGV[1]) then return 0 end "
    "redis.call('HSET', KEYS[1], 'offset', ARGV[1], 'blob', ARGV[2], 'taken_ms', ARGV[3], 'bytes', string.len(ARGV[2])) "
    "return 1"
)


@dataclass
class Snapshot:
    """What a partition owner holds, as of the event at `offset` of its partition (`last`:
    that event's game_id, seq and hash). `games`: (game_id, TableState, the remembered
    results of its recent command_ids as (command_id, result) pairs, oldest first);
    `retired`, `ended` and `forgotten` as the owner keeps them (rules/partition.py)."""

    topic: str
    partition: int
    fingerprint: str
    offset: int
    last: tuple[str, int, str]
    games: list[tuple[str, Any, tuple]] = field(default_factory=list)
    retired: dict = field(default_factory=dict)
    ended: dict = field(default_factory=dict)
    taken_ms: int = 0
    forgotten: Any = None  # the owner's IdFilter of forgotten game ids


def fingerprint(game_type: str, rules_version: int) -> str:
    """A digest of the code a snapshot's contents depend on: every file of the game's package
    and of the engine, the modules that define what a partition owner keeps (this one, the
    owner's, the forgotten ids' filter), the game's rules version and the snapshot format."""
    digest = hashlib.sha256(f"{FORMAT}:{game_type}:{rules_version}".encode())
    here = Path(__file__).resolve().parent
    sources = [Path(croupier.engine.__file__).parent, Path(croupier.games.__file__).parent / game_type,
               here / "snapshot.py", here / "partition.py", here / "forgotten.py"]
    for source in sources:
        paths = [source] if source.is_file() else sorted(
            p for p in source.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        for path in paths:
            digest.update(str(path.relative_to(source.parent)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _pickled(snapshot: Snapshot) -> Generator[None, None, list[bytes]]:
    """The snapshot as pickled pieces: a head (format, where it is from, the counts), its games
    one at a time and its retired games RETIRED_CHUNK at a time. Yields after each piece, so
    that whoever drives it can let other work in between (see encode_between)."""
    dumps, protocol = pickle.dumps, pickle.HIGHEST_PROTOCOL
    games = []
    for game in snapshot.games:
        games.append(dumps(game, protocol=protocol))
        yield
    items = list(snapshot.retired.items())
    retired = []
    for i in range(0, len(items), RETIRED_CHUNK):
        retired.append(dumps(items[i:i + RETIRED_CHUNK], protocol=protocol))
        yield
    head = (FORMAT, snapshot.topic, snapshot.partition, snapshot.fingerprint, snapshot.offset, snapshot.last,
            snapshot.ended, snapshot.taken_ms, snapshot.forgotten, len(games), len(retired))
    return [dumps(head, protocol=protocol), *games, *retired]


def compress(pieces: list[bytes]) -> bytes:
    """The stored bytes: MAGIC, then each piece after its length (4 bytes), compressed as one
    stream. zlib runs without the GIL, a piece at a time, so a worker thread does this while
    the event loop serves (the pieces are never joined into one big pickle, which would hold
    the GIL for as long as it takes to copy them all)."""
    c = zlib.compressobj(1)
    out = [c.compress(MAGIC)]
    for piece in pieces:
        out.append(c.compress(len(piece).to_bytes(4, "big")))
        out.append(c.compress(piece))
    out.append(c.flush())
    return b"".join(out)


def encode(snapshot: Snapshot) -> bytes:
    """The snapshot's bytes, in one go (for a caller with nothing else to serve)."""
    steps = _pickled(snapshot)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return compress(done.value)


async def encode_between(snapshot: Snapshot, slice_s: float = ENCODE_SLICE_S) -> list[bytes]:
    """The snapshot pickled on the running event loop, slice_s of it at a time, with the
    loop's other work in between; compress() the pieces (on a worker thread).

    Pickling holds the GIL. Done in a worker thread, it makes the event loop wait for the
    GIL each time the loop lets it go (every poll and every send), up to the interpreter's
    switch interval (5 ms) each time, for as long as the encoding lasts: 0.1-0.6 s in a
    replica with 600-2,600 games. In slices on the loop, a command waits at most a slice."""
    steps = _pickled(snapshot)
    clock = time.perf_counter
    until = clock() + slice_s
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value
        if clock() >= until:
            await asyncio.sleep(0)
            until = clock() + slice_s


def decode(blob: bytes) -> Snapshot:
    raw = memoryview(zlib.decompress(blob))
    if raw[:len(MAGIC)] != MAGIC:
        raise ValueError("not a snapshot this code can read (an older format?)")
    pos = len(MAGIC)

    def piece() -> Any:
        nonlocal pos
        size = int.from_bytes(raw[pos:pos + 4], "big")
        start, pos = pos + 4, pos + 4 + size
        if pos > len(raw):
            raise ValueError("snapshot cut short")
        return pickle.loads(raw[start:pos])

    head = piece()
    if head[0] != FORMAT:
        raise ValueError(f"snapshot format {head[0]}, this code reads {FORMAT}")
    _, topic, partition, fp, offset, last, ended, taken_ms, forgotten, n_games, n_retired = head
    games = [piece() for _ in range(n_games)]
    retired_games: dict = {}
    for _ in range(n_retired):
        retired_games.update(piece())
    return Snapshot(topic, partition, fp, offset, tuple(last), games, retired_games, ended, taken_ms, forgotten)


class SnapshotStore:
    """Snapshots in Redis: `{prefix}croupier:snapshot:{topic}:{partition}`, a hash of the
    offset, the encoded snapshot, when it was taken (ms) and its size (what `croupier status`
    shows). Blocking: call from a worker thread."""

    def __init__(self, redis_client: Any, key_prefix: str = ""):
        self._redis = redis_client
        self._prefix = key_prefix
        self._save = redis_client.register_script(_SAVE_IF_NEWER)

    def key(self, topic: str, partition: int) -> str:
        return f"{self._prefix}croupier:snapshot:{topic}:{partition}"

    def save(self, topic: str, partition: int, offset: int, blob: bytes, taken_ms: int = 0) -> bool:
        """Store it unless a snapshot of this or a later offset is stored already."""
        return bool(self._save(keys=[self.key(topic, partition)], args=[offset, blob, taken_ms]))

    def describe(self, topic: str, partition: int) -> dict | None:
        """The stored snapshot's offset, time taken (ms) and size, without reading it."""
        offset, taken_ms, size = self._redis.hmget(self.key(topic, partition), ["offset", "taken_ms", "bytes"])
        if offset is None:
            return None
        return {"offset": int(offset), "taken_ms": int(taken_ms or 0), "bytes": int(size or 0)}

    def load(self, topic: str, partition: int) -> tuple[int, bytes] | None:
        offset, blob = self._redis.hmget(self.key(topic, partition), ["offset", "blob"])
        if offset is None or blob is None:
            return None
        return int(offset), blob

    def delete(self, topic: str, partition: int) -> None:
        self._redis.delete(self.key(topic, partition))
