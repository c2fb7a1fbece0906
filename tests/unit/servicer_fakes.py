"""A RulesServicer over partition owners with in-memory logs, called as grpc.aio would call
it (a context whose abort raises), for the checks the servicer makes before any store is
involved. The store's side is in tests/integration/test_rules_limits.py."""

from __future__ import annotations

import asyncio
import threading

from croupier.engine import registry
from croupier.engine.table import TableHost
from croupier.rules.errors import REJECTION_METADATA, from_proto
from croupier.rules.metrics import RulesMetrics
from croupier.rules.partition import PartitionOwner
from croupier.rules.service import RulesServicer
from croupier.rules.settings import RulesSettings
from croupier.v1 import events_pb2

GAME = "expeditions"
PARTITIONS = 4


class LogWriter:
    def __init__(self, log: list):
        self.log, self.lock = log, threading.Lock()

    def append(self, envelopes, values=None):
        with self.lock:
            self.log.extend(envelopes)
            return len(self.log) - 1

    def close(self) -> None:
        pass


class Replica:
    """What the servicer asks of a replica: its partitions and their owners."""

    def __init__(self, owners: dict[int, PartitionOwner]):
        self.partitions = PARTITIONS
        self.owners = owners

    def owner_of(self, partition: int) -> PartitionOwner | None:
        return self.owners.get(partition)


class Aborted(Exception):
    def __init__(self, code, details, trailing):
        super().__init__(code, details)
        self.code, self.details, self.trailing = code, details, trailing

    def rejection(self):
        for key, value in self.trailing:
            if key == REJECTION_METADATA:
                return from_proto(events_pb2.Rejection.FromString(value))
        return None, ""


class Context:
    def __init__(self):
        self.trailing = ()

    def set_trailing_metadata(self, metadata) -> None:
        self.trailing = tuple(metadata)

    async def abort(self, code, details):
        raise Aborted(code, details, self.trailing)


class Owners:
    """The owners' table the servicer names in NOT_OWNER answers; records what was asked."""

    def __init__(self, address: str = "10.0.0.9:50051"):
        self.address, self.asked = address, []

    def __call__(self, partition: int) -> str:
        self.asked.append(partition)
        return self.address


async def servicer(owned=(0, 1), logs: dict[int, list] | None = None, settings: RulesSettings | None = None,
                   owners: Owners | None = None) -> tuple[RulesServicer, dict[int, PartitionOwner]]:
    """A servicer whose replica owns the partitions `owned`, each started from its log."""
    host = TableHost(registry.get(GAME))
    logs = logs or {}
    parts: dict[int, PartitionOwner] = {}
    for p in owned:
        log = logs.setdefault(p, [])
        owner = PartitionOwner(host, p, lambda log=log: LogWriter(log), max_batch=256, dedupe_window=16,
                               max_record_bytes=1_000_000)
        await owner.start(lambda log=log: list(log))
        parts[p] = owner
    return RulesServicer(settings or RulesSettings(game=GAME), Replica(parts), host, RulesMetrics(GAME),
                         owners or Owners()), parts


async def stop(parts: dict[int, PartitionOwner]) -> None:
    for owner in parts.values():
        await owner.stop("test")


async def call(method, request):
    """The method's response, or the Aborted it raised."""
    try:
        return await asyncio.wait_for(method(request, Context()), 30)
    except Aborted as aborted:
        return aborted
