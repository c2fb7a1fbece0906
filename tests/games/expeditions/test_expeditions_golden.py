"""The recorded golden playthrough (heuristic bots, two seats, seed 7) replays to the same
events and the same views. Re-record after an intended rules change with:
PYTHONPATH=services python -m croupier.engine.playthrough record expeditions --seats 2 > tests/golden/expeditions.jsonl
"""

from __future__ import annotations

import json
from pathlib import Path

from croupier.engine.playthrough import check

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "expeditions.jsonl"


def test_golden_playthrough_replays_identically():
    with GOLDEN.open(encoding="utf-8") as fh:
        assert check(fh) is None


def test_golden_playthrough_is_a_complete_game_of_three_expeditions():
    lines = [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines()]
    types = [e["type"] for line in lines[1:] for e in line["events"]]
    assert types.count("ExpeditionDealt") == 3 and types.count("ExpeditionEnded") == 3
    assert types[-2:] == ["GameEnded", "TableEnded"]
