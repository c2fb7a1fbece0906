"""Whole games with bots, every step checked by the engine's selfplay; and exact legal actions."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from croupier.engine.contract import Context, Rejection, Start, sort_actions
from croupier.engine.playthrough import check
from croupier.engine.rng import FairRng
from croupier.engine.selfplay import selfplay
from croupier.games.virtues import SPEC
from croupier.games.virtues.cards import CATALOG
from croupier.games.virtues.commands import COMMANDS

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "virtues.jsonl"
ALL_ON = {"completions_to_win": 8, "special_cards": 10, "max_rounds": 30}


def _clean(report):
    assert report.errors == [], report.errors[:5]
    assert report.finished == report.games


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_selfplay_random_bots_every_seat_count(seats):
    _clean(selfplay(SPEC, games=2, seed=11, players=seats))


def test_selfplay_random_bots_every_option_on():
    _clean(selfplay(SPEC, games=3, seed=12, options=ALL_ON))


def test_selfplay_without_special_cards():
    _clean(selfplay(SPEC, games=2, seed=13, players=2, options={"special_cards": 0}))


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_selfplay_heuristic_bot(seats):
    _clean(selfplay(SPEC, games=2, seed=14, players=seats, bot="heuristic"))


def test_selfplay_same_seed_same_digest():
    a = selfplay(SPEC, games=2, seed=21, players=2, check_all_legal=False)
    b = selfplay(SPEC, games=2, seed=21, players=2, check_all_legal=False)
    c = selfplay(SPEC, games=2, seed=22, players=2, check_all_legal=False)
    assert a.digest == b.digest != c.digest


def test_heuristic_beats_random():
    report = selfplay(SPEC, games=8, seed=31, players=2, seat_bots=["heuristic", "random"], check_all_legal=False)
    _clean(report)
    assert report.wins_by_bot["heuristic"] >= 7


def _candidates(state, seat):
    """A superset of the legal moves: every command built from the ids and symbols in play
    (cards in hand, on any Array, looked at, on top of the discard pile and the deck)."""
    p = state.players[seat]
    cards = set(p.hand) | {c for s in p.array for c in s.covers if c} | set(state.turn.peek) | set(state.discard[-3:])
    cards |= {c for q in state.players for s in q.array for c in s.covers if c}
    cards.add(state.action_deck[0] if state.action_deck else "act-va-st-1")
    locs = {s.location for s in p.array} | set(state.display) | set(state.turn.peek) | {"loc-ben-nevis"}
    syms = CATALOG.symbols
    out = []
    for cls in COMMANDS:
        name = cls.TYPE
        if name in ("PlayAction", "MoveAction"):
            out += [cls(seat=seat, card=c, location=loc, symbol=s) for c in cards for loc in locs for s in syms]
        elif name == "PlaySpecial":
            for c in p.hand:
                out.append(cls(seat=seat, card=c))
                out += [cls(seat=seat, card=c, location=loc, symbol=s) for loc in locs for s in syms]
                out += [cls(seat=seat, card=c, target=t) for t in {*cards, *locs, *state.discard}]
                out += [cls(seat=seat, card=c, location=loc, target=t) for loc in locs for t in locs]
                out += [cls(seat=seat, card=c, location=loc, symbol="valour", target=t) for loc in locs for t in locs]
        elif name in ("ChooseCard", "DiscardCard"):
            out += [cls(seat=seat, card=c) for c in cards]
        elif name in ("TakeLocation", "ReturnLocation"):
            out += [cls(seat=seat, location=loc) for loc in locs]
        elif name == "ExchangeLocation":
            out += [cls(seat=seat, give=a, take=b) for a, b in itertools.product(locs, locs)]
        else:
            out.append(cls(seat=seat))
    return out


def test_legal_actions_are_exactly_the_commands_decide_accepts():
    rng = random.Random(4)
    for index in range(2):
        state = SPEC.initial_state(SPEC.parse_options({}), 2 + index)
        fair = FairRng(f"{index + 40:064x}", "", 0)
        for event in SPEC.decide(Start(), state, Context(rng=fair)):
            state = SPEC.evolve(state, event)
        steps = 0
        while not SPEC.is_over(state) and steps < 250:
            steps += 1
            seat = state.current
            legal = SPEC.legal_actions(state, seat)
            assert legal == sort_actions(legal)
            if steps % 8 == 0 or state.phase not in ("draw", "act"):
                accepted = set()
                for cmd in _candidates(state, seat):
                    try:
                        SPEC.decide(cmd, state, Context(rng=FairRng("00" * 32, "", 0)))
                    except Rejection:
                        continue
                    accepted.add(cmd)
                # every legal move is among the candidates, and decide accepts exactly those
                assert accepted == set(legal), (state.phase, accepted ^ set(legal))
            cmd = legal[rng.randrange(len(legal))]
            for event in SPEC.decide(cmd, state, Context(rng=fair)):
                state = SPEC.evolve(state, event)


def test_golden_playthrough_replays_identically():
    with GOLDEN.open(encoding="utf-8") as fh:
        assert check(fh) is None
