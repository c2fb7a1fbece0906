"""bench/projector: catch-up speed of the projector over a topic of N events (default
1,000,000), next to two baselines measured in the same run on the same data:
- kafka-python's raw consumption of the topic (read_committed, no processing)
- a raw pipelined Redis write of the same keys the projector writes (no folding)
Target: >= 20,000 events/s, or half the slower baseline.

    python bench/projector.py [--events N]     (the stack must be up: croupier stack up)
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import write  # noqa: E402

GAME = "expeditions"
TARGET = 20_000


def make_games(n_source: int):
    from croupier.engine import registry
    from croupier.engine.selfplay import SelfplayReport, play_one

    spec = registry.get(GAME)
    report = SelfplayReport(game=GAME)
    games = []
    for i in range(n_source):
        table = play_one(spec, seats=2 + i % 3, seat_bots=["heuristic"] * (2 + i % 3), options=spec.parse_options({}),
                         seed=77, index=i, report=report, check_all_legal=False, verify=False)
        games.append(table.envelopes)
    return games


def fill_topic(bootstrap: str, topic: str, partitions: int, target_events: int, sources, concurrent: int = 400) -> int:
    """Write copies of the source games (each under a new id) until target_events, with
    `concurrent` games interleaved as live traffic would be."""
    from kafka import KafkaProducer

    from croupier.rules.store import encode_record, partition_for

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=20, batch_size=512 * 1024,
                             compression_type=None, max_request_size=8 * 1024 * 1024)
    written = 0
    live = []
    src = 0
    while written < target_events:
        while len(live) < concurrent:
            gid = uuid.uuid4().hex
            live.append([gid, iter(sources[src % len(sources)])])
            src += 1
        for entry in list(live):
            env = next(entry[1], None)
            if env is None:
                live.remove(entry)
                continue
            env = dataclasses.replace(env, game_id=entry[0])
            producer.send(topic, key=entry[0].encode(), value=encode_record(env), partition=partition_for(entry[0], partitions))
            written += 1
            if written >= target_events:
                break
    producer.flush()
    producer.close()
    return written


def raw_consume(bootstrap: str, topic: str, partitions: int, total: int) -> dict:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level="read_committed", enable_auto_commit=False,
                             max_partition_fetch_bytes=8 * 1024 * 1024, fetch_max_bytes=64 * 1024 * 1024)
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    n = 0
    t0 = time.perf_counter()
    while n < total:
        for records in consumer.poll(timeout_ms=500, max_records=5000).values():
            n += len(records)
    elapsed = time.perf_counter() - t0
    consumer.close()
    return {"events": n, "seconds": round(elapsed, 2), "events_per_s": round(n / elapsed, 1)}


def raw_redis(redis_url: str, prefix: str, sources, total: int, seats_avg: float) -> dict:
    """The same number of per-game writes the projector makes, pipelined, without folding:
    per 5,000-event batch, one meta hash, one views hash and one state blob per touched game."""
    import redis

    r = redis.Redis.from_url(redis_url)
    view = b"x" * 1200
    blob = b"y" * 6000
    per_batch_games = 400
    batches = max(1, total // 5000)
    t0 = time.perf_counter()
    for b in range(batches):
        pipe = r.pipeline(transaction=False)
        for g in range(per_batch_games):
            gid = f"{prefix}raw{g}"
            pipe.hset(f"{gid}", mapping={"version": b, "status": "running", "players": "[]"})
            pipe.hset(f"{gid}:views", mapping={str(s): view for s in range(int(seats_avg) * 2 + 1)})
            pipe.set(f"{gid}:state", blob)
        pipe.execute()
    elapsed = time.perf_counter() - t0
    for key in r.scan_iter(match=f"{prefix}raw*", count=1000):
        r.delete(key)
    return {"events": batches * 5000, "seconds": round(elapsed, 2), "events_per_s": round(batches * 5000 / elapsed, 1)}


def projector_catch_up(kafka_settings, redis_url: str, prefix: str, topic: str, partitions: int, total: int) -> dict:
    from kafka import KafkaConsumer, TopicPartition

    from croupier.projector.service import Projector, ProjectorSettings

    settings = ProjectorSettings(redis_url=redis_url, key_prefix=prefix, finished_ttl_s=0, metrics_port=0,
                                 max_records=5000, kafka=kafka_settings)
    projector = Projector(settings, [GAME])
    consumer = KafkaConsumer(bootstrap_servers=kafka_settings.bootstrap, isolation_level="read_committed",
                             enable_auto_commit=False, max_partition_fetch_bytes=8 * 1024 * 1024,
                             fetch_max_bytes=64 * 1024 * 1024)
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    n = 0
    applied = 0
    t0 = time.perf_counter()
    while n < total:
        batch = consumer.poll(timeout_ms=500, max_records=5000)
        n += sum(len(v) for v in batch.values())
        if batch:
            applied += projector.fold(None, batch)
    elapsed = time.perf_counter() - t0
    consumer.close()
    return {"events": n, "applied": applied, "seconds": round(elapsed, 2), "events_per_s": round(n / elapsed, 1)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--sources", type=int, default=40)
    args = p.parse_args(argv)

    import redis

    from croupier.rules.settings import KafkaSettings, RulesSettings
    from croupier.rules.store import ensure_topic

    prefix = f"benchp{uuid.uuid4().hex[:6]}."
    base = KafkaSettings.from_env()
    kafka = dataclasses.replace(base, topic_prefix=prefix, partitions=6)
    redis_url = RulesSettings.from_env(GAME).redis_url
    topic = kafka.topic(GAME)
    ensure_topic(kafka, topic)
    t0 = time.perf_counter()
    sources = make_games(args.sources)
    events_per_game = sum(len(s) for s in sources) / len(sources)
    written = fill_topic(kafka.bootstrap, topic, kafka.partitions, args.events, sources)
    print(f"topic {topic}: {written} events from {len(sources)} source games "
          f"({events_per_game:.0f} events each) in {time.perf_counter() - t0:.1f} s", flush=True)

    consume = raw_consume(kafka.bootstrap, topic, kafka.partitions, written)
    print(f"raw kafka-python consumption: {consume}", flush=True)
    seats_avg = 3.0
    raw = raw_redis(redis_url, prefix, sources, written, seats_avg)
    print(f"raw pipelined Redis writes:   {raw}", flush=True)
    fold = projector_catch_up(kafka, redis_url, prefix, topic, kafka.partitions, written)
    print(f"projector catch-up:           {fold}", flush=True)
    slower = min(consume["events_per_s"], raw["events_per_s"])
    target = min(TARGET, slower / 2)
    results = {
        "events": written,
        "projector": fold,
        "baseline_kafka_consume": consume,
        "baseline_redis_pipeline": raw,
        "target_events_per_s": target,
        "meets_target": fold["events_per_s"] >= target,
        "ratio_to_slower_baseline": round(fold["events_per_s"] / slower, 3),
    }
    r = redis.Redis.from_url(redis_url)
    for key in r.scan_iter(match=f"{prefix}*", count=1000):
        r.delete(key)
    from kafka.admin import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=kafka.bootstrap)
    admin.delete_topics([topic])
    admin.close()
    path = write("projector", results)
    print(f"projector {fold['events_per_s']:,.0f} events/s vs target {target:,.0f}; wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
