"""virtues: cover the Virtues on Location cards with Action cards; six completions win.

From rule text 002 (The Scotland Card Game, 2022). See docs/games/virtues.md.
"""

from __future__ import annotations

from croupier.engine.contract import GameSpec, OptionSpec

from . import bots, rules, views
from .commands import COMMANDS
from .events import EVENTS

OPTIONS = (
    OptionSpec("completions_to_win", 6, "Locations a player must complete to win (the text's 'play to eight')", choices=(6, 8)),
    OptionSpec("special_cards", 10, "special Action cards shuffled into the deck (the first N of the ten designed)",
               minimum=0, maximum=10),
    OptionSpec("max_rounds", 100, "cap: after this many rounds the most completions win (ties share)",
               minimum=1, maximum=10000),
)

# Rules version 2 (2026-12-02): the turn clock's rules of clock version 2 (engine/table.py:
# a table nobody plays ends after a number of clock moves, rather than being played by the
# clock for good). Games created under version 1 keep the clock they had (`previous`).
# Rules version 3 (2026-12-02): an Action deck that runs out is rebuilt from the discard
# pile at once ("if the Action Card deck runs out, the discard pile is turned over to form the
# new one"), not at the next draw: until then the Brahan Seer could not be played and the
# next seat could take from the old pile. Games of versions 1 and 2 keep the old timing
# (Config.rules).
# A fork deals the cards hidden at its step again (rules.redeal, docs/games/virtues.md);
# every kept rules version has it too (`keeping` copies the spec), as the state is the same.
SPEC = GameSpec(
    id="virtues",
    name="Virtues",
    min_seats=2,
    max_seats=4,
    rules_version=3,
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
    bots={"heuristic": bots.heuristic},
    redeal=rules.redeal,
    summary="Two to four players cover the symbols of Location cards with Action cards; six completed Locations win.",
)

SPEC = SPEC.keeping(2, initial_state=rules.initial_state_v2).keeping(
    1, initial_state=rules.initial_state_v2, clock_version=1)
