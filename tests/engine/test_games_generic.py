"""Checks every registered game must pass, whatever its rules.

Selfplay with hypothesis-chosen seeds and seat counts (see croupier.engine.selfplay for the
per-step checks), a golden playthrough, determinism of the digest, and option validation.
"""

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from croupier.engine import registry
from croupier.engine.contract import Rejection
from croupier.engine.playthrough import check, rehash_views
from croupier.engine.selfplay import selfplay

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
GAMES = list(registry.GAME_IDS)


@pytest.mark.parametrize("game_id", GAMES)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_selfplay_with_random_seeds_and_seat_counts_has_no_errors(game_id, data):
    spec = registry.get(game_id)
    seats = data.draw(st.integers(spec.min_seats, spec.max_seats), label="seats")
    seed = data.draw(st.integers(0, 2**31), label="seed")
    bot = data.draw(st.sampled_from(["random", *spec.bots]), label="bot")
    report = selfplay(spec, games=1, seed=seed, players=seats, bot=bot)
    assert report.errors == []
    assert report.finished == 1


@pytest.mark.parametrize("game_id", GAMES)
def test_same_seed_same_digest_other_seed_other_digest(game_id):
    spec = registry.get(game_id)
    a = selfplay(spec, games=3, seed=11, check_all_legal=False)
    b = selfplay(spec, games=3, seed=11, check_all_legal=False)
    c = selfplay(spec, games=3, seed=12, check_all_legal=False)
    assert a.digest == b.digest
    assert a.digest != c.digest


@pytest.mark.parametrize("game_id", GAMES)
def test_every_option_on_still_plays_clean(game_id):
    spec = registry.get(game_id)
    options = {o.name: True for o in spec.options if isinstance(o.default, bool)}
    report = selfplay(spec, games=spec.max_seats - spec.min_seats + 1, seed=5, options=options)
    assert report.errors == [], report.errors[:3]


@pytest.mark.parametrize("game_id", GAMES)
def test_a_boolean_option_takes_the_same_value_as_json_text_or_number(game_id):
    """true, "true", "yes", "1" and 1 all mean on (and their opposites off): the gateway hands
    the engine JSON values, gRPC callers hand it text."""
    spec = registry.get(game_id)
    for opt in (o for o in spec.options if isinstance(o.default, bool)):
        for on, off in ((True, False), ("true", "false"), ("yes", "no"), ("1", "0"), (1, 0)):
            assert spec.parse_options({opt.name: on})[opt.name] is True, (opt.name, on)
            assert spec.parse_options({opt.name: off})[opt.name] is False, (opt.name, off)


@pytest.mark.parametrize("game_id", GAMES)
def test_golden_playthrough_replays_to_the_same_events_and_views(game_id):
    path = GOLDEN / f"{game_id}.jsonl"
    assert path.exists(), f"record it: python -m croupier.engine.playthrough record {game_id} > {path}"
    with path.open(encoding="utf-8") as fh:
        assert check(fh) is None


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*-v*.jsonl")), ids=lambda p: p.name)
def test_a_game_recorded_under_an_earlier_rules_version_still_replays_under_it(path):
    """A rules upgrade keeps the earlier version for the games created under it: the golden
    game of each earlier version replays event for event, view for view."""
    with path.open(encoding="utf-8") as fh:
        head = json.loads(fh.readline())
        assert head["rules_version"] < registry.get(head["game"]).rules_version
        fh.seek(0)
        assert check(fh) is None


def test_rehashing_a_golden_file_takes_the_views_again_but_never_hides_a_changed_event():
    lines = (GOLDEN / "expeditions.jsonl").read_text(encoding="utf-8").splitlines()
    same, changed = rehash_views(lines)
    assert same == lines and changed == 0
    # A view hash that no longer matches is taken again (a deliberate view change) ...
    step = json.loads(lines[3])
    step["views"] = {k: "0" * 64 for k in step["views"]}
    fixed, changed = rehash_views([*lines[:3], json.dumps(step), *lines[4:]])
    assert fixed == lines and changed == 1
    # ... an event that no longer matches is not: that would be a change of the rules.
    step = json.loads(lines[3])
    step["events"][0]["hash"] = "f" * 64
    with pytest.raises(ValueError, match="the events changed"):
        rehash_views([*lines[:3], json.dumps(step), *lines[4:]])


@pytest.mark.parametrize("game_id", GAMES)
def test_unknown_or_bad_options_are_refused_with_a_clear_error(game_id):
    spec = registry.get(game_id)
    with pytest.raises(Rejection) as exc:
        spec.parse_options({"no_such_option": 1})
    assert exc.value.code == "invalid_option" and "no_such_option" in exc.value.message
    for opt in spec.options:
        if isinstance(opt.default, bool):
            with pytest.raises(Rejection):
                spec.parse_options({opt.name: "maybe"})
            with pytest.raises(Rejection):
                spec.parse_options({opt.name: 2})
        elif isinstance(opt.default, int):
            with pytest.raises(Rejection):
                spec.parse_options({opt.name: "lots"})


@pytest.mark.parametrize("game_id", GAMES)
def test_seat_counts_outside_the_range_are_refused(game_id):
    spec = registry.get(game_id)
    for seats in (spec.min_seats - 1, spec.max_seats + 1, "2", True):
        with pytest.raises(Rejection) as exc:
            spec.check_seats(seats)
        assert exc.value.code == "invalid_seats"


@pytest.mark.parametrize("game_id", GAMES)
def test_every_game_has_the_same_file_layout(game_id):
    root = Path(registry.get(game_id).initial_state.__code__.co_filename).parent
    for name in ("__init__", "cards", "commands", "events", "state", "rules", "views", "bots"):
        assert (root / f"{name}.py").exists(), f"{game_id} lacks {name}.py"
    assert list((root / "content").glob("*.yaml")), f"{game_id} has no content/*.yaml"
    assert (Path(__file__).resolve().parents[2] / "docs" / "games" / f"{game_id}.md").exists()


def test_selfplay_shared_among_processes_reports_the_same_games_and_digest():
    spec = registry.get("journey")
    alone = selfplay(spec, games=7, seed=11).as_dict()
    shared = selfplay(spec, games=7, seed=11, jobs=3).as_dict()
    assert alone["games"] == 7 and alone["commands"] > 0
    assert shared == alone


def test_selfplay_jobs_flag_is_checked(capsys):
    from croupier.cli.main import main

    assert main(["selfplay", "journey", "--games", "2", "--jobs", "0"]) == 2
    assert "--jobs must be between 1 and 64" in capsys.readouterr().err


def test_selfplay_refuses_a_seat_count_outside_the_game_rather_than_choosing_one(capsys):
    from croupier.cli.main import main

    for players in ("0", "-1", "99"):
        assert main(["selfplay", "journey", "--games", "1", "--players", players]) == 2, players
        assert "journey is for" in capsys.readouterr().err


@pytest.mark.parametrize("game_id", GAMES)
def test_an_action_nested_past_sense_is_refused_as_malformed(game_id):
    """A field nested hundreds deep made the codec's conversion recurse past Python's limit:
    a RecursionError, which the rules service answered as UNKNOWN. Now a malformed command."""
    import dataclasses

    from croupier.engine.table import TableHost

    host = TableHost(registry.get(game_id))
    cls, name = next((c, f.name) for c in sorted(registry.get(game_id).commands, key=lambda c: c.TYPE)
                     for f in dataclasses.fields(c) if f.name != "seat")
    nested: list = []
    for _ in range(2000):
        nested = [nested]
    with pytest.raises(Rejection) as refused:
        host.decode_action({"type": cls.TYPE, name: nested}, 0)
    assert (refused.value.code, refused.value.kind) == ("malformed_command", "malformed")


@pytest.mark.parametrize("game_id", GAMES)
def test_an_action_whose_fields_have_loose_types_is_refused(game_id):
    """JSON's one number type and truthy values: 1 for true, "no" for a true flag, 1.0 or true
    for an index were taken as they came (and kept in the log). A player's action now has the
    exact types of its command's fields, or it is a malformed command naming the field."""
    import dataclasses
    import typing

    from croupier.engine.table import TableHost

    host = TableHost(registry.get(game_id))
    placeholder = {int: 0, bool: False, str: "x", tuple: [], dict: {}}
    tried = 0
    for cls in registry.get(game_id).commands:
        hints = typing.get_type_hints(cls)
        fields = [f for f in dataclasses.fields(cls) if f.name != "seat"]
        wire = {"type": cls.TYPE}
        for f in fields:
            hint = hints[f.name]
            wire[f.name] = placeholder.get(hint, None)
        host.decode_action(wire, 0)  # well typed: decodes (whether it is legal is the rules' to say)
        for f in fields:
            loose_values = {bool: (1, "no", None), int: (0.0, True, "0", None), str: (1, True, None, ["x"])}
            for loose in loose_values.get(hints[f.name], ()):
                with pytest.raises(Rejection) as refused:
                    host.decode_action({**wire, f.name: loose}, 0)
                assert refused.value.code == "malformed_command" and f.name in refused.value.message, (cls, loose)
                tried += 1
    assert tried, f"{game_id} has no int, bool or str field in its commands"
