"""A turn clock of 0 (off) sent as text, as gRPC carries every option ("0", "000"), is the
clock off. Before, its digits with the leading zeros taken off were "" and int("") raised
ValueError out of parse_options: a CreateGame over gRPC asking for no clock was answered
`command_not_understood` (a decide_failed traceback in the log), and `croupier play --option
turn_clock_ms=0` failed with the traceback."""

from __future__ import annotations

import pytest

from croupier.engine import registry
from croupier.engine.table import TURN_CLOCK_MS, TableHost


@pytest.mark.parametrize("raw", ["0", "000", " 0 ", "0" * 40])
def test_a_clock_of_zero_as_text_is_no_clock(raw):
    host = TableHost(registry.get("expeditions"))
    parsed = host.parse_options({TURN_CLOCK_MS: raw})
    assert TURN_CLOCK_MS not in parsed
    assert parsed == host.parse_options({TURN_CLOCK_MS: 0})
    state = host.fold(host.create("g", 2, {TURN_CLOCK_MS: raw}, "ab" * 32, now=0))
    assert state.clock_ms == 0


@pytest.mark.parametrize("raw, ms", [("01000", 1000), ("86400000", 86_400_000), ("000086400000", 86_400_000)])
def test_a_clock_as_text_with_leading_zeros_is_its_number(raw, ms):
    host = TableHost(registry.get("expeditions"))
    assert host.parse_options({TURN_CLOCK_MS: raw})[TURN_CLOCK_MS] == ms
