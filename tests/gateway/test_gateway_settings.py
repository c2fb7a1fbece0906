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


def test_every_signing_key_published_in_the_repository_is_warned_about(monkeypatch):
    """The defaults of compose and of the k8s dev overlay are readable by anyone: a gateway
    started with one says its tokens are forgeable (a key of one's own does not)."""
    import re
    from pathlib import Path

    import structlog
    import yaml

    root = Path(__file__).resolve().parents[2]
    compose = (root / "deploy/compose.yaml").read_text()
    published = re.findall(r"CROUPIER_GATEWAY_SIGNING_KEY:-([^}]+)\}", compose)
    secret = yaml.safe_load((root / "k8s/overlays/dev/secret.yaml").read_text())
    published.append(secret["stringData"]["CROUPIER_GATEWAY_SIGNING_KEY"])
    assert len(published) == 2
    for key in [*published, "", KEY]:
        monkeypatch.setenv("CROUPIER_GATEWAY_SIGNING_KEY", key)
        with structlog.testing.capture_logs() as logs:
            settings = GatewaySettings.from_env()
        warned = any(e["event"] == "dev_signing_key" for e in logs)
        assert settings.dev_key is warned is (key != KEY), key
