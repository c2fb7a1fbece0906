"""The event envelope and its hash chain.

Every event in the log is wrapped in an Envelope. `hash` is SHA-256 over `prev_hash` and the
canonical JSON of every other field, so changing one byte of one event breaks the chain
from there on. The first event of each batch carries `cause`: the command that produced
the batch (wire form), the seat, the random draws it consumed and the batch's size, which
is what audit needs to re-run it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from croupier.engine.codec import canonical_bytes, canonical_json
from croupier.engine.records import twin

GENESIS_HASH = "0" * 64

FIELDS = (
    "game_id",
    "game_type",
    "seq",
    "type",
    "version",
    "payload",
    "rules_version",
    "command_id",
    "seat",
    "time",
    "cause",
    "prev_hash",
    "hash",
)


@dataclass(frozen=True, slots=True)
class Envelope:
    game_id: str
    game_type: str
    seq: int
    type: str
    version: int
    payload: dict[str, Any]
    rules_version: int
    command_id: str | None
    seat: int | None
    time: int
    cause: dict[str, Any] | None
    prev_hash: str
    hash: str

    @property
    def command_end(self) -> int | None:
        """On a command's first event (the one that carries `cause`), the seq of the last
        event the command produced; None on the others."""
        return self.seq + int(self.cause["events"]) - 1 if self.cause is not None else None

    def body(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in FIELDS if name != "hash"}

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in FIELDS}

    def to_json(self) -> str:
        return canonical_json(self.to_dict())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Envelope":
        """The envelope of a decoded record (extra keys are ignored). Built as a plain twin
        of the record and then given its class (croupier.engine.records): a frozen
        dataclass's __init__ sets each of the 13 fields through object.__setattr__, which
        was most of decoding a record, and every rebuild, projection and audit decodes every
        record it reads."""
        try:
            e = _new(_Blank)
            e.game_id = data["game_id"]
            e.game_type = data["game_type"]
            e.seq = data["seq"]
            e.type = data["type"]
            e.version = data["version"]
            e.payload = data["payload"]
            e.rules_version = data["rules_version"]
            e.command_id = data["command_id"]
            e.seat = data["seat"]
            e.time = data["time"]
            e.cause = data["cause"]
            e.prev_hash = data["prev_hash"]
            e.hash = data["hash"]
        except KeyError:
            raise ValueError(f"envelope lacks {[name for name in FIELDS if name not in data]}") from None
        e.__class__ = cls
        return e


_new = object.__new__
_Blank = twin(Envelope)


def compute_hash(prev_hash: str, body: Mapping[str, Any]) -> str:
    digest = hashlib.sha256(prev_hash.encode("ascii"))
    digest.update(canonical_bytes(body))
    return digest.hexdigest()


def seal(
    *,
    game_id: str,
    game_type: str,
    first_seq: int,
    prev_hash: str,
    rules_version: int,
    command_id: str | None,
    seat: int | None,
    time: int,
    cause: dict[str, Any] | None,
    events: Iterable[tuple[str, int, dict[str, Any]]],
) -> list[Envelope]:
    """Wrap (type, version, payload) triples into chained envelopes."""
    out: list[Envelope] = []
    seq = first_seq
    for i, (etype, version, payload) in enumerate(events):
        body = {
            "game_id": game_id,
            "game_type": game_type,
            "seq": seq,
            "type": etype,
            "version": version,
            "payload": payload,
            "rules_version": rules_version,
            "command_id": command_id,
            "seat": seat,
            "time": time,
            "cause": cause if i == 0 else None,
            "prev_hash": prev_hash,
        }
        digest = compute_hash(prev_hash, body)
        out.append(Envelope(hash=digest, **body))
        prev_hash = digest
        seq += 1
    return out


@dataclass(frozen=True)
class Fault:
    seq: int
    what: str

    def __str__(self) -> str:
        return f"seq {self.seq}: {self.what}"


def verify_chain(envelopes: Iterable[Envelope]) -> Fault | None:
    """The first break in seq contiguity or in the hash chain, or None when all hold."""
    expected_seq = 1
    prev_hash = GENESIS_HASH
    game_id = None
    for env in envelopes:
        if game_id is None:
            game_id = env.game_id
        elif env.game_id != game_id:
            return Fault(env.seq, f"belongs to game {env.game_id}, not {game_id}")
        if env.seq != expected_seq:
            kind = "missing or out of order" if env.seq > expected_seq else "duplicated or out of order"
            return Fault(expected_seq, f"seq {expected_seq} is {kind}: found seq {env.seq} in its place")
        if env.prev_hash != prev_hash:
            return Fault(env.seq, "prev_hash does not match the hash of the event before it")
        try:
            actual = compute_hash(env.prev_hash, env.body())
        except (TypeError, ValueError) as exc:
            return Fault(env.seq, f"cannot be hashed: {exc}")
        if actual != env.hash:
            return Fault(env.seq, "content does not match its hash (altered)")
        prev_hash = env.hash
        expected_seq += 1
    return None
