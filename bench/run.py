"""`make bench`: run every benchmark, then print one table of figures next to their targets
and the baselines measured in the same run.

    python bench/run.py [--only engine,rules,...] [--quick]

The rules and projector benchmarks need the local stack; this starts it (croupier stack up)
if it is not running. Results are in bench/results/*.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"

BENCHES = {
    "engine": ["engine.py"],
    "rules": ["rules.py"],
    "projector": ["projector.py"],
    "replay": ["replay.py"],
}
QUICK = {
    "engine": ["--games", "20"],
    "rules": ["--seconds", "4"],
    "projector": ["--events", "100000"],
    "replay": ["--games", "200"],
}
NEEDS_STACK = {"rules", "projector"}


def load(name: str) -> dict | None:
    path = RESULTS / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def table() -> list[tuple[str, str, str, str]]:
    rows = []
    engine = load("engine")
    if engine:
        for game, r in engine["games"].items():
            rows.append((f"engine {game}: commands/s", f"{r['commands_per_s']:,.0f}", ">= 10,000", "-"))
            rows.append((f"engine {game}: replayed events/s", f"{r['replay_events_per_s']:,.0f}", ">= 50,000", "-"))
            rows.append((f"engine {game}: bytes per live game", f"{r['bytes_per_live_game']:,}", "< 20,000 (idle table)", "-"))
    rules = load("rules")
    if rules:
        echo = rules["echo_baseline"]["per_s"]
        for k, v in rules["peak"].items():
            rows.append((f"rules: commands/s, {k} games in flight", f"{v['per_s']:,.0f}", ">= echo/2", f"echo {echo:,.0f}/s"))
        for k, v in rules["latency_at_load"].items():
            rows.append((f"rules: p50/p99 ms at {k} of peak", f"{v['p50_ms']}/{v['p99_ms']}", "p99 < 50 at 50%", "-"))
        kb = rules["kafka_baseline"]
        rows.append(("rules: peak / bare grpc echo", f"{rules['ratios']['peak_over_echo']}", ">= 0.5",
                     f"raw txn produce {kb['single']['transactions_per_s']:,.0f} txn/s"))
    projector = load("projector")
    if projector:
        rows.append(("projector: catch-up events/s", f"{projector['projector']['events_per_s']:,.0f}",
                     f">= {projector['target_events_per_s']:,.0f}",
                     f"kafka {projector['baseline_kafka_consume']['events_per_s']:,.0f}/s, "
                     f"redis {projector['baseline_redis_pipeline']['events_per_s']:,.0f}/s"))
    replay = load("replay")
    if replay:
        for game, r in replay.get("games", {}).items():
            rows.append((f"audit {game}: events/s re-executed", f"{r['events_per_s']:,.0f}", ">= 20,000", "-"))
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--only", default=",".join(BENCHES))
    p.add_argument("--quick", action="store_true", help="smaller runs, for a smoke test")
    p.add_argument("--table", action="store_true", help="only print the table of the last results")
    args = p.parse_args(argv)
    if not args.table:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        if NEEDS_STACK & set(names):
            subprocess.run([sys.executable, "-m", "croupier.cli.main", "stack", "up"], cwd=ROOT, check=True)
        for name in names:
            script = HERE / BENCHES[name][0]
            if not script.exists():
                print(f"-- {name}: not built yet")
                continue
            print(f"-- {name}", flush=True)
            extra = QUICK.get(name, []) if args.quick else []
            subprocess.run([sys.executable, str(script), *extra], cwd=ROOT, check=True)
    rows = table()
    width = max((len(r[0]) for r in rows), default=10)
    print()
    print(f"{'figure':<{width}}  {'measured':>12}  {'target':<22}  baseline (same run)")
    for name, value, target, base in rows:
        print(f"{name:<{width}}  {value:>12}  {target:<22}  {base}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
