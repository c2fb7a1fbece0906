"""The operator's dispute commands (export, audit, replay, fork) given bad or unusual input,
or an output they cannot write: one line naming what is wrong and exit 2, never a traceback,
never exit 1 (an audit's fault), and nothing written half or lost."""

from __future__ import annotations

import errno
import io
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli_input import trap  # tests/unit is on sys.path

from croupier.cli.main import main
from croupier.engine import registry
from croupier.engine.selfplay import SelfplayReport, play_one

GAME = "journey"


def _game_log(seats: int = 2):
    spec = registry.get(GAME)
    table = play_one(spec, seats=seats, seat_bots=["random"] * seats, options=spec.parse_options({}), seed=5,
                     index=0, report=SelfplayReport(game=GAME), check_all_legal=False)
    return list(table.envelopes)


@pytest.fixture(scope="module")
def game_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("export") / "game.jsonl"
    path.write_text("".join(env.to_json() + "\n" for env in _game_log()), encoding="utf-8")
    return path


def one_line(err: str, *words: str) -> str:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and all(w in lines[0] for w in words), err
    return lines[0]


@pytest.fixture
def no_kafka(monkeypatch):
    """Bad input is refused before the log is read (or a replica asked)."""
    trap(monkeypatch, "croupier.rules.store.read_game", "croupier.rules.store.read_topic_games",
         "croupier.rules.client.RulesClient.call")


# -- an output that cannot be written ------------------------------------------------------------

# Exports from a file, as if from Kafka: `python -c SCRIPT LOG ARGV...`.
_FROM_FILE = """
import json, sys
import croupier.rules.store as store
from croupier.engine.envelope import Envelope
log = [Envelope.from_dict(json.loads(line)) for line in open(sys.argv[1], encoding="utf-8")]
store.read_game = lambda kafka, game_id, types: list(log)
from croupier.cli.main import main
sys.exit(main(sys.argv[2:]))
"""


def _croupier(argv: list[str], *, stdout=subprocess.PIPE, file_limit: int | None = None, log: Path | None = None):
    def limit():
        if file_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))

    cmd = [sys.executable, "-c", _FROM_FILE, str(log), *argv] if log else [sys.executable, "-m", "croupier.cli.main",
                                                                          *argv]
    return subprocess.run(cmd, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120, preexec_fn=limit)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("argv", [["audit", "--file", "{f}"], ["audit", "--file", "{f}", "--json"],
                                  ["audit", "--file", "{f}", "--all"], ["replay", "--file", "{f}", "--as", "0"],
                                  ["export", "g-1"]])
def test_a_standard_output_on_a_full_disk_is_one_line_and_exit_2_not_a_traceback_and_exit_1(game_file, argv):
    """`croupier audit --file F > report` on a full disk printed a traceback and exited 1, the
    code of an audit that found a fault; `export > file` the same."""
    argv = [a.format(f=game_file) for a in argv]
    with open("/dev/full", "w") as full:
        r = _croupier(argv, stdout=full, log=game_file if argv[0] == "export" else None)
    assert r.returncode == 2, r.stderr
    one_line(r.stderr, f"croupier {argv[0]}:", "cannot write the standard output", "No space left on device")


def test_a_reader_that_goes_away_is_still_exit_0(game_file):
    p = subprocess.Popen([sys.executable, "-m", "croupier.cli.main", "replay", "--file", str(game_file)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.read(10)
    p.stdout.close()  # `| head -c 10`
    assert p.wait(timeout=120) == 0
    assert p.stderr.read() == b""


def test_export_out_that_fails_midway_leaves_the_file_there_as_it_was_and_no_partial_one(game_file, tmp_path):
    """--out over an earlier export, on a disk that fills up (here a file size limit): it
    truncated the earlier export and left the first 4 KB of the new one, which later audits as
    a log cut short. Now: nothing written, the earlier file untouched, exit 2."""
    earlier = tmp_path / "earlier.jsonl"
    earlier.write_text("the earlier export\n", encoding="utf-8")
    new = tmp_path / "new.jsonl"
    for out in (earlier, new):
        r = _croupier(["export", "g-1", "--game", GAME, "--out", str(out)], file_limit=4096, log=game_file)
        assert r.returncode == 2, r.stderr
        one_line(r.stderr, "croupier export:", f"cannot write {out}", "nothing written")
    assert earlier.read_text(encoding="utf-8") == "the earlier export\n"
    assert not new.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["earlier.jsonl"]  # no temporary file left
    # And the same export with room: the whole game, the file's mode kept.
    earlier.chmod(0o640)
    r = _croupier(["export", "g-1", "--game", GAME, "--out", str(earlier)], log=game_file)
    assert r.returncode == 0, r.stderr
    assert earlier.read_text(encoding="utf-8") == game_file.read_text(encoding="utf-8")
    assert earlier.stat().st_mode & 0o777 == 0o640


def test_a_fork_whose_answer_cannot_be_printed_names_the_fork_it_made(monkeypatch, capsys, game_file):
    """The fork is made before its answer is printed: a full disk must not hide its id and
    command id (the only way to find it again, made once)."""
    import croupier.engine.envelope as envelope_mod

    log = [envelope_mod.Envelope.from_dict(json.loads(x)) for x in game_file.read_text().splitlines()]
    monkeypatch.setattr("croupier.rules.store.read_game", lambda kafka, game_id, types: list(log))

    class Answer:
        class result:  # noqa: N801
            version, duplicate = 7, False

    async def call(self, method, request, **kwargs):
        return Answer()

    monkeypatch.setattr("croupier.rules.client.RulesClient.call", call)

    class Full(io.StringIO):
        def write(self, text):
            raise OSError(errno.ENOSPC, "No space left on device")

    at = next(e.command_end for e in log[3:] if e.cause is not None)
    monkeypatch.setattr(sys, "stdout", Full())
    code = main(["fork", "g-1", "--at", str(at), "--game", GAME, "--rules", "127.0.0.1:1", "--command-id", "op-9"])
    assert code == 2
    line = one_line(capsys.readouterr().err, "croupier fork:", "cannot write the standard output")
    assert f"{GAME}-" in line and "--command-id op-9" in line, line


# -- export's flags ------------------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "words"), [
    # It exported every game of the type, the one named ignored.
    (["export", "g-1", "--all", "--game", GAME], ["give GAME_ID (g-1) or --all --game G, not both"]),
    # It exported the whole game, --since ignored.
    (["export", "g-1", "--since", "2026-01-01"], ["--since", "--all"]),
    # `--out "$OUT"` with OUT unset: it wrote the export to the terminal.
    (["export", "g-1", "--out", ""], ["--out is empty"]),
    # `--since "$SINCE"` with SINCE unset: it exported every game, from the beginning.
    (["export", "--all", "--game", GAME, "--since", ""], ["--since '' is not an ISO date"]),
])
def test_export_refuses_flags_it_would_have_ignored(capsys, no_kafka, argv, words):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    one_line(err, "croupier export:", *words)


# -- empty and impossible names ------------------------------------------------------------------


@pytest.mark.parametrize("argv", [["audit", "--file", ""], ["audit", "--all", "--file", ""],
                                  ["replay", "--file", ""]])
def test_an_empty_file_name_is_refused_not_taken_for_no_file(capsys, no_kafka, argv):
    """`audit --file ""` (`--file "$F"`, F unset) went to Kafka for game None: a TypeError
    traceback and exit 1, the code of a failed audit; replay said the events "cannot be
    replayed"."""
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    one_line(err, f"croupier {argv[0]}:", "--file is empty")


@pytest.mark.parametrize("command", [["audit"], ["replay"], ["export"], ["fork", "--at", "3"]])
@pytest.mark.parametrize(("game_id", "shown"), [("", "''"), ("a\nb", "'a\\nb'"), ("x" * 5000, "(5,000 characters)")])
def test_a_game_id_no_game_can_have_is_refused_before_kafka_is_scanned(capsys, no_kafka, command, game_id, shown):
    """No game has an empty id, one longer than the rules service takes (128), or one with a
    newline: Kafka was scanned for it (every game type's topic, ~2 s), and the message echoed
    all 5,000 characters, or broke its one line in two."""
    argv = [command[0], game_id, *command[1:]]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    line = one_line(err, f"croupier {command[0]}:", "is not a game id", shown)
    assert len(line) < 300, line


def test_a_file_of_many_games_names_them_and_their_events(capsys, no_kafka, game_file, tmp_path):
    """One line edited into another game's id makes a file of two games: which ones, and how
    many events each, shows it."""
    rows = [json.loads(x) for x in game_file.read_text().splitlines()]
    rows[5]["game_id"] = "other-game"
    edited = tmp_path / "edited.jsonl"
    edited.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    for command, what in (("audit", "audit them all with --all"), ("replay", "replay takes a file of one game")):
        assert main([command, "--file", str(edited)]) == 2
        out, err = capsys.readouterr()
        assert out == ""
        one_line(err, f"holds 2 games; {what}", f"({len(rows) - 1} events)", "other-game (1 event)")
    # With --all each is audited: both fail (a gap in one, a lone event in the other), exit 1.
    assert main(["audit", "--file", str(edited), "--all"]) == 1
    assert "0 of 2 games clean" in capsys.readouterr().out


@pytest.mark.parametrize("extra", [[], ["--all"]])
def test_a_file_of_another_game_type_than_game_says_is_refused(capsys, no_kafka, game_file, extra):
    """`--game virtues` with a file of journey audited the journey game clean, exit 0: the
    flag the operator gave to say what the file is was ignored."""
    assert main(["audit", "--file", str(game_file), "--game", "virtues", *extra]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    one_line(err, "croupier audit:", "--game virtues", f"a game of {GAME}")
    assert main(["replay", "--file", str(game_file), "--game", "virtues"]) == 2
    one_line(capsys.readouterr().err, "croupier replay:", "--game virtues", f"a game of {GAME}")
    assert main(["audit", "--file", str(game_file), "--game", GAME, *extra]) == 0  # the right one
