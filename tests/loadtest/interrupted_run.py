"""`python interrupted_run.py WORKER STAGGER JSON`: croupier_gateway.loadtest.run with its
workers playing loadtest_fakes' fake gateway (WORKER: fake_worker or fake_worker_stuck), a
run of 10 minutes that the test interrupts; force-ends recorded in JSON + ".ended" rather
than sent. Exits with run's exit code."""

from __future__ import annotations

import json
import sys

import loadtest_fakes

from croupier_gateway import loadtest
from croupier_gateway.loadtest import Config, run


async def fine(cfg):
    return None


async def force_end(cfg, unfinished):
    with open(sys.argv[3] + ".ended", "w") as handle:
        json.dump([gid for gid, _ in unfinished], handle)
    return len(unfinished), 0


if __name__ == "__main__":
    loadtest.worker_main = getattr(loadtest_fakes, sys.argv[1])
    loadtest.preflight = loadtest.operator_token_refused = fine
    loadtest.force_end = force_end
    cfg = Config(games=("journey",), tables=4, duration_s=600.0, workers=2, think_ms=50.0, seats=2, bot="random",
                 stagger=sys.argv[2] == "stagger", progress=True, operator_token="a-token")
    print("running", flush=True)
    code, _ = run(cfg, json_path=sys.argv[3])
    sys.exit(code)
