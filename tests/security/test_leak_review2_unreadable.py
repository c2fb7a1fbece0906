"""A game its rules service cannot fold is refused `game_unreadable` to every caller, and
the refusal's words must not name the cards of the event it failed on (the second leak
review).

A replica that meets an event its game's code cannot fold (a newer rules version's event
during a rolling upgrade, a card of newer content its code does not know) leaves the game
out and refuses every command for it, and every GetState, `game_unreadable` (the gateway
answers 503 with the same words, to whichever seat sent a move). Those words said why:
`seq N (Type vV): <the exception>`, and the game's own code fails with the card it could
not place (`KeyError: 'blue-7-a'`), a card of that event, such as the one another seat
drew. Operators have it in the log (`game_unreadable`, with the exception); a caller is
told the seq, the event type and the exception with every string of the event's payload and
every card the game hid from anyone put as "(hidden)" (rules.partition.redacted).
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import threading

import pytest

from croupier.engine import registry
from croupier.engine.contract import Rejection
from croupier.engine.local import LocalTable
from croupier.engine.selfplay import SelfplayReport, play_one
from croupier.engine.table import TableHost
from croupier.rules.partition import PartitionOwner, Pending


class LogWriter:
    def __init__(self, log: list):
        self.log = log
        self.lock = threading.Lock()

    def append(self, envelopes) -> None:
        with self.lock:
            self.log.extend(envelopes)

    def close(self) -> None:
        pass


def _strings(value) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*map(_strings, value.values())) if value else set()
    if isinstance(value, (list, tuple)):
        return set().union(*map(_strings, value)) if value else set()
    return set()


def _failing_point(game_type: str):
    """A game's log, an event of it that names cards hidden from seat 0 after it, and those
    cards."""
    spec = registry.get(game_type)
    table: LocalTable = play_one(spec, seats=max(2, spec.min_seats), seat_bots=["random"] * max(2, spec.min_seats),
                                 options={}, seed=7, index=0, report=SelfplayReport(game=game_type), verify=False)
    host = TableHost(spec)
    state = None
    for env in table.envelopes:
        state = host.evolve(state, env)
        if env.cause is None and state.game is not None and env.seq > 3:
            named = _strings(env.payload) & spec.hidden(state.game, 0)
            if named and state.status == "running":
                return [e for e in table.envelopes if e.seq <= env.seq + 20], env, sorted(named)
    raise AssertionError(f"no {game_type} event names a card hidden from seat 0")


@pytest.mark.parametrize("game_type", registry.GAME_IDS)
def test_a_game_its_rules_cannot_fold_is_refused_without_naming_the_events_cards(game_type):
    log, bad, cards = _failing_point(game_type)
    spec = registry.get(game_type)

    def evolve(game, event):  # the code fails on the event's first card, as a KeyError of an unknown card does
        if _strings(dataclasses.asdict(event)) & set(cards) and event.TYPE == bad.type:
            raise KeyError(sorted(_strings(dataclasses.asdict(event)) & set(cards))[0])
        return spec.evolve(game, event)

    host = TableHost(dataclasses.replace(spec, evolve=evolve))
    truth = TableHost(spec)
    before = truth.fold(log)
    # Seat 0's move (any: the game is refused before a move is decided).
    move = next(a for s in truth.to_act(before) for a in truth.legal_actions(before, s))
    move = dataclasses.replace(move, seat=0)

    async def main():
        owner = PartitionOwner(host, 0, lambda: LogWriter(list(log)), max_batch=256, dedupe_window=16)
        await owner.start(lambda: list(log))
        try:
            assert bad.game_id in owner.unreadable, "the fold did not fail where the test made it"
            item = Pending(bad.game_id, move, "m1", None, asyncio.get_running_loop().create_future())
            owner.submit(item)
            with pytest.raises(Rejection) as refused:
                await asyncio.wait_for(item.future, 10)
            return refused.value
        finally:
            await owner.stop("test")

    refused = asyncio.run(main())
    assert refused.code == "game_unreadable", refused
    assert f"seq {bad.seq} ({bad.type} v{bad.version})" in refused.message, refused.message
    tokens = set(re.split(r"[\s,;:'\"()\[\]{}]+", refused.message))
    named = sorted(c for c in cards if c in tokens)
    assert not named, f"game_unreadable tells every caller the event's hidden cards {named}: {refused.message!r}"
