"""`python -m croupier.engine.playthrough` (the golden files' tool, which docs/operations tells
to run after a deliberate view change): its refusals are one line and an exit code, never a
traceback, and a refused rehash leaves the file as it was."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from croupier.engine.playthrough import main

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "journey.jsonl"


def test_a_rehash_whose_events_changed_is_refused_in_one_line_the_file_left_as_it_was(tmp_path, capsys):
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()
    step = json.loads(lines[5])
    step["events"][0]["payload"]["forged"] = 1
    lines[5] = json.dumps(step)
    path = tmp_path / "journey.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = path.read_bytes()
    assert main(["rehash", str(path)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "the events changed" in err
    assert path.read_bytes() == before


def test_a_missing_file_and_an_unknown_game_are_one_line_and_exit_2(tmp_path, capsys):
    assert main(["check", str(tmp_path / "nope.jsonl")]) == 2
    assert main(["rehash", str(tmp_path / "nope.jsonl")]) == 2
    assert main(["record", "nope"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 3


def test_a_rehash_that_changes_nothing_keeps_the_file_and_its_mode(tmp_path, capsys):
    path = tmp_path / "journey.jsonl"
    shutil.copy(GOLDEN, path)
    path.chmod(0o640)
    assert main(["rehash", str(path)]) == 0
    assert "0 of" in capsys.readouterr().out
    assert path.read_bytes() == GOLDEN.read_bytes() and path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["journey.jsonl"]  # no temporary file left
