"""The projector's feed message (croupier.projector.feed): what a gateway decodes is exactly
what the projector wrote, whatever the views contain; anything else is not taken for one."""

from __future__ import annotations

import json

from croupier.engine.codec import canonical_json
from croupier.projector import feed


def test_a_message_decodes_to_the_views_it_was_made_of():
    views = {
        "spectator": canonical_json({"note": "two\nlines", "name": "Zoë ☃", "sep": "\u2028"}),
        "0": canonical_json({"hand": ["a", "b"], "text": "tab\there"}),
        "actions:0": "[]",
        "1": canonical_json({"hand": None}),
        "actions:1": canonical_json([{"type": "Play", "card": "x\ny"}]),
    }
    data = feed.encode(42, "running", views).encode("utf-8")  # what Redis delivers
    assert feed.version_of(data) == 42
    got = feed.decode(data)
    assert got is not None and got.version == 42 and got.status == "running"
    assert {k.decode(): v.decode() for k, v in got.fields.items()} == views
    assert json.loads(got.fields[b"spectator"])["note"] == "two\nlines"


def test_other_payloads_are_not_taken_for_a_views_message():
    for data in (b"12", b"seats", b"", b"views/1", b"views/1\nx\nrunning", b"views/2\n3\nrunning"):
        assert feed.version_of(data) is None, data
    assert feed.decode(b"12") is None
    assert feed.decode(b"views/1\nx\nrunning") is None
    assert feed.decode(b"views/1\n3\nrunning\nspectator") is None  # a field without its value
    assert feed.decode(b"views/1\n3\nover") == feed.FeedViews(3, "over", {})
