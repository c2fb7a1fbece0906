"""Canonical JSON and the message codec: the bytes every hash is taken over."""

import json
from dataclasses import dataclass
from typing import ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from croupier.engine.codec import CodecError, MessageCodec, canonical_bytes, canonical_json
from croupier.engine.contract import Command, Event


@dataclass(frozen=True, kw_only=True)
class CardPlayed(Event):
    TYPE: ClassVar[str] = "CardPlayed"
    VERSION: ClassVar[int] = 2
    card: str
    path: tuple
    meta: dict


@dataclass(frozen=True, kw_only=True)
class PlayCard(Command):
    TYPE: ClassVar[str] = "PlayCard"
    card: str


def test_canonical_json_sorts_keys_has_no_spaces_and_keeps_utf8():
    assert canonical_json({"b": 1, "a": [1, "é"], "c": {"z": None, "y": True}}) == '{"a":[1,"é"],"b":1,"c":{"y":true,"z":null}}'


def test_a_message_refuses_nan_and_infinity_so_no_log_holds_them():
    codec = MessageCodec([CardPlayed])
    for bad in (float("nan"), float("inf"), -float("inf")):
        with pytest.raises(ValueError):
            codec.payload(CardPlayed(card="r5a", path=(1,), meta={"k": bad}))
    # Whatever a view holds, the canonical form is valid JSON (no NaN or Infinity tokens).
    assert json.loads(canonical_json({"x": float("nan")}), parse_constant=lambda c: pytest.fail(c)) == {"x": None}


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=30,
)
REFERENCE = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode


@settings(max_examples=400)
@given(JSON)
def test_canonical_json_is_byte_for_byte_the_standard_encoders_sorted_compact_utf8_form(value):
    # Every hash in the logs was taken over this form: a faster encoder must not change a byte.
    want = REFERENCE(value)
    assert canonical_json(value) == want
    assert canonical_bytes(value) == want.encode("utf-8")


def test_event_round_trips_with_lists_back_to_tuples():
    codec = MessageCodec([CardPlayed])
    event = CardPlayed(card="r5a", path=(1, (2, 3)), meta={"k": (1,)})
    payload = codec.payload(event)
    assert payload == {"card": "r5a", "path": [1, [2, 3]], "meta": {"k": [1]}}
    assert codec.decode_payload("CardPlayed", 2, payload) == event


def test_upcaster_lifts_an_old_version():
    codec = MessageCodec([CardPlayed], {("CardPlayed", 1): lambda p: {**p, "meta": {}}})
    assert codec.decode_payload("CardPlayed", 1, {"card": "x", "path": []}) == CardPlayed(card="x", path=(), meta={})


def test_missing_upcaster_and_newer_versions_are_errors():
    codec = MessageCodec([CardPlayed])
    with pytest.raises(CodecError, match="no upcaster"):
        codec.decode_payload("CardPlayed", 1, {"card": "x", "path": []})
    with pytest.raises(CodecError, match="newer"):
        codec.decode_payload("CardPlayed", 3, {"card": "x", "path": [], "meta": {}})


def test_command_seat_travels_outside_the_payload():
    codec = MessageCodec([PlayCard], seat_in_envelope=True)
    wire = codec.encode(PlayCard(seat=1, card="b3a"))
    assert wire == {"type": "PlayCard", "card": "b3a"}
    assert codec.decode(wire, seat=1) == PlayCard(seat=1, card="b3a")


@pytest.mark.parametrize("wire", [{}, {"type": 3}, {"type": "Nope"}, {"type": "PlayCard"}, {"type": "PlayCard", "card": "x", "extra": 1}, [1]])
def test_malformed_wire_is_a_codec_error(wire):
    codec = MessageCodec([PlayCard], seat_in_envelope=True)
    with pytest.raises(CodecError):
        codec.decode(wire, seat=0)


def test_two_messages_may_not_share_a_wire_name():
    @dataclass(frozen=True, kw_only=True)
    class Other(Event):
        TYPE: ClassVar[str] = "CardPlayed"

    with pytest.raises(ValueError):
        MessageCodec([CardPlayed, Other])
