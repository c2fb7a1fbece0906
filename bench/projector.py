"""bench/projector: catch-up speed of the projector over a topic of N events (default
1,000,000), next to baselines measured in the same run on the same data:
- raw read_committed consumption of the topic (no processing) by kafka-python (the client
  the projector used first) and by confluent-kafka (librdkafka, the client it uses now)
- a raw pipelined Redis write of the same keys the projector writes (no folding)
The projector is measured twice: its fold in this process (events/s and CPU ms per event,
librdkafka's threads included; Redis's CPU per event beside it when redis-server runs on
this machine), and `croupier serve projector` as its own process joining
a fresh group on the topic (CPU ms per event from psutil's cpu_times of that process, from
its ready line to zero lag; its events/s is rough: the lag it reports once a second ends it).
`--baseline-services DIR` also runs the service from another source tree (e.g. an older
checkout's services/) on the same topic, for a before/after comparison in one run.
Target: >= 20,000 events/s, or half the slower baseline.

    python bench/projector.py [--events N] [--baseline-services DIR] [--no-write]
    (the stack must be up: croupier stack up)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import cpu_seconds, delete_topics, listening_process, stop, write  # noqa: E402

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


def raw_consume_kafka_python(bootstrap: str, topic: str, partitions: int, total: int) -> dict:
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level="read_committed", enable_auto_commit=False,
                             max_partition_fetch_bytes=8 * 1024 * 1024, fetch_max_bytes=64 * 1024 * 1024)
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    n = 0
    cpu0, t0 = cpu_seconds(), time.perf_counter()
    while n < total:
        for records in consumer.poll(timeout_ms=500, max_records=5000).values():
            n += len(records)
    result = _rates(n, time.perf_counter() - t0, cpu_seconds() - cpu0)
    consumer.close()
    return result


def _confluent_consumer(kafka_settings, topic: str, partitions: int):
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

    from croupier.projector.confluent import consumer_config

    consumer = Consumer(consumer_config(kafka_settings, client_id="bench-projector"))
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
    return consumer


def raw_consume_confluent(kafka_settings, topic: str, partitions: int, total: int) -> dict:
    consumer = _confluent_consumer(kafka_settings, topic, partitions)
    n = 0
    cpu0, t0 = cpu_seconds(), time.perf_counter()
    while n < total:
        n += sum(1 for m in consumer.consume(5000, 0.5) if m.error() is None)
    result = _rates(n, time.perf_counter() - t0, cpu_seconds() - cpu0)
    consumer.close()
    return result


def _redis_process(redis_url: str):
    """The redis-server listening on the URL's port on this machine, to charge its CPU too
    (None when it is elsewhere or cannot be seen)."""
    from urllib.parse import urlparse

    return listening_process(urlparse(redis_url).port or 6379)


def _redis_cpu(proc) -> float:
    return cpu_seconds(proc) if proc is not None else 0.0


def _rates(n: int, seconds: float, cpu_s: float, **extra) -> dict:
    return {"events": n, **extra, "seconds": round(seconds, 2), "events_per_s": round(n / seconds, 1),
            "cpu_s": round(cpu_s, 2), "cpu_ms_per_event": round(cpu_s * 1000 / max(n, 1), 4)}


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
    """Projector.fold over the topic in this process, fed by the consumer the service uses,
    with the garbage collector as the service sets it (croupier.runtime.tune_gc: its
    thresholds, and what is alive before the fold frozen). With the interpreter's default
    collector, the fold here also paid for walking this process's own data (the source
    games) again and again: 16,600 events/s in process against 20,617 for the service itself
    in the same run (2026-12-01)."""
    import gc

    from croupier.runtime import tune_gc

    thresholds = gc.get_threshold()
    tune_gc()
    try:
        return _catch_up(kafka_settings, redis_url, prefix, topic, partitions, total)
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)


def _catch_up(kafka_settings, redis_url: str, prefix: str, topic: str, partitions: int, total: int) -> dict:
    from croupier.projector.service import Projector, ProjectorSettings

    settings = ProjectorSettings(redis_url=redis_url, key_prefix=prefix, finished_ttl_s=0, metrics_port=0,
                                 max_records=5000, kafka=kafka_settings)
    projector = Projector(settings, [GAME])
    consumer = _confluent_consumer(kafka_settings, topic, partitions)
    server = _redis_process(redis_url)
    n = 0
    applied = 0
    cpu0, rcpu0, t0 = cpu_seconds(), _redis_cpu(server), time.perf_counter()
    while n < total:
        batch = [m for m in consumer.consume(5000, 0.5) if m.error() is None]
        n += len(batch)
        if batch:
            applied += projector.fold(None, batch)
    result = _rates(n, time.perf_counter() - t0, cpu_seconds() - cpu0, applied=applied)
    if server is not None:
        result["redis_cpu_ms_per_event"] = round((_redis_cpu(server) - rcpu0) * 1000 / max(n, 1), 4)
    consumer.close()
    return result


def projector_service(kafka_settings, redis_url: str, key_prefix: str, total: int, services_dir: Path | None,
                      timeout_s: float = 1800) -> dict:
    """`croupier serve projector` (from services_dir, else this tree) as its own process, in a
    fresh group and Redis namespace (key_prefix) on the bench's topics: CPU and wall time from
    its ready line until it reports zero lag on every partition of the bench's topic."""
    import os
    import subprocess

    import psutil
    import redis

    tree = services_dir or Path(__file__).resolve().parents[1] / "services"
    env = dict(os.environ)
    env.update({
        "PYTHONPATH": os.pathsep.join([str(tree), env.get("PYTHONPATH", "")]),
        "CROUPIER_KAFKA_BOOTSTRAP": kafka_settings.bootstrap,
        "CROUPIER_REDIS_URL": redis_url,
        "CROUPIER_TOPIC_PREFIX": kafka_settings.topic_prefix,
        "CROUPIER_KEY_PREFIX": key_prefix,
        "CROUPIER_PARTITIONS": str(kafka_settings.partitions),
        "CROUPIER_LOG_LEVEL": "warning",
        "PYTHONUNBUFFERED": "1",
    })
    r = redis.Redis.from_url(redis_url)
    topic = kafka_settings.topic(GAME)
    proc = subprocess.Popen([sys.executable, "-m", "croupier.cli.main", "serve", "projector"], env=env,
                            cwd=tree.parent, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        ps = psutil.Process(proc.pid)
        for line in proc.stdout:
            if line.startswith("croupier projector folding"):
                break
        else:
            raise RuntimeError(f"the projector from {tree} exited before serving (code {proc.wait()})")
        server = _redis_process(redis_url)
        cpu0, rcpu0, t0 = cpu_seconds(ps), _redis_cpu(server), time.perf_counter()
        deadline = time.monotonic() + timeout_s
        while True:
            lag = {k.decode(): int(v) for k, v in r.hgetall(f"{key_prefix}projector:lag").items()}
            mine = {k: v for k, v in lag.items() if k.startswith(f"{topic}/")}
            if len(mine) == kafka_settings.partitions and sum(mine.values()) == 0:
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the projector from {tree} did not catch up: lag {lag}")
            time.sleep(0.05)
        result = _rates(total, time.perf_counter() - t0, cpu_seconds(ps) - cpu0, source=str(tree))
        if server is not None:
            result["redis_cpu_ms_per_event"] = round((_redis_cpu(server) - rcpu0) * 1000 / max(total, 1), 4)
    finally:
        stop(proc, 30)
    for key in r.scan_iter(match=f"{key_prefix}*", count=1000):
        r.delete(key)
    return result


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--sources", type=int, default=40)
    p.add_argument("--baseline-services", type=Path, default=None,
                   help="also run `serve projector` from this services/ directory (an older checkout) on the same topic")
    p.add_argument("--no-write", action="store_true", help="print the results, leave bench/results alone")
    args = p.parse_args(argv)

    import redis

    from croupier.engine import registry
    from croupier.rules.settings import KafkaSettings, RulesSettings
    from croupier.rules.store import ensure_topic

    prefix = f"benchp{uuid.uuid4().hex[:6]}."
    base = KafkaSettings.from_env()
    kafka = dataclasses.replace(base, topic_prefix=prefix, partitions=6)
    redis_url = RulesSettings.from_env(GAME).redis_url
    topic = kafka.topic(GAME)
    try:
        # Inside the try: a fill that fails (the broker gone, Ctrl-C) still takes its topic away.
        ensure_topic(kafka, topic)
        t0 = time.perf_counter()
        sources = make_games(args.sources)
        events_per_game = sum(len(s) for s in sources) / len(sources)
        written = fill_topic(kafka.bootstrap, topic, kafka.partitions, args.events, sources)
        print(f"topic {topic}: {written} events from {len(sources)} source games "
              f"({events_per_game:.0f} events each) in {time.perf_counter() - t0:.1f} s", flush=True)
        consume_kp = raw_consume_kafka_python(kafka.bootstrap, topic, kafka.partitions, written)
        print(f"raw kafka-python consumption:    {consume_kp}", flush=True)
        consume_ck = raw_consume_confluent(kafka, topic, kafka.partitions, written)
        print(f"raw confluent-kafka consumption: {consume_ck}", flush=True)
        seats_avg = 3.0
        raw = raw_redis(redis_url, prefix, sources, written, seats_avg)
        print(f"raw pipelined Redis writes:      {raw}", flush=True)
        fold = projector_catch_up(kafka, redis_url, prefix, topic, kafka.partitions, written)
        print(f"projector fold in process:       {fold}", flush=True)
        service = projector_service(kafka, redis_url, f"{prefix}svc.", written, None)
        print(f"projector service process:       {service}", flush=True)
        baseline = None
        if args.baseline_services:
            baseline = projector_service(kafka, redis_url, f"{prefix}old.", written, args.baseline_services.resolve())
            print(f"baseline projector service:      {baseline}", flush=True)
    finally:
        r = redis.Redis.from_url(redis_url)
        for key in r.scan_iter(match=f"{prefix}*", count=1000):
            r.delete(key)
        # The service runs create every game type's topic under the bench's prefix.
        delete_topics(kafka.bootstrap, [kafka.topic(g) for g in registry.GAME_IDS])
    slower = min(consume_ck["events_per_s"], raw["events_per_s"])
    target = min(TARGET, slower / 2)
    results = {
        "events": written,
        "projector": fold,
        "projector_service": service,
        "baseline_kafka_consume": consume_ck,
        "baseline_kafka_python_consume": consume_kp,
        "baseline_redis_pipeline": raw,
        "target_events_per_s": target,
        "meets_target": fold["events_per_s"] >= target,
        "ratio_to_slower_baseline": round(fold["events_per_s"] / slower, 3),
    }
    if baseline is not None:
        results["baseline_projector_service"] = baseline
    if args.no_write:
        print(json.dumps(results, indent=2, sort_keys=True))
        path = "(not written)"
    else:
        path = write("projector", results)
    print(f"projector {fold['events_per_s']:,.0f} events/s, {service['cpu_ms_per_event']} CPU ms/event as a "
          f"service, vs target {target:,.0f}; wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
