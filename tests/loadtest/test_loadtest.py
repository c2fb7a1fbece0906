"""`croupier loadtest` for real: short runs against a real stack (Kafka, Redis, a rules replica
per game, the projector and the gateway), over gRPC and over HTTP + WebSocket, and its flags."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from croupier.cli.main import main as croupier_main
from e2e_helpers import OPERATOR_TOKEN

ROOT = Path(__file__).resolve().parents[2]
KIND_FIELDS = ("count", "p50_ms", "p95_ms", "p99_ms", "max_ms", "mean_ms")


def loadtest(stack, tmp_path, name: str, *args: str, token: str | None) -> tuple[subprocess.CompletedProcess, dict]:
    report = tmp_path / f"{name}.json"
    env = {**os.environ, "CROUPIER_KAFKA_BOOTSTRAP": stack.kafka, "CROUPIER_TOPIC_PREFIX": stack.prefix,
           "PYTHONPATH": os.pathsep.join([str(ROOT / "services"), str(ROOT / "gateway"), os.environ.get("PYTHONPATH", "")])}
    env.pop("CROUPIER_OPERATOR_TOKEN", None)
    if token:
        env["CROUPIER_OPERATOR_TOKEN"] = token
    done = subprocess.run([sys.executable, "-m", "croupier.cli.main", "loadtest", *args, "--json", str(report)],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert report.exists(), f"no report\nstdout:\n{done.stdout}\nstderr:\n{done.stderr[-3000:]}"
    return done, json.loads(report.read_text())


def check_consistent(report: dict, games: tuple[str, ...]) -> None:
    for key in ("config", "commands", "moves", "throughput_per_s", "moves_per_s", "latency", "by_kind", "by_game",
                "errors", "errors_by_kind", "refusals", "rate_limited", "tables", "games_finished", "check",
                "timeline", "duration_s", "elapsed_s", "offered_moves_per_s", "served_ratio", "report_version"):
        assert key in report, key
    assert report["errors"] == 0 and report["errors_by_kind"] == {}, report["errors_by_kind"]
    # Every command is counted once: in one kind, in one game, in one second of the timeline.
    assert report["commands"] > 0
    assert report["commands"] == sum(k["count"] for k in report["by_kind"].values())
    assert report["commands"] == sum(g["count"] for g in report["by_game"].values())
    assert report["commands"] == sum(row["commands"] for row in report["timeline"])
    assert report["commands"] == report["latency"]["count"]
    assert report["moves"] == report["commands"] - report["by_kind"]["create_table"]["count"] \
        - report["by_kind"]["join_seat"]["count"]
    assert set(report["by_game"]) == set(games)
    for summary in [report["latency"], *report["by_kind"].values(), *report["by_game"].values()]:
        assert set(KIND_FIELDS) <= set(summary)
        assert 0 < summary["p50_ms"] <= summary["p95_ms"] <= summary["p99_ms"] <= summary["max_ms"]
    # Tables: every opened one either finished or was cut short by the time.
    tables = report["tables"]
    assert tables["finished"] >= 1
    assert tables["finished"] == sum(report["games_finished"].values())
    assert tables["opened"] == tables["finished"] + tables["unfinished"]
    assert tables["opened"] >= report["config"]["tables"]
    assert tables["failed"] == 0 and tables["force_end_failed"] == 0
    # A table being played holds a slot: never more of them than --tables.
    assert all(row["tables_running"] <= report["config"]["tables"] for row in report["timeline"])
    assert set(report["games_finished"]) == set(games)
    # The sample of finished games: audit clean, projection equals replay.
    check = report["check"]
    assert check["passed"], check
    assert 1 <= check["sampled"] == check["audit_ok"] == check["projection_ok"] == len(check["games"])
    assert all(g["events"] > 0 and g["problem"] is None for g in check["games"])


@pytest.mark.integration
def test_loadtest_every_game_over_grpc(stack_services, tmp_path):
    """Every game type over gRPC; no operator token, so the sample's logs are read from Kafka."""
    done, report = loadtest(stack_services, tmp_path, "grpc", "--game", "all", "--tables", "10", "--duration", "15",
                            "--ramp", "2", "--protocol", "grpc", "--target", stack_services.grpc_address,
                            "--bot", "random", "--workers", "2", "--think-ms", "20", "--no-stagger",
                            # one seat where a game allows it (journey, delve): short games, so some finish
                            "--seats", "1", token=None)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    check_consistent(report, stack_services.games)
    assert report["config"]["protocol"] == "grpc" and report["config"]["workers"] == 2
    assert {g["source"] for g in report["check"]["games"]} == {"kafka"}
    assert report["tables"]["force_ended"] == 0  # no operator token: nothing is force-ended
    assert report["offered_moves_per_s"] == pytest.approx(10 * 1000 / 20)
    # The live progress line, once a second, on stderr; the report on stdout.
    assert "cmd/s" in done.stderr and "p99" in done.stderr and "tables running" in done.stderr
    assert "throughput" in done.stdout and "check       passed" in done.stdout


@pytest.mark.integration
def test_staggered_start_sees_games_end_in_a_run_shorter_than_a_game(stack_services, tmp_path):
    """With a think time, tables first play to a random point of their first game, unmeasured,
    so a run shorter than a whole game (two-seat journeys: ~85 moves at 100 ms = ~8 s; the run
    is 6 s) still sees games end, as a live platform does. The warm-up is reported apart and
    none of its commands is in the figures."""
    launched = time.time()
    done, report = loadtest(stack_services, tmp_path, "stagger", "--game", "journey", "--tables", "12",
                            "--duration", "6", "--think-ms", "100", "--seats", "2", "--workers", "2",
                            "--target", stack_services.grpc_address, token=None)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    # The measured run's wall-clock span comes after the warm-up: what a sampler alongside
    # (bench/loadtest.py's CPU figures) must average, and not the full-speed warm-up.
    start, end = report["window_unix"]
    assert end - start == pytest.approx(6.0)
    assert launched + report["stagger"]["seconds"] <= start + 1 and end <= time.time()
    assert report["config"]["stagger"] is True
    warm = report["stagger"]
    assert warm["moves"] > 0 and warm["errors"] == 0 and warm["errors_by_kind"] == {} and warm["seconds"] > 0
    assert warm["finished"] >= 0  # games that ended in the warm-up: not among games_finished
    check_consistent(report, ("journey",))
    assert report["games_finished"]["journey"] >= 1
    # Measured moves are at most what 12 tables can ask in 6 s at >= 50 ms a move: the
    # warm-up's moves (played with no think time) are not among them.
    assert report["moves"] <= 12 * 6 / 0.05
    assert "warm-up moves" in done.stdout and "stagger:" in done.stderr


@pytest.mark.integration
def test_an_operator_token_the_gateway_refuses_stops_the_run_before_it_starts(stack_services, tmp_path):
    """Checked first, not found after a whole run whose unfinished tables it then cannot end."""
    import httpx

    def opened() -> int:
        return httpx.get(f"{stack_services.http_url}/v1/operator/games", params={"limit": 1},
                         headers=stack_services.operator_headers).json()["total"]  # every game in the listings

    before = opened()
    env = {**os.environ, "CROUPIER_KAFKA_BOOTSTRAP": stack_services.kafka, "CROUPIER_TOPIC_PREFIX": stack_services.prefix,
           "PYTHONPATH": os.pathsep.join([str(ROOT / "services"), str(ROOT / "gateway"), os.environ.get("PYTHONPATH", "")])}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "croupier.cli.main", "loadtest", "--game", "journey", "--tables", "2",
                           "--duration", "30", "--protocol", "http",
                           "--target", stack_services.http_url.removeprefix("http://"),
                           "--operator-token", "not-the-token"],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr[-2000:]
    assert "refuses the operator token" in done.stderr and "Traceback" not in done.stderr
    assert time.monotonic() - started < 30  # not after the 30 s run
    assert opened() == before  # no table was opened


def test_loadtest_over_http_with_operator(stack_services, tmp_path):
    """HTTP + WebSocket with an operator token: the sample's logs come from the gateway's export,
    and the tables the time cut short are force-ended (none is left running)."""
    import httpx

    def running() -> set[str]:
        games = httpx.get(f"{stack_services.http_url}/v1/operator/games",
                          params={"game_type": "journey", "status": "running", "limit": 100},
                          headers=stack_services.operator_headers).json()["games"]
        return {g["game_id"] for g in games}

    before = running()  # tables other tests left running (without an operator token)
    png = tmp_path / "run.png"
    # Solo journeys with the random bot: ~8 moves a game, so games finish even on a loaded machine.
    done, report = loadtest(stack_services, tmp_path, "http", "--game", "journey", "--tables", "4", "--duration", "10",
                            "--protocol", "http", "--target", stack_services.http_url.removeprefix("http://"),
                            "--seats", "1", "--bot", "random", "--workers", "1", "--plot", str(png),
                            token=OPERATOR_TOKEN)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    check_consistent(report, ("journey",))
    assert {g["source"] for g in report["check"]["games"]} == {"gateway-export"}
    assert report["tables"]["force_ended"] == report["tables"]["unfinished"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert running() <= before  # this run left none of its tables running

    # The check compares, it does not just report: alter a checked game's projected spectator
    # view in Redis, and the same check fails on it (while the audit of its log still passes).
    import asyncio

    import redis

    from croupier_gateway.loadtest import Config, check_games

    game_id = report["check"]["games"][0]["game_id"]
    r = redis.Redis.from_url(stack_services.redis_url)
    key = f"{stack_services.prefix}g:{{{game_id}}}:views"
    view = json.loads(r.hget(key, "spectator"))
    view["tampered"] = True
    r.hset(key, "spectator", json.dumps(view))
    cfg = Config(games=("journey",), tables=1, duration_s=1, protocol="http",
                 target=stack_services.http_url.removeprefix("http://"),
                 http_target=stack_services.http_url.removeprefix("http://"), operator_token=OPERATOR_TOKEN)
    result = asyncio.run(check_games(cfg, [(game_id, "journey", [])]))
    assert result["passed"] is False
    (row,) = result["games"]
    assert row["audit_ok"] and not row["projection_ok"]
    assert "spectator" in row["problem"]


@pytest.mark.parametrize("argv, message", [
    (["--duration", "5"], "--tables"),
    (["--tables", "3"], "--duration"),
    (["--tables", "0", "--duration", "5"], "at least 1"),
    (["--tables", "x", "--duration", "5"], "not a whole number"),
    (["--tables", "3", "--duration", "0"], "more than 0"),
    (["--tables", "3", "--duration", "5", "--game", "poker"], "no game 'poker'"),
    (["--tables", "3", "--duration", "5", "--protocol", "smoke"], "invalid choice"),
    (["--tables", "3", "--duration", "5", "--bot", "genius"], "invalid choice"),
    (["--tables", "3", "--duration", "5", "--think-ms", "-1"], "at least 0"),
    (["--tables", "3", "--duration", "5", "--workers", "0"], "at least 1"),
    (["--tables", "3", "--duration", "5", "--target", "localhost"], "HOST:PORT"),
    (["--tables", "3", "--duration", "5", "--target", "127.0.0.1:99999"], "HOST:PORT"),
    (["--tables", "3", "--duration", "5", "--json", "/no/such/dir/r.json"], "no directory"),
    # Found before the run, not when the report is written after it.
    (["--tables", "3", "--duration", "5", "--json", "/tmp"], "argument --json: cannot write '/tmp': it is a directory"),
    (["--tables", "3", "--duration", "5", "--json", ""], "argument --json: cannot write ''"),
    (["--tables", "3", "--duration", "5", "--json", "/sys/r.json"], "argument --json: cannot write '/sys/r.json'"),
    (["--tables", "3", "--duration", "5", "--plot", "/tmp"], "argument --plot: cannot write '/tmp': it is a directory"),
    (["--tables", "3", "--duration", "5", "--plot", "/sys/r.png"], "argument --plot: cannot write"),
    # A think time so small that the offered load is infinite (JSON has no Infinity).
    (["--tables", "3", "--duration", "5", "--think-ms", "1e-320"], "argument --think-ms: must be 0 (no think time) or at least"),
    (["--tables", "3", "--duration", "5", "--think-ms", "inf"], "argument --think-ms"),
    (["--tables", "3", "--duration", "5", "--ramp", "9"], "--ramp"),
    (["--tables", "3", "--duration", "5", "--frobnicate"], "unrecognized arguments"),
])
def test_bad_flags_exit_2_with_a_clear_error(argv, message, capsys):
    try:
        code = croupier_main(["loadtest", *argv])
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    assert message in capsys.readouterr().err


def test_defaults():
    from croupier.cli.main import build_parser

    args = build_parser().parse_args(["loadtest", "--tables", "2", "--duration", "1"])
    assert (args.game, args.protocol, args.bot, args.think_ms, args.ramp) == ("all", "grpc", "heuristic", 0.0, 0.0)
    assert args.target is None  # resolved to 127.0.0.1:$CROUPIER_GATEWAY_GRPC_PORT (18081), make run's gateway


def run_parsed(monkeypatch, argv: list[str]):
    """The Config and the paths `croupier loadtest` hands to the run (which is not started)."""
    import croupier_gateway.loadtest as loadtest

    seen = {}

    def fake_run(cfg, *, json_path=None, plot_path=None):
        seen.update(cfg=cfg, json_path=json_path, plot_path=plot_path)
        return 0, None

    monkeypatch.setattr(loadtest, "run", fake_run)
    assert croupier_main(["loadtest", "--tables", "2", "--duration", "1", *argv]) == 0
    return seen


def test_report_paths_are_expanded_before_they_are_used(monkeypatch, tmp_path):
    """`--json=~/r.json` reaches no shell: the path checked is the path written."""
    monkeypatch.setenv("HOME", str(tmp_path))
    seen = run_parsed(monkeypatch, ["--json=~/r.json", "--plot=~/r.png"])
    assert (seen["json_path"], seen["plot_path"]) == (str(tmp_path / "r.json"), str(tmp_path / "r.png"))
    assert list(tmp_path.iterdir()) == []  # checked, not written


def test_the_http_target_is_the_targets_host(monkeypatch):
    """With gRPC, the operator API is the HTTP port of the same gateway: --target's host, not
    this machine."""
    monkeypatch.setenv("CROUPIER_GATEWAY_PORT", "18080")
    assert run_parsed(monkeypatch, ["--target", "10.1.2.3:18081"])["cfg"].http_target == "10.1.2.3:18080"
    assert run_parsed(monkeypatch, ["--target", "[::1]:18081"])["cfg"].http_target == "[::1]:18080"
    assert run_parsed(monkeypatch, ["--protocol", "http", "--target", "10.1.2.3:9000"])["cfg"].http_target \
        == "10.1.2.3:9000"
    assert run_parsed(monkeypatch, ["--target", "10.1.2.3:18081", "--http-target", "10.9.9.9:80"])["cfg"].http_target \
        == "10.9.9.9:80"


def test_no_gateway_is_a_clear_error(capsys):
    from croupier_gateway.launcher import free_port

    code = croupier_main(["loadtest", "--tables", "2", "--duration", "1", "--target", f"127.0.0.1:{free_port()}"])
    assert code == 75  # nothing ran: try again later, as for every command whose service does not answer
    assert "no gateway answers grpc at 127.0.0.1:" in capsys.readouterr().err


def test_an_operator_host_that_does_not_answer_is_exit_75(monkeypatch, capsys):
    """As for --target: nothing was run, try again later (2 is for a token it refuses)."""
    import croupier_gateway.loadtest as loadtest
    from croupier_gateway.launcher import free_port
    from croupier_gateway.loadtest import Config, run

    async def fine(cfg):
        return None

    monkeypatch.setattr(loadtest, "preflight", fine)
    cfg = Config(games=("journey",), tables=1, duration_s=1.0, operator_token="a-token",
                 http_target=f"127.0.0.1:{free_port()}")
    code, report = run(cfg)
    assert (code, report) == (75, None)
    assert "no gateway answers HTTP at 127.0.0.1:" in capsys.readouterr().err
