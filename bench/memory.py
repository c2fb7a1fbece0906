"""bench/memory: what a rules replica holds per game, in process (tracemalloc), per game type.

A partition owner (croupier.rules.partition, the replica's memory of a partition) is rebuilt
from the logs of whole games played by the random bots, as after a failover, with a writer
that does nothing. Three figures, bytes per game:

- live: games cut at the middle of their log, as a replica holds tables being played
  (the state and the remembered results of recent command_ids);
- finished, kept: whole games, never retired (what every finished game cost before
  retirement, and what one costs for CROUPIER_RULES_RETIRE_AFTER_S after it ends);
- retired: the same games once retired (their version and last few results only);

and, for every game type alike, what a forgotten game costs (CROUPIER_RULES_FORGET_AFTER_S
after its end only its id is kept, in a Bloom filter): bytes per id after --forgotten ids,
and the share of as many other ids the filter takes for forgotten ones.

Baseline in the same run: bench/engine's figure for a game state alone is the lower bound of
"live". No target of its own: the load test's target is < 20 KB per idle table.

    python bench/memory.py [--games N] [--game ID] [--forgotten N]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import write  # noqa: E402

from croupier.engine import registry  # noqa: E402
from croupier.engine.selfplay import SelfplayReport, play_one  # noqa: E402
from croupier.engine.table import TableHost  # noqa: E402
from croupier.rules.partition import PartitionOwner  # noqa: E402


class NoWriter:
    """The owner's writer, unused: nothing is appended while it is only rebuilt."""

    def append(self, envelopes) -> None:
        pass

    def close(self) -> None:
        pass


def play_logs(spec, games: int) -> list[list]:
    """The logs of `games` whole games, two seats, random bots."""
    report = SelfplayReport(game=spec.id)
    logs = []
    for i in range(games):
        table = play_one(spec, seats=2, seat_bots=["random", "random"], options=spec.parse_options({}),
                         seed=7, index=i, report=report, check_all_legal=False, verify=False)
        logs.append(list(table.envelopes))
    return logs


def held(host: TableHost, logs: list[list], retire: bool) -> tuple[float, int, int]:
    """Bytes per game an owner holds after a rebuild from `logs` (and after retiring its
    finished games, if `retire`), with how many games it keeps and how many it retired."""
    envelopes = [env for log in logs for env in log]

    async def build() -> PartitionOwner:
        owner = PartitionOwner(host, 0, NoWriter, max_batch=256, dedupe_window=128,
                               retire_after_s=0 if retire else None)
        await owner.start(lambda: envelopes)
        await owner.stop("measured")
        return owner

    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    owner = asyncio.run(build())
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (after - before) / len(logs), len(owner.games), len(owner.retired)


def bench_game(spec, games: int) -> dict:
    host = TableHost(spec)
    logs = play_logs(spec, games)
    halves = [log[: len(log) // 2] for log in logs]
    live, live_kept, _ = held(host, halves, retire=False)
    kept, finished, _ = held(host, logs, retire=False)
    retired, left, retired_count = held(host, logs, retire=True)
    return {
        "games": games,
        "events_per_game": round(sum(map(len, logs)) / games, 1),
        "bytes_per_live_game": round(live),
        "bytes_per_finished_game_kept": round(kept),
        "bytes_per_retired_game": round(retired),
        "finished": finished,
        "retired": retired_count,
        "left_in_memory_after_retiring": left,
        "live_games_kept": live_kept,
    }


def bench_forgotten(n: int) -> dict:
    from croupier.rules.forgotten import ERROR_RATE, IdFilter

    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    ids = IdFilter()
    for i in range(n):
        ids.add(f"expeditions-{i:016x}")
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    confused = sum(f"virtues-{i:016x}" in ids for i in range(n))
    return {"ids": n, "bytes_per_id": round((after - before) / n, 2), "false_positives": confused,
            "false_positive_rate": round(confused / n, 6), "error_rate_per_block": ERROR_RATE}


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--games", type=int, default=40)
    p.add_argument("--game", default=None, choices=list(registry.GAME_IDS),
                   help="one game only: its figures are printed, bench/results/memory.json (every game of one "
                        "run) is left as it is")
    p.add_argument("--forgotten", type=int, default=500_000)
    args = p.parse_args(argv)
    ids = [args.game] if args.game else list(registry.GAME_IDS)
    results = {}
    for game_id in ids:
        r = results[game_id] = bench_game(registry.get(game_id), args.games)
        print(f"{game_id:<12} live {r['bytes_per_live_game']:>8,} B/game   finished, kept {r['bytes_per_finished_game_kept']:>8,} B/game"
              f"   retired {r['bytes_per_retired_game']:>6,} B/game   ({r['games']} games, {r['events_per_game']} events each,"
              f" {r['retired']} retired)", flush=True)
    forgotten = bench_forgotten(args.forgotten)
    print(f"forgotten    {forgotten['bytes_per_id']} B/game over {forgotten['ids']:,} ids; "
          f"{forgotten['false_positives']} of {forgotten['ids']:,} other ids taken for forgotten ones", flush=True)
    if args.game:  # one game's figures are not the file's (every game, one run): printed only
        print(f"--game {args.game}: not written to bench/results/memory.json, which holds every game of one run")
        return 0
    path = write("memory", {"games": results, "forgotten": forgotten})
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
