"""The gateway refuses to start on a signing key too short to be a secret, the key being
rotated out included, rather than sign or accept tokens anyone could forge."""

from __future__ import annotations

import pytest

from croupier.rules.settings import SettingsError
from croupier_gateway.settings import GatewaySettings

KEY = "k" * 16


def test_keys_of_16_characters_are_taken(monkeypatch):
    monkeypatch.setenv("CROUPIER_GATEWAY_SIGNING_KEY", KEY)
    monkeypatch.setenv("CROUPIER_GATEWAY_PREVIOUS_SIGNING_KEY", "p" * 16)
    s = GatewaySettings.from_env()
    assert (s.signing_key, s.previous_signing_key) == (KEY, "p" * 16)


def test_no_previous_key_is_none(monkeypatch):
    monkeypatch.setenv("CROUPIER_GATEWAY_SIGNING_KEY", KEY)
    monkeypatch.delenv("CROUPIER_GATEWAY_PREVIOUS_SIGNING_KEY", raising=False)
    assert GatewaySettings.from_env().previous_signing_key == ""


@pytest.mark.parametrize("name", ["CROUPIER_GATEWAY_SIGNING_KEY", "CROUPIER_GATEWAY_PREVIOUS_SIGNING_KEY"])
def test_a_short_key_is_refused_and_named(monkeypatch, name):
    monkeypatch.setenv("CROUPIER_GATEWAY_SIGNING_KEY", KEY)
    monkeypatch.setenv(name, "short-key")
    with pytest.raises(SettingsError, match=name):
        GatewaySettings.from_env()
