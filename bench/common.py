"""Shared helpers of the benchmarks: machine facts and the results files."""

from __future__ import annotations

import json
import os
import platform
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"  # the results of record (committed)
# Where a smoke run (`--quick`) writes: its small numbers are not figures, and must not take the
# place of those of record in bench/results (nor in `make bench`'s table, nor in a commit).
QUICK_RESULTS = Path(tempfile.gettempdir()) / "croupier-bench-quick"
RESULTS_ENV = "CROUPIER_BENCH_RESULTS"  # another directory for the results (run.py --quick sets it)


def results_dir() -> Path:
    """Where the results are written and read: $CROUPIER_BENCH_RESULTS, else bench/results."""
    return Path(os.environ[RESULTS_ENV]) if os.environ.get(RESULTS_ENV) else RESULTS


def quick_results() -> Path:
    """A smoke run's directory: $CROUPIER_BENCH_RESULTS if set, else QUICK_RESULTS (set in the
    environment, so that the benchmarks a run starts write there too)."""
    if not os.environ.get(RESULTS_ENV):
        os.environ[RESULTS_ENV] = str(QUICK_RESULTS)
    return results_dir()


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
    results = results_dir()
    results.mkdir(parents=True, exist_ok=True)
    path = results / f"{name}.json"
    data = {"benchmark": name, "machine": machine(), **data}
    # Whole or not at all: a run killed (or a disk full) as it writes leaves the results before
    # it, not a file cut short that no table can read.
    partial = path.with_name(f".{path.name}.partial")
    try:
        partial.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return path


def stop(proc, timeout: float = 20) -> None:
    """Terminate a child process (subprocess.Popen), killing it if it does not end in time."""
    import subprocess

    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()


def delete_topics(bootstrap: str, topics: list[str]) -> None:
    """Delete a benchmark's topics, leaving the broker as it was: a broker that piles up every
    run's topics (hundreds of partitions) slows every client's metadata, and kafka-python's
    group membership with it (docs/operations.md, Troubleshooting). A topic that was never
    created, or a broker gone, is nothing to keep."""
    from confluent_kafka.admin import AdminClient

    # The client must outlive the futures: a destroyed client cancels its requests.
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        futures = admin.delete_topics(topics, operation_timeout=30)
    except Exception:  # noqa: BLE001
        return
    for future in futures.values():
        try:
            future.result()
        except Exception:  # noqa: BLE001
            pass


def cpu_seconds(proc=None) -> float:
    """User + system CPU seconds, every thread, of a psutil.Process (default: this one)."""
    import psutil

    t = (proc or psutil.Process()).cpu_times()
    return t.user + t.system


def listening_process(port: int):
    """The process on this machine listening on a TCP port (a broker, a redis-server), to
    charge its CPU to a benchmark; None when none can be seen."""
    import psutil

    try:
        for conn in psutil.net_connections(kind="tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port and conn.pid:
                return psutil.Process(conn.pid)
    except (psutil.Error, OSError):
        pass
    return None


def pct(values: list[float], q: float) -> float:
    """The q-quantile of values (the nearest rank at or below), nan when there are none."""
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def cleanup_prefix(kafka_bootstrap: str, redis_url: str, prefix: str, games) -> None:
    """Remove what a benchmark's services left under its topic and key prefix on the stack:
    the Redis keys and the games' topics (a stack that piles up every run's topics slows every
    client's metadata). Whatever cannot be reached is left."""
    import contextlib

    import redis

    with contextlib.suppress(Exception):
        r = redis.Redis.from_url(redis_url)
        keys = list(r.scan_iter(match=f"{prefix}*", count=1000))
        for i in range(0, len(keys), 500):
            r.unlink(*keys[i:i + 500])
    delete_topics(kafka_bootstrap, [f"{prefix}croupier.events.{g}" for g in games])
