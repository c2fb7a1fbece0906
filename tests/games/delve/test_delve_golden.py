"""The golden playthrough: a recorded two-seat expedition replays to the same events and views.

Re-record (after a deliberate rules change) with
    PYTHONPATH=services python -m croupier.engine.playthrough record delve --seats 2 > tests/golden/delve.jsonl
"""

from __future__ import annotations

import json
from pathlib import Path

from croupier.engine.playthrough import check

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "delve.jsonl"


def test_the_golden_playthrough_replays_identically():
    with GOLDEN.open(encoding="utf-8") as fh:
        assert check(fh) is None


def test_the_golden_playthrough_is_a_whole_game_with_votes_and_rolls():
    lines = GOLDEN.read_text(encoding="utf-8").splitlines()
    head = json.loads(lines[0])
    assert head["game"] == "delve" and head["seats"] == 2
    types = {e["type"] for line in lines[1:] for e in json.loads(line)["events"]}
    assert {"ExpeditionStarted", "VoteCast", "RouteChosen", "DiceRolled", "TableEnded"} <= types
    assert GOLDEN.stat().st_size < 1_000_000
