"""Every kind of illegal command is refused with its stable code, and legal_actions never
offers it."""

from dataclasses import dataclass
from typing import ClassVar

import pytest

from croupier.engine.contract import MALFORMED, Command, Start
from croupier.engine.testing import scenario
from croupier.games.journey import SPEC
from croupier.games.journey import commands as C
from croupier.games.journey import events as E

COMP = {"companions": True}


def deal(journey=("9H",), supply=("2C",), satchels=((),), discard=()):
    events = [E.DecksShuffled(journey=tuple(journey), supply=tuple(supply))]
    for seat, cards in enumerate(satchels):
        events += [E.Foraged(seat=seat, card=c) for c in cards]
    events += [E.Foraged(seat=0, card=c) for c in discard] + [E.CardDiscarded(seat=0, card=c) for c in discard]
    return events


def fight(card="5S", health=10, attack=5, seat=0):
    return [E.AdversaryRevealed(card=card, health=health, attack=attack), E.RoundBegan(round=1),
            E.FightTurnBegan(seat=seat)]


def refuge(card="3H", actions=3, seat=0):
    return [E.RefugeReached(card=card, actions=actions), E.RefugeTurnBegan(seat=seat)]


def covering(due=5, satchel=("AD", "2C")):
    return [*deal(satchels=(satchel,)), *fight(), E.CounterStruck(attack=due),
            E.CoverDemanded(seat=0, due=due, reason="counter")]


def walking(purse=("2D", "3C"), ruins=(), route=("5H",)):
    events = deal(journey=(), supply=())
    for heart in route:
        events += [E.RefugeReached(card=heart, actions=0), E.RefugeEnded(card=heart, place=heart)]
    events += [E.DestinationReached(card="AH"), E.ReturnBegan(removed=(), supply=()),
               E.PurseFormed(purse=tuple(purse), walkers=(0,))]
    if ruins:
        events.append(E.RuinsSeeded(ruins=tuple(ruins)))
    return [*events, E.StopReached(place=route[-1])]


@dataclass(frozen=True, kw_only=True)
class Dance(Command):
    TYPE: ClassVar[str] = "Dance"


CASES = [
    # (code, seats, options, given, command)
    ("not_started", 1, None, [], C.Forage(seat=0)),
    ("already_started", 1, None, deal(), Start()),
    ("game_over", 1, None, [*deal(), E.GameEnded(won=False, reason="x")], C.Forage(seat=0)),
    ("not_your_turn", 2, None, [*deal(satchels=((), ())), *refuge()], C.Forage(seat=1)),
    ("not_your_turn", 1, None, [*deal(), *refuge()], C.Forage(seat=None)),
    ("wrong_step", 1, None, [*deal(satchels=(("2C",),)), *refuge()], C.Strike(seat=0, card="2C")),
    ("wrong_step", 1, None, [*deal(), *fight()], C.Forage(seat=0)),
    ("card_not_held", 1, None, [*deal(satchels=(("2C",),)), *fight()], C.Strike(seat=0, card="9D")),
    ("card_not_held", 1, None, [*deal(), *refuge()], C.Cache(seat=0, card="9D")),
    ("supply_empty", 1, None, [*deal(supply=()), *refuge()], C.Forage(seat=0)),
    ("supply_empty", 1, None, [*deal(supply=()), *fight()], C.Hide(seat=0)),
    ("satchel_full", 1, None, [*deal(supply=("9C",), satchels=(("2C", "3C", "4C", "5C", "6C"),)), *refuge()],
     C.Forage(seat=0)),
    ("not_in_discard", 1, None, [*deal(), *refuge()], C.Recover(seat=0, card="9D")),
    ("cache_taken", 1, None, [*deal(satchels=(("2C", "3C"),)), *refuge(), E.Cached(seat=0, card="2C", place="3H"),
                              E.RefugeTurnBegan(seat=0)], C.Cache(seat=0, card="3C")),
    ("not_a_strike_card", 1, None, [*deal(satchels=(("AC",),)), *fight()], C.Strike(seat=0, card="AC")),
    ("invalid_rally", 1, None, [*deal(satchels=(("KD",),)), *fight()], C.Strike(seat=0, card="KD", rally=4)),
    ("invalid_rally", 1, {"allies": True}, [*deal(satchels=(("KD",),)), *fight()], C.Strike(seat=0, card="KD")),
    ("not_a_club", 1, None, [*deal(satchels=(("2D",),), discard=("3C",)), *fight()], C.Regroup(seat=0, card="2D")),
    ("discard_empty", 1, None, [*deal(satchels=(("2C",),)), *fight()], C.Regroup(seat=0, card="2C")),
    ("not_same_suit", 1, {"allies": True},
     [*deal(satchels=(("JD", "9C"),), discard=("8C", "7D")), *fight("KS", 26, 13), E.Struck(seat=0, card="JD", damage=20),
      E.RetrievalOffered(seat=0, card="JD")], C.Retrieve(seat=0, card="8C")),
    ("nemesis_no_escape", 1, None, [*deal(satchels=(("2C",),)), *fight("AS", 40, 20)], C.Flee(seat=0, card="2C")),
    ("burden_blocks_escape", 1, COMP, [E.CompanionJoined(card="JH"), *deal(), *fight()], C.Hide(seat=0)),
    ("hiding_over", 1, None, [*deal(supply=("9C", "2C")), *fight(), E.Hid(seat=0, card="9C", kept=False)],
     C.Hide(seat=0)),
    ("no_reckoning", 1, None, [*deal(satchels=(("2C",),)), *fight()], C.PlayReckoning(seat=0)),
    ("reckoning_used", 1, None, [*deal(satchels=(("AC",),)), *fight(), E.ReckoningPlayed(seat=0, health=5),
                                 E.Foraged(seat=0, card="AC")], C.PlayReckoning(seat=0)),
    ("must_act", 1, None, [*deal(satchels=(("2C",),)), *fight()], C.Brace(seat=0)),
    ("no_burden", 1, COMP, [*deal(satchels=(("2C", "3C"),)), *fight()], C.ShedBurden(seat=0, extra=0)),
    ("no_burden", 1, COMP, [*deal(satchels=(("10C",),)), *refuge()], C.Deliver(seat=0)),
    ("invalid_payer", 2, COMP, [E.CompanionJoined(card="JH"), *deal(satchels=(("2C", "3C"), ("4C",))), *fight()],
     C.ShedBurden(seat=0, extra=2)),
    ("cannot_pay", 2, COMP, [E.CompanionJoined(card="JH"), *deal(satchels=(("2C", "3C"), ("4C",))), *fight()],
     C.ShedBurden(seat=0, extra=1)),
    ("no_deliverance", 1, COMP, [E.CompanionJoined(card="JH"), *deal(satchels=(("9C",),)), *refuge()],
     C.Deliver(seat=0)),
    ("worthless_card", 1, None, covering(), C.Cover(seat=0, card="AD")),
    ("wreckage_short", 1, None, covering(), C.UseWreckage(seat=0)),
    ("no_joker", 1, {"return_journey": True}, walking(purse=("QD",)), C.ShedJoker(seat=0, card="QD")),
    ("not_a_face_card", 1, {"return_journey": True}, walking(purse=("JOKER", "9D")), C.ShedJoker(seat=0, card="9D")),
    ("no_ruin", 1, {"return_journey": True}, walking(), C.StripRuin(seat=0)),
    ("purse_short", 1, {"return_journey": True},
     [*walking(purse=("2D",), ruins=(("5H", "KS"),)), E.RuinRevealed(place="5H", card="KS")], C.StripRuin(seat=0)),
    ("card_not_held", 1, {"return_journey": True},
     [*walking(), E.TollsBegan(place="5H"), E.TollDemanded(seat=0, place="5H", due=5)], C.Pay(seat=0, card="9C")),
    ("unknown_command", 1, None, [*deal(), *refuge()], Dance(seat=0)),
]


@pytest.mark.parametrize("code,seats,options,given,command", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_illegal_command_is_refused_with_its_code_and_never_offered(code, seats, options, given, command):
    sc = scenario(SPEC, seats, options).given(*given)
    rejection = sc.when(command).rejects(code)
    if code == "unknown_command":
        assert rejection.kind == MALFORMED
    if command.seat is not None:
        assert command not in SPEC.legal_actions(sc.state, command.seat)


def test_every_rejection_code_of_the_rules_is_exercised():
    import re
    from pathlib import Path

    source = Path(SPEC.decide.__code__.co_filename).read_text()
    codes = set(re.findall(r'_no\("([a-z_]+)"', source)) | set(re.findall(r'Rejection\("([a-z_]+)"', source))
    assert codes - {c[0] for c in CASES} == set()


def test_a_seat_not_to_act_has_no_legal_actions():
    sc = scenario(SPEC, 3).given(*deal(satchels=((), (), ())), *refuge(seat=1))
    assert SPEC.legal_actions(sc.state, 0) == [] and SPEC.legal_actions(sc.state, 2) == []
    assert C.MoveOn(seat=1) in SPEC.legal_actions(sc.state, 1)


def _every_command(seat, seats):
    """Every command a seat could send, whatever the state: each type with each card id,
    each rally and each payer."""
    from croupier.games.journey.cards import CARDS

    cards = list(CARDS)
    out = [cls(seat=seat) for cls in (C.Forage, C.MoveOn, C.Hide, C.PlayReckoning, C.Brace, C.Deliver,
                                      C.UseWreckage, C.StripRuin, C.Proceed)]
    for cls in (C.Recover, C.Cache, C.Regroup, C.TakeBack, C.Retrieve, C.Flee, C.Discard, C.Cover, C.ShedJoker,
                C.Pay):
        out += [cls(seat=seat, card=c) for c in cards]
    out += [C.Strike(seat=seat, card=c, rally=r) for c in cards for r in range(11)]
    out += [C.ShedBurden(seat=seat, extra=p) for p in range(-1, seats + 1)]
    return out


def test_legal_actions_are_exactly_the_commands_decide_accepts_in_the_sorted_order():
    import random

    from croupier.engine.codec import MessageCodec
    from croupier.engine.contract import Context, Rejection, sort_actions
    from croupier.engine.testing import fair_rng
    from croupier.games.journey.bots import heuristic

    codec = MessageCodec(SPEC.commands, seat_in_envelope=True)
    checked, steps = 0, set()
    for seats, options in ((1, {"allies": True, "companions": True, "return_journey": True}),
                           (3, {"allies": True, "companions": True, "return_journey": True}), (2, None)):
        state = SPEC.initial_state(SPEC.parse_options(options), seats)
        rng, pick = fair_rng(f"{seats:064x}"), random.Random(seats)
        for event in SPEC.decide(Start(), state, Context(rng=rng)):
            state = SPEC.evolve(state, event)
        everything = {seat: _every_command(seat, seats) for seat in range(seats)}
        step = 0
        while not SPEC.is_over(state):
            seat = SPEC.to_act(state)[0]
            legal = SPEC.legal_actions(state, seat)
            assert legal == sort_actions(legal)
            if step % 4 == 0:
                accepted = []
                for cmd in everything[seat]:
                    try:
                        SPEC.decide(cmd, state, Context(rng=fair_rng()))
                    except Rejection:
                        continue
                    accepted.append(cmd)
                assert set(accepted) == set(legal), (state.step, set(accepted) ^ set(legal))
                checked += 1
                steps.add(state.step)
            step += 1
            wire = [codec.encode(a) for a in legal]
            choice = heuristic(SPEC.view(state, seat), wire, pick)
            for event in SPEC.decide(legal[wire.index(choice)], state, Context(rng=rng)):
                state = SPEC.evolve(state, event)
    assert checked > 20 and {"refuge", "fight", "cover", "stop", "pay"} <= steps, steps
