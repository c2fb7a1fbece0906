"""Whole games in process with every check of croupier.engine.selfplay: zero errors for
every seat count, every option on, both bots, and the same seed giving the same digest."""

import pytest

from croupier.engine.selfplay import selfplay
from croupier.games.journey import SPEC

ALL_ON = {"allies": True, "return_journey": True, "companions": True}


@pytest.mark.parametrize("seats", [1, 2, 3, 4])
def test_random_selfplay_has_no_errors(seats):
    report = selfplay(SPEC, games=8, seed=seats, players=seats, check_all_legal=True)
    assert report.errors == [], report.errors[:3]
    assert report.finished == 8


@pytest.mark.parametrize("seats", [1, 2, 3, 4])
def test_random_selfplay_with_every_option_on_has_no_errors(seats):
    report = selfplay(SPEC, games=6, seed=100 + seats, players=seats, options=ALL_ON, check_all_legal=True)
    assert report.errors == [], report.errors[:3]


@pytest.mark.parametrize("seats", [1, 2, 3, 4])
def test_heuristic_selfplay_with_every_option_on_has_no_errors(seats):
    # The heuristic reaches Primrose Hill, so these games walk the Return Journey too.
    report = selfplay(SPEC, games=2, seed=200 + seats, players=seats, bot="heuristic", options=ALL_ON,
                      check_all_legal=True)
    assert report.errors == [], report.errors[:3]


def test_heuristic_selfplay_without_options_has_no_errors():
    report = selfplay(SPEC, games=4, seed=300, bot="heuristic", check_all_legal=True)
    assert report.errors == [], report.errors[:3]


def test_same_seed_same_digest_and_another_seed_another():
    a = selfplay(SPEC, games=4, seed=9, check_all_legal=False)
    b = selfplay(SPEC, games=4, seed=9, check_all_legal=False)
    c = selfplay(SPEC, games=4, seed=10, check_all_legal=False)
    assert a.digest == b.digest != c.digest


def test_the_heuristic_does_better_than_random():
    heuristic = selfplay(SPEC, games=12, seed=5, players=2, bot="heuristic", check_all_legal=False)
    random = selfplay(SPEC, games=12, seed=5, players=2, bot="random", check_all_legal=False)
    h, r = heuristic.as_dict()["results"], random.as_dict()["results"]
    assert h["win_rate_by_bot"]["heuristic"] > r["win_rate_by_bot"]["random"] + 0.2
    assert h["avg_score_by_bot"]["heuristic"] > r["avg_score_by_bot"]["random"]
