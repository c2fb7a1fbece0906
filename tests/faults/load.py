"""Load through the gateway for the fault tests: many tables of every game type played by
random-move bots with a small think time, over HTTP and over gRPC, by the gateway clients
(gateway/croupier_gateway/client.py).

Every command carries a command_id, and every answer is recorded per command_id: what the
gateway acknowledged (with the seqs it named), every retryable error on the way, and final
refusals. A command that got a retryable error (429, 503, a dropped connection) is sent again
with the SAME command_id until it is answered, as a client of Croupier is told to do. With
`send_twice`, every command is sent twice on purpose (both at once, or one after the other).
The checks (checks.py) then hold the Kafka log to these records.
"""

from __future__ import annotations

import asyncio
import hmac
import random
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import grpc
import httpx

from croupier.engine import registry
from croupier_gateway.client import GatewayError, GrpcGateway, HttpGateway

RETRYABLE = (429, 503)
TRANSPORT_ERRORS = (httpx.TransportError, ConnectionError, OSError, TimeoutError, grpc.aio.AioRpcError)


@dataclass
class Sent:
    """One command id: what the client sent and what it was told."""

    kind: str  # create | join | move
    game_id: str  # "" for a create until it is answered
    log_id: str  # the command id as the log records it (the gateway namespaces it)
    attempts: int = 0
    ack: tuple[int, int] | None = None  # (first_seq, last_seq) the gateway acknowledged
    answers: list[tuple[int, int, bool]] = field(default_factory=list)  # every success: first, last, duplicate
    errors: list[str] = field(default_factory=list)  # retryable errors seen on the way
    refused: str | None = None  # a final refusal's status and code


class Recorder:
    def __init__(self) -> None:
        self.sent: dict[str, Sent] = {}
        self.errors = Counter()  # "503 no_replica", "transport ConnectError", ...
        self.mismatched: list[str] = []  # two answers for one command id that name other seqs

    def new(self, kind: str, game_id: str, log_id: str) -> Sent:
        rec = Sent(kind, game_id, log_id)
        self.sent[f"{game_id}|{log_id}" if game_id else log_id] = rec
        return rec

    def answered(self, rec: Sent, first: int, last: int, duplicate: bool) -> None:
        rec.answers.append((first, last, duplicate))
        if rec.ack is None:
            rec.ack = (first, last)
        elif rec.ack != (first, last):
            self.mismatched.append(f"{rec.game_id} {rec.log_id}: answered {rec.ack} and then {(first, last)}")

    def counts(self) -> dict[str, int]:
        sent = list(self.sent.values())
        return {
            "commands_sent": len(sent),
            "attempts": sum(s.attempts for s in sent),
            "acknowledged": sum(s.ack is not None for s in sent),
            "retried": sum(s.attempts > 1 for s in sent),
            "retryable_errors": sum(len(s.errors) for s in sent),
            "refused": sum(s.refused is not None for s in sent),
        }


class Stopped(Exception):
    pass


@dataclass
class TableDriver:
    """One table: created, every seat joined, then random legal moves until stopped."""

    load: "Load"
    game_type: str
    seats: int
    client: Any
    rng: random.Random
    game_id: str = ""
    tokens: list[str] = field(default_factory=list)
    version: int = 0
    moves: int = 0
    over: bool = False

    async def run(self) -> None:
        cid = uuid.uuid4().hex
        rec = self.load.rec.new("create", "", f"create:{cid}")
        out = await self.load.send(rec, lambda: self.client.create_table(self.game_type, self.seats, {}, command_id=cid),
                                   final_ok=("already_exists",))
        self.game_id = out["game_id"] if out else self.load.create_id(self.game_type, cid)
        rec.game_id = self.game_id
        self.load.tables.append(self)
        for seat in range(self.seats):
            jid = uuid.uuid4().hex
            rec = self.load.rec.new("join", self.game_id, f"join:{seat}:{jid}")
            out = await self.load.send(rec, lambda seat=seat, jid=jid: self.join(seat, jid))
            if out is None:
                raise AssertionError(f"{self.game_id}: join of seat {seat} refused: {rec.refused}")
            self.tokens.append(out["token"])
            self.version = max(self.version, out.get("version", 0))
        while not self.load.stopping.is_set():
            if not await self.step():
                break
            await asyncio.sleep(self.rng.uniform(*self.load.think_s))

    async def join(self, seat: int, jid: str) -> dict:
        body = {"player": f"p{seat}", "entropy": uuid.uuid4().hex, "command_id": jid}
        if isinstance(self.client, HttpGateway):
            r = await self.client.request("POST", f"/v1/tables/{self.game_id}/seats/{seat}", json_body=body)
            return {"token": r["token"], "version": r["version"]}
        from croupier.v1 import gateway_pb2

        r = await self.client._call("JoinTable", gateway_pb2.JoinTableRequest(
            game_id=self.game_id, seat=seat, player=body["player"], entropy=body["entropy"], command_id=jid))
        return {"token": r.token, "version": r.version}

    async def step(self, *, deadline_s: float = 0) -> bool:
        """One move if a seat is to act; False once the game is over."""
        view = await self.load.read(lambda: self.client.view(self.game_id, None, min_version=self.version, timeout_s=2))
        if view is None:
            return True
        self.version = max(self.version, view["version"])
        if view["view"]["status"] == "over":
            self.over = True
            return False
        to_act = view["view"]["to_act"]
        if not to_act:
            return True  # a timer of the game is due (delve's votes): the next version brings a seat
        seat = self.rng.choice(to_act)
        listed = await self.load.read(lambda: self.client.actions(self.game_id, self.tokens[seat]))
        if listed is None or listed["version"] != view["version"] or not listed["actions"]:
            return True
        action = self.rng.choice(listed["actions"])
        mid = uuid.uuid4().hex
        rec = self.load.rec.new("move", self.game_id, f"s{seat}:{mid}")
        expected = listed["version"]
        out = await self.load.send(rec, lambda: self.client.submit(self.game_id, self.tokens[seat], mid, action,
                                                                   expected_version=expected, wait=True))
        if out is not None:
            self.moves += 1
            self.version = max(self.version, out["version"])
        return True


class Load:
    """`tables` tables, spread over the game types, half of them over gRPC."""

    def __init__(self, http_url: str, grpc_address: str, signing_key: str, *, think_s=(0.02, 0.15),
                 send_twice: bool = False, seed: int = 1, retry_for_s: float = 300.0):
        self.http = HttpGateway(http_url, timeout_s=30)
        self.grpc = GrpcGateway(grpc_address, timeout_s=30)
        self.signing_key = signing_key
        self.think_s = think_s
        self.send_twice = send_twice
        self.retry_for_s = retry_for_s
        self.rng = random.Random(seed)
        self.rec = Recorder()
        self.tables: list[TableDriver] = []
        self.tasks: list[asyncio.Task] = []
        self.stopping = asyncio.Event()
        self.started = time.monotonic()
        self.transport_errors = 0

    def create_id(self, game_type: str, cid: str) -> str:
        """The id the gateway gives a table created with this command_id (core.create_table)."""
        digest = hmac.new(self.signing_key.encode(), f"create:{game_type}:{cid}".encode(), "sha256")
        return f"{game_type}-{digest.hexdigest()[:16]}"

    def add_tables(self, count: int) -> None:
        games = list(registry.GAME_IDS)
        for i in range(count):
            game_type = games[(len(self.tasks) + i) % len(games)]
            spec = registry.get(game_type)
            seats = max(spec.min_seats, min(spec.max_seats, 2 + self.rng.randrange(2)))
            client = self.grpc if (len(self.tasks) + i) % 2 else self.http
            driver = TableDriver(self, game_type, seats, client, random.Random(self.rng.random()))
            self.tasks.append(asyncio.create_task(driver.run()))

    def acked(self) -> int:
        return sum(s.ack is not None for s in self.rec.sent.values())

    async def wait_acked(self, count: int, timeout_s: float = 240) -> None:
        """Until `count` commands in all have been acknowledged (or a table task failed)."""
        deadline = time.monotonic() + timeout_s
        while self.acked() < count:
            self._raise_failed()
            if time.monotonic() > deadline:
                raise TimeoutError(f"only {self.acked()} of {count} commands acknowledged after {timeout_s} s: "
                                   f"{dict(self.rec.errors.most_common(8))}")
            await asyncio.sleep(0.2)

    def _raise_failed(self) -> None:
        for task in self.tasks:
            if task.done() and not task.cancelled() and task.exception() is not None:
                raise task.exception()

    async def stop(self, timeout_s: float = 240) -> None:
        """Stop making moves; every command already sent is answered (or given up) first."""
        self.stopping.set()
        done, pending = await asyncio.wait(self.tasks, timeout=timeout_s)
        if pending:
            raise TimeoutError(f"{len(pending)} tables did not stop within {timeout_s} s")
        self._raise_failed()

    async def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        await self.http.close()
        await self.grpc.close()

    # -- sending ----------------------------------------------------------------------------

    async def read(self, call) -> Any:
        """A read (view, actions): retried on retryable errors, and on 404 (a table this
        client created and had acknowledged, not projected yet: the projector is down or
        re-folding); None if the stop came first."""
        delay = 0.05
        deadline = time.monotonic() + self.retry_for_s
        while True:
            try:
                return await call()
            except GatewayError as exc:
                if (exc.status not in RETRYABLE and exc.status != 404) or time.monotonic() > deadline:
                    raise
                self.rec.errors[f"read {exc.status} {exc.code}"] += 1
            except TRANSPORT_ERRORS as exc:
                if time.monotonic() > deadline:
                    raise
                self.rec.errors[f"read transport {type(exc).__name__}"] += 1
            if self.stopping.is_set():
                return None
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    async def send(self, rec: Sent, call, *, final_ok: tuple[str, ...] = ()) -> dict | None:
        """Send a command until it is answered: an acknowledgement (returned) or a final
        refusal (None). Retryable errors and dropped connections are retried with the same
        command_id, for up to retry_for_s."""
        deadline = time.monotonic() + self.retry_for_s
        delay = 0.05
        while True:
            twice = self.send_twice and rec.attempts == 0
            try:
                if twice and rec.kind != "join" and self.rng.random() < 0.5:
                    rec.attempts += 2
                    outs = await asyncio.gather(call(), call(), return_exceptions=True)
                else:
                    rec.attempts += 1
                    outs = [await call()]
                    if twice:
                        rec.attempts += 1
                        outs.append(await call())
                ok = [o for o in outs if not isinstance(o, BaseException)]
                for o in ok:
                    self._answered(rec, o)
                if ok:
                    return ok[-1]  # a join's last answer holds the seat (each answer is a new token)
                raise outs[0]
            except GatewayError as exc:
                label = f"{exc.status} {exc.code}"
                if exc.status not in RETRYABLE:
                    rec.refused = label
                    if exc.code in final_ok or rec.ack is not None:
                        return None
                    if exc.status == 409 or (exc.status == 422 and rec.attempts > 1):
                        return None  # a stale view (or an earlier attempt's effect): the next view tells
                    raise AssertionError(f"{rec.kind} {rec.game_id} {rec.log_id}: refused {label}: {exc.message}") from None
                rec.errors.append(label)
                self.rec.errors[label] += 1
            except TRANSPORT_ERRORS as exc:
                label = f"transport {type(exc).__name__}"
                rec.errors.append(label)
                self.rec.errors[label] += 1
            if time.monotonic() > deadline:
                rec.refused = "gave up: " + (rec.errors[-1] if rec.errors else "?")
                raise AssertionError(f"{rec.kind} {rec.game_id} {rec.log_id}: no answer within {self.retry_for_s} s; "
                                     f"errors {rec.errors[-5:]}")
            await asyncio.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 1.0)

    def _answered(self, rec: Sent, out: dict) -> None:
        if rec.kind == "move":
            first, last = int(out["first_seq"]), int(out["last_seq"])
        elif rec.kind == "create":
            first, last = 1, int(out["version"])
        else:  # a join names only the version its batch ended at (the start and deal may follow the join)
            first, last = 0, int(out["version"])
        self.rec.answered(rec, first, last, bool(out.get("duplicate")))

