"""`croupier loadtest`'s flags, checked before the run (exit 2 with a message naming them)."""

from __future__ import annotations

import pytest

from croupier.cli.main import main as croupier_main


def test_json_and_plot_naming_the_same_file_is_a_bad_flag(monkeypatch, tmp_path, capsys):
    """The PNG was written over the JSON report after the run: the report was lost, the exit
    code 0. Now it is refused before the run, whatever the spelling of the path."""
    import croupier_gateway.loadtest as loadtest

    ran = []
    monkeypatch.setattr(loadtest, "run", lambda *a, **k: ran.append(1) or (0, None))
    monkeypatch.chdir(tmp_path)
    code = croupier_main(["loadtest", "--tables", "2", "--duration", "1", "--json", "r.out",
                          "--plot", str(tmp_path / "." / "r.out")])
    assert code == 2 and not ran
    assert "--json and --plot name the same file" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def parsed(monkeypatch, argv):
    import croupier_gateway.loadtest as loadtest

    seen = {}
    monkeypatch.setattr(loadtest, "run", lambda cfg, **k: seen.update(cfg=cfg) or (0, None))
    code = croupier_main(["loadtest", "--duration", "5", *([] if "--tables" in argv else ["--tables", "2"]), *argv])
    return code, seen.get("cfg")


def test_a_ramp_asked_for_with_a_think_time_is_not_dropped(monkeypatch, capsys):
    """`--think-ms 2000 --ramp 30`: --stagger, on by default with a think time, opens every
    table before the run, so the ramp asked for was silently not done. A ramp given now turns
    the default stagger off; given with --stagger explicitly, it is a bad flag."""
    code, cfg = parsed(monkeypatch, ["--think-ms", "100", "--ramp", "2"])
    assert code == 0 and cfg.ramp_s == 2.0 and cfg.stagger is False
    code, cfg = parsed(monkeypatch, ["--think-ms", "100"])
    assert code == 0 and cfg.stagger is True  # the default stands without a ramp
    code, cfg = parsed(monkeypatch, ["--think-ms", "100", "--ramp", "2", "--stagger"])
    assert code == 2 and cfg is None
    assert "--ramp and --stagger do not go together" in capsys.readouterr().err


def test_workers_are_bounded(monkeypatch, capsys):
    """--workers 20000 (a slip for --tables) started twenty thousand Python processes before
    the run, each ~60 MB: the machine's memory gone before a table was opened. It is a bad
    flag now, as --tables and --duration past their bounds are."""
    with pytest.raises(SystemExit) as exc:
        parsed(monkeypatch, ["--workers", "20000"])
    assert exc.value.code == 2
    assert "argument --workers: must be at most 256 (each is a process of its own), not 20,000" in capsys.readouterr().err
    code, cfg = parsed(monkeypatch, ["--workers", "256", "--tables", "300"])
    assert code == 0 and cfg.workers == 256


def test_the_help_gives_every_exit_code(capsys):
    """--help named 0, 1, 2 and 75 but not the exit codes of an interrupted run, nor the
    other reasons for 1 (tables left running, a report not written)."""
    with pytest.raises(SystemExit):
        croupier_main(["loadtest", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "130/143/129: stopped by SIGINT/SIGTERM/SIGHUP" in text
    assert "tables the operator API did not force-end" in text and "--json/--plot not written" in text


def test_fewer_tables_than_games_plays_only_those_and_says_so(monkeypatch, capsys):
    """Tables go to the games in turn: `--game all --tables 3` played three of the five games,
    and the report listed all five, two of them with nothing finished as if tried and failed."""
    from croupier.engine import registry

    code, cfg = parsed(monkeypatch, ["--tables", "3"])
    assert code == 0 and cfg.games == tuple(registry.GAME_IDS[:3])
    err = capsys.readouterr().err
    assert f"--tables 3 is fewer than the {len(registry.GAME_IDS)} games of --game all" in err
    code, cfg = parsed(monkeypatch, ["--tables", str(len(registry.GAME_IDS))])
    assert code == 0 and cfg.games == tuple(registry.GAME_IDS) and "fewer than" not in capsys.readouterr().err


def test_the_seed_is_a_whole_number_of_ascii_digits(monkeypatch, capsys):
    """--seed took int()'s spellings ("３", "1_0"); a seed is written into the report for a run
    again, so it is plain digits, as every other number the load test takes."""
    with pytest.raises(SystemExit) as exc:
        parsed(monkeypatch, ["--seed", "３"])
    assert exc.value.code == 2 and "argument --seed" in capsys.readouterr().err
    code, cfg = parsed(monkeypatch, ["--seed", "42"])
    assert code == 0 and cfg.seed == 42
