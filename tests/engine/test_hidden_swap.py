"""No seat can tell two hidden cards apart. At states sampled from random games of every game,
two cards hidden from a viewer (of a kind every seat knows, so that both could be where the
other is) are swapped everywhere in the state; the viewer's view, its legal actions and the
answers to the commands it may send (each naming either card too) must be the same. This
finds what a check of the views for hidden card ids cannot: a number derived from hidden
cards (journey showed another traveller's room used, which counted its free Aces), or a
rejection that depends on where a named card really is."""

from __future__ import annotations

import collections
import dataclasses
import random

import pytest

from croupier.engine import registry
from croupier.engine.contract import Context, Rejection
from croupier.engine.local import LocalTable
from croupier.engine.rng import FairRng
from croupier.engine.testing import random_steps

GAMES = sorted(registry.GAME_IDS)


def swapped(obj, a: str, b: str, memo: dict):
    """obj with the strings a and b exchanged everywhere (records rebuilt, content shared)."""
    t = type(obj)
    if t is str:
        return b if obj == a else a if obj == b else obj
    if obj is None or t in (int, bool, float):
        return obj
    if id(obj) in memo:
        return memo[id(obj)]
    if t in (tuple, list, set, frozenset):
        out = t(swapped(x, a, b, memo) for x in obj)
    elif t is dict:
        out = {swapped(k, a, b, memo): swapped(v, a, b, memo) for k, v in obj.items()}
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out = object.__new__(t)
        for f in dataclasses.fields(obj):
            object.__setattr__(out, f.name, swapped(getattr(obj, f.name), a, b, memo))
    else:
        out = obj
    memo[id(obj)] = out
    return out


def kind(game_id: str, card: str, game) -> str:
    """What every seat knows of a hidden card: two cards of one kind could be in each other's
    places as far as any seat can tell."""
    if game_id in ("expeditions", "virtues"):
        return card.split("-")[0]
    if game_id == "journey":
        return "J" if card == "JOKER" else ("HS" if card[-1] in "HS" else "DC")
    if game_id == "nightfall":
        return card[:2]
    if game_id == "delve":
        from croupier.games.delve.rules import ENC

        if card in ENC:
            return f"enc-{ENC[card].kind}-{ENC[card].tier}"
        for s, p in enumerate(game.players):
            if card in p.hand or card in p.draw:
                return f"seat{s}"  # each seat's deck is known to all, not its order
        return "stock" if card in game.shop.stock else "loot" if card in game.shop.loot else "other"
    raise AssertionError(f"no kinds for {game_id}")


def answer(spec, command, game, rng_args, now):
    try:
        return ("ok", len(spec.decide(command, game, Context(rng=FairRng(*rng_args), now=now))))
    except Rejection as exc:
        return ("refused", exc.code, exc.message)


def probe(spec, game_id, game, seats, known_commands, rng_args, now, rnd) -> list[str]:
    found = []
    for viewer in [None, *range(seats)]:
        hidden = set(spec.hidden(game, viewer))
        if game_id == "delve" and viewer is not None:
            hidden.update(game.players[viewer].draw)  # one's own draw pile: its cards known, its order not
        kinds = collections.defaultdict(list)
        for card in sorted(hidden):
            kinds[kind(game_id, card, game)].append(card)
        pairs = [cards for cards in kinds.values() if len(cards) >= 2]
        if not pairs:
            continue
        a, b = rnd.sample(rnd.choice(pairs), 2)
        other = swapped(game, a, b, {})
        if spec.view(game, viewer) != spec.view(other, viewer):
            found.append(f"the view of {viewer} tells {a} from {b}")
        if viewer is None:
            continue
        if [c.sort_key() for c in spec.legal_actions(game, viewer)] != \
                [c.sort_key() for c in spec.legal_actions(other, viewer)]:
            found.append(f"seat {viewer}'s legal actions tell {a} from {b}")
        commands = []
        for command in known_commands.values():
            command = dataclasses.replace(command, seat=viewer)
            commands.append(command)
            for f in dataclasses.fields(command):
                if f.name != "seat" and isinstance(getattr(command, f.name), str):
                    commands += [dataclasses.replace(command, **{f.name: a}), dataclasses.replace(command, **{f.name: b})]
        for command in commands:
            if answer(spec, command, game, rng_args, now) != answer(spec, command, other, rng_args, now):
                found.append(f"seat {viewer}'s {command} is answered differently when {a} and {b} swap")
                break
    return found


@pytest.mark.parametrize("game_id", GAMES)
def test_no_seat_can_tell_two_hidden_cards_apart(game_id):
    spec = registry.get(game_id)
    rnd = random.Random(f"swap:{game_id}")
    found: list[str] = []
    for g in range(2):
        seats = max(2, spec.min_seats) + g if spec.max_seats > 1 else 1
        seats = min(seats, spec.max_seats)
        table = LocalTable(spec, f"swap-{g}", seats, None, f"{g:02x}" * 32)
        table.join_all()
        known: dict = {}
        for steps, (st, now) in enumerate(random_steps(table, rnd, 1500), 1):
            for s in range(seats):
                for c in spec.legal_actions(st.game, s):
                    known.setdefault((type(c), c.sort_key()[1:]), c)
            if steps % 9 == 0:
                found += probe(spec, game_id, st.game, seats, dict(list(known.items())[-60:]),
                               (st.seed, st.entropy, st.rng_counter), now, rnd)
    assert not found, found[:5]
