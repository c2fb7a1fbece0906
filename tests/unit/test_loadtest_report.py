"""The load test's printed report: its latency table keeps its columns in line whatever the
names of the command kinds (nightfall's are up to 26 characters)."""

from __future__ import annotations

import io

from croupier_gateway.loadtest import print_report


def _stats(count: int) -> dict:
    return {"count": count, "p50_ms": 9.5, "p95_ms": 20.25, "p99_ms": 41.0, "max_ms": 128.092}


def test_the_latency_table_stays_in_columns_with_long_kind_names():
    report = {
        "config": {"tables": 2, "games": ["nightfall"], "duration_s": 10, "protocol": "grpc", "think_ms": 0, "workers": 1},
        "latency": {"p50_ms": 9.5, "p95_ms": 20.25, "p99_ms": 41.0, "max_ms": 128.092},
        "offered_moves_per_s": 0, "throughput_per_s": 3.0, "commands": 30, "moves_per_s": 3.0,
        "by_kind": {"Attack": _stats(3), "PlayCharacterOnNewLocation": _stats(1), "create_table": _stats(2)},
        "by_game": {"nightfall": _stats(30)},
        "errors": 0, "errors_by_kind": {}, "refusals": {}, "rate_limited": 0,
        "tables": {"opened": 2, "finished": 0, "unfinished": 2, "force_ended": 0},
        "games_finished": {"nightfall": 0},
    }
    out = io.StringIO()
    print_report(report, out)
    lines = out.getvalue().splitlines()
    header = next(x for x in lines if x.strip().startswith("count"))
    rows = [x for x in lines if x.strip().split(" ")[0] in (*report["by_kind"], *report["by_game"])]
    assert len(rows) == 4
    # every number ends under its heading: the rows are as long as the header
    assert {len(x) for x in rows} == {len(header)}, "\n".join([header, *rows])
