"""Bad input to the CLI is refused before anything is made or dialled: one line naming what
was wrong and what is expected, exit 2, no traceback. No broker is needed: whatever would
start a service, dial a replica or create a table is replaced by a trap that fails the test."""

from __future__ import annotations

import asyncio
import io

import pytest

from croupier.cli.main import main


def one_line(err: str, *words: str) -> None:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and all(w in lines[0] for w in words), err


def usage_error(capsys, argv: list[str], *words: str) -> str:
    """argparse's refusal: exit 2, its last line naming the flag."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert all(w in last for w in words), err
    return last


def trap(monkeypatch, *targets: str) -> None:
    def refused(*args, **kwargs):
        raise AssertionError("bad input reached " + ", ".join(targets))

    for target in targets:
        monkeypatch.setattr(target, refused)


@pytest.fixture
def no_service(monkeypatch):
    """`croupier serve` never serves here, even if a check is gone."""
    trap(monkeypatch, "croupier.runtime.run", "croupier.projector.service.serve")


# -- 1. ports --------------------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "flag"), [
    (["serve", "gateway", "--port", "99999"], "--port"),
    (["serve", "gateway", "--grpc-port", "70000"], "--grpc-port"),
    (["serve", "gateway", "--port", "-5"], "--port"),
    (["serve", "gateway", "--port", "http"], "--port"),
    (["serve", "rules", "--game", "journey", "--port", "65536"], "--port"),
])
def test_a_port_flag_out_of_range_is_refused_not_wrapped(capsys, no_service, argv, flag):
    """99999 served on 34463 (the socket layer keeps the low 16 bits); -5 crashed."""
    usage_error(capsys, argv, flag, "0..65535")


@pytest.mark.parametrize(("var", "argv"), [
    ("CROUPIER_GATEWAY_PORT", ["serve", "gateway"]),
    ("CROUPIER_GATEWAY_GRPC_PORT", ["serve", "gateway"]),
    ("CROUPIER_GATEWAY_METRICS_PORT", ["serve", "gateway"]),
    ("CROUPIER_RULES_PORT", ["serve", "rules", "--game", "journey"]),
    ("CROUPIER_RULES_METRICS_PORT", ["serve", "rules", "--game", "journey"]),
    ("CROUPIER_PROJECTOR_METRICS_PORT", ["serve", "projector"]),
])
def test_a_port_setting_above_65535_is_refused_naming_the_variable(monkeypatch, capsys, no_service, var, argv):
    monkeypatch.setenv(var, "99999")
    assert main(argv) == 2
    one_line(capsys.readouterr().err, f"croupier {' '.join(argv[:2])}:", var, "65535")


def test_a_port_flag_in_range_is_still_taken(monkeypatch):
    from croupier.cli.main import build_parser

    args = build_parser().parse_args(["serve", "gateway", "--port", "0", "--grpc-port", "65535"])
    assert (args.port, args.grpc_port) == (0, 65535)


# -- 2. play ---------------------------------------------------------------------------------


@pytest.fixture
def no_table(monkeypatch):
    """`croupier play` neither asks a gateway nor creates a table here."""
    trap(monkeypatch, "croupier.cli.play._unanswered", "croupier_gateway.play.play")


@pytest.mark.parametrize(("argv", "words"), [
    (["--game", "expeditions", "--auto", "nosuch"], ["--auto 'nosuch'", "random, heuristic"]),
    (["--game", "expeditions", "--bots", "nosuch"], ["--bots 'nosuch'", "random, heuristic", "none"]),
    (["--table", "expeditions-abc", "--auto", "nosuch"], ["--auto 'nosuch'", "random, heuristic"]),
    (["--table", "nosuch-abc", "--auto", "random"], ["--table 'nosuch-abc'", "expeditions"]),
    (["--game", "expeditions", "--seats", "1"], ["--seats", "2 to 4 seats"]),
    (["--game", "expeditions", "--seats", "9"], ["--seats", "2 to 4 seats"]),
    (["--game", "expeditions", "--seat", "2"], ["--seat 2", "seats 0..1"]),
    (["--game", "expeditions", "--seats", "3", "--seat", "3"], ["--seat 3", "seats 0..2"]),
    (["--game", "expeditions", "--option", "nosuch=1"], ["--option", "no option nosuch"]),
])
def test_play_refuses_what_the_game_would_refuse_before_a_table_is_made(capsys, no_table, argv, words):
    """--auto nosuch created a table, joined its seats, then crashed (Rejection unknown_bot)."""
    assert main(["play", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    one_line(err, "croupier play:", *words)


@pytest.mark.parametrize(("flag", "value"), [("--seat", "-1"), ("--moves", "-1"), ("--seats", "0")])
def test_play_refuses_counts_below_their_minimum(capsys, no_table, flag, value):
    usage_error(capsys, ["play", "--game", "journey", flag, value], flag)


def test_play_takes_the_games_bots_and_none(monkeypatch, capsys):
    seen = {}

    async def answered(url):
        return None

    async def play(url, **kwargs):
        seen.update(kwargs)
        return 0

    monkeypatch.setattr("croupier.cli.play._unanswered", answered)
    monkeypatch.setattr("croupier_gateway.play.play", play)
    assert main(["play", "--game", "journey", "--bots", "none", "--auto", "heuristic", "--seats", "4", "--seat", "3",
                 "--gateway", "http://127.0.0.1:1"]) == 0
    assert (seen["bots"], seen["auto"], seen["seats"], seen["seat"]) == ("none", "heuristic", 4, 3)


def test_a_gateway_refusal_in_play_goes_to_stderr(monkeypatch):
    from croupier_gateway import play as play_module
    from croupier_gateway.client import GatewayError

    class Refusing:
        async def create_table(self, *args, **kwargs):
            raise GatewayError(400, "invalid_seats", "journey is for 1 to 4 seats")

        async def close(self):
            pass

    monkeypatch.setattr(play_module, "connect", lambda url: Refusing())
    out, err = io.StringIO(), io.StringIO()
    code = asyncio.run(play_module.play("http://x:1", game="journey", table=None, seat=None, seats=9, options={},
                                        name="p", bots=None, auto=None, out=out, err=err))
    assert code == 1 and out.getvalue() == ""
    one_line(err.getvalue(), "croupier play:", "400 invalid_seats")


# -- 5. demo ---------------------------------------------------------------------------------


@pytest.fixture
def no_demo(monkeypatch):
    trap(monkeypatch, "croupier_gateway.demo.main")


@pytest.mark.parametrize(("flag", "value"), [("--tables", "0"), ("--tables", "-3"), ("--tables", "1000000"),
                                             ("--pace", "-1"), ("--pace", "nan"), ("--pace", "inf")])
def test_demo_refuses_tables_and_pace_it_cannot_use(capsys, no_demo, flag, value):
    usage_error(capsys, ["demo", flag, value], flag)


def test_demo_refuses_a_gateway_port_setting_before_starting_anything(monkeypatch, capsys):
    """int("abc") crashed with a traceback."""
    monkeypatch.setattr("croupier_gateway.demo.stack_missing", lambda settings: None)
    trap(monkeypatch, "croupier_gateway.demo.Launcher")
    for value in ("abc", "99999"):
        monkeypatch.setenv("CROUPIER_GATEWAY_PORT", value)
        assert main(["demo"]) == 2
        one_line(capsys.readouterr().err, "croupier demo:", "CROUPIER_GATEWAY_PORT")


# -- 6. loadtest -----------------------------------------------------------------------------


@pytest.mark.parametrize(("var", "value", "argv"), [
    ("CROUPIER_GATEWAY_GRPC_PORT", "abc", []),
    ("CROUPIER_GATEWAY_PORT", "99999", []),
    ("CROUPIER_GATEWAY_PORT", "abc", ["--protocol", "http"]),
])
def test_loadtest_refuses_a_gateway_port_setting_as_bad_input_not_a_gateway_away(monkeypatch, capsys, var, value, argv):
    """Both were reported as "no gateway answers", exit 75."""
    trap(monkeypatch, "croupier_gateway.loadtest.run")
    monkeypatch.setenv(var, value)
    assert main(["loadtest", "--tables", "1", "--duration", "1", *argv]) == 2
    one_line(capsys.readouterr().err, "croupier loadtest:", var)


def test_loadtest_uses_no_port_setting_it_does_not_need(monkeypatch):
    seen = {}
    monkeypatch.setattr("croupier_gateway.loadtest.run", lambda cfg, **kw: (seen.setdefault("cfg", cfg), (0, None))[1])
    monkeypatch.setenv("CROUPIER_GATEWAY_GRPC_PORT", "abc")
    assert main(["loadtest", "--tables", "1", "--duration", "1", "--target", "h:1", "--http-target", "h:2"]) == 0
    assert (seen["cfg"].target, seen["cfg"].http_target) == ("h:1", "h:2")


@pytest.mark.parametrize(("flag", "value", "bound"), [("--tables", "1000001", "1,000,000"),
                                                      ("--duration", "86401", "86400")])
def test_loadtest_says_the_upper_bound(monkeypatch, capsys, flag, value, bound):
    trap(monkeypatch, "croupier_gateway.loadtest.run")
    args = {"--tables": "1", "--duration": "1", flag: value}
    usage_error(capsys, ["loadtest", *[x for kv in args.items() for x in kv]], flag, bound)
