"""Whole games with bots, every step checked by the engine's selfplay; the golden file."""

from __future__ import annotations

from pathlib import Path

from croupier.engine.playthrough import check
from croupier.engine.selfplay import selfplay
from croupier.games.nightfall import SPEC

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "nightfall.jsonl"
ALL_ON = {"withdraw_cost": 2, "deck_0": "defenders", "deck_1": "defenders", "max_rounds": 10}


def _clean(report):
    assert report.errors == [], report.errors[:5]
    assert report.finished == report.games


def test_random_bots_with_default_options():
    _clean(selfplay(SPEC, games=6, seed=1, check_all_legal=True))


def test_random_bots_with_every_option_changed():
    # Mirror decks exercise the no-duplicates rules across players; withdraw costs 2.
    _clean(selfplay(SPEC, games=6, seed=2, options=ALL_ON, check_all_legal=True))


def test_heuristic_bots():
    _clean(selfplay(SPEC, games=8, seed=3, bot="heuristic", check_all_legal=True))


def test_heuristic_beats_random():
    report = selfplay(SPEC, games=10, seed=4, seat_bots=["heuristic", "random"], check_all_legal=False)
    _clean(report)
    assert report.wins_by_bot["heuristic"] >= 8


def test_same_seed_gives_the_same_digest():
    a = selfplay(SPEC, games=2, seed=9, options={"max_rounds": 4})
    b = selfplay(SPEC, games=2, seed=9, options={"max_rounds": 4})
    c = selfplay(SPEC, games=2, seed=10, options={"max_rounds": 4})
    assert a.digest == b.digest != c.digest


def test_golden_playthrough_replays_identically():
    with GOLDEN.open(encoding="utf-8") as fh:
        assert check(fh) is None
