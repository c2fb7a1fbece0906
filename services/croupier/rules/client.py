"""A small client of the rules service, used by the gateway, tests and benchmarks.

It follows NOT_OWNER answers to the replica that owns a game and retries retryable
errors with the same command_id until a deadline.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import grpc

from croupier.engine.contract import Rejection
from croupier.rules.errors import RETRYABLE, from_rpc_error
from croupier.v1 import rules_pb2_grpc


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


__all__ = ["RulesClient", "Rejection"]
