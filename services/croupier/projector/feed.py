"""The message the projector publishes on a game's feed channel (`Keys.feed`) after it has
written the game's read models: the version, the status, and every field it has just written
to the game's views hash (the spectator's view, each seat's view and legal actions), so that
a gateway hands its streams the new views without reading them back from Redis.

    views/1 \\n version \\n status \\n field \\n value \\n field \\n value ...

A newline never occurs inside a field name or a value: the values are canonical JSON, which
writes a newline in a string as the escape \\n, and no byte of a UTF-8 multi-byte character
is 0x0A. A reader that does not know the format (a gateway of an older version, which
expected the bare version number) treats the message as "something changed" and reads the
views from Redis, as it always did.

When the update changed who holds a seat, the message also carries `joined:<seat>` with the
seq of the join that holds the seat now (0: left), as the meta hash has it: a gateway then
re-reads its seated streams' right to their seats before it hands out a view (a stream of a
token whose seat another join took must not receive the new holder's hand).

The message carries every seat's view, like the views hash it mirrors, so it is as private
as that hash: only the gateway, which hands each stream its own seat's view, subscribes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

MAGIC = b"views/1"
_HEAD = MAGIC + b"\n"
JOINED = b"\njoined:"  # in a message whose update changed a seat's holder


def encode(version: int, status: str, views: Mapping[str, str]) -> str:
    """The message for a game's views at `version` (what the projector publishes)."""
    parts = [MAGIC.decode(), str(version), status]
    for name, value in views.items():
        parts.append(name)
        parts.append(value)
    return "\n".join(parts)


def version_of(data: bytes) -> int | None:
    """The version a views message names; None when `data` is not one."""
    if not data.startswith(_HEAD):
        return None
    end = data.find(b"\n", len(_HEAD))
    try:
        return int(data[len(_HEAD):end if end >= 0 else None])
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class FeedViews:
    version: int
    status: str
    fields: dict[bytes, bytes]  # views hash field -> value, raw


def decode(data: bytes) -> FeedViews | None:
    """The views message in full; None when `data` is not a well-formed one."""
    parts = data.split(b"\n")
    if len(parts) < 3 or parts[0] != MAGIC or len(parts) % 2 == 0:
        return None
    try:
        version = int(parts[1])
    except ValueError:
        return None
    return FeedViews(version, parts[2].decode("utf-8", "replace"), dict(zip(parts[3::2], parts[4::2])))
