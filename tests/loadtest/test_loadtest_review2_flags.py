"""`croupier loadtest`'s flags, checked before the run (exit 2 with a message naming them)."""

from __future__ import annotations

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
