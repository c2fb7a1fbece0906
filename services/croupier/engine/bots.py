"""Bots choose among the legal actions of their seat, seeing only their seat's view.

A bot is a function (view, legal_actions_as_wire_dicts, rng) -> one of the actions, with
`rng` an injected random.Random. The same bots play in process, in load tests and in demos.

A bot may return None instead: "nothing to do now, wait for the next update". It is for a
seat that may act but need not, such as a delve adventurer whose cast vote stands (casting
it again appends an event and moves the version on, and through the gateway every such
move made the other seats' pending choices stale: a vote could be held up for many rounds).
Whoever drives bots then lets another seat act, or the game's deadline pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from croupier.engine.contract import GameSpec, Rejection


def random_bot(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: Any) -> Mapping[str, Any]:
    """A uniform choice among the legal actions."""
    return legal[rng.randrange(len(legal))]


def bot_for(spec: GameSpec, name: str):
    if name == "random":
        return random_bot
    try:
        return spec.bots[name]
    except KeyError:
        raise Rejection("unknown_bot", f"{spec.id} has no bot {name!r} (has random, {', '.join(spec.bots)})", "malformed") from None


def bot_names(spec: GameSpec) -> list[str]:
    return ["random", *spec.bots]
