"""`croupier stack up|down` with a state directory that cannot be made (a file in its place,
a path under /proc): one line naming CROUPIER_STATE_DIR and exit 2, as for any setting that
cannot be used. It was a FileExistsError or FileNotFoundError traceback, exit 1."""

from __future__ import annotations

import pytest

from croupier.cli.main import main


@pytest.mark.parametrize("action", ["up", "down"])
@pytest.mark.parametrize("where", ["a-file", "under-a-file"])
def test_a_state_dir_that_cannot_be_made_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys, action, where):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    state = blocker if where == "a-file" else blocker / "state"
    monkeypatch.setenv("CROUPIER_STATE_DIR", str(state))
    for name, port in (("KAFKA_PORT", 27591), ("KAFKA_CONTROLLER_PORT", 27592), ("REDIS_PORT", 27593)):
        monkeypatch.setenv(f"CROUPIER_{name}", str(port))
    code = main(["stack", action])
    err = capsys.readouterr().err
    if action == "down" and where == "under-a-file":
        assert code == 0  # nothing there: nothing to stop, as for a state directory not made yet
        return
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("croupier stack: CROUPIER_STATE_DIR=") and str(state) in lines[0]
    assert blocker.read_text() == ""  # nothing written over it


def test_status_of_a_state_dir_that_is_a_file_or_holds_a_broken_pid_file_says_stopped(tmp_path, monkeypatch, capsys):
    """status only reads: a state dir that is a file (NotADirectoryError) or a pid file that is
    a directory (IsADirectoryError) was a traceback; it is a component not running, exit 3."""
    for name, port in (("KAFKA_PORT", 27591), ("KAFKA_CONTROLLER_PORT", 27592), ("REDIS_PORT", 27593)):
        monkeypatch.setenv(f"CROUPIER_{name}", str(port))
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    broken = tmp_path / "broken"
    (broken / "redis" / "redis.pid").mkdir(parents=True)
    for state in (blocker, broken):
        monkeypatch.setenv("CROUPIER_STATE_DIR", str(state))
        code = main(["stack", "status"])
        out = capsys.readouterr()
        assert code == 3 and "Traceback" not in out.err, out
        assert [line.split()[:2] for line in out.out.splitlines()[:2]] == [["kafka", "stopped"], ["redis", "stopped"]]
