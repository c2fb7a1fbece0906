"""The content files load, meet the counts, and broken content is refused with a clear error."""

from __future__ import annotations

import shutil

import pytest
import yaml

from croupier.games.nightfall import SPEC
from croupier.games.nightfall.cards import CONTENT, CONTENT_DIR, ContentError, deck_cards, design_of, load, owner_of


def test_content_meets_the_counts():
    assert len(CONTENT.locations) >= 12 and len(CONTENT.items) >= 10
    assert len(CONTENT.traps) >= 6 and len(CONTENT.events) >= 8
    factions = [c.faction for c in CONTENT.characters.values()]
    assert factions.count("monsters") >= 12 and factions.count("defenders") >= 12
    assert {"monsters", "defenders"} <= set(CONTENT.decks)


def test_every_character_ability_is_tied_to_a_location_type_some_location_shows():
    icons = {t for loc in CONTENT.locations.values() for t in loc.types}
    for char in CONTENT.characters.values():
        assert char.abilities, char.id
        assert all(a.type in char.types and a.type in icons for a in char.abilities), char.id


def test_card_ids_name_owner_design_and_copy():
    cards = deck_cards(0, "monsters")
    assert len(cards) == len(set(cards))
    assert "s0-poison-gas-3" in cards and design_of("s0-poison-gas-3") == "poison-gas"
    assert owner_of("s1-knight-1") == 1


def test_deck_options_list_every_deck():
    options = {o.name: o for o in SPEC.options}
    assert set(options["deck_0"].choices) == set(CONTENT.decks) == set(options["deck_1"].choices)


def _broken(tmp_path, file, mutate):
    target = tmp_path / "content"
    shutil.copytree(CONTENT_DIR, target)
    path = target / file
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    mutate(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return target


@pytest.mark.parametrize("file, mutate, message", [
    ("locations.yaml", lambda d: d["locations"].append(dict(d["locations"][0])), "used twice"),
    ("locations.yaml", lambda d: d["locations"].pop(), "at least 12 locations"),
    ("characters.yaml", lambda d: d["characters"][0].update(faction="ghosts"), "faction"),
    ("characters.yaml", lambda d: d["characters"][0]["abilities"][0].update(type="soldier"), "not one of its types"),
    ("items.yaml", lambda d: d["items"][0].update(kind="laser"), "unknown item kind"),
    ("events.yaml", lambda d: d["events"][2].update(target="none"), "has target enemy"),
    ("traps.yaml", lambda d: d["traps"][0].update(components=0), "components"),
    ("decks.yaml", lambda d: d["decks"][0]["cards"].update({"dragon": 1}), "no card 'dragon'"),
    ("decks.yaml", lambda d: d["decks"][0]["cards"].update({"knight": 1}), "not of faction monsters"),
    ("decks.yaml", lambda d: d["decks"][0]["cards"].update({"poison-gas": 2}), "needs at least 3 copies"),
    ("decks.yaml", lambda d: [d["decks"][0]["cards"].pop(k) for k in list(d["decks"][0]["cards"])
                              if k in CONTENT.locations], "at least one Location"),
])
def test_broken_content_is_refused(tmp_path, file, mutate, message):
    with pytest.raises(ContentError, match=message):
        load(_broken(tmp_path, file, mutate))


def test_an_operator_deck_loads(tmp_path):
    def add(d):
        d["decks"].append({"id": "small-monsters", "name": "Small", "faction": "monsters",
                           "cards": {"old-crypt": 1, "ghoul": 2, "spike-pit": 2}})
    content = load(_broken(tmp_path, "decks.yaml", add))
    assert content.decks["small-monsters"].cards == (("old-crypt", 1), ("ghoul", 2), ("spike-pit", 2))
