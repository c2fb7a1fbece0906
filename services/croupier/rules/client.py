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
from croupier.rules.errors import RETRYABLE, Refusal, from_proto, from_rpc_error
from croupier.tagged import StreamEnded, TaggedCall
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


def _unavailable(message: str) -> Refusal:
    return Refusal(Rejection("unavailable", message, "unavailable"))


class CommandStream:
    """HandleCommand over one HandleCommands stream to one replica (croupier.tagged), opened
    on first use and again after it ends. A stream that ends (the replica shut down, the
    connection broke) fails the moves still waiting on it as retryable, like a failed unary
    call: the caller retries with the same command_id, which the rules service answers at
    most once."""

    def __init__(self, stub: rules_pb2_grpc.RulesServiceStub):
        self._stub = stub
        self._call: TaggedCall | None = None
        self.unsupported = False  # the replica predates HandleCommands: use HandleCommand

    async def handle(self, request: rules_pb2.HandleCommandRequest, timeout_s: float) -> rules_pb2.HandleCommandResponse:
        """The move's answer; raises Refusal (retryable kinds included) for any other end."""
        if self._call is None or not self._call.open:
            self._call = TaggedCall(self._stub.HandleCommands(), lambda response: response.tag)
        try:
            response = await self._call.ask(lambda tag: rules_pb2.HandleCommandsRequest(tag=tag, command=request),
                                            timeout_s)
        except TimeoutError:
            raise _unavailable("the rules service did not answer in time; retry the same command_id") from None
        except StreamEnded as ended:
            self.unsupported = self.unsupported or ended.unimplemented
            raise _unavailable(f"the command stream ended ({ended}); retry the same command_id") from None
        if response.WhichOneof("outcome") == "rejection":
            raise Refusal(*from_proto(response.rejection))
        return response.response

    async def close(self) -> None:
        call, self._call = self._call, None
        if call is not None:
            await call.close()


__all__ = ["CommandStream", "RulesClient", "Rejection"]
