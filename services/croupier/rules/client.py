"""A small client of the rules service, used by the gateway, tests and benchmarks.

It follows NOT_OWNER answers to the replica that owns a game and retries retryable
errors with the same command_id until a deadline. `CommandStream` sends moves to one
replica over one open HandleCommands stream.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import grpc

from croupier.engine.contract import Rejection
from croupier.rules.errors import PROTO_TO_KIND, RETRYABLE, from_rpc_error
from croupier.v1 import rules_pb2, rules_pb2_grpc


class RulesClient:
    def __init__(self, address: str | list[str], *, deadline_s: float = 15.0):
        seeds = [address] if isinstance(address, str) else list(address)
        self.seeds = seeds
        self.address = seeds[0]
        self.deadline_s = deadline_s
        self._channels: dict[str, grpc.aio.Channel] = {}

    def stub(self, address: str | None = None) -> rules_pb2_grpc.RulesServiceStub:
        address = address or self.address
        channel = self._channels.get(address)
        if channel is None:
            channel = self._channels[address] = grpc.aio.insecure_channel(address)
        return rules_pb2_grpc.RulesServiceStub(channel)

    async def call(self, method: str, request: Any, *, address: str | None = None) -> Any:
        """Call with redirects and retries; raise Rejection for a final answer."""
        deadline = time.monotonic() + self.deadline_s
        target = address or self.address
        delay = 0.05
        tries = 0
        while True:
            tries += 1
            try:
                return await getattr(self.stub(target), method)(request, timeout=max(0.5, min(5.0, deadline - time.monotonic())))
            except grpc.aio.AioRpcError as error:
                rejection, owner = from_rpc_error(error)
                if rejection.kind not in RETRYABLE or time.monotonic() + delay > deadline:
                    raise rejection from None
                if owner and owner != target:
                    target = owner
                    continue
                if error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED) and not error.trailing_metadata():
                    # The replica itself is away (crashed, moving): try the next one we know.
                    target = self.seeds[tries % len(self.seeds)]
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()
        self._channels.clear()


class Refusal(Exception):
    """A move refused on a stream: the Rejection, and the owner's address for not_owner."""

    def __init__(self, rejection: Rejection, owner: str = ""):
        super().__init__(rejection.code)
        self.rejection = rejection
        self.owner = owner


def _unavailable(message: str) -> Refusal:
    return Refusal(Rejection("unavailable", message, "unavailable"))


class CommandStream:
    """HandleCommand over one HandleCommands stream to one replica, opened on first use and
    again after it ends. Each move gets a tag and waits for the answer with that tag. A
    stream that ends (the replica shut down, the connection broke) fails the moves still
    waiting on it as retryable, like a failed unary call: the caller retries with the same
    command_id, which the rules service answers at most once.

    Writes go through one writer task, never from the caller: grpc.aio cancels the whole
    call when a write is cancelled, so a caller giving up (a timeout, a client gone) must not
    cancel a write that other moves share."""

    def __init__(self, stub: rules_pb2_grpc.RulesServiceStub):
        self._stub = stub
        self._call: Any = None
        self._outbox: asyncio.Queue | None = None
        self._pending: dict[int, asyncio.Future] = {}
        self._tasks: set[asyncio.Task] = set()
        self._tag = 0
        self.unsupported = False  # the replica predates HandleCommands: use HandleCommand

    def _open(self) -> None:
        call = self._stub.HandleCommands()
        outbox: asyncio.Queue = asyncio.Queue()
        pending: dict[int, asyncio.Future] = {}
        self._call, self._outbox, self._pending = call, outbox, pending
        for coro in (self._read(call, pending), self._write(call, outbox)):
            task = asyncio.ensure_future(coro)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _write(self, call: Any, outbox: asyncio.Queue) -> None:
        try:
            while (message := await outbox.get()) is not None:
                await call.write(message)
        except Exception:  # noqa: BLE001 - the call is over; its reader fails what waits
            pass

    async def _read(self, call: Any, pending: dict[int, asyncio.Future]) -> None:
        reason = "the rules replica ended the command stream; retry"
        try:
            async for response in call:
                future = pending.pop(response.tag, None)
                if future is not None and not future.done():
                    future.set_result(response)
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.UNIMPLEMENTED:
                self.unsupported = True
            reason = f"rules service: {error.code().name.lower()}: {error.details()}"
        except asyncio.CancelledError:
            reason = "the command stream was closed"
        finally:
            if self._call is call:
                self._call = None
                if self._outbox is not None:
                    self._outbox.put_nowait(None)
            for future in pending.values():
                if not future.done():
                    future.set_exception(_unavailable(reason))
            pending.clear()

    async def handle(self, request: rules_pb2.HandleCommandRequest, timeout_s: float) -> rules_pb2.HandleCommandResponse:
        """The move's answer; raises Refusal (retryable kinds included) for any other end."""
        if self._call is None:
            self._open()
        pending, outbox = self._pending, self._outbox
        self._tag += 1
        tag = self._tag
        future = asyncio.get_running_loop().create_future()
        pending[tag] = future
        outbox.put_nowait(rules_pb2.HandleCommandsRequest(tag=tag, command=request))
        try:
            async with asyncio.timeout(timeout_s):
                response = await future
        except TimeoutError:
            raise _unavailable("the rules service did not answer in time; retry the same command_id") from None
        finally:
            pending.pop(tag, None)
        if response.WhichOneof("outcome") == "rejection":
            msg = response.rejection
            raise Refusal(Rejection(msg.code, msg.message, PROTO_TO_KIND.get(msg.kind, "unavailable")), msg.owner)
        return response.response

    async def close(self) -> None:
        call, self._call = self._call, None
        if call is not None:
            call.cancel()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)


__all__ = ["CommandStream", "Refusal", "RulesClient", "Rejection"]
