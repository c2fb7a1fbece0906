"""The generated helpers nightfall's rules lean on for speed do what the plain ones do:
command builders and sort keys, and the state records' replace."""

from __future__ import annotations

import dataclasses

import pytest

from croupier.engine.contract import Command
from croupier.games.nightfall import commands as C
from croupier.games.nightfall.state import Fighter, Player, State, replace_fighter, replace_player, replace_state

# Values of every type a wire command may carry (lists arrive as tuples).
VALUES = ["s0-raven-1", "", None, 0, 3, True, False, ("a", 1), "s1-moor-2"]


def _fields(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


@pytest.mark.parametrize("cls", C.COMMANDS, ids=lambda c: c.TYPE)
def test_builder_makes_the_command_the_constructor_makes(cls):
    names = _fields(cls)
    for shift in range(len(VALUES)):
        values = [VALUES[(shift + i) % len(VALUES)] for i in range(len(names))]
        built = C.BUILD[cls](*values)
        made = cls(**dict(zip(names, values)))
        assert built == made and hash(built) == hash(made)
        assert type(built) is cls and list(vars(built).items()) == list(vars(made).items())
        with pytest.raises(dataclasses.FrozenInstanceError):
            built.seat = 1


@pytest.mark.parametrize("cls", C.COMMANDS, ids=lambda c: c.TYPE)
def test_generated_sort_key_is_the_contracts(cls):
    names = _fields(cls)
    for shift in range(len(VALUES)):
        command = cls(**{n: VALUES[(shift + i) % len(VALUES)] for i, n in enumerate(names)})
        assert command.sort_key() == Command.sort_key(command)


def test_replace_functions_match_dataclasses_replace():
    fighter = Fighter(card="s0-raven-1", location="s1-moor-1", hp=5, actions=3, attached=("s1-x-1",))
    assert replace_fighter(fighter, hp=2, item="s0-sword-1") == dataclasses.replace(fighter, hp=2, item="s0-sword-1")
    assert replace_fighter(fighter) == fighter and replace_fighter(fighter) is not fighter
    player = Player(hand=("a",), deck=("b", "c"))
    assert replace_player(player, deck=()) == dataclasses.replace(player, deck=())
    state = State(decks=("d0", "d1"), withdraw_cost=3, max_rounds=10, players=(player, player), fighters=(fighter,))
    changed = replace_state(state, turn=4, phase="main", fighters=())
    assert changed == dataclasses.replace(state, turn=4, phase="main", fighters=())
    assert state.turn == 0 and state.fighters == (fighter,)  # the original is untouched
    with pytest.raises(TypeError):
        replace_state(state, no_such_field=1)
