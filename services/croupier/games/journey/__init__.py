"""journey: a War of the Worlds journey with a standard deck and a Joker.

Solo, or co-operative for up to four travellers: cross a hostile land from refuge to refuge,
fighting or hiding from adversaries, to reach Primrose Hill; optionally walk home again.
See docs/games/journey.md for the rules as implemented.
"""

from __future__ import annotations

from croupier.engine.contract import GameSpec, OptionSpec

from . import rules, views
from .bots import heuristic
from .commands import COMMANDS
from .events import EVENTS

OPTIONS = (
    OptionSpec("satchel_limit", 5, "cards a traveller may carry (A-clubs and A-diamonds take no room)",
               minimum=2, maximum=10),
    OptionSpec("allies", False, "Allies: diamond and club faces trigger when they strike (J retrieve, Q -5, K rally)"),
    OptionSpec("return_journey", False, "Return Journey: after Primrose Hill walk home paying tolls from one purse"),
    OptionSpec("companions", False, "Companions: heart faces join the group (Partner, Witness, Burden)"),
)

# Rules version 2 (2026-12-02): the turn clock's rules of clock version 2 (engine/table.py:
# a table nobody plays ends after a number of clock moves, rather than being played by the
# clock for good). Games created under version 1 keep the clock they had (`previous`).
SPEC = GameSpec(
    id="journey",
    name="The Journey (War of the Worlds)",
    min_seats=1,
    max_seats=4,
    rules_version=2,
    options=OPTIONS,
    commands=COMMANDS,
    events=EVENTS,
    initial_state=rules.initial_state,
    decide=rules.decide,
    evolve=rules.evolve,
    view=views.view,
    legal_actions=rules.legal_actions,
    is_over=rules.is_over,
    result=rules.result,
    to_act=rules.to_act,
    hidden=views.hidden,
    describe=views.describe,
    redeal=rules.redeal,
    bots={"heuristic": heuristic},
    summary="Solo or co-op: cross a hostile land from refuge to refuge to reach Primrose Hill.",
    cooperative=True,
)

SPEC = SPEC.keeping(1, clock_version=1)
