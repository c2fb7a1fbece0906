"""The ids of games a partition has forgotten, a couple of bytes each.

A finished game is retired from memory minutes after its end (its version and last few
command results kept, ~1.5–3 KB), and forgotten CROUPIER_RULES_FORGET_AFTER_S later (a day by
default): only its id stays, in this filter, so that a replica's memory (and its snapshots)
stop growing with every game it ever hosted. The id must stay known: a create must never
reuse a game id (a second game under it would break the first one's log), and a command for a
game long over is refused as over, not as unknown.

A scalable Bloom filter: blocks of growing capacity (FIRST_CAPACITY, then twice the one
before), each with a false-positive rate of at most ERROR_RATE when full. It never answers
"no" for an id that was added; it may answer "yes" for one that never was, with a probability
below ERROR_RATE times the number of blocks (well under 1 % for hundreds of millions of ids).
Such an id's create is refused `already_exists` and its caller picks another id; the gateway
does so itself for the ids it chooses.
"""

from __future__ import annotations

import hashlib
import math

FIRST_CAPACITY = 1 << 16
ERROR_RATE = 0.0005


class _Block:
    __slots__ = ("bits", "size", "hashes", "capacity", "count")

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.size = max(64, math.ceil(-capacity * math.log(ERROR_RATE) / math.log(2) ** 2))
        self.hashes = max(1, round(self.size / capacity * math.log(2)))
        self.bits = bytearray((self.size + 7) // 8)
        self.count = 0

    def positions(self, h1: int, h2: int):
        size = self.size
        return [(h1 + i * h2) % size for i in range(self.hashes)]


def _hash(game_id: str) -> tuple[int, int]:
    digest = hashlib.blake2b(game_id.encode("utf-8"), digest_size=16).digest()
    return int.from_bytes(digest[:8], "little"), int.from_bytes(digest[8:], "little") | 1


class IdFilter:
    def __init__(self) -> None:
        self._blocks: list[_Block] = []
        self.count = 0

    def add(self, game_id: str) -> None:
        blocks = self._blocks
        if not blocks or blocks[-1].count >= blocks[-1].capacity:
            blocks.append(_Block(FIRST_CAPACITY << len(blocks)))
        block = blocks[-1]
        bits = block.bits
        for p in block.positions(*_hash(game_id)):
            bits[p >> 3] |= 1 << (p & 7)
        block.count += 1
        self.count += 1

    def __contains__(self, game_id: str) -> bool:
        if not self._blocks:
            return False
        h1, h2 = _hash(game_id)
        for block in self._blocks:
            bits = block.bits
            if all(bits[p >> 3] & (1 << (p & 7)) for p in block.positions(h1, h2)):
                return True
        return False

    def __len__(self) -> int:
        return self.count

    @property
    def nbytes(self) -> int:
        return sum(len(b.bits) for b in self._blocks)
