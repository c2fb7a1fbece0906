"""Seat tokens: signed, expiring, bound to one table and seat; keys rotate without a cut."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from croupier_gateway.tokens import TokenError, TokenSigner, key_id

KEY = "k" * 32
NOW = 1_800_000_000


def test_round_trip_names_table_and_seat():
    signer = TokenSigner(KEY)
    token, claims = signer.issue("g-1", 2, 60, now=NOW)
    got = signer.verify(token, now=NOW + 59)
    assert (got.game_id, got.seat, got.exp, got.jti) == ("g-1", 2, NOW + 60, claims.jti)
    assert got.kid == key_id(KEY) and KEY not in token


def test_expired_token_is_refused():
    signer = TokenSigner(KEY)
    token, _ = signer.issue("g-1", 0, 60, now=NOW)
    with pytest.raises(TokenError, match="expired"):
        signer.verify(token, now=NOW + 60)


def test_tampered_payload_or_signature_is_refused():
    signer = TokenSigner(KEY)
    token, _ = signer.issue("g-1", 0, 60, now=NOW)
    body, sig = token.split(".")
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    payload["seat"] = 1
    forged = base64.urlsafe_b64encode(json.dumps(payload).encode()).rstrip(b"=").decode()
    with pytest.raises(TokenError):
        signer.verify(f"{forged}.{sig}", now=NOW)
    with pytest.raises(TokenError):
        signer.verify(f"{body}.{sig[:-2]}AA", now=NOW)


def test_other_key_is_refused_and_previous_key_still_verifies():
    old = TokenSigner("old-key-" + "x" * 20)
    token, _ = old.issue("g-1", 0, 60, now=NOW)
    with pytest.raises(TokenError, match="key"):
        TokenSigner(KEY).verify(token, now=NOW)
    rotated = TokenSigner(KEY, previous_key="old-key-" + "x" * 20)
    assert rotated.verify(token, now=NOW).seat == 0
    new_token, _ = rotated.issue("g-1", 1, 60, now=NOW)
    assert rotated.verify(new_token, now=NOW).kid == key_id(KEY)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=300), st.binary(max_size=200).map(lambda b: base64.urlsafe_b64encode(b).decode()),
                 st.tuples(st.text(max_size=50), st.text(max_size=50)).map(".".join)))
def test_garbage_raises_only_token_error(garbage):
    signer = TokenSigner(KEY)
    with pytest.raises(TokenError):
        signer.verify(garbage, now=NOW)
