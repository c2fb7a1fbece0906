"""`croupier loadtest --plot` where matplotlib cannot be loaded: a bad flag before the run
(exit 2), not a traceback after it; and a plot that fails after the run leaves the report
written and exits 1 with a message."""

from __future__ import annotations

import json
import sys

from croupier.cli.main import main as croupier_main


def test_plot_without_matplotlib_is_a_bad_flag_before_the_run(monkeypatch, tmp_path, capsys):
    import croupier_gateway.loadtest as loadtest

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib: ImportError
    started = []
    monkeypatch.setattr(loadtest, "run", lambda cfg, **kw: started.append(cfg) or (0, None))
    code = croupier_main(["loadtest", "--tables", "1", "--duration", "1", "--plot", str(tmp_path / "p.png")])
    assert code == 2 and not started
    assert "--plot needs matplotlib" in capsys.readouterr().err


def test_a_plot_that_fails_after_the_run_keeps_the_report(monkeypatch, tmp_path, capsys):
    import croupier_gateway.loadtest as loadtest
    from croupier_gateway.loadtest import Config, Timeline, run

    async def fine(cfg):
        return None

    final = {"type": "final", "kinds": {}, "games": {}, "errors": {}, "refusals": {}, "rate_limited": 0,
             "opened": 0, "finished": {}, "failed": 0, "unfinished": [], "samples": []}
    monkeypatch.setattr(loadtest, "preflight", fine)
    monkeypatch.setattr(loadtest, "operator_token_refused", fine)
    monkeypatch.setattr(loadtest, "run_workers", lambda cfg, **k: ([final], Timeline(), 1.0))

    def broken(report, path):
        raise RuntimeError("no backend")

    monkeypatch.setattr(loadtest, "plot", broken)
    cfg = Config(games=("journey",), tables=1, duration_s=1.0, workers=1, progress=False, check=0)
    code, report = run(cfg, json_path=str(tmp_path / "r.json"), plot_path=str(tmp_path / "p.png"))
    assert code == 1
    assert json.loads((tmp_path / "r.json").read_text())["commands"] == 0
    assert "could not draw --plot" in capsys.readouterr().err

