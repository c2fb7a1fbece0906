"""bench/rules: one rules replica against the local broker, clients in separate processes.

Figures:
- peak commands/s (closed loop) with 1, 100 and 1,000 games in flight
- latency p50/p99 at offered loads of 25, 50 and 75 % of the peak, over 1,000 games
- baselines in the same run: a bare grpc.aio echo (bytes in, bytes out) driven by the same
  client code, and kafka-python's raw transactional produce of the same records
- the path the gateway uses (no target): the peak with 1,000 games in flight over
  HandleCommands streams (a croupier.rules.client.CommandStream per client process), next to
  a bare echo over one stream per client process with the echo's 100 in flight
Targets: peak >= half the echo's rate; p99 < 50 ms at 50 % of peak.

    python bench/rules.py [--seconds S] [--workers W] [--partitions P] [--warmup S]   (the stack must be up: croupier stack up)
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import multiprocessing as mp
import os
import random
import subprocess
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import cleanup_prefix, cpu_seconds, delete_topics, listening_process, pct, stop, write  # noqa: E402

from croupier.runtime import run  # noqa: E402  (the services' event loop: the echo runs on it too)
from croupier_gateway.launcher import LOCAL_PARTITIONS  # noqa: E402

GAME = "expeditions"
ROOT = Path(__file__).resolve().parents[1]


# --- the rules client loop -----------------------------------------------------------


async def _setup_games(stub, n: int, rng: random.Random) -> dict:
    from croupier.v1 import rules_pb2

    games = {}

    async def one():
        gid = uuid.uuid4().hex
        await stub.CreateGame(rules_pb2.CreateGameRequest(game_type=GAME, game_id=gid, seats=2, command_id=f"{gid}c"))
        await stub.JoinSeat(rules_pb2.JoinSeatRequest(game_type=GAME, game_id=gid, seat=0, command_id=f"{gid}j0"))
        await stub.JoinSeat(rules_pb2.JoinSeatRequest(game_type=GAME, game_id=gid, seat=1, command_id=f"{gid}j1"))
        state = await stub.GetState(rules_pb2.GetStateRequest(game_type=GAME, game_id=gid))
        view = json.loads(state.view_json)
        seat = view["to_act"][0]
        legal = await stub.ListLegalActions(rules_pb2.ListLegalActionsRequest(game_type=GAME, game_id=gid, seat=seat))
        games[gid] = (seat, list(legal.actions_json))

    sem = asyncio.Semaphore(50)

    async def guarded():
        async with sem:
            await one()

    await asyncio.gather(*(guarded() for _ in range(n)))
    return games


def rules_worker(address: str, games: int, seconds: float, rate: float, seed: int, out: mp.Queue,
                 ready: mp.Queue | None = None, go=None, *, stream: bool = False) -> None:
    """Drive `games` games; closed loop when rate == 0, else open loop at `rate` commands/s.
    With `ready`/`go`: says when its games are set up and waits for `go` before it starts.
    With `stream`, the moves go over one HandleCommands stream, as the gateway sends them."""
    import grpc

    from croupier.rules.client import CommandStream
    from croupier.rules.errors import Refusal
    from croupier.v1 import rules_pb2, rules_pb2_grpc

    async def main():
        channel = grpc.aio.insecure_channel(address)
        stub = rules_pb2_grpc.RulesServiceStub(channel)
        commands = CommandStream(stub) if stream else None
        rng = random.Random(seed)
        table = await _setup_games(stub, games, rng)
        if ready is not None:
            ready.put(seed)
            await asyncio.get_running_loop().run_in_executor(None, go.wait)
        latencies: list[float] = []
        errors = 0
        unsent = 0  # open loop: a tick when every game still waited for its last answer
        done = 0
        deadline = time.perf_counter() + seconds

        async def step(gid):
            """One command for game gid; returns the game to go on with (a new one when over)."""
            nonlocal errors, done
            seat, actions = table[gid]
            action = rng.choice(actions)
            t0 = time.perf_counter()
            request = rules_pb2.HandleCommandRequest(
                game_type=GAME, game_id=gid, seat=seat, command_id=uuid.uuid4().hex, action_json=action, want_next=True)
            try:
                r = await (commands.handle(request, 30.0) if commands else stub.HandleCommand(request))
            except (grpc.aio.AioRpcError, Refusal):
                errors += 1
                return gid
            latencies.append(time.perf_counter() - t0)
            done += 1
            if r.over or not r.next:
                table.pop(gid)
                fresh = await _setup_games(stub, 1, rng)
                table.update(fresh)
                return next(iter(fresh))
            table[gid] = (r.next[0].seat, list(r.next[0].actions_json))
            return gid

        if rate <= 0:
            async def loop(gid):
                while time.perf_counter() < deadline:
                    gid = await step(gid)

            await asyncio.gather(*(loop(g) for g in list(table)))
        else:
            from collections import deque

            idle = deque(table)
            pending = set()
            interval = 1.0 / rate
            nxt = time.perf_counter()

            async def run(g):
                idle.append(await step(g))

            while time.perf_counter() < deadline:
                now = time.perf_counter()
                if now < nxt:
                    await asyncio.sleep(nxt - now)
                nxt += interval
                if not idle:
                    unsent += 1  # offered load that could not be sent: every game busy
                    continue
                task = asyncio.create_task(run(idle.popleft()))
                pending.add(task)
                task.add_done_callback(pending.discard)
            if pending:
                await asyncio.gather(*pending)
        if commands is not None:
            await commands.close()
        await channel.close()
        out.put({"latencies": latencies, "errors": errors, "unsent": unsent, "done": done})

    run(main())


def echo_server(port_q: mp.Queue) -> None:
    """The bare grpc.aio baseline: bench.Echo/Echo answers a call with its bytes (unary, the
    rules bench's and the load test's echo), bench.Echo/Stream each message on a stream with
    its bytes (bench/floor.py's). With the queue options of our own servers."""
    import grpc

    from croupier.runtime import GRPC_SERVER_QUEUE_OPTIONS

    async def main():
        server = grpc.aio.server(options=GRPC_SERVER_QUEUE_OPTIONS)

        async def echo(request, context):
            return request

        async def stream(requests, context):
            async for message in requests:
                yield message

        handler = grpc.method_handlers_generic_handler("bench.Echo", {
            "Echo": grpc.unary_unary_rpc_method_handler(echo, request_deserializer=None, response_serializer=None),
            "Stream": grpc.stream_stream_rpc_method_handler(stream, request_deserializer=None, response_serializer=None)})
        server.add_generic_rpc_handlers((handler,))
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        port_q.put(port)
        await server.wait_for_termination()

    run(main())


def echo_worker(address: str, inflight: int, seconds: float, payload: bytes, out: mp.Queue) -> None:
    import grpc

    async def main():
        channel = grpc.aio.insecure_channel(address)
        call = channel.unary_unary("/bench.Echo/Echo")
        latencies = []
        deadline = time.perf_counter() + seconds

        async def loop():
            while time.perf_counter() < deadline:
                t0 = time.perf_counter()
                await call(payload)
                latencies.append(time.perf_counter() - t0)

        await asyncio.gather(*(loop() for _ in range(inflight)))
        await channel.close()
        out.put({"latencies": latencies, "errors": 0, "done": len(latencies)})

    run(main())


def echo_stream_worker(address: str, inflight: int, seconds: float, payload: bytes, out: mp.Queue) -> None:
    """The echo over one open stream (bench.Echo/Stream), `inflight` requests at a time, each
    answered by its tag (its first 8 bytes) as the rules streams are: croupier.tagged."""
    import grpc

    from croupier.tagged import TaggedCall

    async def main():
        channel = grpc.aio.insecure_channel(address)
        call = TaggedCall(channel.stream_stream("/bench.Echo/Stream")(), lambda answer: int.from_bytes(answer[:8], "big"))
        latencies = []
        deadline = time.perf_counter() + seconds

        async def loop():
            while time.perf_counter() < deadline:
                t0 = time.perf_counter()
                await call.ask(lambda tag: tag.to_bytes(8, "big") + payload, 30.0)
                latencies.append(time.perf_counter() - t0)

        await asyncio.gather(*(loop() for _ in range(inflight)))
        await call.close()
        await channel.close()
        out.put({"latencies": latencies, "errors": 0, "done": len(latencies)})

    run(main())


def run_workers(target, args_for, workers: int, meter: "CpuMeter | None" = None) -> dict:
    """Run the workers to their end. With a meter (rules workers only), the CPU of the
    measured processes is taken from when every worker has set up its games to the end."""
    out: mp.Queue = mp.Queue()
    ready: mp.Queue = mp.Queue()
    go = mp.Event()
    extra = (ready, go) if meter is not None else ()
    procs = [mp.Process(target=target, args=(*args_for(i), out, *extra)) for i in range(workers)]
    t0 = time.perf_counter()
    for p in procs:
        p.start()
    if meter is not None:
        for _ in procs:
            ready.get()
        before = meter.now()
        go.set()
    results = [out.get() for _ in procs]
    cpu = None
    if meter is not None:
        after = meter.now()
        cpu = {name: after[name] - before[name] for name in after if name in before}
    for p in procs:
        p.join()
    elapsed = time.perf_counter() - t0
    lat = [x for r in results for x in r["latencies"]]
    r = {"done": sum(r["done"] for r in results), "errors": sum(r["errors"] for r in results),
         "unsent": sum(r.get("unsent", 0) for r in results), "latencies": lat, "wall": elapsed}
    if cpu is not None:
        r["cpu_s"] = cpu
    return r


def summarize(r: dict, seconds: float) -> dict:
    lat = r["latencies"]
    out = {
        "per_s": round(r["done"] / seconds, 1),
        # errors: commands that failed; unsent: ticks of an open loop's offered load that found
        # all of its games still waiting for an answer (the load was more than could be served)
        "errors": r["errors"],
        "unsent": r.get("unsent", 0),
        "p50_ms": round(pct(lat, 0.50) * 1000, 2),
        "p99_ms": round(pct(lat, 0.99) * 1000, 2),
        "max_ms": round(max(lat) * 1000, 2) if lat else None,
    }
    if "cpu_s" in r and r["done"]:
        # CPU milliseconds per command of each measured process: what a command costs,
        # a figure that holds up far better than rates on a shared machine.
        out["cpu_ms_per_command"] = {name: round(cpu * 1000 / r["done"], 3) for name, cpu in r["cpu_s"].items()}
    return out


class CpuMeter:
    """CPU seconds (user + system, every thread) that named processes spend over a phase."""

    def __init__(self, processes: dict):
        self.processes = {name: proc for name, proc in processes.items() if proc is not None}

    def now(self) -> dict:
        out = {}
        for name, proc in self.processes.items():
            try:
                out[name] = cpu_seconds(proc)
            except Exception:  # noqa: BLE001 - the process ended: it is left out
                pass
        return out


def broker_process(bootstrap: str):
    """The local broker's process (the one listening on the bootstrap port), or None."""
    return listening_process(int(bootstrap.split(",")[0].rsplit(":", 1)[1]))


def kafka_baseline(bootstrap: str, seconds: float, batch: int, record: bytes) -> dict:
    from kafka import KafkaProducer

    from croupier.rules.settings import KafkaSettings
    from croupier.rules.store import ensure_topic

    topic = f"bench.raw.{uuid.uuid4().hex[:8]}"
    RAW_TOPICS.append(topic)
    ensure_topic(KafkaSettings(bootstrap=bootstrap, partitions=1), topic)
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=f"bench-{topic}", enable_idempotence=True,
                             acks="all", linger_ms=0, retry_backoff_ms=2)
    producer.init_transactions()
    records = 0
    txns = 0
    deadline = time.perf_counter() + seconds
    t0 = time.perf_counter()
    while time.perf_counter() < deadline:
        producer.begin_transaction()
        for _ in range(batch):
            producer.send(topic, key=b"game", value=record, partition=0)
        producer.commit_transaction()
        records += batch
        txns += 1
    elapsed = time.perf_counter() - t0
    producer.close()
    return {"records_per_s": round(records / elapsed, 1), "transactions_per_s": round(txns / elapsed, 1), "batch": batch}


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--workers", type=int, default=2)
    # What one replica owns: on the local stack a game type's 2 partitions (the launcher's
    # LOCAL_PARTITIONS); in production its share of the topic's. Each partition commits on its
    # own, so more of them split the same commands into more, smaller transactions.
    p.add_argument("--partitions", type=int, default=LOCAL_PARTITIONS)
    # A freshly started broker runs its JIT's first tiers: a cold one spent 11.6 ms of CPU a
    # single-command transaction against ~2.3 warm, and the first points measured the JIT.
    p.add_argument("--warmup", type=float, default=10.0, help="seconds of load before the measured points")
    args = p.parse_args(argv)

    from croupier.rules.settings import KafkaSettings

    kafka = KafkaSettings.from_env()
    prefix = f"bench{uuid.uuid4().hex[:6]}."
    env = dict(os.environ, CROUPIER_TOPIC_PREFIX=prefix, CROUPIER_KEY_PREFIX=prefix, CROUPIER_PARTITIONS=str(args.partitions))
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server_log = open(Path(__file__).resolve().parent / "results" / "rules-server.log", "w")
    server = subprocess.Popen([sys.executable, "-m", "croupier.cli.main", "serve", "rules", "--game", GAME, "--port", str(port)],
                              env=env, cwd=ROOT, stdout=server_log, stderr=subprocess.STDOUT)
    address = f"127.0.0.1:{port}"
    import psutil

    meter = CpuMeter({"replica": psutil.Process(server.pid), "broker": broker_process(kafka.bootstrap)})
    try:
        _wait_ready(env, prefix, args.partitions)
        results: dict = {"game": GAME, "workers": args.workers, "seconds": args.seconds, "partitions": args.partitions,
                         "warmup_s": args.warmup}
        if args.warmup > 0:
            per = max(1, 100 // args.workers)
            run_workers(rules_worker, lambda i: (address, per, args.warmup, 0.0, 900 + i), args.workers)
            print(f"warm-up: {args.warmup:.0f} s at 100 games in flight (not measured)", flush=True)
        peaks = {}
        for inflight in (1, 100, 1000):
            w = 1 if inflight == 1 else args.workers
            per = max(1, inflight // w)
            r = run_workers(rules_worker, lambda i, per=per: (address, per, args.seconds, 0.0, i), w, meter)
            peaks[inflight] = summarize(r, args.seconds)
            print(f"rules closed loop, {inflight:>4} games in flight: {peaks[inflight]}", flush=True)
        results["peak"] = {str(k): v for k, v in peaks.items()}
        peak = max(v["per_s"] for v in peaks.values())
        results["peak_commands_per_s"] = peak
        loads = {}
        for share in (0.25, 0.5, 0.75):
            rate = peak * share
            r = run_workers(rules_worker, lambda i, rate=rate: (address, 1000 // args.workers, args.seconds, rate / args.workers, 100 + i),
                            args.workers, meter)
            loads[f"{int(share * 100)}%"] = {"offered_per_s": round(rate, 1), **summarize(r, args.seconds)}
            print(f"rules open loop at {int(share * 100)}% of peak ({rate:.0f}/s): {loads[f'{int(share * 100)}%']}", flush=True)
        results["latency_at_load"] = loads
        per = max(1, 1000 // args.workers)
        r = run_workers(functools.partial(rules_worker, stream=True),
                        lambda i: (address, per, args.seconds, 0.0, 200 + i), args.workers, meter)
        stream_peak = summarize(r, args.seconds)
        print(f"rules closed loop over HandleCommands streams, 1000 games in flight: {stream_peak}", flush=True)

        port_q: mp.Queue = mp.Queue()
        echo = mp.Process(target=echo_server, args=(port_q,), daemon=True)
        echo.start()
        echo_addr = f"127.0.0.1:{port_q.get()}"
        payload = b"x" * 300
        echo_meter = CpuMeter({"echo": psutil.Process(echo.pid)})

        def run_echo(worker) -> dict:
            before = echo_meter.now()
            r = run_workers(worker, lambda i: (echo_addr, 100 // args.workers, args.seconds, payload), args.workers)
            after = echo_meter.now()
            r["cpu_s"] = {name: after[name] - before[name] for name in after if name in before}
            return summarize(r, args.seconds)

        results["echo_baseline"] = run_echo(echo_worker)
        print(f"bare grpc.aio echo, 100 in flight: {results['echo_baseline']}", flush=True)
        stream_echo = run_echo(echo_stream_worker)
        print(f"bare grpc.aio echo over one stream per client, 100 in flight: {stream_echo}", flush=True)
        results["stream"] = {"peak": stream_peak, "echo": stream_echo,
                             "peak_over_echo": round(stream_peak["per_s"] / stream_echo["per_s"], 3) if stream_echo["per_s"] else None}
        echo.terminate()

        record = b"x" * 600
        results["kafka_baseline"] = {
            "single": kafka_baseline(kafka.bootstrap, args.seconds / 2, 1, record),
            "batched_50": kafka_baseline(kafka.bootstrap, args.seconds / 2, 50, record),
        }
        print(f"raw transactional produce: {results['kafka_baseline']}", flush=True)
        echo_rate = results["echo_baseline"]["per_s"]
        results["ratios"] = {
            "peak_over_echo": round(peak / echo_rate, 3) if echo_rate else None,
            "target_peak_over_echo": 0.5,
            "p99_ms_at_50pct": loads["50%"]["p99_ms"],
            "target_p99_ms_at_50pct": 50,
        }
        print(f"peak/echo = {results['ratios']['peak_over_echo']}  p99 at 50% = {loads['50%']['p99_ms']} ms", flush=True)
        path = write("rules", results)
        print(f"wrote {path}")
    finally:
        stop(server)
        # The replica's topic and its keys under the prefix (owners, partitions, snapshots), and
        # the raw-produce baselines' topics: a stack that piles them up slows every client.
        from croupier.rules.settings import RulesSettings

        cleanup_prefix(kafka.bootstrap, RulesSettings.from_env(GAME).redis_url, prefix, [GAME])
        delete_topics(kafka.bootstrap, RAW_TOPICS)
    return 0


RAW_TOPICS: list[str] = []  # the raw-produce baselines' topics, deleted after the run




def _wait_ready(env, prefix, partitions, timeout=60):
    import redis

    from croupier.rules.settings import RulesSettings

    url = RulesSettings.from_env(GAME).redis_url
    r = redis.Redis.from_url(url)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if r.hlen(f"{prefix}croupier:owners:{GAME}") == partitions:
            return
        time.sleep(0.2)
    raise TimeoutError("the rules replica did not take its partitions")


if __name__ == "__main__":
    sys.exit(main())
