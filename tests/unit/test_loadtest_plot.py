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



def _report() -> dict:
    rows = [{"t": t, "commands": 100 + t, "p50_ms": 5.0, "p99_ms": 20.0} for t in range(5)]
    return {"timeline": rows, "offered_moves_per_s": 120.0,
            "config": {"tables": 10, "protocol": "grpc", "think_ms": 0.0}}


def test_the_plot_is_written_whole_or_not_at_all(monkeypatch, tmp_path):
    """A savefig that fails midway (a full disk) wrote half a PNG over the file that was there;
    like the report, the plot now keeps that file and leaves no partial one behind. Its
    throughput axis starts at zero."""
    import matplotlib.figure

    from croupier_gateway.loadtest import plot

    path = tmp_path / "p.png"
    plot(_report(), str(path))
    first = path.read_bytes()
    assert first.startswith(b"\x89PNG") and list(tmp_path.iterdir()) == [path]
    seen = {}
    real = matplotlib.figure.Figure.savefig

    def half_then_full_disk(self, fname, **kw):
        seen["bottom"] = self.axes[0].get_ylim()[0]
        with open(fname, "wb") as handle:
            handle.write(b"\x89PNG half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", half_then_full_disk)
    try:
        plot(_report(), str(path))
    except OSError:
        pass
    else:
        raise AssertionError("the write's failure was not raised")
    finally:
        monkeypatch.setattr(matplotlib.figure.Figure, "savefig", real)
    assert path.read_bytes() == first and list(tmp_path.iterdir()) == [path]
    assert seen["bottom"] == 0
