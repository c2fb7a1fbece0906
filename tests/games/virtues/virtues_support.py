"""Shared layouts for the virtues tests (imported by the test modules beside it).

Symbols of the Locations used:
    bannockburn      valour strength courage      arthurs-seat   valour courage wisdom
    edinburgh-castle valour strength wisdom       glenfinnan     valour courage spirit
    glencoe          valour strength spirit       forth-bridge   strength courage wisdom
    iona-abbey       courage wisdom spirit        cairngorms     strength courage spirit
    holyrood         valour wisdom spirit         skara-brae     strength wisdom spirit
"""

from __future__ import annotations

from croupier.engine.testing import Scenario, scenario
from croupier.games.virtues import SPEC
from croupier.games.virtues.events import (
    ActionPlayed,
    GameSetUp,
    LocationCompleted,
    TurnBegan,
)

BANNOCKBURN = "loc-bannockburn"
EDINBURGH = "loc-edinburgh-castle"
GLENCOE = "loc-glencoe"
ARTHURS_SEAT = "loc-arthurs-seat"
GLENFINNAN = "loc-glenfinnan"
FORTH_BRIDGE = "loc-forth-bridge"
IONA = "loc-iona-abbey"
CAIRNGORMS = "loc-cairngorms"
HOLYROOD = "loc-holyrood"
SKARA_BRAE = "loc-skara-brae"
STIRLING = "loc-stirling-castle"
SCONE = "loc-scone-palace"

STONE = "sp-standing-stone"
REIVERS = "sp-border-reivers"
SEER = "sp-brahan-seer"
DROVE = "sp-drove-road"
SURVEY = "sp-ordnance-survey"
GATHERING = "sp-clan-gathering"
CEILIDH = "sp-ceilidh"
STORM = "sp-highland-storm"
BOTHY = "sp-bothy"
PILGRIMAGE = "sp-pilgrimage"

HAND0 = ("act-va-st-1", "act-co-wi-1", "act-wi-sp-1")
HAND1 = ("act-va-co-1", "act-st-sp-1", "act-co-sp-1")
ARRAY0 = (BANNOCKBURN, EDINBURGH, GLENCOE)
ARRAY1 = (ARTHURS_SEAT, GLENFINNAN, FORTH_BRIDGE)
DISPLAY = (IONA, CAIRNGORMS, HOLYROOD)
LOCATION_DECK = (SKARA_BRAE, STIRLING, SCONE)
ACTION_DECK = ("act-va-wi-1", "act-st-wi-1", "act-va-sp-1", "act-co-wi-2", "act-wi-sp-2", "act-va-st-2")
DISCARD = ("act-st-co-1",)


def setup(
    *,
    hands=(HAND0, HAND1),
    arrays=(ARRAY0, ARRAY1),
    display=DISPLAY,
    location_deck=LOCATION_DECK,
    action_deck=ACTION_DECK,
    discard=DISCARD,
    first=0,
) -> GameSetUp:
    return GameSetUp(
        location_deck=tuple(location_deck), display=tuple(display), arrays=tuple(tuple(a) for a in arrays),
        action_deck=tuple(action_deck), hands=tuple(tuple(h) for h in hands), discard=tuple(discard), first=first,
    )


def cover(seat: int, location: str, symbol: str, card: str) -> ActionPlayed:
    """An earlier play (given before the turn begins): `card` already covers `symbol`."""
    return ActionPlayed(seat=seat, card=card, location=location, symbol=symbol)


def completed(seat: int, location: str) -> LocationCompleted:
    """An earlier completion (given before the turn begins)."""
    return LocationCompleted(seat=seat, location=location, cards=())


def game(*before, seats: int = 2, options=None, seat: int = 0, turn: int = 1, **layout) -> Scenario:
    """A game set up with `layout`, the events `before`, then seat's turn `turn` begun."""
    return scenario(SPEC, seats, options).given(setup(**layout), *before, TurnBegan(seat=seat, turn=turn))


def state_of(scn: Scenario):
    return scn.then_state()
