"""delve: a co-operative dungeon deck-builder for 1-4 adventurers (rule text 001).

The party descends floors of overlapping encounter cards, rolls skills with the cards in
hand, shops at markets and faces a boss. See docs/games/delve.md.
"""

from __future__ import annotations

from croupier.engine.contract import GameSpec, OptionSpec

from . import rules, views
from .bots import heuristic
from .commands import COMMANDS
from .events import EVENTS

OPTIONS = (
    OptionSpec(
        name="vote_seconds",
        default=30,
        doc="how long a multiplayer route vote lasts, in seconds (solo: no timer)",
        minimum=5,
        maximum=600,
    ),
)

SPEC = GameSpec(
    id="delve",
    name="Delve",
    min_seats=1,
    max_seats=4,
    rules_version=1,
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
    bots={"heuristic": heuristic},
    deadline=rules.deadline,
    summary="Co-op dungeon deck-builder: vote a route through floors of overlapping encounters, "
    "roll skills with your cards, shop, rescue, and defeat the boss.",
)
