"""SIGHUP: the terminal `croupier loadtest` ran in is gone (an ssh connection dropped), and
the hang-up reaches its whole process group, workers included. It ends the run as Ctrl-C
does: the workers are stopped by the parent (not killed by the hang-up, their tables with
them), the report is written, the tables left are force-ended, exit 129, nothing left
running. The workers play an in-process fake of the gateway (loadtest_fakes)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from test_loadtest_interrupt import alive_in_group

HERE = Path(__file__).parent


def test_a_hang_up_ends_the_run_as_ctrl_c_does(tmp_path):
    report_path = tmp_path / "r.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, str(HERE / "interrupted_run.py"), "fake_worker", "no-stagger",
                             str(report_path)], cwd=HERE, env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout.readline().strip() == "running"
        time.sleep(8)  # the workers started (spawned), their tables open and playing
        os.killpg(proc.pid, signal.SIGHUP)  # the terminal hangs up: every process of the group
        output, _ = proc.communicate(timeout=60)
        time.sleep(0.5)
        left = alive_in_group(proc.pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert "Traceback" not in output, output
    assert proc.returncode == 129, output
    assert not left, f"processes left behind: {left}"
    report = json.loads(report_path.read_text())
    assert report["interrupted"] == "SIGHUP"
    assert report["errors"] == 0, report["errors_by_kind"]  # no worker killed by the hang-up
    tables = report["tables"]
    ended = json.loads(Path(f"{report_path}.ended").read_text())
    assert tables["opened"] == tables["finished"] + tables["unfinished"] == 4
    assert len(set(ended)) == len(ended) == tables["unfinished"] == tables["force_ended"]
