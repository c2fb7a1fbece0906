"""`croupier games` lists the table's own options (the turn clock) beside each game's: it
listed only the games' own, so the turn clock that `croupier play --option` and the
gateway's create take could not be found from the CLI. Every option listed is one a table
takes, at its default."""

from __future__ import annotations

import json

from croupier.cli.main import main
from croupier.engine import registry
from croupier.engine.table import TableHost


def test_every_option_games_lists_is_one_a_table_takes(capsys):
    assert main(["games", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [g["id"] for g in listed] == list(registry.GAME_IDS)
    for game in listed:
        names = [o["name"] for o in game["table_options"]]
        assert names == ["turn_clock_ms", "turn_clock_action"]
        host = TableHost(registry.get(game["id"]))
        defaults = {o["name"]: o["default"] for o in game["options"] + game["table_options"]}
        host.parse_options(defaults)  # all of them at once, at their defaults
        clocked = host.parse_options({"turn_clock_ms": 30_000, "turn_clock_action": "forfeit"})
        assert clocked["turn_clock_ms"] == 30_000 and clocked["turn_clock_action"] == "forfeit"
    assert main(["games"]) == 0
    text = capsys.readouterr().out
    assert "--option turn_clock_ms=0" in text and "--option turn_clock_action=default" in text
