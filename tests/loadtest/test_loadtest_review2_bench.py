"""bench/: a smoke run (`--quick`) leaves the results of record (bench/results/*.json, committed)
as they are, and bench/loadtest.py never takes an earlier run's report for the one it just
ran."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"


def test_a_quick_run_leaves_the_results_of_record_alone(tmp_path):
    """`bench/run.py --quick` wrote its small numbers over bench/results/*.json, the figures
    docs/performance.md gives and `make bench --table` prints: a smoke run that they work
    took their place (and was one `git commit -a` from replacing them). Its results now go to
    a directory of their own, and its table is theirs."""
    record = BENCH / "results" / "engine.json"
    before = record.read_bytes()
    env = {k: v for k, v in os.environ.items() if k != "CROUPIER_BENCH_RESULTS"}
    env["TMPDIR"] = str(tmp_path)  # where the quick results go: tempfile.gettempdir()
    try:
        done = subprocess.run([sys.executable, str(BENCH / "run.py"), "--quick", "--only", "engine"], cwd=ROOT,
                              env=env, capture_output=True, text=True, timeout=300)
    finally:
        after = record.read_bytes()
        if after != before:  # put the figures of record back, whatever the test finds
            record.write_bytes(before)
    assert done.returncode == 0, done.stdout + done.stderr
    assert after == before, "a --quick run overwrote bench/results/engine.json"
    quick = json.loads((tmp_path / "croupier-bench-quick" / "engine.json").read_text())
    # The table printed is the quick run's, not the figures of record.
    game, row = next(iter(quick["games"].items()))
    assert f"engine {game}: commands/s" in done.stdout
    assert f"{row['commands_per_s']:,.0f}" in done.stdout
    assert str(tmp_path / "croupier-bench-quick") in done.stdout


def bench_loadtest():
    """bench/loadtest.py as a module (it puts bench/ on sys.path for its own imports)."""
    spec = importlib.util.spec_from_file_location("bench_loadtest_review2", BENCH / "loadtest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_loadtest_that_writes_no_report_is_not_read_from_an_earlier_one(tmp_path, monkeypatch):
    """The generator exits without a report (here 75: no gateway answered): bench/loadtest.py
    read bench/results/loadtest-think.json all the same, the report of an earlier run, and
    gave its figures as this run's. Now that is an error naming the exit code."""
    bench = bench_loadtest()
    monkeypatch.setenv("CROUPIER_BENCH_RESULTS", str(tmp_path))
    stale = {"latency": {"p50_ms": 1.0}, "window_unix": None, "throughput_per_s": 123.0}
    (tmp_path / "loadtest-think.json").write_text(json.dumps(stale))
    real_popen = subprocess.Popen
    monkeypatch.setattr(bench.subprocess, "Popen",
                        lambda cmd, **kw: real_popen([sys.executable, "-c", "import sys; sys.exit(75)"], **kw))
    launcher = SimpleNamespace(grpc_address="127.0.0.1:1", http_url="http://127.0.0.1:1", processes=[],
                               metrics_ports={})
    stack = SimpleNamespace(state_dir=str(tmp_path / "stack"))
    with pytest.raises(RuntimeError, match="exited 75 without a report"):
        bench.loadtest(launcher, stack, "think", "--tables", "1")


def bench_run():
    spec = importlib.util.spec_from_file_location("bench_run_review2", BENCH / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_stack_that_does_not_start_fails_only_the_benchmarks_that_need_it(tmp_path, monkeypatch, capsys):
    """`croupier stack up` failing (a port taken, no Kafka jars) ended `make bench` in a
    CalledProcessError traceback before any benchmark ran, the in-process ones too. Now those
    that need the stack are named failed (exit 1) and the others run."""
    run = bench_run()
    monkeypatch.setenv("CROUPIER_BENCH_RESULTS", str(tmp_path))  # an empty table: nothing of record read
    calls = []

    def fake_run(cmd, **kwargs):
        calls.append(cmd)
        code = 1 if cmd[-2:] == ["stack", "up"] else 0
        if code and kwargs.get("check"):
            raise subprocess.CalledProcessError(code, cmd)
        return SimpleNamespace(returncode=code)

    monkeypatch.setattr(run.subprocess, "run", fake_run)
    assert run.main(["--only", "engine,rules,memory"]) == 1
    ran = [Path(c[1]).name for c in calls if c[-2:] != ["stack", "up"]]
    assert ran == ["engine.py", "memory.py"]
    out = capsys.readouterr().out
    assert "the local stack did not start" in out and "failed: rules" in out


def test_the_table_shows_the_load_tests_check_and_the_peak_runs_errors(tmp_path, monkeypatch, capsys):
    """`make bench`'s table left out the load test's check of its finished games (audit clean,
    projection equals replay) and the peak run's errors: a wrong result, or a peak run that
    failed, read as a clean run there."""
    lt = json.loads((BENCH / "results" / "loadtest.json").read_text())
    lt["think"]["check_passed"], lt["peak"]["check_passed"], lt["peak"]["errors"] = True, False, 7
    (tmp_path / "loadtest.json").write_text(json.dumps(lt))
    monkeypatch.setenv("CROUPIER_BENCH_RESULTS", str(tmp_path))
    run = bench_run()
    assert run.main(["--table"]) == 0
    lines = capsys.readouterr().out.splitlines()
    (check,) = [line for line in lines if "check of finished games" in line]
    assert "passed / FAILED" in check
    (errors,) = [line for line in lines if line.startswith("loadtest peak") and ": errors" in line]
    assert re.search(r"errors\s+7\s+0\s", errors), errors


def test_the_gateway_benchmark_removes_its_topics_and_keys(monkeypatch):
    """bench/gateway.py (a part of every `make bench`) left its topic and Redis keys on the
    stack each run, as the other benchmarks do not: a broker piling up every run's
    partitions slows every client's metadata. It now removes them, the run failed or not."""
    spec = importlib.util.spec_from_file_location("bench_gateway_review2", BENCH / "gateway.py")
    gateway = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gateway)
    cleaned = []

    class Launcher:
        def __init__(self, env, log_dir):
            self.prefix = env["CROUPIER_TOPIC_PREFIX"]

        def start(self, games):
            pass

        def wait_ready(self, timeout_s):
            raise RuntimeError("the gateway did not start")

        def stop(self):
            pass

    monkeypatch.setattr(gateway, "Launcher", Launcher)
    monkeypatch.setattr(gateway, "cleanup_prefix", lambda kafka, redis_url, prefix, games: cleaned.append(
        (prefix, list(games))))
    with pytest.raises(RuntimeError, match="did not start"):
        gateway.main(["--transport", "grpc", "--game", "journey"])
    ((prefix, games),) = cleaned
    assert prefix.startswith("bench") and games == ["journey"]


def test_the_table_survives_a_results_file_it_cannot_read(tmp_path, monkeypatch, capsys):
    """`bench/run.py --table` (and make bench's table after the runs) ended in a traceback on
    one results file cut short (a benchmark killed as it wrote) or of an older shape, and
    printed no figure at all. The others are printed now, the bad one named, exit 1."""
    (tmp_path / "engine.json").write_text('{"games": {"journey": {"commands_per_s": 1')  # cut short
    (tmp_path / "rules.json").write_text(json.dumps({"peak": {}}))  # another shape
    (tmp_path / "loadtest.json").write_text((BENCH / "results" / "loadtest.json").read_text())
    monkeypatch.setenv("CROUPIER_BENCH_RESULTS", str(tmp_path))
    assert bench_run().main(["--table"]) == 1
    out = capsys.readouterr().out
    assert "loadtest peak / bare grpc echo" in out  # the readable ones' figures
    assert f"{tmp_path / 'engine.json'} cannot be read (JSONDecodeError" in out
    assert f"{tmp_path / 'rules.json'} cannot be read (KeyError" in out and "run bench/rules.py again" in out
    assert "Traceback" not in out


def bench_module(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}_review2", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name, argv", [("engine", ["--games", "2"]),
                                        ("memory", ["--games", "2", "--forgotten", "1000"])])
def test_one_games_run_leaves_every_games_results_alone(tmp_path, monkeypatch, capsys, name, argv):
    """`bench/engine.py --game journey` (and memory.py's) wrote bench/results/<name>.json with
    that one game: every other game's figures of record gone from the file and from make
    bench's table. One game's figures are printed now, the file left as it is."""
    monkeypatch.setenv("CROUPIER_BENCH_RESULTS", str(tmp_path))
    record = tmp_path / f"{name}.json"
    record.write_text((BENCH / "results" / f"{name}.json").read_text())
    before = record.read_bytes()
    assert bench_module(name).main(["--game", "journey", *argv]) == 0
    assert record.read_bytes() == before
    assert f"not written to bench/results/{name}.json" in capsys.readouterr().out


def test_an_unknown_game_is_a_bad_flag(capsys):
    with pytest.raises(SystemExit) as exc:
        bench_module("engine").main(["--game", "poker"])
    assert exc.value.code == 2 and "invalid choice: 'poker'" in capsys.readouterr().err


def test_the_rules_benchmark_removes_its_keys_too(monkeypatch, tmp_path):
    """bench/rules.py deleted its topics but left the replica's Redis keys under its prefix
    (owners, partitions, snapshots) on the stack, every run. They go now, the run failed or
    not."""
    rules = bench_module("rules")
    cleaned, deleted = [], []

    class Server:
        pid = os.getpid()

    monkeypatch.setattr(rules.subprocess, "Popen", lambda *a, **k: Server())
    monkeypatch.setattr(rules, "broker_process", lambda bootstrap: None)
    monkeypatch.setattr(rules, "CpuMeter", lambda processes: None)
    monkeypatch.setattr(rules, "stop", lambda proc: None)

    def not_ready(*args, **kwargs):
        raise TimeoutError("the rules replica did not take its partitions")

    monkeypatch.setattr(rules, "_wait_ready", not_ready)
    monkeypatch.setattr(rules, "cleanup_prefix", lambda kafka, redis_url, prefix, games: cleaned.append((prefix, games)))
    monkeypatch.setattr(rules, "delete_topics", lambda bootstrap, topics: deleted.append(topics))
    real_open = open
    monkeypatch.setattr("builtins.open", lambda path, *a, **k: real_open(tmp_path / "server.log", *a, **k)
                        if str(path).endswith("rules-server.log") else real_open(path, *a, **k))
    with pytest.raises(TimeoutError):
        rules.main(["--seconds", "1"])
    ((prefix, games),) = cleaned
    assert prefix.startswith("bench") and games == [rules.GAME]


def test_the_projector_benchmark_removes_its_topic_when_the_fill_fails(monkeypatch):
    """bench/projector.py created its topic and filled it before its try: a fill that failed
    (the broker gone, Ctrl-C) left a topic of up to a million events on the stack's broker,
    which slows every client's metadata after it. The topic goes now, the fill failed or not."""
    projector = bench_module("projector")
    import croupier.rules.store as store

    deleted, created = [], []
    monkeypatch.setattr(store, "ensure_topic", lambda kafka, topic: created.append(topic))
    monkeypatch.setattr(projector, "make_games", lambda n: [[None] * 3])

    def broker_gone(*args, **kwargs):
        raise ConnectionError("the broker went away mid-fill")

    monkeypatch.setattr(projector, "fill_topic", broker_gone)
    monkeypatch.setattr(projector, "delete_topics", lambda bootstrap, topics: deleted.append(topics))

    class NoRedis:
        def scan_iter(self, **kwargs):
            return iter(())

    import redis

    monkeypatch.setattr(redis.Redis, "from_url", classmethod(lambda cls, url: NoRedis()))
    with pytest.raises(ConnectionError):
        projector.main(["--events", "10", "--no-write"])
    (topic,) = created
    assert topic.startswith("benchp") and any(topic in topics for topics in deleted), (created, deleted)


def test_the_load_test_benchmark_judges_its_targets_from_the_results_it_writes():
    """bench/loadtest.py read `check_passed` from the load test's raw report, which has it as
    `check.passed`: a whole run (about ten minutes) ended in a KeyError and wrote no results.
    meets_targets reads the summaries it writes, built here by its own summary()."""
    bench = bench_module("loadtest")

    def report(served, p99, passed, finished):
        lat = {"p50_ms": 50.0, "p95_ms": 90.0, "p99_ms": p99, "max_ms": 300.0}
        return {"throughput_per_s": 500.0, "moves_per_s": 495.0 * served, "offered_moves_per_s": 500.0,
                "served_ratio": served, "latency": lat, "errors": 0, "errors_by_kind": {},
                "games_finished": finished, "check": {"passed": passed}, "exit_code": 0, "cpu": {}}

    every = dict.fromkeys(("expeditions", "virtues", "journey", "delve", "nightfall"), 3)
    results = {"think": bench.summary(report(0.995, 120.0, True, every)),
               "peak": bench.summary(report(1.0, 400.0, True, every)),
               "ratios": {"peak_over_echo": 0.6}, "idle_memory": {"journey": {"bytes_per_idle_table": 12_000}}}
    assert all(bench.meets_targets(results).values())
    results["think"] = bench.summary(report(0.82, 448.0, None, {**every, "delve": 0}))
    results["ratios"]["peak_over_echo"] = 0.1
    assert bench.meets_targets(results) == {
        "served_ratio": False, "p99_ms": False, "errors": True, "games_finished_every_type": False,
        "check_passed": False, "peak_over_echo": False, "bytes_per_idle_table": True}
