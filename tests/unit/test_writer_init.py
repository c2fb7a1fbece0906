"""A partition writer whose init_transactions fails is destroyed before the error reaches its
caller: librdkafka goes on with a timed-out init in the background for as long as the
producer lives, and one that finished after the partition's next owner had made its writer
would fence that owner. (The replica makes writers under a lock that a revocation waits for:
the producer must be gone when the lock is released, not whenever the traceback is freed.)"""

from __future__ import annotations

import gc
import weakref

import pytest
from confluent_kafka import Producer

import croupier.rules.store as store
from croupier.rules.settings import KafkaSettings


def test_a_writer_whose_init_fails_destroys_its_producer_before_raising(monkeypatch):
    made: list[weakref.ref] = []

    class Tracked(Producer):
        def __init__(self, config):
            super().__init__(config)
            made.append(weakref.ref(self))

    monkeypatch.setattr(store, "ConfluentProducer", Tracked)
    monkeypatch.setattr(store, "FINISH_TIMEOUT_MS", 1500)  # no broker listens: the init times out
    with pytest.raises(store.KafkaError) as failed:
        store.PartitionWriter(KafkaSettings(bootstrap="127.0.0.1:1"), "t.events", 0)
    # The exception (and its traceback, with the writer in it) is still held here.
    gc.collect()
    assert "init_transactions" in str(failed.value)
    assert len(made) == 1 and made[0]() is None, "the failed writer's producer is still alive"
