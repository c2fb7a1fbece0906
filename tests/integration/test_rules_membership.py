"""A rules replica's group membership against the real broker: a consumer whose poll stops
returning is replaced, and the replica goes on serving every partition."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid

import pytest

import croupier.rules.replica as replica_mod
from croupier.engine import registry
from croupier.engine.contract import Rejection
from croupier.engine.table import TableHost
from croupier.rules.partition import READY, Pending
from croupier.rules.replica import Replica
from croupier.rules.settings import KafkaSettings, RulesSettings
from croupier.rules.store import ensure_topic, partition_for

GAME = "journey"
# The busy cluster: throwaway topics (deleted after the test), and how many replicas start in turn.
EXTRA_TOPICS, EXTRA_PARTITIONS, STARTS = 40, 20, 6


async def until(check, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        await asyncio.sleep(0.1)


@pytest.mark.integration
def test_a_membership_whose_poll_stops_returning_is_replaced_and_serving_goes_on(kafka, redis_url, monkeypatch):
    # The fault, injected into a real (librdkafka) consumer: its poll never returns again (as
    # kafka-python 3.0's did under load, waiting for its I/O thread after a group join).
    monkeypatch.setattr(replica_mod, "MEMBERSHIP_STALL_S", 3.0)
    monkeypatch.setattr(replica_mod, "MEMBERSHIP_CHECK_S", 0.5)
    prefix = f"t{uuid.uuid4().hex[:10]}."
    settings = RulesSettings(game=GAME, redis_url=redis_url, key_prefix=prefix,
                             kafka=KafkaSettings(bootstrap=kafka, topic_prefix=prefix, partitions=2))
    host = TableHost(registry.get(GAME))
    topic = settings.kafka.topic(GAME)
    stuck = threading.Event()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        parts = await loop.run_in_executor(None, ensure_topic, settings.kafka, topic)
        replica = Replica(settings, host, topic, parts)
        replica.start()
        try:
            await until(lambda: len(replica.ready_partitions()) == parts, 90, "the replica serves every partition")
            first = replica.membership
            before = list(replica.owners.values())
            first.consumer.poll = lambda *args, **kwargs: stuck.wait() and None
            await until(lambda: replica.membership is not first, 30, "the stalled membership is replaced")
            assert first.abandoned
            # Served by owners taken for the new membership: the old ones still read as ready
            # until the new member's assignment arrives and releases them.
            # (replica.assigned is what the new member's thread read from its consumer: only
            # that thread may call the consumer.)
            await until(lambda: replica.assigned == frozenset(range(parts))
                        and len(replica.ready_partitions()) == parts
                        and not any(owner in before for owner in replica.owners.values()), 90,
                        "the new member is assigned every partition and serves it")
            # And a command is decided and committed: a table opens on a partition it serves.
            game_id = f"{GAME}-{uuid.uuid4().hex[:16]}"
            owner = replica.owner_of(partition_for(game_id, parts))
            assert owner is not None and owner.status == READY
            future = loop.create_future()
            owner.submit(Pending(game_id, None, "create-1", None, future,
                                 create={"seats": 1, "options": {}, "seed": "ab" * 32}))
            outcome = await asyncio.wait_for(future, 30)
            assert outcome.first_seq == 1 and not outcome.duplicate
            assert owner.games[game_id].state.version == outcome.last_seq
        except Rejection as exc:  # pragma: no cover - the message says what went wrong
            raise AssertionError(f"refused: {exc}") from exc
        finally:
            stuck.set()
            await replica.close()

    asyncio.run(main())


@pytest.mark.integration
def test_replicas_join_a_busy_cluster_without_their_membership_stalling(kafka, redis_url, create_topic):
    # The cluster holds 800 partitions of other topics. With the membership on kafka-python,
    # about half of the replica starts against such a broker stalled right after joining
    # (until the watchdog replaced the membership, 30 s later), and this test failed (a
    # later start never served its partitions within 120 s). Each start here must own its
    # partitions with the membership it started with.
    for _ in range(EXTRA_TOPICS):
        create_topic(partitions=EXTRA_PARTITIONS)
    prefix = f"t{uuid.uuid4().hex[:10]}."
    settings = RulesSettings(game=GAME, redis_url=redis_url, key_prefix=prefix,
                             kafka=KafkaSettings(bootstrap=kafka, topic_prefix=prefix, partitions=4))
    host = TableHost(registry.get(GAME))
    topic = settings.kafka.topic(GAME)
    replaced = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        parts = await loop.run_in_executor(None, ensure_topic, settings.kafka, topic)
        for _ in range(STARTS):
            replica = Replica(settings, host, topic, parts)
            replica.start()
            first = replica.membership
            try:
                await until(lambda r=replica: len(r.ready_partitions()) == parts, 120, "the replica serves every partition")
                replaced.append(replica.membership is not first)
            finally:
                await replica.close()

    asyncio.run(main())
    assert replaced == [False] * STARTS, f"memberships replaced by the watchdog: {replaced}"

