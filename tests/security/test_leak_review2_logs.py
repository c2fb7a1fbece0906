"""Hidden cards and the seed in the services' logs (the second leak review).

A rules service logs a command its game's rules failed on (`decide_failed`, a bug a
player's input found) with its traceback, and so a failed batch, recovery, deadline, fork
or streamed command. In JSON (the services' default) a traceback is the plain text of its
frames. With `CROUPIER_LOG_FORMAT=console` (docs/operations.md offers it for people reading
a service's log) structlog's ConsoleRenderer formats `log.exception`'s traceback with rich
when rich is installed (it is, in .venv), and rich shows each frame's locals by default: the
table's state, with its seed (cut to the console's width, ~55 of its 64 hex digits: the rest,
~40 bits, is found against the seed hash TableCreated publishes) and every seat's hand
(tuples of up to 10 items are shown whole). A log line must not hold what no seat may see.

Fixed in services/croupier/log.py (d7891e8): the console renderer writes plain tracebacks
(structlog.dev.plain_traceback), as JSON lines do. These tests hold both formats to it:
decide_failed through a real PartitionOwner for every game, and any log.exception of a
service logging to a console (a gateway room's frames would hold every seat's view).
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import re
import sys
import threading

import pytest

from croupier import log as croupier_log
from croupier.config import LogSettings
from croupier.engine import registry
from croupier.engine.contract import Rejection
from croupier.engine.table import JoinSeat, TableHost
from croupier.rules.partition import PartitionOwner, Pending

SEED = hashlib.sha256(b"leak review 2").hexdigest()


class LogWriter:
    def __init__(self, log: list):
        self.log = log
        self.lock = threading.Lock()

    def append(self, envelopes) -> None:
        with self.lock:
            self.log.extend(envelopes)

    def close(self) -> None:
        pass


def _logged_game(host: TableHost, game_id: str) -> list:
    seats = max(2, host.spec.min_seats)
    envs = host.create(game_id, seats, {}, SEED, now=0, command_id="create")
    state = host.fold(envs)
    for seat in range(seats):
        batch = host.decide(state, JoinSeat(seat=seat, player=f"p{seat}", entropy=f"e{seat}"),
                            command_id=f"join{seat}", now=0)
        envs += batch
        state = host.fold(batch, state)
    return envs


@pytest.fixture
def restore_logging():
    yield
    croupier_log.configure(LogSettings())  # the services' default again


@pytest.mark.parametrize("game_type", registry.GAME_IDS)
@pytest.mark.parametrize("fmt", ["json", "console"])
def test_a_command_the_rules_fail_on_logs_no_hidden_card_nor_the_seed(game_type, fmt, restore_logging, monkeypatch):
    """decide_failed's line, as a rules service writes it in either format: no seed, no card
    hidden from a spectator (every seat's hand, the decks)."""
    croupier_log.configure(LogSettings(level="info", format=fmt))
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)  # the log streams follow sys.stdout / sys.stderr
    monkeypatch.setattr(sys, "stderr", out)
    host = TableHost(registry.get(game_type))
    log: list = _logged_game(host, "g")

    async def main():
        owner = PartitionOwner(host, 0, lambda: LogWriter(log), max_batch=256, dedupe_window=16)
        await owner.start(lambda: list(log))
        state = owner.games["g"].state
        decide = owner.host.decide

        def failing(state, command, **kw):  # a bug in the game's decide, its state in hand
            hands = state.game
            raise TypeError(f"unhashable type: 'dict' ({type(hands).__name__})")

        owner.host.decide = failing
        try:
            move = host.legal_actions(state, host.spec.to_act(state.game)[0])[0]
            item = Pending("g", move, "poison", None, asyncio.get_running_loop().create_future())
            owner.submit(item)
            with pytest.raises(Rejection) as refused:
                await asyncio.wait_for(item.future, 10)
            assert refused.value.code == "command_not_understood"
        finally:
            owner.host.decide = decide
            await owner.stop("test")
        return state

    state = asyncio.run(main())
    written = out.getvalue()
    assert "decide_failed" in written and "unhashable" in written, written[-2000:]
    # Any 24 hex digits of the seed: the rest would be found against its published hash.
    pieces = [SEED[i:i + 24] for i in range(0, len(SEED) - 23)]
    assert not [p for p in pieces if p in written], f"the seed is in the {fmt} log"
    hidden = host.spec.hidden(state.game, None)
    tokens = set(re.split(r"[^A-Za-z0-9:._-]+", written))
    shown = sorted(card for card in hidden if card in tokens)
    assert not shown, f"the {fmt} log names cards hidden from every spectator: {shown[:8]}"


def test_a_console_log_shows_no_frames_locals(restore_logging, monkeypatch):
    """Any log.exception (or exc_info=True) of a service logging to a console: no frame's
    locals, whatever they hold (a rules replica's states, a gateway room's feed message with
    every seat's view). Failed before d7891e8 (rich's traceback, show_locals)."""
    croupier_log.configure(LogSettings(level="info", format="console"))
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", out)
    logger = croupier_log.get_logger("croupier.test")

    def fold(seed: str, hands: tuple) -> None:
        raise ValueError("a bug")

    hands = (("blue-7-a", "red-3-b"), ("green-9-a",))
    try:
        fold(SEED, hands)  # (the frames' lines are printed: no card on this one)
    except ValueError:
        logger.exception("something_failed")
    written = out.getvalue()
    assert "something_failed" in written and "a bug" in written, written[-1000:]
    assert SEED[:24] not in written and "green-9-a" not in written, "a console log shows a frame's locals"
