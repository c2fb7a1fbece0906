"""Projector.connect failing halfway: the watch's _consumer_again calls it once a second until
it succeeds, so whatever a failed try made must not outlive it."""

from __future__ import annotations

import pytest

from croupier.projector import service
from croupier.projector.service import Projector, ProjectorSettings
from croupier.rules.settings import KafkaSettings


class _Consumer:
    made: list["_Consumer"] = []

    def __init__(self, config):
        self.closed = False
        _Consumer.made.append(self)

    def close(self):
        self.closed = True


class _Redis:
    def get(self, key):
        return None


def test_a_consumer_made_by_a_failed_connect_is_closed(monkeypatch):
    """A consumer made, then the topic's metadata not there in time (Kafka going away as the
    watch makes the consumer again, an ACL, a topic being made): connect raised and left the
    librdkafka client open, with its threads and broker connections, and _consumer_again
    tried again every second, one more client each time, for as long as that lasted."""
    settings = ProjectorSettings(redis_url="redis://127.0.0.1:1/0", key_prefix="c.", finished_ttl_s=0, metrics_port=0,
                                 max_records=10, kafka=KafkaSettings(bootstrap="127.0.0.1:1", topic_prefix="c."))
    p = Projector(settings, games=["journey"])
    p.redis = _Redis()
    monkeypatch.setattr(p, "_run_id", lambda: "run")
    monkeypatch.setattr(service, "ensure_topic", lambda kafka, topic: None)
    monkeypatch.setattr(service, "Consumer", _Consumer)

    def no_metadata(consumer, topic, timeout_s=30.0):
        raise TimeoutError(f"no metadata for topic {topic}")

    monkeypatch.setattr(service, "wait_for_partitions", no_metadata)
    _Consumer.made.clear()
    for _ in range(3):
        with pytest.raises(TimeoutError):
            p.connect()
    assert len(_Consumer.made) == 3
    assert all(c.closed for c in _Consumer.made)
    assert p.consumer is None
