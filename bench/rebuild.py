"""bench/rebuild: how long a rules replica takes to rebuild a partition's games after a
failover, from the log alone and from a snapshot (croupier.rules.snapshot) and the log after it.

Against the local stack (croupier stack up): a one-partition expeditions topic is filled with
`--events` events of interleaved games, as live traffic writes them (bench/projector's
source games, each copied under new ids; the games cut by the end are the live ones, the
others finished). Then, each through the replica's own take of a partition (a transactional
writer that fences the previous one, the read, the fold):

1. replica A rebuilds the partition from the log (the baseline: what every failover cost
   before snapshots), takes one command, and saves a snapshot of its games to Redis (timed:
   encoding and storing, and its size), while a 1 ms timer on its loop measures how late
   the loop runs meanwhile (against the same snapshot encoded whole on a worker thread);
2. `--tail` more events are written (by default CROUPIER_RULES_SNAPSHOT_EVERY's 20,000: the
   most a replica reads past its last snapshot);
3. replica B takes the partition from the snapshot and the tail;
4. replica C takes it from the whole log, and B's games must equal C's (states, remembered
   command results and retired games), or the run fails.

    python bench/rebuild.py [--events N] [--tail N]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import delete_topics, pct, write  # noqa: E402
from projector import fill_topic, make_games  # noqa: E402

GAME = "expeditions"


def held(owner) -> tuple[dict, dict]:
    return {g: (s.state, dict(s.seen)) for g, s in owner.games.items()}, dict(owner.retired)


async def take(settings, host, topic: str, snapshots) -> tuple[object, dict]:
    """A replica that takes partition 0 as a failover would (no group: it is told to)."""
    from croupier.rules.replica import Replica

    replica = Replica(settings, host, topic, 1, snapshots=snapshots)
    started = time.perf_counter()
    await replica._take(0)
    if 0 not in replica.owners:
        raise RuntimeError("the partition could not be taken (see the log above)")
    info = dict(replica.last_rebuild, wall_s=round(time.perf_counter() - started, 3))
    return replica, info


async def lag_during(awaitable) -> tuple[object, dict]:
    """Await it while a probe sleeps 1 ms at a time on the same loop; how late each wake was."""
    lags: list[float] = []
    done = asyncio.Event()

    async def probe() -> None:
        clock = time.perf_counter
        while not done.is_set():
            started = clock()
            await asyncio.sleep(0.001)
            lags.append((clock() - started - 0.001) * 1000)

    prober = asyncio.ensure_future(probe())
    try:
        result = await awaitable
    finally:
        done.set()
        await prober
    if not lags:
        return result, {"wakes": 0, "p50": None, "p99": None, "max": None}
    return result, {"wakes": len(lags), "p50": round(pct(lags, 0.5), 2), "p99": round(pct(lags, 0.99), 2),
                    "max": round(max(lags), 2)}


async def run(args) -> dict:
    import redis

    from croupier.engine import registry
    from croupier.engine.table import TableHost
    from croupier.rules.partition import Pending
    from croupier.rules.settings import RulesSettings
    from croupier.rules.snapshot import SnapshotStore, encode
    from croupier.rules.store import ensure_topic

    prefix = f"bench{uuid.uuid4().hex[:8]}."
    base = RulesSettings.from_env(GAME)
    kafka = dataclasses.replace(base.kafka, topic_prefix=prefix, partitions=1)
    # Retirement as in production, and no snapshot but the one this bench asks for. The
    # copied games carry the bots' old times: not ended as abandoned when taken.
    settings = dataclasses.replace(base, kafka=kafka, key_prefix=prefix, snapshot_every=10**12, idle_end_after_s=0)
    topic = kafka.topic(GAME)
    host = TableHost(registry.get(GAME))
    rds = redis.Redis.from_url(settings.redis_url, socket_timeout=60)
    store = SnapshotStore(rds, prefix)
    loop = asyncio.get_running_loop()
    ensure_topic(kafka, topic)
    try:
        sources = make_games(args.sources)
        written = fill_topic(kafka.bootstrap, topic, 1, args.events, sources, concurrent=args.live)
        print(f"wrote {written:,} events", flush=True)

        a, from_log = await take(settings, host, topic, store)
        print(f"A, from the log: {from_log}", flush=True)
        owner = a.owners[0]
        item = Pending("bench-new-game", None, "bench-create", None, loop.create_future(),
                       create={"seats": 2, "options": {}, "seed": "ab" * 32})
        owner.submit(item)
        await item.future
        info, lag = await lag_during(owner.snapshot(loop))
        snapshot = dict(info, games=len(owner.games), retired=len(owner.retired), forgotten=owner.forgotten.count)
        print(f"snapshot: {snapshot}", flush=True)
        # What the save costs the commands that arrive meanwhile: how late a 1 ms timer on the
        # owner's loop fires while the snapshot is saved, against the same snapshot encoded
        # whole on a worker thread (the baseline: how the owner saved before session 16).
        with ThreadPoolExecutor(1) as worker:
            _, thread_lag = await lag_during(loop.run_in_executor(worker, encode, owner.capture()))
        snapshot_loop_lag = {"saved_by_the_owner": lag, "encoded_on_a_thread": thread_lag}
        print(f"loop lag while a snapshot is saved: {snapshot_loop_lag}", flush=True)
        await a.close()

        tail = fill_topic(kafka.bootstrap, topic, 1, args.tail, sources[::-1], concurrent=args.live) if args.tail else 0
        print(f"wrote {tail:,} more events", flush=True)

        b, from_snapshot = await take(settings, host, topic, store)
        print(f"B, from the snapshot and the log after it: {from_snapshot}", flush=True)
        c, whole = await take(settings, host, topic, None)
        print(f"C, from the whole log: {whole}", flush=True)
        same = held(b.owners[0]) == held(c.owners[0])
        games = len(c.owners[0].games)
        await b.close()
        await c.close()
        if not same:
            raise SystemExit("the games rebuilt from the snapshot differ from those rebuilt from the whole log")
        if from_snapshot["snapshot_offset"] is None:
            raise SystemExit("replica B did not start from the snapshot")
    finally:
        rds.delete(store.key(topic, 0))
        rds.close()
        delete_topics(kafka.bootstrap, [topic])
    return {
        "game": GAME,
        "events_in_partition": written + tail + 1,
        "live_games": games,
        "from_log": from_log,
        "snapshot": snapshot,
        "snapshot_loop_lag_ms": snapshot_loop_lag,
        "tail_events": tail,
        "from_snapshot": from_snapshot,
        "whole_log_again": whole,
        "same_games": same,
        "speedup": round(whole["seconds"] / from_snapshot["seconds"], 1) if from_snapshot["seconds"] else None,
    }


def main(argv=None) -> int:
    from croupier.runtime import tune_gc

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--tail", type=int, default=20_000)
    p.add_argument("--live", type=int, default=200, help="games being played at once (cut at the end: the live games)")
    p.add_argument("--sources", type=int, default=20, help="distinct source games copied")
    args = p.parse_args(argv)
    tune_gc()  # as the service runs
    result = asyncio.run(run(args))
    path = write("rebuild", result)
    fl, fs = result["from_log"], result["from_snapshot"]
    print(f"from the log: {fl['events']:,} events in {fl['seconds']} s ({fl['events_per_s']:,.0f}/s); "
          f"snapshot {result['snapshot']['bytes']:,} bytes in {result['snapshot']['seconds']} s; "
          f"from the snapshot: {fs['events']:,} events in {fs['seconds']} s "
          f"(the whole log again: {result['whole_log_again']['seconds']} s) -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
