"""Integers read from text that a person or a program wrote: options, settings, flags, answers."""

from __future__ import annotations

import re

# ASCII digits only; 4,000 at most, under the 4,300 past which int() raises.
_INTEGER = re.compile(r"-?[0-9]{1,4000}", re.ASCII)


def parse_int(text: str) -> int | None:
    """The integer `text` spells in ASCII digits, with an optional leading minus and spaces
    around it; None for anything else. Stricter than int(), which also takes other scripts'
    digits ("３", "٣"), a plus sign and underscores ("+1_000"): nothing a client of ours
    means to send, and a value the log or a setting would then hold in another spelling."""
    text = text.strip()
    return int(text) if _INTEGER.fullmatch(text) else None
