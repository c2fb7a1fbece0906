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

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from croupier.engine.contract import GameSpec, Rejection


def random_bot(view: Mapping[str, Any], legal: Sequence[Mapping[str, Any]], rng: Any) -> Mapping[str, Any]:
    """A uniform choice among the legal actions."""
    return legal[rng.randrange(len(legal))]


def first_to_move(host: Any, state: Any, seats: Iterable[int], bot_of: Callable[[int], Any], rng: Any):
    """The first of `seats` whose bot moves rather than waits, as (seat, its legal commands,
    their wire dicts, the chosen wire dict); None when every one waits. `host` is the game's
    TableHost; `bot_of(seat)` is that seat's bot."""
    for seat in seats:
        legal = host.legal_actions(state, seat)
        if not legal:
            continue
        wire = [host.encode_action(a) for a in legal]
        choice = bot_of(seat)(host.view(state, seat), wire, rng)
        if choice is not None:
            return seat, legal, wire, choice
    return None


def bot_for(spec: GameSpec, name: str):
    if name == "random":
        return random_bot
    try:
        return spec.bots[name]
    except KeyError:
        raise Rejection("unknown_bot", f"{spec.id} has no bot {name!r} (has random, {', '.join(spec.bots)})", "malformed") from None


def bot_names(spec: GameSpec) -> list[str]:
    return ["random", *spec.bots]
