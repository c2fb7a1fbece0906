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


def test_a_game_recorded_under_rules_version_1_replays_identically_under_it():
    """The upgrade to version 2 kept version 1: its recorded game (a trap window opened by
    EndTurn included) replays to the same events and views."""
    path = GOLDEN.with_name("nightfall-v1.jsonl")
    text = path.read_text(encoding="utf-8")
    assert '"rules_version":1' in text.splitlines()[0] and "TrapWindowOpened" in text
    assert check(text.splitlines()) is None


def test_the_host_offers_a_version_1_game_its_own_legal_actions():
    """A replica of today's rules asked for the legal actions of a game created under
    version 1 answers with version 1's (what its decide takes): at the step where version 1's
    EndTurn opened the trap window, no SetTrap from the main phase."""
    import json

    from croupier.engine.local import LocalTable
    from croupier.engine.selfplay import table_seed
    from croupier.engine.table import TableHost

    lines = GOLDEN.with_name("nightfall-v1.jsonl").read_text(encoding="utf-8").splitlines()
    head = json.loads(lines[0])
    v1 = SPEC.for_version(1)
    old = LocalTable(v1, f"golden-{SPEC.id}", head["seats"], head["options"], table_seed(head["seed"], 0, SPEC.id))
    host = TableHost(SPEC)
    checked = 0
    for raw in lines[1:]:
        step = json.loads(raw)
        if any(e["type"] == "TrapWindowOpened" for e in step["events"]):
            seat = step["seat"]
            offered = host.legal_actions(old.state, seat)
            assert offered == v1.legal_actions(old.state.game, seat)
            assert not any(a.TYPE == "SetTrap" for a in offered)
            assert any(a.TYPE == "SetTrap" for a in SPEC.legal_actions(old.state.game, seat))  # version 2 differs here
            checked += 1
        old.handle(old.host.commands.decode(step["command"], seat=step["seat"]), now=step["now"])
    assert checked
