"""The projector's Kafka consumer settings, for confluent-kafka (librdkafka). The rules
service's reads of a partition (croupier.rules.store.read_partition) use them too.

The projector reads with librdkafka rather than kafka-python because kafka-python decodes
every record batch in Python: on this project's 2-core budget that decoding alone cost more
CPU than folding the events (bench/projector.py measures both clients side by side).

kafka-python's settings, as librdkafka names them: enable_auto_commit=False is
enable.auto.commit=false plus enable.auto.offset.store=false (offsets are committed explicitly,
after the Redis writes); isolation_level and auto_offset_reset keep their values;
metadata_max_age_ms is topic.metadata.refresh.interval.ms. The assignment stays eager
(range, roundrobin: kafka-python's default assignors), so both clients can share the group
during a rolling upgrade and every rebalance revokes the whole assignment before handing
out the new one.

librdkafka's own log lines go to the stdlib logger ``croupier.projector.rdkafka`` (which
croupier.log routes to the service's stream at WARNING and above), never raw to stderr.
"""

from __future__ import annotations

import logging
from typing import Any

from croupier.rules.settings import KafkaSettings

RDKAFKA_LOGGER = logging.getLogger("croupier.projector.rdkafka")

# As the kafka-python consumer had them: large fetches, so a catch-up reads many records per request.
MAX_PARTITION_FETCH_BYTES = 8 * 1024 * 1024
FETCH_MAX_BYTES = 64 * 1024 * 1024


def consumer_config(kafka: KafkaSettings, *, client_id: str, group_id: str | None = None, **extra: Any) -> dict:
    """A read_committed consumer that never commits or stores offsets by itself."""
    conf: dict[str, Any] = {
        "bootstrap.servers": kafka.bootstrap,
        "client.id": client_id,
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "auto.offset.reset": "earliest",
        "isolation.level": "read_committed",
        "session.timeout.ms": kafka.session_timeout_ms,
        "heartbeat.interval.ms": kafka.heartbeat_interval_ms,
        "max.partition.fetch.bytes": MAX_PARTITION_FETCH_BYTES,
        "fetch.max.bytes": FETCH_MAX_BYTES,
        "topic.metadata.refresh.interval.ms": 5000,
        "partition.assignment.strategy": "range,roundrobin",
        "logger": RDKAFKA_LOGGER,
    }
    if group_id is not None:
        conf["group.id"] = group_id
    else:
        # librdkafka wants a group.id even for a consumer that only assign()s; it never joins.
        conf["group.id"] = f"{client_id}-unjoined"
    conf.update(extra)
    return conf
