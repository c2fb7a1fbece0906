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

# Rules version 2 (2026-12-02): co-operative, as the rules say ("everyone wins together or
# loses together"): a seat that forfeits (its turn clock set to forfeit) loses the table for
# every seat; and the turn clock's rules of clock version 2 (engine/table.py): no clock
# during a route vote, whose own timer decides. Version 1 gave the other seats the win and
# let the clock vote for to_act[0]; its games keep that (`previous`).
# Rules version 3 (2026-12-02): the stairs. Clearing a card of a floor's final row no longer
# ends the floor at once (which made the bonus market of a fully cleared floor all but
# unreachable: no heuristic game of 400 ever had one): it opens the stairs, and every route
# vote after it may take them (Vote slot -2) or press on to clear the floor for its bonus
# market. A switch may not land on the final row (it reached the way down in one round for
# one damage), and the blow that kills the boss gives its skill's reward as every other
# successful boss attack does. Games created under versions 1 and 2 keep their rules
# (`previous`; State.rules tells the rules apart).
# Rules version 4 (2026-12-03): a fork made during a timed route vote gives its vote the whole
# vote time again from the fork (`forked`); a fork kept the origin's deadline, long past by
# then, so the fork's vote closed at its first timer with whatever votes it held. Forks of
# games of earlier versions keep the origin's deadline (they fold by their origin's version).
# A fork deals the cards hidden at its step again (`redeal`, ForkDealt; docs/games/delve.md,
# "Forks: the hidden cards dealt again"). Set here, before `keeping`, so that every version
# has it: a fork of a game of any version deals again (the state is the same in all).
SPEC = GameSpec(
    id="delve",
    name="Delve",
    min_seats=1,
    max_seats=4,
    rules_version=4,
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
    forked=rules.forked,
    redeal=rules.redeal,
    summary="Co-op dungeon deck-builder: vote a route through floors of overlapping encounters, "
    "roll skills with your cards, shop, rescue, and defeat the boss.",
    cooperative=True,
)

SPEC = SPEC.keeping(3, initial_state=rules.initial_state_v3, forked=None).keeping(
    2, initial_state=rules.initial_state_v2, forked=None).keeping(
    1, initial_state=rules.initial_state_v2, forked=None, cooperative=False, clock_version=1)
