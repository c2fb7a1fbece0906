"""Integers typed by people and programs (options, settings, flags, the terminal player's
answer) are ASCII digits: Python's int() also takes other scripts' digits, a plus sign and
underscores, and str.isdigit() passes digits int() then refuses ("²"), which crashed the
callers that checked with it."""

from __future__ import annotations

import argparse
import asyncio
import io

import pytest

from croupier.cli import argtypes
from croupier.cli.replay import _seq
from croupier.config import ConfigError, Env, GcSettings
from croupier.engine.contract import OptionSpec, Rejection
from croupier.numbers import parse_int

NOT_OURS = ["３", "٣", "²", "+3", "1_000", "3.0", "0x10", "", " ", "--3", "3-", "1e3"]


def test_parse_int_takes_ascii_digits_and_a_minus() -> None:
    assert [parse_int(t) for t in ("0", "42", "-7", " 12 ", "007")] == [0, 42, -7, 12, 7]
    assert all(parse_int(t) is None for t in NOT_OURS)
    assert parse_int("9" * 4000) == int("9" * 4000)
    assert parse_int("9" * 4001) is None  # past what int() converts without raising


@pytest.mark.parametrize("text", NOT_OURS)
def test_a_game_option_is_refused_unless_it_is_ascii_digits(text: str) -> None:
    spec = OptionSpec("rounds", 3, "how many rounds", minimum=1, maximum=9)
    with pytest.raises(Rejection) as exc:
        spec.parse(text)
    assert exc.value.code == "invalid_option" and "rounds" in exc.value.message
    assert spec.parse("4") == 4 and spec.parse(" 5 ") == 5


@pytest.mark.parametrize("text", ["１０", "+10", "1_0", "²"])
def test_a_setting_is_refused_unless_it_is_ascii_digits(text: str) -> None:
    with pytest.raises(ConfigError, match="CROUPIER_PARTITIONS"):
        Env({"CROUPIER_PARTITIONS": text}).int("PARTITIONS", 8)


@pytest.mark.parametrize("text", ["²,1,1", "２０,1,1", "+20,1,1"])
def test_a_gc_threshold_of_other_digits_is_a_config_error_not_a_crash(text: str) -> None:
    with pytest.raises(ConfigError, match="CROUPIER_GC_THRESHOLD"):
        GcSettings.from_env({"CROUPIER_GC_THRESHOLD": text})


@pytest.mark.parametrize("parse", [argtypes.port, argtypes.whole(1), _seq])
@pytest.mark.parametrize("text", ["８０", "+80", "8_0", "²"])
def test_a_flag_is_refused_unless_it_is_ascii_digits(parse, text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        parse(text)


@pytest.mark.parametrize("text", ["127.0.0.1:８０", "127.0.0.1:²", "127.0.0.1:+80", "127.0.0.1: 80"])
def test_an_address_with_a_port_of_other_digits_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        argtypes.address(text)
    assert argtypes.address("127.0.0.1:80") == "127.0.0.1:80"


def test_the_terminal_player_asks_again_after_an_answer_of_other_digits() -> None:
    from croupier_gateway.client import Update
    from croupier_gateway.play import choose

    update = Update(version=3, view={"status": "playing"}, actions=[{"type": "a"}, {"type": "b"}])
    out = io.StringIO()
    picked = asyncio.run(choose(update, None, None, io.StringIO("²\n２\n2\n"), out))
    assert picked == {"type": "b"}
    assert out.getvalue().count("pick a number from the list") == 2
