"""The CLI's refusals that need no broker: one line on stderr, never a traceback, and the
exit code the README promises (2 bad input, 75 a service that does not answer)."""

from __future__ import annotations

import socket

import pytest

from croupier.cli.main import EXIT_UNAVAILABLE, main


def one_line(err: str, *words: str) -> None:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and all(w in lines[0] for w in words), err


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_replay_with_a_bad_setting_says_the_setting_not_that_the_log_cannot_be_replayed(monkeypatch, capsys):
    """ConfigError is a ValueError: replay's catch of codec errors took a bad setting for a
    fault of the log ("these events cannot be replayed")."""
    monkeypatch.setenv("CROUPIER_KAFKA_CONNECT_TIMEOUT_S", "abc")
    assert main(["replay", "g-1"]) == 2
    err = capsys.readouterr().err
    one_line(err, "CROUPIER_KAFKA_CONNECT_TIMEOUT_S")
    assert "cannot be replayed" not in err


def test_play_with_no_gateway_there_is_one_line_and_exit_75(capsys):
    for url in (f"http://127.0.0.1:{closed_port()}", f"grpc://127.0.0.1:{closed_port()}"):
        assert main(["play", "--game", "journey", "--gateway", url, "--moves", "1"]) == EXIT_UNAVAILABLE == 75
        out, err = capsys.readouterr()
        assert out == ""
        one_line(err, "croupier play:", "no gateway answers at", url)


@pytest.mark.parametrize("url", ["ftp://x", "127.0.0.1:18080", "http://", "http://[::1", "http://127.0.0.1:99999"])
def test_play_with_a_gateway_url_it_cannot_use_is_bad_input(capsys, url):
    assert main(["play", "--game", "journey", "--gateway", url]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    one_line(err, "croupier play:", "--gateway")


def test_play_says_what_is_wrong_with_its_arguments_on_stderr(capsys):
    assert main(["play", "--game", "nope"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "no game 'nope'" in err
    assert main(["play", "--game", "journey", "--option", "x"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "--option 'x' is not K=V" in err


@pytest.mark.parametrize("timeout", ["nan", "-5", "0", "inf", "soon"])
def test_stack_up_refuses_a_timeout_that_is_not_seconds_before_starting_anything(monkeypatch, capsys, timeout):
    """nan waited for ever; a negative wait stopped at once what `up` had just started."""

    def started(*args, **kwargs):
        raise AssertionError("stack up ran with --timeout " + timeout)

    monkeypatch.setattr("croupier.stack.up", started)  # never the machine's stack, even if the check is gone
    with pytest.raises(SystemExit) as exit_:
        main(["stack", "up", "--timeout", timeout])
    assert exit_.value.code == 2
    assert "--timeout" in capsys.readouterr().err


@pytest.mark.parametrize("action", ["up", "down", "status"])
def test_stack_with_a_bad_setting_exits_2_as_bad_input(monkeypatch, capsys, action):
    monkeypatch.setenv("CROUPIER_KAFKA_PORT", "abc")
    assert main(["stack", action]) == 2
    one_line(capsys.readouterr().err, "croupier stack:", "CROUPIER_KAFKA_PORT")
