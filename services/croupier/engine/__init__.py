"""The pure heart of Croupier: the game contract, codecs, envelopes, fair randomness.

Nothing under croupier.engine or croupier.games does I/O, reads a clock or uses global
randomness; an import-linter contract in pyproject.toml keeps it so.
"""

from croupier.engine.contract import (
    Command,
    Context,
    Event,
    GameSpec,
    OptionSpec,
    Rejection,
    Start,
    Tick,
)

__all__ = [
    "Command",
    "Context",
    "Event",
    "GameSpec",
    "OptionSpec",
    "Rejection",
    "Start",
    "Tick",
]
