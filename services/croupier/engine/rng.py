"""Fair randomness: HMAC-SHA256 over a committed seed, the seats' entropy and a counter.

At creation the host draws a secret seed and publishes only sha256(seed), its commitment.
Seats may add entropy after the commitment is fixed. Draw number `counter` reads the byte
stream HMAC(seed, entropy | counter | block) and turns it into a uniform choice by
rejection sampling. Each draw is recorded ({"n", "op", ..., "out"}) beside the events it
caused, so replay never re-rolls, and `verify_draws` re-derives every one once the seed is
revealed.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterator, Sequence
from typing import Any


def commitment(seed_hex: str) -> str:
    return hashlib.sha256(bytes.fromhex(seed_hex)).hexdigest()


def entropy_string(entropies: Sequence[str]) -> str:
    """All seats' entropy in seat order, as one unambiguous string."""
    return "\x1f".join(entropies)


class _Stream:
    """Bytes of one draw, read 32 at a time as the draw needs them."""

    def __init__(self, key: bytes, prefix: bytes):
        self._key = key
        self._prefix = prefix
        self._block = 0
        self._buf = b""

    def _take(self, nbytes: int) -> bytes:
        while len(self._buf) < nbytes:
            msg = self._prefix + self._block.to_bytes(4, "big")
            self._buf += hmac.new(self._key, msg, hashlib.sha256).digest()
            self._block += 1
        out, self._buf = self._buf[:nbytes], self._buf[nbytes:]
        return out

    def below(self, n: int) -> int:
        if n <= 0:
            raise ValueError("below() needs n >= 1")
        if n == 1:
            return 0
        nbytes = (n.bit_length() + 7) // 8 + 1
        span = 256**nbytes
        limit = span - span % n
        while True:
            value = int.from_bytes(self._take(nbytes), "big")
            if value < limit:
                return value % n


class FairRng:
    """The injected RNG of one decide call; `draws` is what it produced, for the record."""

    def __init__(self, seed_hex: str, entropy: str, counter: int):
        self._key = bytes.fromhex(seed_hex)
        self._entropy = entropy.encode("utf-8")
        self.counter = counter
        self.draws: list[dict[str, Any]] = []

    def _stream(self) -> _Stream:
        n = self.counter
        self.counter += 1
        return _Stream(self._key, self._entropy + b"\x1e" + str(n).encode() + b"\x1e")

    def below(self, n: int) -> int:
        counter = self.counter
        out = self._stream().below(n)
        self.draws.append({"n": counter, "op": "below", "size": n, "out": out})
        return out

    def randint(self, lo: int, hi: int) -> int:
        counter = self.counter
        out = lo + self._stream().below(hi - lo + 1)
        self.draws.append({"n": counter, "op": "randint", "lo": lo, "hi": hi, "out": out})
        return out

    def choice(self, items: Sequence[Any]) -> Any:
        return items[self.below(len(items))]

    def shuffle(self, items: Sequence[Any]) -> list[Any]:
        counter = self.counter
        perm = _permutation(self._stream(), len(items))
        self.draws.append({"n": counter, "op": "shuffle", "size": len(items), "out": perm})
        return [items[i] for i in perm]


def _permutation(stream: _Stream, size: int) -> list[int]:
    perm = list(range(size))
    for i in range(size - 1, 0, -1):
        j = stream.below(i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def rederive(seed_hex: str, entropy: str, draw: dict[str, Any]) -> Any:
    """The outcome that a recorded draw must have, from the revealed seed."""
    rng = FairRng(seed_hex, entropy, int(draw["n"]))
    op = draw.get("op")
    if op == "below":
        return rng.below(int(draw["size"]))
    if op == "randint":
        return rng.randint(int(draw["lo"]), int(draw["hi"]))
    if op == "shuffle":
        return _permutation(rng._stream(), int(draw["size"]))
    raise ValueError(f"unknown draw op {op!r}")


def verify_draws(seed_hex: str, entropy: str, draws: Sequence[dict[str, Any]]) -> Iterator[str]:
    """Yields a description of each recorded draw that the seed does not reproduce."""
    expected_n = None
    for draw in draws:
        n = draw.get("n")
        if expected_n is not None and n != expected_n:
            yield f"draw counter {n} out of order (expected {expected_n})"
        expected_n = (n or 0) + 1
        try:
            out = rederive(seed_hex, entropy, draw)
        except (ValueError, KeyError, TypeError) as exc:
            yield f"draw {n}: {exc}"
            continue
        recorded = draw.get("out")
        if (list(recorded) if isinstance(recorded, (list, tuple)) else recorded) != out:
            yield f"draw {n} ({draw.get('op')}) recorded {recorded!r} but the seed gives {out!r}"


class ReplayRng:
    """An RNG that hands back recorded outcomes in order; used to re-run decide when the
    seed is not (yet) known, e.g. to check a live game's log. Raises if decide asks for a
    draw that was not recorded or of another kind."""

    def __init__(self, draws: Sequence[dict[str, Any]]):
        self._draws = list(draws)
        self._i = 0
        self.draws: list[dict[str, Any]] = []

    def _next(self, op: str) -> dict[str, Any]:
        if self._i >= len(self._draws):
            raise LookupError(f"decide asked for an unrecorded {op} draw")
        draw = self._draws[self._i]
        self._i += 1
        if draw.get("op") != op:
            raise LookupError(f"decide asked for a {op} draw but {draw.get('op')} was recorded")
        self.draws.append(draw)
        return draw

    def below(self, n: int) -> int:
        return int(self._next("below")["out"])

    def randint(self, lo: int, hi: int) -> int:
        return int(self._next("randint")["out"])

    def choice(self, items: Sequence[Any]) -> Any:
        return items[self.below(len(items))]

    def shuffle(self, items: Sequence[Any]) -> list[Any]:
        perm = self._next("shuffle")["out"]
        return [items[i] for i in perm]
