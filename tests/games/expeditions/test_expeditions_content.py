"""The content files load and validate; broken content is refused with a clear message."""

from __future__ import annotations

import copy

import pytest

from croupier.games.expeditions.cards import CONTENT, ContentError, _read, parse


def _docs():
    return _read("cards.yaml"), _read("tiles.yaml"), _read("board.yaml")


def test_content_counts():
    assert len(CONTENT.cards) == 110 and len(set(CONTENT.cards)) == 110
    assert CONTENT.colors == ("yellow", "blue", "white", "green", "red")
    for color in CONTENT.colors:
        values = sorted(CONTENT.card_value[c] for c in CONTENT.cards if c.startswith(color + "-"))
        assert values == sorted(list(range(11)) * 2)
    kinds = [CONTENT.tile_kind[t] for t in CONTENT.tiles]
    assert (kinds.count("artefact"), kinds.count("arrow"), kinds.count("points")) == (9, 9, 7)
    assert sorted(CONTENT.tile_points.values()) == [5, 5, 10, 10, 10, 15, 15]
    board = CONTENT.boards["standard"]
    assert board.values == (-20, -15, -10, 5, 10, 15, 30, 35, 50)
    assert (board.bridge_after, board.crossings_to_end) == (6, 5)
    assert CONTENT.tile_layouts["2,4,6,7,9"] == (2, 4, 6, 7, 9)
    assert (CONTENT.adventurers, CONTENT.researchers, CONTENT.expeditions, CONTENT.hand_size) == (4, 1, 3, 8)
    assert CONTENT.removed_with_two == 30


def _broken(where, change):
    cards, tiles, board = (copy.deepcopy(d) for d in _docs())
    change({"cards": cards, "tiles": tiles, "board": board}[where])
    return cards, tiles, board


@pytest.mark.parametrize("where,change,message", [
    ("cards", lambda d: d.update(total=100), "total"),
    ("cards", lambda d: d.update(colors=["red", "red", "blue", "white", "green"]), "duplicate colours"),
    ("tiles", lambda d: d["tiles"].pop(), "total"),
    ("tiles", lambda d: d["tiles"][1].update(id="artefact-1"), "duplicate tile id"),
    ("tiles", lambda d: d["tiles"][0].update(kind="dragon"), "kind"),
    ("tiles", lambda d: d["tiles"][-1].update(points=0), "points"),
    ("board", lambda d: d["boards"]["standard"].update(paths=["red", "blue", "white", "green", "pink"]), "paths"),
    ("board", lambda d: d["boards"]["standard"].update(bridge_after=9), "bridge_after"),
    ("board", lambda d: d["tile_layouts"].update({"1,2": [1, 2]}), "step 1"),
    ("board", lambda d: d["tile_layouts"].update({"2,12": [2, 12]}), "steps must lie"),
    ("board", lambda d: d["artefact_tables"]["standard"].insert(0, {"min": 4, "points": 1}), "ascend"),
    ("board", lambda d: d["figures"].update(adventurers=5), "one figure per path"),
])
def test_broken_content_is_refused(where, change, message):
    with pytest.raises(ContentError, match=message):
        parse(*_broken(where, change))
