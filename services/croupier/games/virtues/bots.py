"""Bots for virtues."""
from __future__ import annotations


def heuristic(view, legal, rng):
    return legal[rng.randrange(len(legal))]
