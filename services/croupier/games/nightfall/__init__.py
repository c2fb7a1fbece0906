"""nightfall: a two-player Location/Character card battle (its rules page calls it Up All
Night). Players build a map of Locations and fight with Characters, Items, Events and
Traps; a Graveyard of 200 HP loses. See docs/games/nightfall.md."""

from __future__ import annotations

from croupier.engine.contract import GameSpec, OptionSpec
from croupier.games.nightfall import rules, views
from croupier.games.nightfall.bots import heuristic
from croupier.games.nightfall.cards import CONTENT
from croupier.games.nightfall.commands import COMMANDS
from croupier.games.nightfall.events import EVENTS

DECK_IDS = tuple(CONTENT.decks)

OPTIONS = (
    OptionSpec("deck_0", "monsters", "deck of seat 0 (a deck id from content/decks.yaml)", choices=DECK_IDS),
    OptionSpec("deck_1", "defenders", "deck of seat 1 (a deck id from content/decks.yaml)", choices=DECK_IDS),
    OptionSpec("withdraw_cost", 3, "actions a Withdraw costs: 3 as the rules' prose says, 2 as their table says",
               choices=(2, 3)),
    OptionSpec("max_rounds", 30, "after this many rounds the game ends; the lower Graveyard wins (equal: a draw)",
               minimum=1, maximum=500),
)

# Rules version 2 (2026-12-02): a Trap is laid from the main phase (SetTrap ends it) and
# EndTurn always ends the turn; version 1 opened a trap window on EndTurn only when the hand
# held a complete Trap, which the phase showed the opponent. Games created under version 1
# go on, replay and audit under it (`previous`). Version 2 also has clock version 2 (engine/
# table.py: a table nobody plays ends after a number of clock moves).
SPEC = GameSpec(
    id="nightfall",
    name="Nightfall",
    min_seats=2,
    max_seats=2,
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
    redeal=rules.redeal,  # a fork deals the hidden cards again; `keeping` copies it to version 1
    bots={"heuristic": heuristic},
    summary="Two players build a map of Locations and fight with Characters, Items, Events and Traps; "
            "a Graveyard of 200 HP loses.",
)

SPEC = SPEC.keeping(1, decide=rules.decide_v1, legal_actions=rules.legal_actions_v1, clock_version=1)
