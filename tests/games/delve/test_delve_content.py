"""The designed content loads, meets the counts, and broken content is refused on load."""

from __future__ import annotations

import shutil

import pytest
import yaml

from croupier.games.delve.cards import CONTENT, CONTENT_DIR, ContentError, load


def test_content_meets_the_required_counts():
    encounters = [e for e in CONTENT.encounters.values() if e.kind == "encounter"]
    assert len(encounters) >= 30
    assert len({d.id for d in CONTENT.cards.values() if d.kind == "market"}) >= 20
    assert len(CONTENT.bosses) >= 3
    assert len(CONTENT.floors) >= 3
    assert CONTENT.diamond == "diamond.1" and CONTENT.design(CONTENT.diamond).one_use


def test_every_non_basic_card_has_a_coin_value_and_basics_have_none():
    for design in CONTENT.cards.values():
        assert (design.value is None) == (design.kind == "basic")


def test_no_card_sells_for_more_than_it_costs():
    for design in CONTENT.cards.values():
        if design.kind == "market":
            assert design.value <= design.cost


def _copy(tmp_path):
    target = tmp_path / "content"
    shutil.copytree(CONTENT_DIR, target)
    return target


def _edit(path, fn):
    data = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    fn(data)
    path.write_text(yaml.dump(data, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper)))


def test_a_copy_of_the_content_loads(tmp_path):
    assert load(_copy(tmp_path)).floors == CONTENT.floors


@pytest.mark.parametrize(
    "file, change, message",
    [
        ("cards.yaml", lambda d: d["cards"].append(dict(d["cards"][0])), "used twice"),
        ("cards.yaml", lambda d: d["cards"].__setitem__(slice(4, 20), []), "at least 20 market cards"),
        ("cards.yaml", lambda d: d["cards"][4].update(value=9), "sell for more than it costs"),
        ("cards.yaml", lambda d: d["cards"][0].update(value=1), "cannot be sold"),
        ("cards.yaml", lambda d: d["cards"][4].update(icons=["charm"]), "icons must be among"),
        ("encounters.yaml", lambda d: d["encounters"][0].update(extra={"encounter": "nowhere"}), "is not an extra"),
        ("encounters.yaml", lambda d: d["encounters"][0]["skills"].pop("arcane"), "missing field"),
        ("encounters.yaml", lambda d: d["encounters"][0].update(dice="d20"), "dice must be one of"),
        ("encounters.yaml", lambda d: d["encounters"][0].update(penalty={"discard": 1, "destroy": 1}), "at most one choice"),
        ("encounters.yaml", lambda d: d["encounters"].__setitem__(slice(0, 5), []), "at least 30 encounters"),
        ("bosses.yaml", lambda d: d["bosses"][0].update(hp=[3, 4]), "hit points for 1..4 seats"),
        ("bosses.yaml", lambda d: d["bosses"][0].update(bribe=2), "cannot be bribed"),
        ("floors.yaml", lambda d: d["floors"][0]["rows"][1].__setitem__(0, [7]), "covered by slots of row"),
        ("floors.yaml", lambda d: d["floors"][0].update(tier=7), "tier 7 floors need"),
    ],
)
def test_broken_content_is_refused_with_a_clear_error(tmp_path, file, change, message):
    target = _copy(tmp_path)
    _edit(target / file, change)
    with pytest.raises(ContentError, match=message):
        load(target)


def test_extra_encounters_that_loop_are_refused(tmp_path):
    target = _copy(tmp_path)

    def loop(d):
        for e in d["encounters"]:
            if e["id"] == "mimic":
                e["extra"] = {"encounter": "inner-door"}
            if e["id"] == "inner-door":
                e["extra"] = {"encounter": "mimic"}

    _edit(target / "encounters.yaml", loop)
    with pytest.raises(ContentError, match="loop"):
        load(target)
