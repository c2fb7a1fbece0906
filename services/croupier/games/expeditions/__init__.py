"""expeditions: Lost Cities, The Board Game (Knizia, 2008), for 2 to 4 players.

Figures race up five coloured paths as the players lay ascending cards, over three
expeditions; rules as implemented: docs/games/expeditions.md.
"""

from __future__ import annotations

from croupier.engine.contract import GameSpec, OptionSpec
from croupier.games.expeditions import rules, views
from croupier.games.expeditions.bots import heuristic
from croupier.games.expeditions.cards import CONTENT
from croupier.games.expeditions.commands import COMMANDS
from croupier.games.expeditions.events import EVENTS

OPTIONS = (
    OptionSpec("board", "standard", "the board: step values, bridge and crossings that end an expedition (content/board.yaml)",
               choices=tuple(CONTENT.boards)),
    OptionSpec("tile_spaces", "2,4,6,7,9", "the steps of each path that hold an event tile",
               choices=tuple(CONTENT.tile_layouts)),
    OptionSpec("vp_first_arrival_only", False,
               "a victory point tile pays only the first figure to reach it in an expedition "
               "(off: it stays on the board and pays every figure that reaches it, as the rule text says)"),
    OptionSpec("artefact_table", "standard", "the end-of-game table of points for artefact chips (content/board.yaml)",
               choices=tuple(CONTENT.artefact_tables)),
    OptionSpec("strict_start", False, "a path must begin with the lowest card of that colour in hand"),
)

# Rules version 2 (2026-12-02): the turn clock's rules of clock version 2 (engine/table.py:
# a table nobody plays ends after a number of clock moves, rather than being played by the
# clock for good). Games created under version 1 keep the clock they had (`previous`).
SPEC = GameSpec(
    id="expeditions",
    name="Expeditions (Lost Cities: The Board Game)",
    min_seats=2,
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
    # A fork deals the hands, the supply and the box again (every rules version: `keeping`
    # copies the spec with it).
    redeal=rules.redeal,
    bots={"heuristic": heuristic},
    summary="Race figures up five paths by laying ascending cards, over three expeditions.",
)

SPEC = SPEC.keeping(1, clock_version=1)
