"""A scripted three-expedition game for two players, scored by hand move by move.

A is seat 0, B is seat 1. The deals and the tile placement are scripted (the same tile
placement in all three expeditions):

    step:     2           4            6            7            9
    yellow    arrow-1     arrow-2      arrow-3      points-10-a  artefact-1
    blue      artefact-2  points-5-a   arrow-4      arrow-5      points-15-a
    white     arrow-6     artefact-3   points-10-b  artefact-4   arrow-7
    green     points-5-b  arrow-8      artefact-5   points-10-c  artefact-6
    red       artefact-7  arrow-9      artefact-8   points-15-b  artefact-9

Step values: -20 -15 -10 5 10 15 | bridge | 30 35 50.

It is played with the `vp_first_arrival_only` setting on (a points tile pays only its first
finder in an expedition), the default when it was scored; the default now pays every arrival,
which test_expeditions_rules.py checks.
"""

from __future__ import annotations

from croupier.engine.contract import Context, Start
from croupier.engine.testing import ScriptedRng
from croupier.games.expeditions import SPEC
from croupier.games.expeditions.cards import CONTENT
from croupier.games.expeditions.commands import (
    BeginPath,
    DiscardCard,
    DrawFromDiscard,
    DrawFromSupply,
    MoveFigure,
    PlayOnPath,
    SkipMove,
)
from croupier.games.expeditions.events import (
    ArrowFound,
    ArtefactFound,
    ExpeditionEnded,
    GameEnded,
    LastStepPlayed,
    PointsFound,
)

A, B = 0, 1

TILES = [
    "arrow-1", "arrow-2", "arrow-3", "points-10-a", "artefact-1",
    "artefact-2", "points-5-a", "arrow-4", "arrow-5", "points-15-a",
    "arrow-6", "artefact-3", "points-10-b", "artefact-4", "arrow-7",
    "points-5-b", "arrow-8", "artefact-5", "points-10-c", "artefact-6",
    "artefact-7", "arrow-9", "artefact-8", "points-15-b", "artefact-9",
]


def order(hand_a, hand_b, supply_top=()):
    """The shuffled deck of a two-player deal: 30 cards for the box, A's hand, B's hand,
    then the supply (its first cards as given, then the rest)."""
    used = set(hand_a) | set(hand_b) | set(supply_top)
    rest = [c for c in CONTENT.cards if c not in used]
    return rest[:30] + list(hand_a) + list(hand_b) + list(supply_top) + rest[30:]


class Game:
    def __init__(self, outcomes):
        self.rng = ScriptedRng(outcomes)
        self.state = SPEC.initial_state(SPEC.parse_options({"vp_first_arrival_only": True}), 2)
        self.log = []
        self.act(Start())

    def act(self, command):
        events = SPEC.decide(command, self.state, Context(rng=self.rng))
        for event in events:
            self.state = SPEC.evolve(self.state, event)
        self.log.extend(events)
        return events

    def turn(self, seat, play, *moves, draw=None):
        """One turn: the play, the granted moves (a colour or None to skip), the draw."""
        assert SPEC.to_act(self.state) == (seat,)
        events = self.act(play)
        for color in moves:
            events += self.act(SkipMove(seat=seat) if color is None else MoveFigure(seat=seat, color=color))
        if self.state.phase == "draw":
            events += self.act(draw or DrawFromSupply(seat=seat))
        return events

    def discard_until_the_supply_ends(self):
        """Both players only discard (their first card) and draw from the supply."""
        expedition = self.state.expedition
        while self.state.expedition == expedition and not SPEC.is_over(self.state):
            seat = self.state.current
            self.turn(seat, DiscardCard(seat=seat, card=self.state.players[seat].hand[0]))

    def ended(self):
        return [e for e in self.log if isinstance(e, ExpeditionEnded)]


def begin(seat, card, researcher=False):
    return BeginPath(seat=seat, card=card, researcher=researcher)


def play(seat, card):
    return PlayOnPath(seat=seat, card=card)


# Expedition 1: A draws X1.., B draws Y1.. alternately from the supply (B's 15th draw is from
# a discard pile, so A's 15th and 16th supply cards follow each other).
X = ["blue-4-a", "blue-5-a", "yellow-4-a", "yellow-5-a", "blue-6-a", "yellow-6-a", "green-7-a", "red-10-a",
     "red-10-b", "red-9-a", "red-9-b", "red-8-a", "red-8-b", "red-7-a", "red-7-b", "red-6-a"]
Y = ["white-4-b", "white-5-b", "green-0-b", "green-1-b", "green-2-b", "green-3-b", "green-4-b", "red-6-b",
     "red-5-a", "red-5-b", "red-4-a", "red-4-b", "red-3-a", "red-3-b"]
DEAL_1 = order(
    ["yellow-0-a", "yellow-1-a", "yellow-2-a", "yellow-3-a", "blue-0-a", "blue-1-a", "blue-2-a", "blue-3-a"],
    ["yellow-0-b", "yellow-1-b", "yellow-2-b", "yellow-3-b", "white-0-b", "white-1-b", "white-2-b", "white-3-b"],
    [c for pair in zip(X[:14], Y) for c in pair] + X[14:],
)
DEAL_2 = order(
    ["red-0-a", "red-1-a", "red-2-a", "red-3-a", "yellow-10-a", "yellow-10-b", "yellow-9-a", "yellow-9-b"],
    ["blue-0-a", "white-0-a", "green-0-a", "yellow-0-a", "red-0-b", "blue-10-a", "blue-10-b", "blue-9-a"],
)
DEAL_3 = order(
    ["yellow-0-a", "yellow-1-a", "yellow-2-a", "yellow-3-a", "red-8-a", "red-8-b", "red-7-a", "red-7-b"],
    ["white-0-a", "white-1-a", "white-2-a", "white-3-a", "white-4-a", "red-10-a", "red-10-b", "red-9-a"],
)


def test_scripted_three_expedition_two_player_game_scored_by_hand():
    g = Game([A, DEAL_1, TILES, DEAL_2, TILES, DEAL_3, TILES])
    assert g.state.current == A and g.state.expedition == 1

    # ---- Expedition 1 ----------------------------------------------------------------
    # a1: A's researcher begins yellow (Y1).             b1: B begins yellow (Y1).
    g.turn(A, begin(A, "yellow-0-a", researcher=True))
    g.turn(B, begin(B, "yellow-0-b"))
    # a2: Y2 arrow-1, A moves yellow on to Y3.            b2: the same for B.
    assert ArrowFound(seat=A, color="yellow", step=2, tile="arrow-1", choice=True) in g.turn(
        A, play(A, "yellow-1-a"), "yellow")
    g.turn(B, play(B, "yellow-1-b"), "yellow")
    # a3/b3: Y4 arrow-2, on to Y5.
    g.turn(A, play(A, "yellow-2-a"), "yellow")
    g.turn(B, play(B, "yellow-2-b"), "yellow")
    # a4: Y6 arrow-3, on to Y7 over the bridge (crossing 1), points-10-a: A has 10 chips
    # (a researcher does not double tiles).
    assert PointsFound(seat=A, color="yellow", step=7, tile="points-10-a", points=10) in g.turn(
        A, play(A, "yellow-3-a"), "yellow")
    # b4: the same for B (crossing 2), but the points tile paid its first arrival only.
    assert not [e for e in g.turn(B, play(B, "yellow-3-b"), "yellow") if isinstance(e, PointsFound)]
    assert g.state.crossings == 2
    # a5: A's blue adventurer (B1).                      b5: B begins white (W1).
    g.turn(A, begin(A, "blue-0-a"))
    g.turn(B, begin(B, "white-0-b"))
    # a6: B2 artefact-2 for A.                           b6: W2 arrow-6, on to W3.
    assert ArtefactFound(seat=A, color="blue", step=2, tile="artefact-2") in g.turn(A, play(A, "blue-1-a"))
    g.turn(B, play(B, "white-1-b"), "white")
    # a7: B3.                                            b7: W4 artefact-3 for B.
    g.turn(A, play(A, "blue-2-a"))
    g.turn(B, play(B, "white-2-b"))
    # a8: B4 points-5-a: A 15 chips.                      b8: W5.
    g.turn(A, play(A, "blue-3-a"))
    g.turn(B, play(B, "white-3-b"))
    # a9: B5.                                            b9: W6 points-10-b: B 10 chips.
    g.turn(A, play(A, "blue-4-a"))
    g.turn(B, play(B, "white-4-b"))
    # a10: B6 arrow-4, A moves blue to B7 (crossing 3); arrow-5 there, A moves yellow to Y8.
    # b10: W7 (crossing 4), artefact-4 for B.
    g.turn(A, play(A, "blue-5-a"), "blue", "yellow")
    g.turn(B, play(B, "white-5-b"))
    assert g.state.crossings == 4
    # a11: Y9 artefact-1 for A.                          b11: B begins green (G1).
    g.turn(A, play(A, "yellow-4-a"))
    g.turn(B, begin(B, "green-0-b"))
    # a12: a yellow card with yellow on the last step: A moves another figure, blue B7 -> B8.
    # b12: G2 points-5-b: B 15 chips.
    assert LastStepPlayed(seat=A, color="yellow") in g.turn(A, play(A, "yellow-5-a"), "blue")
    g.turn(B, play(B, "green-1-b"))
    # a13: B9 points-15-a: A 30 chips.                    b13: G3.
    g.turn(A, play(A, "blue-6-a"))
    g.turn(B, play(B, "green-2-b"))
    # a14: yellow again, but no other figure can move.   b14: G4 arrow-8, B moves green to G5.
    assert not [e for e in g.turn(A, play(A, "yellow-6-a")) if isinstance(e, LastStepPlayed)]
    g.turn(B, play(B, "green-3-b"), "green")
    # a15: A discards green-7-a.   b15: G6 artefact-5 for B; B takes green-7-a from the pile.
    g.turn(A, DiscardCard(seat=A, card="green-7-a"))
    g.turn(B, play(B, "green-4-b"), draw=DrawFromDiscard(seat=B, color="green"))
    # a16: A discards.   b16: G7 is the fifth crossing: the expedition ends at once and
    # points-10-c on G7 is not taken.
    g.turn(A, DiscardCard(seat=A, card="red-10-a"))
    last = g.turn(B, play(B, "green-7-a"))
    assert not [e for e in last if isinstance(e, PointsFound)]
    # Scoring: A yellow researcher on 9: 2 * 50 = 100, blue on 9: 50 -> 150; 30 + 150 = 180.
    #          B yellow 7, white 7, green 7: 3 * 30 = 90; 15 + 90 = 105.
    #          Artefact tiles become chips: A 2 (artefact-2, -1), B 3 (artefact-3, -4, -5).
    assert g.ended()[-1] == ExpeditionEnded(expedition=1, reason="bridge", last_player=B, points=(150, 90),
                                            chips=(180, 105), artefact_chips=(2, 3))
    # B played last, so A (on B's left) begins expedition 2.
    assert g.state.expedition == 2 and g.state.current == A

    # ---- Expedition 2 ----------------------------------------------------------------
    # a1: A begins red (R1).                             b1: B's researcher begins blue (B1).
    g.turn(A, begin(A, "red-0-a"))
    g.turn(B, begin(B, "blue-0-a", researcher=True))
    # a2: R2 artefact-7 for A.                           b2: B begins white (W1).
    g.turn(A, play(A, "red-1-a"))
    g.turn(B, begin(B, "white-0-a"))
    # a3: R3.                                            b3: B begins green (G1).
    g.turn(A, play(A, "red-2-a"))
    g.turn(B, begin(B, "green-0-a"))
    # a4: R4 arrow-9: A declines the move.               b4: B begins yellow (Y1).
    g.turn(A, play(A, "red-3-a"), None)
    g.turn(B, begin(B, "yellow-0-a"))
    # a5: A discards yellow-10-a and takes it straight back (allowed).  b5: B begins red (R1).
    g.turn(A, DiscardCard(seat=A, card="yellow-10-a"), draw=DrawFromDiscard(seat=A, color="yellow"))
    g.turn(B, begin(B, "red-0-b"))
    # Then both only discard until the 64-card supply is empty. A's take-back shifted the
    # turns, so A draws the 64th card.
    g.discard_until_the_supply_ends()
    # Scoring: A red on 4: +5; 180 + 5 = 185.  B researcher on 1: 2 * -20 = -40, four
    # adventurers on 1: 4 * -20 = -80 -> -120; 105 - 120 < 0, so B has 0 chips.
    # Artefacts: A 2 + 1 (artefact-7) = 3, B 3.
    assert g.ended()[-1] == ExpeditionEnded(expedition=2, reason="supply", last_player=A, points=(5, -120),
                                            chips=(185, 0), artefact_chips=(3, 3))
    assert g.state.expedition == 3 and g.state.current == B

    # ---- Expedition 3 ----------------------------------------------------------------
    # b1: B's researcher begins white (W1).              a1: A begins yellow (Y1).
    g.turn(B, begin(B, "white-0-a", researcher=True))
    g.turn(A, begin(A, "yellow-0-a"))
    # b2: W2 arrow-6, on to W3.                          a2: Y2 arrow-1, on to Y3.
    g.turn(B, play(B, "white-1-a"), "white")
    g.turn(A, play(A, "yellow-1-a"), "yellow")
    # b3: W4 artefact-3 for B.                           a3: Y4 arrow-2, on to Y5.
    g.turn(B, play(B, "white-2-a"))
    g.turn(A, play(A, "yellow-2-a"), "yellow")
    # b4: W5.                                            a4: Y6 arrow-3, on to Y7, points-10-a: A 195.
    g.turn(B, play(B, "white-3-a"))
    g.turn(A, play(A, "yellow-3-a"), "yellow")
    # b5: W6 points-10-b: B 10 chips.
    g.turn(B, play(B, "white-4-a"))
    g.discard_until_the_supply_ends()
    # Scoring: A yellow on 7: +30; 195 + 30 = 225.  B researcher on W6: 2 * 15 = 30; 10 + 30 = 40.
    # Artefacts: A 3, B 3 + 1 = 4. B began, so A draws the 64th card.
    assert g.ended()[-1] == ExpeditionEnded(expedition=3, reason="supply", last_player=A, points=(30, 30),
                                            chips=(225, 40), artefact_chips=(3, 4))
    # Game end: 3 and 4 artefact chips both score -15 on the table: A 210, B 25.
    assert g.log[-1] == GameEnded(artefact_points=(-15, -15), scores=(210, 25), winners=(A,))
    assert SPEC.is_over(g.state) and SPEC.result(g.state)["scores"] == [210, 25]
    assert len(g.ended()) == 3
