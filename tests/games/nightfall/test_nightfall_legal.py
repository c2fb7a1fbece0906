"""legal_actions is exact: on states met in play, the commands decide accepts (out of a
broad superset of plausible commands) are exactly the legal actions."""

from __future__ import annotations

import itertools
import random

from croupier.engine.contract import Context, Rejection, sort_actions
from croupier.engine.local import LocalTable
from croupier.engine.rng import FairRng
from croupier.engine.selfplay import table_seed
from croupier.games.nightfall import SPEC
from croupier.games.nightfall import commands as C
from croupier.games.nightfall.cards import CONTENT, deck_cards


def _states(seed: int, games: int, options=None):
    out = []
    for g in range(games):
        table = LocalTable(SPEC, f"exact-{g}", 2, options, table_seed(seed, g, SPEC.id))
        table.join_all()
        rng = random.Random(seed * 100 + g)
        while table.state.status != "over":
            state = table.state.game
            out.append(state)
            seat = SPEC.to_act(state)[rng.randrange(len(SPEC.to_act(state)))]
            legal = SPEC.legal_actions(state, seat)
            table.handle(legal[rng.randrange(len(legal))])
    return out


def _ids(state):
    ids = set()
    for p in state.players:
        ids.update(p.hand)
        ids.update(c for c, _ in p.withdrawn)
        ids.update(p.discard[-3:])
        ids.update(p.deck[:2])
    ids.update(pl.card for pl in state.places)
    ids.update(f.card for f in state.fighters)
    ids.update(c for f in state.fighters for c in f.attached)
    ids.update(f.item for f in state.fighters if f.item)
    ids.update(c for c in state.opening if c)
    ids.update(deck_cards(0, state.decks[0])[:1] + deck_cards(1, state.decks[1])[-1:])
    return sorted(ids)


def _superset(state, seat):
    ids = _ids(state)
    xs = [p.x for p in state.places] or [0]
    ys = [p.y for p in state.places] or [0]
    cells = itertools.product(range(min(xs) - 2, max(xs) + 3), range(min(ys) - 2, max(ys) + 3))
    pairs = list(itertools.product(ids, ids))
    targets = list(itertools.product(ids, [*ids, None]))
    yield C.EndTurn(seat=seat)
    yield C.DrawCard(seat=seat)
    for card in ids:
        yield C.PlayOpeningLocation(seat=seat, card=card)
        yield C.Withdraw(seat=seat, character=card)
        yield C.UseItem(seat=seat, character=card)
        yield C.DiscardItem(seat=seat, character=card)
    for x, y in cells:
        yield C.PlaceLocation(seat=seat, x=x, y=y)
    for a, b in pairs:
        yield C.PlayCharacter(seat=seat, card=a, location=b)
        yield C.PlayCharacterOnNewLocation(seat=seat, card=a, location=b)
        yield C.PlayLocation(seat=seat, character=a, location=b)
        yield C.MoveCharacter(seat=seat, character=a, to=b)
        yield C.Attack(seat=seat, attacker=a, target=b, with_item=False)
        yield C.Attack(seat=seat, attacker=a, target=b, with_item=True)
        yield C.TransferItem(seat=seat, character=a, to=b)
        yield C.PlayItem(seat=seat, card=a, character=b)
    for a, t in targets:
        yield C.UseAbility(seat=seat, character=a, target=t)
        yield C.PlayEvent(seat=seat, card=a, target=t)
    for trap in [*CONTENT.traps, "torch"]:
        for b in ids:
            yield C.SetTrap(seat=seat, trap=trap, location=b)


def _accepted(state, seat):
    ok = []
    for cmd in _superset(state, seat):
        try:
            SPEC.decide(cmd, state, Context(rng=FairRng("00" * 32, "", 0)))
        except Rejection:
            continue
        ok.append(cmd)
    return ok


def test_legal_actions_are_exactly_what_decide_accepts():
    states = _states(seed=11, games=2, options={"max_rounds": 8})
    by_phase = {}
    for state in states:
        by_phase.setdefault(state.phase, []).append(state)
    assert {"opening", "main", "place", "traps"} <= set(by_phase)
    rng = random.Random(5)
    sample = [s for phase in sorted(by_phase) for s in rng.sample(by_phase[phase], min(4, len(by_phase[phase])))]
    for state in sample:
        for seat in (0, 1):
            legal = SPEC.legal_actions(state, seat)
            assert legal == sort_actions(legal)
            assert sort_actions(_accepted(state, seat)) == legal, (state.phase, seat)
