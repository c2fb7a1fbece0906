"""Whole games with bots, every step checked by the engine's selfplay (legal actions all
accepted, others refused, no hidden card in any view, replay equals live state, draws
re-derive from the seed)."""

from __future__ import annotations

import pytest

from croupier.engine.selfplay import selfplay
from croupier.games.delve import SPEC
from croupier.games.delve.views import describe


@pytest.mark.parametrize("seats, games", [(1, 5), (2, 3), (3, 2), (4, 2)])
def test_random_bots_play_whole_games_without_errors(seats, games):
    report = selfplay(SPEC, games=games, seed=11, players=seats, check_all_legal=True)
    assert report.errors == []
    assert report.finished == games


def test_every_option_set_plays_without_errors():
    report = selfplay(SPEC, games=4, seed=12, options={"vote_seconds": 5}, check_all_legal=True)
    assert report.errors == [] and report.finished == 4


@pytest.mark.parametrize("seats", [1, 2, 3])
def test_the_heuristic_bot_plays_whole_games_without_errors(seats):
    report = selfplay(SPEC, games=2, seed=13, players=seats, bot="heuristic", check_all_legal=False)
    assert report.errors == [] and report.finished == 2


def test_mixed_bots_at_one_table():
    report = selfplay(SPEC, games=2, seed=14, players=2, seat_bots=["heuristic", "random"], check_all_legal=False)
    assert report.errors == []


def test_the_same_seed_gives_the_same_digest():
    a = selfplay(SPEC, games=3, seed=21, check_all_legal=False)
    b = selfplay(SPEC, games=3, seed=21, check_all_legal=False)
    c = selfplay(SPEC, games=3, seed=22, check_all_legal=False)
    assert a.digest == b.digest != c.digest


def test_the_heuristic_bot_does_better_than_random_solo():
    games = 12
    smart = selfplay(SPEC, games=games, seed=31, players=1, bot="heuristic", check_all_legal=False)
    dumb = selfplay(SPEC, games=games, seed=31, players=1, bot="random", check_all_legal=False)
    smart_score = smart.score_sum_by_bot["heuristic"] / games
    dumb_score = dumb.score_sum_by_bot["random"] / games
    assert smart_score > dumb_score + 10
    assert smart.wins_by_bot["heuristic"] > dumb.wins_by_bot["random"]


def test_every_event_of_a_game_has_words():
    from croupier.engine.local import LocalTable
    from croupier.engine.selfplay import SelfplayReport, play_one

    report = SelfplayReport(game="delve")
    table = play_one(SPEC, seats=2, seat_bots=["heuristic", "heuristic"], options=SPEC.parse_options({}), seed=5,
                     index=0, report=report, check_all_legal=False)
    assert isinstance(table, LocalTable)
    names = set()
    for env in table.envelopes:
        event = table.host.decode_event(env)
        if type(event) in SPEC.events:
            text = describe(event)
            assert text and text != type(event).__name__
            names.add(env.type)
    assert {"ExpeditionStarted", "DiceRolled", "RouteChosen"} <= names
