"""Whole games with bots, every step checked by the engine's selfplay (legal actions all
accepted, others refused, no hidden card in any view, replay equals live state, draws
re-derive from the seed)."""

from __future__ import annotations

import random

import pytest

from croupier.engine.selfplay import selfplay
from croupier.games.delve import SPEC
from croupier.games.delve.state import DESCEND
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


def test_the_heuristic_bot_lets_its_cast_vote_stand_instead_of_casting_it_again():
    # Casting the same vote again appends an event; through the gateway every such event made
    # the other seats' pending choices stale, and a two-seat vote could be held up for many
    # rounds. A seat whose vote stands now waits (None) until the vote closes.
    from delve_helpers import new, run

    from croupier.engine.table import TableHost
    from croupier.games.delve import commands as C
    from croupier.games.delve.bots import heuristic

    host = TableHost(SPEC)
    st = new(seats=2)

    def ask(state, seat):
        legal = [host.encode_action(a) for a in SPEC.legal_actions(state, seat)]
        return heuristic({"game": SPEC.view(state, seat)}, legal, random.Random(0)), legal

    first, legal = ask(st, 0)
    assert first in legal and first["type"] == "Vote"
    st, _ = run(st, C.Vote(seat=0, slot=first["slot"]))
    assert 0 in SPEC.to_act(st)  # may still change its vote ...
    again, legal = ask(st, 0)
    assert again is None and legal  # ... but keeps it
    other, _ = ask(st, 1)
    assert other is not None and other["type"] == "Vote"  # the seat that has not voted votes


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_heuristic_tables_never_cast_a_standing_vote_again(seats):
    from croupier.engine.selfplay import SelfplayReport, play_one

    report = SelfplayReport(game=SPEC.id)
    table = play_one(SPEC, seats=seats, seat_bots=["heuristic"] * seats, options=SPEC.parse_options({}), seed=5,
                     index=0, report=report, verify=False)
    assert report.errors == [] and report.finished == 1
    standing: dict[int, int] = {}
    casts = 0
    for env in table.log.read(table.game_id):
        if env.type in ("VoteOpened", "VoteRestarted"):
            standing = {}
        elif env.type == "VoteCast":
            seat, slot = env.payload["seat"], env.payload["slot"]
            assert standing.get(seat) != slot, f"seat {seat} cast its standing vote again"
            standing[seat] = slot
            casts += 1
    assert casts > 0


def test_parties_take_the_stairs_and_clear_whole_floors_for_the_bonus_market():
    """Rules version 3: the bonus market of a fully cleared floor is reached in play (under
    version 2, where the final row ended the floor, no heuristic game of 400 reached one), and
    parties also take the stairs with cards left."""
    import json

    from croupier.engine.playthrough import record

    bonus = stairs = 0
    for seats in (1, 2, 3, 4):
        for seed in (1, 2):
            for line in record(SPEC, seats, seed)[1:]:
                for e in json.loads(line)["events"]:
                    bonus += e["type"] == "MarketOpened" and e["payload"]["kind"] == "bonus"
                    stairs += e["type"] == "RouteChosen" and e["payload"]["slot"] == DESCEND
    assert bonus > 0 and stairs > 0, (bonus, stairs)
