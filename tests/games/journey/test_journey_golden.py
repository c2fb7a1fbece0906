"""Golden playthroughs: recorded games that must replay to the same events and views.

journey.jsonl:             python -m croupier.engine.playthrough record journey --seats 2 --seed 1
journey-all-options.jsonl: the same with allies, return_journey and companions on (recorded with
                           croupier.engine.playthrough.record(SPEC, 2, 1, options=...)).
"""

import json
from pathlib import Path

import pytest

from croupier.engine.playthrough import check

GOLDEN = Path(__file__).resolve().parents[2] / "golden"


@pytest.mark.parametrize("name", ["journey.jsonl", "journey-all-options.jsonl"])
def test_golden_playthrough_replays_to_the_same_events_and_views(name):
    with (GOLDEN / name).open(encoding="utf-8") as fh:
        assert check(fh) is None


def test_all_options_golden_walks_the_return_journey():
    text = (GOLDEN / "journey-all-options.jsonl").read_text(encoding="utf-8")
    head = json.loads(text.splitlines()[0])
    assert head["options"] == {"allies": True, "companions": True, "return_journey": True, "satchel_limit": 5}
    for event in ("CompanionJoined", "PurseFormed", "TollPaid", "RuinSalvaged", "DestinationReached"):
        assert f'"type":"{event}"' in text
