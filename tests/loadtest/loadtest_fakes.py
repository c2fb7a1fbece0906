"""An in-process stand-in for the gateway client, for the load generator's logic (what it
counts, when, and what it does when the gateway keeps refusing): no Kafka, Redis or gateway
is involved, so none is mocked. The end-to-end runs against the real stack are in
test_loadtest.py.

Its tables are turn-based: the seats move one after the other, `moves` moves a game. Every
call takes `step` seconds of a virtual clock (`clock`), so that a test can say exactly how
long a command took without measuring real time. `refuse(kind, game_id, tries)` may return a
GatewayError to answer a call with (kind: create_table, join_seat or move; tries: the calls
with that command id so far, this one included).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
import uuid
from typing import Any

from croupier_gateway.client import GatewayError, Update


class FakeGateway:
    def __init__(self, moves: int = 4, *, step: float = 0.0, refuse=None, on_create=None):
        self.moves = moves
        self.step = step
        self.refuse = refuse
        self.on_create = on_create  # called with the new table's id
        self.now = 0.0
        self.tries: dict[str, int] = {}
        self.tables: dict[str, dict[str, Any]] = {}
        self.created: list[str] = []
        # game id -> whether its game ended in the measured run (`worker.measured` set) or before
        self.ended_in_run: dict[str, bool] = {}
        self.worker: Any = None

    def clock(self) -> float:
        return self.now

    async def _call(self, kind: str, game_id: str | None, command_id: str | None) -> None:
        await asyncio.sleep(0)
        self.now += self.step
        key = command_id or uuid.uuid4().hex
        tries = self.tries[key] = self.tries.get(key, 0) + 1
        if self.refuse is not None:
            refusal = self.refuse(kind, game_id, tries)
            if refusal is not None:
                raise refusal

    async def create_table(self, game_type: str, seats: int | None = None, options=None, command_id=None, *,
                           retry: bool = True) -> dict:
        await self._call("create_table", None, command_id)
        game_id = f"{game_type}-{uuid.uuid4().hex[:12]}"
        self.tables[game_id] = {"seats": seats or 2, "version": 1, "moves": 0, "over": False,
                                "changed": asyncio.Condition()}
        self.created.append(game_id)
        if self.on_create is not None:
            self.on_create(game_id)
        return {"game_id": game_id}

    async def join(self, game_id: str, seat: int, player: str = "", bot=None, entropy: str = "", command_id=None, *,
                   retry: bool = True) -> dict:
        await self._call("join_seat", game_id, command_id)
        return {"token": f"{game_id}/{seat}"}

    async def updates(self, game_id: str, token: str | None = None, from_version: int = 0):
        table = self.tables[game_id]
        seat = int(token.rsplit("/", 1)[1]) if token else None
        last = from_version
        while True:
            async with table["changed"]:
                await table["changed"].wait_for(lambda last=last: table["version"] > last)
            last = table["version"]
            over = table["over"]
            mine = not over and seat == table["moves"] % table["seats"]
            yield Update(last, {"status": "over" if over else "running"}, [{"type": "Step"}] if mine else [])
            if over:
                return

    async def submit(self, game_id: str, token: str, command_id: str, action, *, expected_version=None,
                     wait: bool = True) -> dict:
        await self._call("move", game_id, command_id)
        table = self.tables[game_id]
        if table["over"]:
            raise GatewayError(422, "game_over", "the game is over")
        if expected_version != table["version"]:
            raise GatewayError(409, "conflict", "another move came first")
        table["moves"] += 1
        table["version"] += 1
        if table["moves"] >= self.moves:
            table["over"] = True
            self.ended_in_run[game_id] = self.worker is None or self.worker.measured.is_set()
        async with table["changed"]:
            table["changed"].notify_all()
        return {"version": table["version"]}

    async def table(self, game_id: str) -> dict:
        return {"game_type": game_id.split("-", 1)[0], "status": "over" if self.tables[game_id]["over"] else "running"}

    async def close(self) -> None:
        pass


HANG_GUARD_S = 120  # a run that would hang for ever fails the test instead (not a timing assert)


def run_guarded(main):
    """asyncio.run(main()) in a thread of its own: one that hangs (even in its shutdown, with
    tasks that cannot be cancelled) fails the test rather than hanging it."""
    outcome: dict = {}

    def target() -> None:
        try:
            outcome["value"] = asyncio.run(main())
        except BaseException as exc:  # handed to the test's thread
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(HANG_GUARD_S)
    assert not thread.is_alive(), f"still running after {HANG_GUARD_S} s: it hangs"
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")



class Out:
    """The worker's queue to the parent, as a list."""

    def __init__(self) -> None:
        self.messages: list[dict] = []

    def put(self, msg: dict) -> None:
        self.messages.append(msg)

    def of(self, kind: str) -> list[dict]:
        return [m for m in self.messages if m["type"] == kind]


# Worker processes that never get ready (run_workers starts them by reference: spawn imports
# this module in the child).

def die_or_hang(index: int, cfg, start_value, go, out, abort, stop=None) -> None:
    """Worker 0 dies at once without a word; the others hang and never get ready."""
    if index == 0:
        os._exit(3)
    time.sleep(600)


# A worker process playing against FakeGateway (run_workers starts it by reference, in a
# process of its own): games that never end; with `stuck`, no move is ever answered, so a
# staggered warm-up never ends.

def _fake_worker(stuck: bool, index: int, cfg, start_value, go, out, abort, stop=None) -> None:
    from croupier_gateway import loadtest

    fake = FakeGateway(moves=10**9)
    if stuck:
        async def never(*args, **kwargs):
            await asyncio.Event().wait()

        fake.submit = never
    loadtest.make_client = lambda *a, **k: fake
    loadtest.Worker.mean_moves = lambda self, game, games=3: 40.0
    loadtest.worker_main(index, cfg, start_value, go, out, abort, *([] if stop is None else [stop]))


def fake_worker(index: int, cfg, start_value, go, out, abort, stop=None) -> None:
    _fake_worker(False, index, cfg, start_value, go, out, abort, stop)


def fake_worker_stuck(index: int, cfg, start_value, go, out, abort, stop=None) -> None:
    _fake_worker(True, index, cfg, start_value, go, out, abort, stop)
