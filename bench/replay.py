"""bench/replay: audit throughput, i.e. full re-execution of recorded games, on one core.

For every game type, and then over 10,000 exported games (2,000 of each type, in the
`croupier export --all` format): read the JSON lines, then audit each game exactly as
`croupier audit --file F --all` does (hash chain, seed commitment, every random draw, and
every command re-run through the engine, its events compared byte for byte).

Figures: events/s audited (JSON parse excluded) and events/s end to end (parse included).
Target (issue: Replay and audit): at least 20,000 events/s re-executed on one core.

    python bench/replay.py [--games 10000] [--workers 2]

The games are played once by the heuristic bots (in --workers processes) and kept in
bench/.cache/replay/, so a second run measures the audit alone.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import write  # noqa: E402

from croupier.cli.replay import read_file  # noqa: E402
from croupier.engine import registry  # noqa: E402
from croupier.engine.audit import audit  # noqa: E402
from croupier.engine.selfplay import SelfplayReport, play_one  # noqa: E402

TARGET = 20_000
CACHE = Path(__file__).resolve().parent / ".cache" / "replay"
SEED = 2026


def _play(job: tuple[str, int, int]) -> list[str]:
    game_id, start, count = job
    spec = registry.get(game_id)
    report = SelfplayReport(game=game_id)
    lines = []
    for index in range(start, start + count):
        seats = spec.min_seats + index % (spec.max_seats - spec.min_seats + 1)
        bot = "heuristic" if "heuristic" in spec.bots else "random"  # games as people play them
        table = play_one(spec, seats=seats, seat_bots=[bot] * seats, options=spec.parse_options({}),
                         seed=SEED, index=index, report=report, check_all_legal=False, verify=False)
        lines.extend(env.to_json() for env in table.envelopes)
    if report.errors:
        raise RuntimeError(f"{game_id}: selfplay errors: {report.errors[:3]}")
    return lines


def exported(game_id: str, games: int, workers: int) -> Path:
    """An export file of `games` whole games of one type (made once, then cached)."""
    path = CACHE / f"{game_id}-{games}-{SEED}-h.jsonl"
    if path.exists():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    chunk = max(1, games // (workers * 4))
    jobs = [(game_id, start, min(chunk, games - start)) for start in range(0, games, chunk)]
    t0 = time.perf_counter()
    with multiprocessing.Pool(workers) as pool:
        parts = pool.map(_play, jobs)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for lines in parts:
            fh.write("\n".join(lines) + "\n")
    tmp.rename(path)
    print(f"  played {games} {game_id} games for the export in {time.perf_counter() - t0:.0f} s", flush=True)
    return path


def audit_file(path: Path) -> dict:
    t0 = time.perf_counter()
    games = read_file(path)
    t_parse = time.perf_counter() - t0
    events = sum(len(envs) for envs in games.values())
    t0, c0 = time.perf_counter(), time.process_time()
    reports = [audit(envs) for envs in games.values()]
    t_audit = time.perf_counter() - t0
    c_audit = time.process_time() - c0  # CPU time of this process: holds on a busy machine
    bad = [r for r in reports if not r.ok]
    if bad:
        raise RuntimeError(f"{path}: {len(bad)} games do not audit clean: {bad[0].as_dict()}")
    return {
        "games": len(games),
        "events": events,
        "commands": sum(r.commands for r in reports),
        "draws": sum(r.draws for r in reports),
        "parse_s": round(t_parse, 3),
        "audit_s": round(t_audit, 3),
        "audit_events_per_s": round(events / t_audit),
        "audit_cpu_s": round(c_audit, 3),
        "audit_events_per_cpu_s": round(events / c_audit),
        "end_to_end_events_per_s": round(events / (t_parse + t_audit)),
        "bytes": path.stat().st_size,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--games", type=int, default=10_000, help="exported games in all, split evenly over the types")
    p.add_argument("--workers", type=int, default=2, help="processes that play the games (the audit uses one)")
    p.add_argument("--prepare", action="store_true", help="only play and export the games (cached), do not audit")
    args = p.parse_args(argv)
    per_type = max(1, args.games // len(registry.GAME_IDS))
    paths = {g: exported(g, per_type, args.workers) for g in registry.GAME_IDS}
    if args.prepare:
        return 0

    results: dict = {"per_game_type": {}, "target_events_per_s": TARGET}
    for game_id, path in paths.items():
        r = audit_file(path)
        r["meets_target"] = r["audit_events_per_s"] >= TARGET
        results["per_game_type"][game_id] = r
        print(f"{game_id:<12} {r['audit_events_per_s']:>9,} events/s audited ({r['audit_events_per_cpu_s']:,}/CPU-s)  "
              f"{r['end_to_end_events_per_s']:>9,} with parsing  "
              f"({r['games']} games, {r['events']:,} events, {r['commands']:,} commands re-run)", flush=True)

    # All 10,000 together: the export files' totals, each game audited once above.
    per = results["per_game_type"].values()
    events = sum(r["events"] for r in per)
    audit_s = sum(r["audit_s"] for r in per)
    parse_s = sum(r["parse_s"] for r in per)
    total = {
        "games": sum(r["games"] for r in per),
        "events": events,
        "commands": sum(r["commands"] for r in per),
        "audit_s": round(audit_s, 3),
        "parse_s": round(parse_s, 3),
        "audit_events_per_s": round(events / audit_s),
        "audit_events_per_cpu_s": round(events / sum(r["audit_cpu_s"] for r in per)),
        "end_to_end_events_per_s": round(events / (audit_s + parse_s)),
        "bytes": sum(r["bytes"] for r in per),
    }
    total["meets_target"] = total["audit_events_per_s"] >= TARGET
    results["all_exported"] = total
    print(f"{'all':<12} {total['audit_events_per_s']:>9,} events/s audited ({total['audit_events_per_cpu_s']:,}/CPU-s)  "
          f"{total['end_to_end_events_per_s']:>9,} with parsing  "
          f"({total['games']:,} games, {total['events']:,} events)", flush=True)
    path = write("replay", results)
    print(f"wrote {path}")
    print(json.dumps({"all_audit_events_per_s": total["audit_events_per_s"], "target": TARGET}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
