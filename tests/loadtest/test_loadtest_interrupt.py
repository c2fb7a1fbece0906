"""SIGINT (Ctrl-C, which reaches the whole process group) or SIGTERM of `croupier loadtest`
mid-run and during its --stagger warm-up: it stops promptly, reports what it measured (the
figures adding up), force-ends the tables it leaves, exits 130 / 143 and leaves no worker
process behind. The workers play an in-process fake of the gateway (loadtest_fakes)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def alive_in_group(pgid: int) -> list[str]:
    """The processes of a process group that are not zombies."""
    left = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            left.append(text.split(")", 1)[0] + ")")
    return left


@pytest.mark.parametrize("worker, stagger", [("fake_worker", "no-stagger"), ("fake_worker_stuck", "stagger")],
                         ids=["mid-run", "in-the-warm-up"])
@pytest.mark.parametrize("sig, to_group, code", [(signal.SIGINT, True, 130), (signal.SIGTERM, False, 143)],
                         ids=["ctrl-c", "sigterm"])
def test_an_interrupted_load_test_stops_reports_and_force_ends_its_tables(tmp_path, worker, stagger, sig, to_group,
                                                                          code):
    report_path = tmp_path / "r.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, str(HERE / "interrupted_run.py"), worker, stagger, str(report_path)],
                            cwd=HERE, env=env, start_new_session=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdout.readline().strip() == "running"
        time.sleep(8)  # the workers started (spawned), their tables open and playing (or stuck warming up)
        if to_group:
            os.killpg(proc.pid, sig)  # Ctrl-C in a terminal: every process of the foreground group
        else:
            os.kill(proc.pid, sig)  # `kill PID`: the load test alone
        sent = time.monotonic()
        output, _ = proc.communicate(timeout=60)
        took = time.monotonic() - sent
        time.sleep(0.5)
        left = alive_in_group(proc.pid)
    finally:  # nothing of the test's left running, whatever happened
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert "Traceback" not in output, output
    assert proc.returncode == code, output
    assert took < 30, f"stopped {took:.0f} s after the signal"
    assert not left, f"processes left behind: {left}"
    report = json.loads(report_path.read_text())
    assert report["interrupted"] == sig.name
    tables = report["tables"]
    ended = json.loads(Path(f"{report_path}.ended").read_text())
    assert tables["opened"] == tables["finished"] + tables["unfinished"] == 4  # games of 10**9 moves: none ends
    assert len(set(ended)) == len(ended) == tables["unfinished"] == tables["force_ended"]
    assert report["errors"] == 0
    assert report["commands"] == sum(k["count"] for k in report["by_kind"].values()) == sum(
        r["commands"] for r in report["timeline"])
    if stagger == "stagger":
        assert report["commands"] == 0 and report["stagger"] is not None and report["timeline"] == []
    else:
        assert report["commands"] > 0 and report["elapsed_s"] < 60
    assert report["check"]["passed"] is None and report["check"]["skipped"] == "interrupted"
    assert "check       none: the run was interrupted" in output
