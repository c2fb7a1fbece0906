"""`make bench`: run every benchmark, then print one table of figures next to their targets
and the baselines measured in the same run.

    python bench/run.py [--only engine,rules,...] [--quick] [--table]

The rules and projector benchmarks need the local stack; this starts it (croupier stack up)
if it is not running. Results are in bench/results/*.json ($CROUPIER_BENCH_RESULTS, if set);
a --quick run's are not figures and go to a directory of their own (common.QUICK_RESULTS).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from common import quick_results, results_dir  # noqa: E402

BENCHES = {
    "engine": ["engine.py"],
    "memory": ["memory.py"],
    "rebuild": ["rebuild.py"],
    "rules": ["rules.py"],
    "projector": ["projector.py"],
    "gateway": ["gateway.py"],
    "loadtest": ["loadtest.py"],
    "replay": ["replay.py"],
}
QUICK = {
    "engine": ["--games", "20"],
    "memory": ["--games", "5", "--forgotten", "20000"],
    "rebuild": ["--events", "50000", "--tail", "5000"],
    "rules": ["--seconds", "4"],
    "projector": ["--events", "100000"],
    "gateway": ["--tables", "4", "--seconds", "5"],
    "loadtest": ["--quick"],
    "replay": ["--games", "200"],
}
NEEDS_STACK = {"rebuild", "rules", "projector", "gateway", "loadtest"}


def load(name: str) -> dict | None:
    path = results_dir() / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


Row = tuple[str, str, str, str]  # figure, measured, target, baseline (same run)


def table(problems: list[str] | None = None) -> list[Row]:
    """The rows of every benchmark's last results. A results file that cannot be read (cut
    short, not JSON, of another shape) is left out and said so in `problems`, not a traceback
    that hides every other figure."""
    rows: list[Row] = []
    for name, rows_of in ROWS.items():
        try:
            data = load(name)
            if data:
                rows += rows_of(data)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
            if problems is not None:
                problems.append(f"{results_dir() / (name + '.json')} cannot be read ({type(exc).__name__}: {exc}): "
                                f"run bench/{BENCHES[name][0]} again")
    return rows


def engine_rows(engine: dict) -> list[Row]:
    rows = []
    for game, r in engine["games"].items():
        rows.append((f"engine {game}: commands/s", f"{r['commands_per_s']:,.0f}", ">= 10,000", "-"))
        rows.append((f"engine {game}: replayed events/s", f"{r['replay_events_per_s']:,.0f}", ">= 50,000", "-"))
        rows.append((f"engine {game}: bytes per live game", f"{r['bytes_per_live_game']:,}", "< 20,000 (idle table)", "-"))
    return rows


def memory_rows(memory: dict) -> list[Row]:
    rows = []
    for game, r in memory["games"].items():
        rows.append((f"rules replica {game}: bytes per finished game, kept / retired",
                     f"{r['bytes_per_finished_game_kept']:,} / {r['bytes_per_retired_game']:,}", "-",
                     f"live game {r['bytes_per_live_game']:,}"))
    if memory.get("forgotten"):
        fg = memory["forgotten"]
        rows.append(("rules replica: bytes per forgotten game (its id only)", f"{fg['bytes_per_id']}", "-",
                     f"false positives {fg['false_positive_rate']:.4%} over {fg['ids']:,} ids"))
    return rows


def rebuild_rows(rebuild: dict) -> list[Row]:
    fl, fs, sn = rebuild["from_log"], rebuild["from_snapshot"], rebuild["snapshot"]
    return [(f"rules replica: partition of {rebuild['events_in_partition']:,} events taken, from the log, s",
             f"{rebuild['whole_log_again']['seconds']}", "-", f"{fl['events_per_s']:,.0f} events/s folded"),
            (f"rules replica: the same from a snapshot + {rebuild['tail_events']:,} events after it, s",
             f"{fs['seconds']}", "-", f"snapshot {sn['bytes']:,} B, saved in {sn['seconds']} s")]


def rules_rows(rules: dict) -> list[Row]:
    rows = []
    echo = rules["echo_baseline"]["per_s"]
    for k, v in rules["peak"].items():
        rows.append((f"rules: commands/s, {k} games in flight", f"{v['per_s']:,.0f}", ">= echo/2", f"echo {echo:,.0f}/s"))
    for k, v in rules["latency_at_load"].items():
        rows.append((f"rules: p50/p99 ms at {k} of peak", f"{v['p50_ms']}/{v['p99_ms']}", "p99 < 50 at 50%", "-"))
    kb = rules["kafka_baseline"]
    rows.append(("rules: peak / bare grpc echo", f"{rules['ratios']['peak_over_echo']}", ">= 0.5",
                 f"raw txn produce {kb['single']['transactions_per_s']:,.0f} txn/s"))
    st = rules.get("stream")
    if st:  # the gateway's path: moves on HandleCommands streams, against an echo on a stream
        rows.append(("rules over HandleCommands streams: commands/s, 1000 in flight", f"{st['peak']['per_s']:,.0f}",
                     "-", f"stream echo {st['echo']['per_s']:,.0f}/s ({st['peak_over_echo']})"))
    return rows


def projector_rows(projector: dict) -> list[Row]:
    return [("projector: catch-up events/s", f"{projector['projector']['events_per_s']:,.0f}",
             f">= {projector['target_events_per_s']:,.0f}",
             f"kafka {projector['baseline_kafka_consume']['events_per_s']:,.0f}/s, "
             f"redis {projector['baseline_redis_pipeline']['events_per_s']:,.0f}/s")]


def gateway_rows(gateway: dict) -> list[Row]:
    rows = []
    for transport, r in gateway.get("results", {}).items():
        rows.append((f"gateway {transport}: moves/s, {r['tables']} tables", f"{r['moves_per_s']:,.0f}", "-", "-"))
        rows.append((f"gateway {transport}: submit p50/p99 ms", f"{r['submit_p50_ms']}/{r['submit_p99_ms']}", "-", "-"))
    return rows


def replay_rows(replay: dict) -> list[Row]:
    rows = []
    target = f">= {replay.get('target_events_per_s', 20000):,}"
    for game, r in replay.get("per_game_type", {}).items():
        rows.append((f"audit {game}: events/s re-executed", f"{r['audit_events_per_s']:,.0f}", target,
                     f"end to end {r['end_to_end_events_per_s']:,.0f}/s"))
    everything = replay.get("all_exported")
    if everything:
        rows.append((f"audit {everything['games']:,} exported games: events/s", f"{everything['audit_events_per_s']:,.0f}",
                     target, f"end to end {everything['end_to_end_events_per_s']:,.0f}/s"))
    return rows


def loadtest_rows(lt: dict) -> list[Row]:
    rows = []
    think, peak, echo = lt["think"], lt["peak"], lt["echo_baseline"]
    f = think["flags"]
    name = f"loadtest {f['tables']} tables, think {f['think_ms']:g} ms"
    rows.append((f"{name}: served / offered moves", f"{think['served_ratio']}", ">= 0.99",
                 f"offered {think['offered_moves_per_s']:,.0f}/s"))
    rows.append((f"{name}: p50/p99 ms", f"{think['p50_ms']:.1f}/{think['p99_ms']:.1f}", "p99 < 150", "-"))
    rows.append((f"{name}: errors", f"{think['errors']}", "0", "-"))
    # The load test's own check of its finished games (audit clean, projection equals replay):
    # a failed one is a wrong result, whatever the figures.
    verdict = {True: "passed", False: "FAILED", None: "none"}
    rows.append(("loadtest think / peak: check of finished games",
                 f"{verdict.get(think.get('check_passed'), '?')} / {verdict.get(peak.get('check_passed'), '?')}",
                 "passed / passed", "audit clean, projection = replay"))
    finished = think["games_finished"]
    fl = lt.get("floor") or {}
    if fl.get("floor_ms_per_move"):
        pm = fl["per_move"]
        rows.append((f"{name}: CPU ms per move, all processes", f"{fl['measured_ms_per_move']}",
                     f"<= {fl['budget_ms_per_move']:g} (cores/offered)",
                     f"floor {fl['floor_ms_per_move']} ({pm['player_messages']:g}+{pm['replica_messages']:g} "
                     f"stream messages, {pm['transactions']:g} txns)"))
    rows.append((f"{name}: game types with a finished game", f"{sum(1 for n in finished.values() if n)}/{len(finished)}",
                 f"{len(finished)}/{len(finished)}", "-"))
    pf = peak["flags"]
    rows.append((f"loadtest peak, {pf['tables']} tables, no think: commands/s", f"{peak['commands_per_s']:,.0f}",
                 ">= echo/2", f"echo {echo['per_s']:,.0f}/s"))
    rows.append(("loadtest peak / bare grpc echo", f"{lt['ratios']['peak_over_echo']}", ">= 0.5", "-"))
    rows.append((f"loadtest peak, {pf['tables']} tables, no think: errors", f"{peak['errors']}", "0", "-"))
    cpu = peak.get("cpu") or {}
    if cpu.get("busiest"):
        busiest = cpu["busiest"]
        rows.append(("loadtest peak: busiest process, CPU %", f"{cpu['mean_cpu_percent'][busiest]}", "-",
                     f"{busiest}; all {cpu['machine_cpu_percent']} of {cpu['cores'] * 100}"))
    for game, m in lt["idle_memory"].items():
        rows.append((f"rules {game}: bytes per idle table (RSS)", f"{m['bytes_per_idle_table']:,}", "< 20,000",
                     f"over {m['tables']} tables"))
    fo = lt["failover"]
    rows.append((f"failover {fo['game']}: rebuilt events/s", f"{fo['events_per_s'] or 0:,.0f}", "-",
                 f"{fo['events_rebuilt']:,} events, {fo['games_rebuilt']} games"))
    rows.append((f"failover {fo['game']}: kill to all partitions owned, s", f"{fo['takeover_wall_s']}", "-",
                 f"session timeout {fo['session_timeout_ms'] / 1000:g} s"))
    pr = lt.get("propagation")
    if pr and pr.get("moves"):
        rows.append(("move acknowledged -> next update on a stream, quiet stack, p50/p90 ms",
                     f"{pr['p50_ms']}/{pr['p90_ms']}", "-", f"{pr['moves']} moves of {pr['game']}"))
    return rows


# The table's order: each benchmark's rows from its results file.
ROWS = {"engine": engine_rows, "memory": memory_rows, "rebuild": rebuild_rows, "rules": rules_rows,
        "projector": projector_rows, "gateway": gateway_rows, "loadtest": loadtest_rows,
        "replay": replay_rows}


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--only", default=",".join(BENCHES))
    p.add_argument("--quick", action="store_true", help="smaller runs, for a smoke test")
    p.add_argument("--table", action="store_true", help="only print the table of the last results")
    args = p.parse_args(argv)
    failed = []
    if args.quick:  # small numbers, not figures: written (and tabled) apart from bench/results
        print(f"--quick: a smoke run; its results go to {quick_results()}, bench/results is left as it is",
              flush=True)
    if not args.table:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in BENCHES]
        if unknown:
            p.error(f"no benchmark {', '.join(unknown)}; there are {', '.join(BENCHES)}")
        stack_down = False
        if NEEDS_STACK & set(names):
            up = subprocess.run([sys.executable, "-m", "croupier.cli.main", "stack", "up"], cwd=ROOT)
            if up.returncode != 0:  # (croupier stack up said why) the others still run
                stack_down = True
                print(f"-- the local stack did not start (croupier stack up exited {up.returncode}): "
                      f"{', '.join(n for n in names if n in NEEDS_STACK)} not run", flush=True)
        for name in names:
            if stack_down and name in NEEDS_STACK:
                failed.append(name)
                continue
            script = HERE / BENCHES[name][0]
            if not script.exists():
                print(f"-- {name}: not built yet")
                continue
            print(f"-- {name}", flush=True)
            extra = QUICK.get(name, []) if args.quick else []
            if subprocess.run([sys.executable, str(script), *extra], cwd=ROOT).returncode != 0:
                failed.append(name)  # go on with the others; the table shows the last results
    problems: list[str] = []
    rows = table(problems)
    width = max((len(r[0]) for r in rows), default=10)
    print()
    vwidth = max([12, *(len(r[1]) for r in rows)])
    print(f"{'figure':<{width}}  {'measured':>{vwidth}}  {'target':<22}  baseline (same run)")
    for name, value, target, base in rows:
        print(f"{name:<{width}}  {value:>{vwidth}}  {target:<22}  {base}")
    for problem in problems:
        print(f"\n{problem}")
    if failed:
        print(f"\nfailed: {', '.join(failed)} (their rows, if any, are from an earlier run)")
    return 1 if failed or problems else 0


if __name__ == "__main__":
    sys.exit(main())
