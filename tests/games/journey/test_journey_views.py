"""Hidden information: a traveller sees their own satchel and caches, only counts of the
others', never the Journey or the Supply (but the Witness's top card); a spectator sees
public facts only."""

from croupier.engine.contract import Context, Start
from croupier.engine.selfplay import leaks, leaves
from croupier.engine.testing import fair_rng, scenario
from croupier.games.journey import SPEC
from croupier.games.journey import events as E
from croupier.games.journey.views import describe


def started(seats=2, options=None):
    state = SPEC.initial_state(SPEC.parse_options(options), seats)
    for event in SPEC.decide(Start(), state, Context(rng=fair_rng())):
        state = SPEC.evolve(state, event)
    return state


def test_own_satchel_is_visible_and_the_others_are_counts_only():
    state = started(2)
    mine, theirs = state.travellers[0].satchel, state.travellers[1].satchel
    view = SPEC.view(state, 0)
    assert view["satchel"] == list(mine)
    assert view["travellers"][1]["satchel_count"] == len(theirs)
    strings = set(leaves(view))
    assert not strings & set(theirs)
    assert set(theirs) <= SPEC.hidden(state, 0) and not set(mine) & SPEC.hidden(state, 0)


def test_nobody_sees_how_much_room_another_traveller_uses():
    """A♣ and A♦ take no room in a satchel: another traveller's room used beside its count
    would tell how many of those Aces it holds (the exact card, to one who has seen the
    other). Two travellers whose satchels differ only by an Ace for another card look alike
    to everyone else."""
    from dataclasses import replace

    state = started(2)
    t1 = state.travellers[1]
    ace = replace(t1, satchel=("AC",) + t1.satchel[1:])
    plain = replace(t1, satchel=("4C",) + t1.satchel[1:])
    views = {}
    for name, traveller in (("ace", ace), ("plain", plain)):
        st = replace(state, travellers=(state.travellers[0], traveller))
        views[name] = [SPEC.view(st, seat) for seat in (0, None)]
        assert SPEC.view(st, 1)["travellers"][1]["room_used"] is not None  # one's own
    assert views["ace"] == views["plain"]
    assert all(v["travellers"][1]["room_used"] is None for v in views["ace"])


def test_journey_and_supply_are_counts_never_cards_or_order():
    state = started(1)
    for seat in (0, None):
        view = SPEC.view(state, seat)
        assert view["journey_count"] == len(state.journey) and view["supply_count"] == len(state.supply)
        assert not set(leaves(view)) & (set(state.journey) | set(state.supply))
        assert set(state.journey) | set(state.supply) <= SPEC.hidden(state, seat)


def test_spectator_sees_no_satchel():
    state = started(3)
    view = SPEC.view(state, None)
    assert view["satchel"] is None and view["you"] is None
    held = {c for t in state.travellers for c in t.satchel}
    assert held <= SPEC.hidden(state, None) and not leaks(view, SPEC.hidden(state, None))


def test_the_witness_shows_the_top_journey_card_to_travellers_not_spectators():
    given = [E.CompanionJoined(card="KH"), E.DecksShuffled(journey=("7S", "3H"), supply=()),
             E.RefugeReached(card="9H", actions=9), E.RefugeTurnBegan(seat=0)]
    state = scenario(SPEC, 1, {"companions": True}).given(*given).state
    assert SPEC.view(state, 0)["witnessed"] == "7S" and "7S" not in SPEC.hidden(state, 0)
    assert SPEC.view(state, None)["witnessed"] is None and "7S" in SPEC.hidden(state, None)
    assert "3H" in SPEC.hidden(state, 0)
    without = scenario(SPEC, 1).given(*given[1:]).state
    assert SPEC.view(without, 0)["witnessed"] is None and "7S" in SPEC.hidden(without, 0)


def test_a_cache_is_seen_only_by_the_traveller_who_hid_it():
    given = [E.DecksShuffled(journey=("7S",), supply=()), E.Foraged(seat=0, card="QD"),
             E.RefugeReached(card="9H", actions=9), E.RefugeTurnBegan(seat=0), E.Cached(seat=0, card="QD", place="9H")]
    state = scenario(SPEC, 2).given(*given).state
    assert SPEC.view(state, 0)["caches"][0]["hidden"] == "QD"
    assert SPEC.view(state, 1)["caches"][0]["hidden"] is None and "QD" in SPEC.hidden(state, 1)
    assert "QD" in SPEC.hidden(state, None) and "QD" not in SPEC.hidden(state, 0)


def test_the_purse_is_seen_by_the_travellers_and_ruins_are_face_down():
    given = [E.DecksShuffled(journey=(), supply=()), E.RefugeReached(card="5H", actions=0),
             E.RefugeEnded(card="5H", place="Woking"), E.DestinationReached(card="AH"),
             E.ReturnBegan(removed=(), supply=("4C",)), E.PurseFormed(purse=("9D", "2C"), walkers=(0, 1)),
             E.RuinsSeeded(ruins=(("5H", "KS"),))]
    state = scenario(SPEC, 2, {"return_journey": True}).given(*given).state
    assert SPEC.view(state, 1)["return"]["purse"] == ["9D", "2C"]
    assert SPEC.view(state, None)["return"]["purse"] is None and "9D" in SPEC.hidden(state, None)
    assert SPEC.view(state, 0)["return"]["ruins"] == [{"place": "5H", "card": None, "stripped": False}]
    assert "KS" in SPEC.hidden(state, 0) and "4C" in SPEC.hidden(state, 0)
    for seat in (0, 1, None):
        assert not leaks(SPEC.view(state, seat), SPEC.hidden(state, seat))


def test_views_and_legal_actions_never_show_a_hidden_card_through_a_game():
    state = started(2, {"allies": True, "companions": True, "return_journey": True})
    rng = fair_rng("11" * 32)
    for _ in range(200):
        if SPEC.is_over(state):
            break
        for seat in (0, 1, None):
            hidden = SPEC.hidden(state, seat)
            assert not leaks(SPEC.view(state, seat), hidden)
            if seat is not None:
                actions = [vars(a) for a in SPEC.legal_actions(state, seat)]
                assert not leaks(actions, hidden)
        seat = SPEC.to_act(state)[0]
        action = SPEC.legal_actions(state, seat)[0]
        for event in SPEC.decide(action, state, Context(rng=rng)):
            assert describe(event)
            state = SPEC.evolve(state, event)
