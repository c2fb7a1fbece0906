"""Bad input to the CLI is refused before anything is made or dialled: one line naming what
was wrong and what is expected, exit 2, no traceback. No broker is needed: whatever would
start a service, dial a replica or create a table is replaced by a trap that fails the test."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest

from croupier.cli.main import main
from croupier.engine import registry
from croupier.engine.selfplay import SelfplayReport, play_one


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


@pytest.mark.parametrize("rules", ["127.0.0.1:99999", "127.0.0.1:0", "127.0.0.1", "nohost"])
def test_fork_refuses_a_rules_address_that_is_not_host_port(monkeypatch, capsys, rules):
    """--rules 127.0.0.1:99999 dialled 34463."""
    trap(monkeypatch, "croupier.rules.store.read_game", "croupier.rules.client.RulesClient.call")
    usage_error(capsys, ["fork", "journey-1", "--at", "3", "--rules", rules], "--rules", "HOST:PORT")


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


# -- 3. an unknown game for the log commands -------------------------------------------------


@pytest.mark.parametrize("argv", [["audit", "g-1"], ["replay", "g-1"], ["fork", "g-1", "--at", "3"],
                                  ["export", "--all"]])
def test_the_log_commands_refuse_an_unknown_game_at_once(monkeypatch, capsys, argv):
    """It scanned Kafka for 3.6 s, then said "no events"."""
    trap(monkeypatch, "croupier.rules.store.read_game", "croupier.rules.store.read_topic_games")
    usage_error(capsys, [*argv, "--game", "nosuch"], "--game", "no game 'nosuch'", *registry.GAME_IDS)


# -- 4. fork: the step, checked on the log already read ----------------------------------------


def _game_log(game: str = "journey"):
    spec = registry.get(game)
    table = play_one(spec, seats=2, seat_bots=["random", "random"], options=spec.parse_options({}), seed=5,
                     index=0, report=SelfplayReport(game=game), check_all_legal=False)
    return list(table.envelopes)


@pytest.fixture
def origin(monkeypatch):
    """A game's log, read from no Kafka; no rules replica is dialled."""
    log = _game_log()
    monkeypatch.setattr("croupier.rules.store.read_game", lambda kafka, game_id, types: list(log))
    trap(monkeypatch, "croupier.rules.client.RulesClient.call", "croupier.cli.replay._replicas")
    return log


def test_fork_past_the_end_of_the_log_is_refused_before_a_replica_is_asked(capsys, origin):
    last = origin[-1].seq
    assert main(["fork", "journey-1", "--at", str(last + 1), "--game", "journey", "--rules", "127.0.0.1:1"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    one_line(err, "croupier fork:", f"1..{last}")


def test_fork_inside_one_commands_events_is_refused_naming_where_it_may_fork(capsys, origin):
    head = next(e for e in origin if e.cause is not None and e.command_end > e.seq)
    at = head.seq + 1
    assert main(["fork", "journey-1", "--at", str(at), "--game", "journey", "--rules", "127.0.0.1:1"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    one_line(err, "croupier fork:", f"seq {at} is inside the events of one command",
             f"fork at {head.seq - 1} or {head.command_end}")


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


# -- smaller: the log commands name themselves; --help describes every flag -------------------


@pytest.mark.parametrize("command", ["audit", "replay"])
def test_the_log_commands_name_themselves_in_their_errors(tmp_path: Path, capsys, command):
    assert main([command, "--file", str(tmp_path / "none.jsonl")]) == 2
    one_line(capsys.readouterr().err, f"croupier {command}:", "does not exist")


@pytest.mark.parametrize(("argv", "flag"), [(["replay"], "--json"), (["audit"], "--json"), (["status"], "--json"),
                                            (["fork"], "--at")])
def test_help_describes_the_flag(capsys, argv, flag):
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.strip().startswith(flag))
    assert line.split(flag, 1)[1].replace("SEQ", "").strip(), out  # words after the flag: its description


def test_a_bad_setting_is_told_in_the_commands_name(monkeypatch, capsys):
    monkeypatch.setenv("CROUPIER_KAFKA_CONNECT_TIMEOUT_S", "abc")
    trap(monkeypatch, "croupier.rules.store.read_game")
    assert main(["replay", "g-1"]) == 2
    one_line(capsys.readouterr().err, "croupier replay:", "CROUPIER_KAFKA_CONNECT_TIMEOUT_S")
