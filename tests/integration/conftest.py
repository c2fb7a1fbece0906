"""Fixtures shared by the integration tests (the broker and Redis come from tests/conftest.py)."""

from __future__ import annotations

import uuid

import pytest


@pytest.fixture
def prefix(redis):
    """A prefix for this test's topics (Kafka allows [A-Za-z0-9._-]) and Redis keys, whose keys
    are deleted afterwards."""
    value = f"t{uuid.uuid4().hex[:10]}."
    yield value
    keys = list(redis.scan_iter(match=f"{value}*"))
    if keys:
        redis.delete(*keys)


@pytest.fixture
def services():
    """Services (harness.Service) a test starts: stopped at its end."""
    started = []
    yield started
    for svc in started:
        svc.stop()
