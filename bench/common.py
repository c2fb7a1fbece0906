"""Shared helpers of the benchmarks: machine facts and the results files."""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> dict:
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        # Other work on the machine skews every figure: a load above the core count means
        # the numbers are lower bounds.
        "load_average_1m": round(os.getloadavg()[0], 2),
    }


def write(name: str, data: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    data = {"benchmark": name, "machine": machine(), **data}
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path
