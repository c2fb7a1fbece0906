"""Whole games with bots, every step checked by croupier.engine.selfplay (legal actions all
accepted and sorted, other seats refused, no hidden card in any view, replay = live state,
randomness re-derived from the seed). Counts are small to keep the suite fast: a random
game is long (about 2,000 commands); the 1,000-game runs are in docs/games/expeditions.md."""

from __future__ import annotations

import pytest

from croupier.engine.selfplay import selfplay
from croupier.games.expeditions import SPEC

EVERY_OPTION_ON = {
    "board": "gentle",
    "tile_spaces": "3,5,7,8,9",
    "vp_first_arrival_only": True,
    "artefact_table": "mild",
    "strict_start": True,
}


def _clean(report, games):
    assert report.errors == [], report.errors[:5]
    assert report.games == games and report.finished == games
    return report


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_random_bots_every_seat_count(seats):
    _clean(selfplay(SPEC, games=1, seed=seats, players=seats, check_all_legal=True), 1)


def test_heuristic_bots_every_seat_count():
    _clean(selfplay(SPEC, games=3, seed=11, bot="heuristic", check_all_legal=True), 3)


def test_every_option_on_heuristic_every_seat_count():
    _clean(selfplay(SPEC, games=3, seed=5, bot="heuristic", options=EVERY_OPTION_ON, check_all_legal=True), 3)


def test_every_option_on_random():
    _clean(selfplay(SPEC, games=1, seed=5, players=2, options=EVERY_OPTION_ON, check_all_legal=True), 1)


def test_sparse_tile_layout_and_strict_start():
    _clean(selfplay(SPEC, games=1, seed=6, players=3, bot="heuristic",
                    options={"tile_spaces": "2,4,7,9", "strict_start": True}, check_all_legal=True), 1)


def test_heuristic_beats_random():
    report = _clean(selfplay(SPEC, games=4, seed=3, players=2, seat_bots=["heuristic", "random"],
                             check_all_legal=False), 4)
    assert report.wins_by_bot["heuristic"] >= 3
    assert report.score_sum_by_bot["heuristic"] > 3 * report.score_sum_by_bot["random"]


def test_same_seed_same_digest():
    one = selfplay(SPEC, games=1, seed=42, bot="heuristic", players=2)
    two = selfplay(SPEC, games=1, seed=42, bot="heuristic", players=2)
    other = selfplay(SPEC, games=1, seed=43, bot="heuristic", players=2)
    assert one.digest == two.digest != other.digest
