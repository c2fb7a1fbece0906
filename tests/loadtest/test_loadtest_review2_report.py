"""The report's files: written whole or not at all, and a write that fails is told (exit 1),
not a traceback after the run; bench/common.write the same for the results of record."""

from __future__ import annotations

import errno
import importlib.util
import json
from pathlib import Path

from croupier_gateway import loadtest
from croupier_gateway.loadtest import Config, run

BENCH = Path(__file__).resolve().parents[2] / "bench"


def disk_fills_halfway(monkeypatch, module, name):
    """`module.name` (json.dump, Path.write_text) writes half of what it is given, then the
    disk is full."""
    real = getattr(module, name)

    def half(*args, **kwargs):
        if name == "dump":
            obj, handle = args[0], args[1]
            handle.write(json.dumps(obj)[:20])
        else:
            path, text = args[0], args[1]
            real(path, text[:20], **{k: v for k, v in kwargs.items() if k == "encoding"})
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(module, name, half)


def test_a_report_that_cannot_be_written_is_told_and_the_one_before_is_kept(monkeypatch, tmp_path, capsys):
    """The disk full as --json is written: the run ended in an OSError traceback, with half a
    report over the one that was there. Now the report there stays whole, the failure is
    told, exit 1."""
    final = {"type": "final", "kinds": {}, "games": {}, "errors": {}, "refusals": {}, "rate_limited": 0,
             "opened": 0, "finished": {}, "failed": 0, "unfinished": [], "samples": []}
    monkeypatch.setattr(loadtest, "run_workers", lambda cfg, **k: ([final], loadtest.Timeline(), 1.0))

    async def fine(cfg):
        return None

    monkeypatch.setattr(loadtest, "preflight", fine)
    monkeypatch.setattr(loadtest, "operator_token_refused", fine)
    path = tmp_path / "r.json"
    path.write_text('{"report_version": 1, "before": true}\n')
    disk_fills_halfway(monkeypatch, loadtest.json, "dump")
    cfg = Config(games=("journey",), tables=1, duration_s=1.0, workers=1, progress=False, check=0)
    code, report = run(cfg, json_path=str(path))
    assert code == 1 and report is not None
    assert json.loads(path.read_text()) == {"report_version": 1, "before": True}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]  # nothing half-written left
    captured = capsys.readouterr()
    assert f"could not write --json {path} (No space left on device)" in captured.err
    assert "throughput" in captured.out  # the report itself was printed


def test_a_benchmarks_results_are_written_whole_or_not_at_all(monkeypatch, tmp_path):
    """bench/common.write wrote the results of record in place: a benchmark killed (or a disk
    full) as it wrote left a results file cut short, which the table cannot read."""
    spec = importlib.util.spec_from_file_location("bench_common_review2", BENCH / "common.py")
    common = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(common)
    monkeypatch.setenv("CROUPIER_BENCH_RESULTS", str(tmp_path))
    common.write("engine", {"games": {"journey": {"commands_per_s": 1}}})
    before = (tmp_path / "engine.json").read_text()
    disk_fills_halfway(monkeypatch, Path, "write_text")
    try:
        common.write("engine", {"games": {"journey": {"commands_per_s": 2}}})
    except OSError:
        pass
    assert (tmp_path / "engine.json").read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["engine.json"]


def test_the_report_gives_the_seed(monkeypatch):
    """The bots' choices and the think times follow --seed: a report without it could not be
    run again as it was."""
    final = {"type": "final", "kinds": {}, "games": {}, "errors": {}, "refusals": {}, "rate_limited": 0,
             "opened": 0, "finished": {}, "failed": 0, "unfinished": [], "samples": []}
    cfg = Config(games=("journey",), tables=1, duration_s=1.0, seed=1234)
    report = loadtest.build_report(cfg, [final], loadtest.Timeline(), 1.0)
    assert report["config"]["seed"] == 1234


def test_the_check_and_the_force_end_say_what_they_do(monkeypatch, capsys):
    """After the run, the check (up to 180 s) and the force-end (up to 120 s) went on in
    silence after the last progress line: a load test that looked hung, and a second Ctrl-C
    to it leaves the tables running."""
    final = {"type": "final", "kinds": {}, "games": {}, "errors": {}, "refusals": {}, "rate_limited": 0,
             "opened": 3, "finished": {"journey": 1}, "failed": 0,
             "unfinished": [["journey-a", "journey"], ["journey-b", "journey"]],
             "samples": [["journey-c", "journey", ["t"]]]}
    monkeypatch.setattr(loadtest, "run_workers", lambda cfg, **k: ([final], loadtest.Timeline(), 1.0))

    async def fine(cfg):
        return None

    async def checked(cfg, sample):
        return {"sampled": 1, "audit_ok": 1, "projection_ok": 1, "passed": True, "games": []}

    async def ended(cfg, unfinished):
        return len(unfinished), 0

    monkeypatch.setattr(loadtest, "preflight", fine)
    monkeypatch.setattr(loadtest, "operator_token_refused", fine)
    monkeypatch.setattr(loadtest, "check_games", checked)
    monkeypatch.setattr(loadtest, "force_end", ended)
    cfg = Config(games=("journey",), tables=2, duration_s=1.0, workers=1, operator_token="a-token")
    code, _ = run(cfg)
    assert code == 0
    err = capsys.readouterr().err
    assert "checking 1 finished game(s)" in err and "force-ending the 2 table(s) left" in err


def test_a_report_path_that_is_a_link_is_written_through(monkeypatch, tmp_path):
    """`--json latest.json`, a symbolic link to the run's file: written whole (a file then
    renamed) must still land where the link points, the link kept."""
    final = {"type": "final", "kinds": {}, "games": {}, "errors": {}, "refusals": {}, "rate_limited": 0,
             "opened": 0, "finished": {}, "failed": 0, "unfinished": [], "samples": []}
    monkeypatch.setattr(loadtest, "run_workers", lambda cfg, **k: ([final], loadtest.Timeline(), 1.0))

    async def fine(cfg):
        return None

    monkeypatch.setattr(loadtest, "preflight", fine)
    monkeypatch.setattr(loadtest, "operator_token_refused", fine)
    (tmp_path / "runs").mkdir()
    real = tmp_path / "runs" / "r1.json"
    real.write_text("{}")
    link = tmp_path / "latest.json"
    link.symlink_to(real)
    cfg = Config(games=("journey",), tables=1, duration_s=1.0, workers=1, progress=False, check=0)
    code, _ = run(cfg, json_path=str(link))
    assert code == 0
    assert link.is_symlink() and json.loads(real.read_text())["report_version"] == 1
