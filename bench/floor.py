"""bench/floor: the least CPU a move can cost in this design on this machine.

A move crosses gRPC twice (the player's stream to the gateway, the gateway's stream to the
game's rules replica) and commits one Kafka transaction per partition batch (the design's
transactional.id per partition). Their costs have floors we can measure here, at the load
test's own rates, with nothing of ours in the way:

- `stream_echo`: a bare grpc.aio bidirectional stream echo (bytes in, bytes out) between two
  processes, `streams` streams paced to `rate` round trips a second in all: the CPU of both
  ends per message that crosses (a round trip is two);
- `transactions`: one-record transactions by the rules' own writer
  (croupier.rules.store.PartitionWriter), one writer per partition, each on its own thread
  as in a replica, paced to `rate` a second in all: the client's CPU and the broker's per
  transaction, less the broker's idle CPU measured just before.

bench/loadtest.py counts the messages and transactions of its think run from the services'
metrics and multiplies: that is the floor of a move, before any of the work that is ours
(the engine, the projector, Redis, the gateway's reads and routing, the bots).
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import os
import random
import threading
import time
import uuid

from common import cpu_seconds, delete_topics, pct
from rules import echo_server

from croupier.runtime import run


def _echo_client(address: str, streams: int, rate: float, seconds: float, payload: bytes, out: mp.Queue) -> None:
    """`streams` open streams; each sends a message every streams/rate seconds (a random
    phase, so the sends spread) and reads its echo. After a second of warm-up it says so
    (the parent starts the server's count) and counts its own CPU over `seconds`."""
    import grpc

    async def main():
        channel = grpc.aio.insecure_channel(address)
        method = channel.stream_stream("/bench.Echo/Stream")
        interval = streams / rate
        start = time.perf_counter() + 1.0
        end = start + seconds
        counted = 0
        rng = random.Random(7)

        async def one():
            nonlocal counted
            call = method()
            next_at = time.perf_counter() + rng.random() * interval
            while True:
                await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
                now = time.perf_counter()
                if now >= end:
                    break
                await call.write(payload)
                await call.read()
                if start <= now and time.perf_counter() < end:
                    counted += 1
                next_at += interval
            await call.done_writing()

        async def mark():
            await asyncio.sleep(max(0.0, start - time.perf_counter()))
            out.put(("start", cpu_seconds()))
            await asyncio.sleep(max(0.0, end - time.perf_counter()))
            return cpu_seconds(), counted

        at_end, *_ = await asyncio.gather(mark(), *(one() for _ in range(streams)))
        out.put(("end", *at_end))
        await channel.close()

    run(main())


def stream_echo(streams: int, rate: float, seconds: float, *, workers: int = 1, payload_bytes: int = 1000) -> dict:
    """The streams and the rate split over `workers` client processes, as the load generator's."""
    import psutil

    port_q: mp.Queue = mp.Queue()
    server = mp.Process(target=echo_server, args=(port_q,), daemon=True)
    server.start()
    clients = []
    try:
        address = f"127.0.0.1:{port_q.get(timeout=30)}"
        out: mp.Queue = mp.Queue()
        for _ in range(workers):
            clients.append(mp.Process(target=_echo_client, args=(address, max(1, streams // workers), rate / workers,
                                                                 seconds, b"v" * payload_bytes, out)))
            clients[-1].start()
        server_proc = psutil.Process(server.pid)
        client_start = sum(out.get(timeout=60)[1] for _ in clients)
        server_start = cpu_seconds(server_proc)
        ends = [out.get(timeout=seconds + 60) for _ in clients]
        server_end = cpu_seconds(server_proc)
        client_end, round_trips = sum(e[1] for e in ends), sum(e[2] for e in ends)
        for client in clients:
            client.join(10)
    finally:
        for client in clients:
            client.kill()
        server.terminate()
        server.join(5)
    messages = 2 * round_trips
    both = (server_end - server_start) + (client_end - client_start)
    return {"streams": streams, "workers": workers, "offered_round_trips_per_s": rate, "payload_bytes": payload_bytes,
            "round_trips_per_s": round(round_trips / seconds, 1),
            "server_ms_per_message": round((server_end - server_start) * 1000 / messages, 4) if messages else None,
            "client_ms_per_message": round((client_end - client_start) * 1000 / messages, 4) if messages else None,
            "ms_per_message": round(both * 1000 / messages, 4) if messages else None}


def transactions(bootstrap: str, writers: int, rate: float, seconds: float, broker=None) -> dict:
    """One-record transactions through PartitionWriter, `writers` partitions of a scratch topic
    on a thread each, paced to `rate` a second in all."""
    from croupier.engine.envelope import GENESIS_HASH, Envelope
    from croupier.rules.settings import KafkaSettings
    from croupier.rules.store import PartitionWriter, ensure_topic

    settings = KafkaSettings(bootstrap=bootstrap, partitions=writers)
    topic = f"bench.floor.{uuid.uuid4().hex[:8]}"
    ensure_topic(settings, topic)
    envelope = Envelope(game_id="g" * 26, game_type="bench", seq=1, type="moved", version=1,
                        payload={"card": "x" * 200}, rules_version=1, command_id=uuid.uuid4().hex, seat=0,
                        time=0, cause=None, prev_hash=GENESIS_HASH, hash=GENESIS_HASH)
    try:
        pool = [PartitionWriter(settings, topic, p) for p in range(writers)]
        for w in pool:  # each writer's first transaction pays for its connection and metadata
            w.append([envelope])
        idle_broker = 0.0
        if broker is not None:
            b0 = cpu_seconds(broker)
            time.sleep(2.0)
            idle_broker = (cpu_seconds(broker) - b0) / 2.0
        latencies: list[float] = []
        counts = [0] * writers
        interval = writers / rate
        start = time.perf_counter()
        end = start + seconds

        def run(i: int) -> None:
            next_at = start + i * interval / writers
            while True:
                time.sleep(max(0.0, next_at - time.perf_counter()))
                if time.perf_counter() >= end:
                    return
                t = time.perf_counter()
                pool[i].append([envelope])
                latencies.append(time.perf_counter() - t)
                counts[i] += 1
                next_at = max(next_at + interval, time.perf_counter() - interval)

        me, b_start = cpu_seconds(), cpu_seconds(broker) if broker is not None else 0.0
        threads = [threading.Thread(target=run, args=(i,)) for i in range(writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - start
        client = cpu_seconds() - me
        broker_cpu = (cpu_seconds(broker) - b_start - idle_broker * elapsed) if broker is not None else None
        for w in pool:
            w.close()
    finally:
        delete_topics(bootstrap, [topic])
    n = sum(counts)
    return {"writers": writers, "offered_per_s": rate, "per_s": round(n / elapsed, 1),
            "client_ms_per_transaction": round(client * 1000 / n, 3) if n else None,
            "broker_ms_per_transaction": round(broker_cpu * 1000 / n, 3) if n and broker_cpu is not None else None,
            "broker_idle_cpu_percent": round(idle_broker * 100, 2),
            "p50_ms": round(pct(latencies, 0.5) * 1000, 2), "p99_ms": round(pct(latencies, 0.99) * 1000, 2)}


if __name__ == "__main__":  # a look at the two baselines alone: python bench/floor.py
    from rules import broker_process

    from croupier.config import StackSettings

    bootstrap = StackSettings.from_env().kafka_bootstrap
    print(stream_echo(int(os.environ.get("STREAMS", "2000")), float(os.environ.get("RATE", "1000")), 10, workers=2))
    print(transactions(bootstrap, 5, float(os.environ.get("TXN_RATE", "500")), 10, broker_process(bootstrap)))
