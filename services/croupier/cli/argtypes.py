"""argparse types shared by the sub-commands: a bad value is refused by argparse (one usage
line naming the flag and what it expects, exit 2) before the command does anything."""

from __future__ import annotations

import argparse
import math

from croupier.engine import registry
from croupier.numbers import parse_int

MAX_PORT = 65535


def port(text: str) -> int:
    """A port to listen on: 0..65535 (0: any free one)."""
    value = parse_int(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (a whole number 0..{MAX_PORT})")
    if not 0 <= value <= MAX_PORT:
        raise argparse.ArgumentTypeError(f"a port is 0..{MAX_PORT} (0: any free one), not {value}")
    return value


def address(text: str) -> str:
    """HOST:PORT of a service to dial: a host, and a port 1..65535."""
    host, sep, port_ = text.rpartition(":")
    number = parse_int(port_) if port_ == port_.strip() else None
    if not sep or not host or number is None or not 0 < number <= MAX_PORT:
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT with a port 1..{MAX_PORT} "
                                         "(for example 127.0.0.1:18081)")
    return text


def whole(low: int, high: int | None = None, what: str = ""):
    """An argparse type: a whole number of at least `low` (and at most `high`); `what` says
    what the upper bound is for."""

    def parse(text: str) -> int:
        value = parse_int(text)
        if value is None:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
        if value < low:
            raise argparse.ArgumentTypeError(f"must be {'at least 1' if low == 1 else f'{low} or more'}, not {value}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high:,}{what}, not {value:,}")
        return value

    return parse


def seconds(*, above_zero: bool, high: float | None = None, what: str = ""):
    """An argparse type: a finite number of seconds, at least 0 (more than 0 with
    above_zero), at most `high`."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
        if value < 0 or (above_zero and value == 0):
            raise argparse.ArgumentTypeError(f"must be {'more than' if above_zero else 'at least'} 0, not {text}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high:g}{what}, not {text}")
        return value

    return parse


def game(text: str) -> str:
    """A game type Croupier hosts."""
    if text not in registry.GAME_IDS:
        raise argparse.ArgumentTypeError(f"no game {text!r}; games are {', '.join(registry.GAME_IDS)}")
    return text
