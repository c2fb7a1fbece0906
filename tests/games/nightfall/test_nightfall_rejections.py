"""Every kind of illegal command is rejected with its code, and legal_actions never offers it."""

from __future__ import annotations

import pytest
from nightfall_setup import LIGHT, MOOR, deal, enter, game, place, turn

from croupier.engine.contract import Start, Tick
from croupier.engine.table import JoinSeat
from croupier.games.nightfall import SPEC
from croupier.games.nightfall import commands as C
from croupier.games.nightfall import events as E

WOLF, GHOUL, BANSHEE, WITCH = "s0-werewolf-1", "s0-ghoul-1", "s0-banshee-1", "s0-witch-1"
KNIGHT, PRIEST = "s1-knight-1", "s1-priest-1"
TORCH, MEDKIT, CRYPT = "s0-torch-1", "s0-medkit-1", "s0-old-crypt-1"
SUPPLY, BOLT, WIND = "s0-supply-run-1", "s0-lightning-strike-1", "s0-second-wind-1"
PIT = "s0-spike-pit-1"


def fight(*extra, hand0=(), options=None):
    """Werewolf (seat 0, 3 actions) and Knight (seat 1) on the Misty Moor, turn 3 of seat 0."""
    return game(*deal(hand0=(WOLF, *hand0), hand1=(KNIGHT, "s1-medkit-1")), enter(0, WOLF, MOOR, 50), turn(1, 2),
                enter(1, KNIGHT, MOOR, 50), turn(0, 3), *extra, options=options)


def rejected(g, cmd, code):
    g.when(cmd).rejects(code)
    legal = SPEC.legal_actions(g.state, cmd.seat) if cmd.seat is not None else []
    assert cmd not in legal, f"{cmd} is rejected ({code}) but offered as legal"


CASES = {
    # phase and turn
    "not_started": (lambda: game(), C.EndTurn(seat=0)),
    "already_started": (lambda: fight(), Start()),
    "no_deadline": (lambda: fight(), Tick(now=5)),
    "game_over": (lambda: fight(E.GameEnded(winners=(0,), reason="graveyard", graveyard=(0, 200))), C.EndTurn(seat=0)),
    "not_your_turn": (lambda: fight(), C.EndTurn(seat=1)),
    "wrong_phase": (lambda: fight(E.TrapWindowOpened(seat=0)), C.DrawCard(seat=0)),
    "unknown_command": (lambda: fight(), JoinSeat(seat=0, player="x")),
    # setup
    "already_chosen": (lambda: game(*deal(hand1=("s1-town-wall-1",))[:5], E.OpeningLocationChosen(seat=1, card=LIGHT)),
                       C.PlayOpeningLocation(seat=1, card="s1-town-wall-1")),
    "not_a_location": (lambda: game(*deal(hand0=(WOLF,))[:5]), C.PlayOpeningLocation(seat=0, card=WOLF)),
    "not_in_hand": (lambda: fight(), C.PlayCharacter(seat=0, card=GHOUL, location=MOOR)),
    # Characters
    "not_a_character": (lambda: fight(E.TurnStarted(seat=0, turn=5, started_empty=False), hand0=(TORCH,)),
                        C.PlayCharacter(seat=0, card=TORCH, location=MOOR)),
    "character_already_played": (lambda: fight(enter(0, GHOUL, MOOR, 30), hand0=(GHOUL, BANSHEE)),
                                 C.PlayCharacter(seat=0, card=BANSHEE, location=MOOR)),
    "duplicate_character": (lambda: game(*deal(hand0=(WOLF,), hand1=("s1-werewolf-1",)), enter(0, WOLF, MOOR, 50),
                                         turn(1, 2), options={"deck_1": "monsters"}),
                            C.PlayCharacter(seat=1, card="s1-werewolf-1", location=LIGHT)),
    "over_capacity": (lambda: fight(enter(0, "s0-swamp-troll-1", LIGHT, 60), turn(1, 4), turn(0, 5),
                                    hand0=("s0-swamp-troll-1", GHOUL)),
                      C.PlayCharacter(seat=0, card=GHOUL, location=MOOR)),
    "no_such_location": (lambda: fight(hand0=(GHOUL, CRYPT)), C.PlayCharacter(seat=0, card=GHOUL, location=CRYPT)),
    # Locations
    "first_round": (lambda: game(*deal(hand0=(GHOUL, CRYPT))),
                    C.PlayCharacterOnNewLocation(seat=0, card=GHOUL, location=CRYPT)),
    "duplicate_location": (lambda: fight(hand0=("s0-lighthouse-1",)),
                           C.PlayLocation(seat=0, character=WOLF, location="s0-lighthouse-1")),
    "no_room": (lambda: fight(*[place(1, f"s1-{d}-1", x, y) for d, (x, y) in zip(
        ("village-square", "stone-chapel", "watchtower", "old-bridge", "town-wall", "black-swamp", "old-crypt"),
        ((-1, -1), (0, -1), (1, -1), (-1, 0), (-1, 1), (0, 1), (1, 1)))], hand0=(CRYPT, "s0-haunted-manor-1")),
        C.PlayLocation(seat=0, character=WOLF, location="s0-haunted-manor-1")),
    "cell_occupied": (lambda: fight(E.PlacementPending(seat=0, kind="discover", character=WOLF, location=CRYPT),
                                    hand0=(CRYPT,)), C.PlaceLocation(seat=0, x=1, y=0)),
    "cell_not_adjacent": (lambda: fight(E.PlacementPending(seat=0, kind="discover", character=WOLF, location=CRYPT),
                                        hand0=(CRYPT,)), C.PlaceLocation(seat=0, x=2, y=1)),
    # Move
    "not_adjacent": (lambda: fight(place(0, CRYPT, 4, 4), hand0=(CRYPT,)), C.MoveCharacter(seat=0, character=WOLF, to=CRYPT)),
    "no_such_character": (lambda: fight(), C.MoveCharacter(seat=0, character=GHOUL, to=LIGHT)),
    "not_your_character": (lambda: fight(), C.MoveCharacter(seat=0, character=KNIGHT, to=LIGHT)),
    "not_enough_actions": (lambda: fight(E.ActionsChanged(character=WOLF, actions=1, reason="trap")),
                           C.Attack(seat=0, attacker=WOLF, target=KNIGHT)),
    # Attack
    "own_character": (lambda: fight(enter(0, GHOUL, MOOR, 30), hand0=(GHOUL,)), C.Attack(seat=0, attacker=WOLF, target=GHOUL)),
    "not_same_location": (lambda: fight(E.CharacterMoved(character=KNIGHT, to=LIGHT, cost=0)),
                          C.Attack(seat=0, attacker=WOLF, target=KNIGHT)),
    "no_attack_here": (lambda: fight(place(1, "s1-stone-chapel-1", 0, 1),
                                     E.CharacterMoved(character=WOLF, to="s1-stone-chapel-1", cost=0),
                                     E.CharacterMoved(character=KNIGHT, to="s1-stone-chapel-1", cost=0)),
                       C.Attack(seat=0, attacker=WOLF, target=KNIGHT)),
    "no_weapon": (lambda: fight(), C.Attack(seat=0, attacker=WOLF, target=KNIGHT, with_item=True)),
    # Items
    "not_an_item": (lambda: fight(hand0=(SUPPLY,)), C.PlayItem(seat=0, card=SUPPLY, character=WOLF)),
    "already_acted": (lambda: fight(E.CharacterMoved(character=WOLF, to=LIGHT, cost=1), hand0=(TORCH,)),
                      C.PlayItem(seat=0, card=TORCH, character=WOLF)),
    "has_item": (lambda: fight(E.ItemAttached(seat=0, item=TORCH, character=WOLF, uses=5), hand0=(TORCH, MEDKIT)),
                 C.PlayItem(seat=0, card=MEDKIT, character=WOLF)),
    "no_item": (lambda: fight(), C.UseItem(seat=0, character=WOLF)),
    "weapon_item": (lambda: fight(E.ItemAttached(seat=0, item=TORCH, character=WOLF, uses=5), hand0=(TORCH,)),
                    C.UseItem(seat=0, character=WOLF)),
    "item_used": (lambda: fight(E.ItemAttached(seat=0, item=MEDKIT, character=WOLF, uses=2),
                                E.ItemUsed(character=WOLF, item=MEDKIT, uses=1), hand0=(MEDKIT,)),
                  C.UseItem(seat=0, character=WOLF)),
    "deck_empty": (lambda: fight(), C.DrawCard(seat=0)),
    "already_transferred": (lambda: fight(enter(0, GHOUL, MOOR, 30), E.ItemAttached(seat=0, item=TORCH, character=WOLF, uses=5),
                                          E.ItemTransferred(character=WOLF, to=GHOUL, item=TORCH, cost=1),
                                          E.ItemTransferred(character=GHOUL, to=WOLF, item=TORCH, cost=1),
                                          hand0=(GHOUL, TORCH)),
                            C.TransferItem(seat=0, character=WOLF, to=GHOUL)),
    "same_character": (lambda: fight(E.ItemAttached(seat=0, item=TORCH, character=WOLF, uses=5), hand0=(TORCH,)),
                       C.TransferItem(seat=0, character=WOLF, to=WOLF)),
    # Abilities
    "no_ability": (lambda: fight(), C.UseAbility(seat=0, character=WOLF)),
    "ability_inactive": (lambda: fight(enter(0, WITCH, MOOR, 20), hand0=(WITCH,)), C.UseAbility(seat=0, character=WITCH)),
    "ability_used": (lambda: fight(enter(0, BANSHEE, MOOR, 20),
                                   E.AbilityUsed(character=BANSHEE, kind="strike", target=KNIGHT, cost=1),
                                   E.CharacterMoved(character=KNIGHT, to=LIGHT, cost=0), hand0=(BANSHEE,)),
                     C.UseAbility(seat=0, character=BANSHEE, target=KNIGHT)),
    "no_target": (lambda: fight(place(0, CRYPT, -1, 0), enter(0, WITCH, CRYPT, 20), hand0=(WITCH, CRYPT)),
                  C.UseAbility(seat=0, character=WITCH, target=WITCH)),
    # Events
    "not_an_event": (lambda: fight(hand0=(TORCH,)), C.PlayEvent(seat=0, card=TORCH)),
    "event_already_played": (lambda: fight(E.EventPlayed(seat=0, card=SUPPLY, target=None), hand0=(SUPPLY, BOLT)),
                             C.PlayEvent(seat=0, card=BOLT, target=KNIGHT)),
    "already_drawn": (lambda: game(*deal(deck0=(TORCH, MEDKIT)), E.GraveyardPenalty(seat=0, amount=10, reason="paid_draw")),
                      C.DrawCard(seat=0)),
    # Traps
    "not_a_trap": (lambda: fight(E.TrapWindowOpened(seat=0)), C.SetTrap(seat=0, trap="torch", location=MOOR)),
    "trap_incomplete": (lambda: fight(E.TrapWindowOpened(seat=0), hand0=(PIT,)),
                        C.SetTrap(seat=0, trap="spike-pit", location=MOOR)),
}


@pytest.mark.parametrize("code", sorted(CASES))
def test_rejection_code(code):
    make, cmd = CASES[code]
    rejected(make(), cmd, code)


def test_a_trap_that_is_not_even_a_name_is_refused():
    """trap={} raised TypeError (a dict cannot be looked up in a dict), which a rules
    partition did not survive; every other field of every command was already refused."""
    for trap in ({}, [], None, 7):
        rejected(fight(hand0=(PIT,)), C.SetTrap(seat=0, trap=trap, location=MOOR), "not_a_trap")


def test_event_target_must_fit_the_event():
    g = fight(hand0=(SUPPLY, BOLT, WIND))
    rejected(g, C.PlayEvent(seat=0, card=SUPPLY, target=KNIGHT), "no_target")
    rejected(g, C.PlayEvent(seat=0, card=BOLT, target=None), "no_such_character")
    rejected(g, C.PlayEvent(seat=0, card=WIND, target=KNIGHT), "not_your_character")


def test_heal_ability_target_on_the_same_location_and_strike_on_an_adjacent_one():
    watch = "s1-watchtower-1"
    g = game(*deal(hand0=(WOLF,), hand1=(PRIEST, KNIGHT, watch)), turn(1, 4), place(1, watch, 1, 1),
             enter(1, PRIEST, watch, 30), enter(0, WOLF, MOOR, 50))
    g.given(E.CharacterPlayed(seat=1, card=KNIGHT, location=LIGHT, hp=50, actions=3, withdrawn=False))
    rejected(g, C.UseAbility(seat=1, character=PRIEST, target=KNIGHT), "not_same_location")
    rejected(g, C.UseAbility(seat=1, character=PRIEST, target=WOLF), "not_your_character")
    far = game(*deal(hand0=(BANSHEE, CRYPT), hand1=(KNIGHT,)), turn(1, 2), enter(1, KNIGHT, LIGHT, 50), turn(0, 3),
               place(0, CRYPT, -1, 0), enter(0, BANSHEE, MOOR, 20), E.CharacterMoved(character=KNIGHT, to=MOOR, cost=0))
    rejected(far, C.UseAbility(seat=0, character=BANSHEE, target=KNIGHT), "not_adjacent")  # same Location


def test_other_seat_is_refused_in_the_opening_once_it_chose():
    g = game(*deal()[:5], E.OpeningLocationChosen(seat=0, card=MOOR))
    rejected(g, C.PlayOpeningLocation(seat=0, card=MOOR), "already_chosen")


def test_transfer_needs_a_friend_on_the_same_location_without_an_item():
    g = fight(enter(0, GHOUL, LIGHT, 30), E.ItemAttached(seat=0, item=TORCH, character=WOLF, uses=5), hand0=(GHOUL, TORCH))
    rejected(g, C.TransferItem(seat=0, character=WOLF, to=GHOUL), "not_same_location")
    g = fight(enter(0, GHOUL, MOOR, 30), E.ItemAttached(seat=0, item=TORCH, character=WOLF, uses=5),
              E.ItemAttached(seat=0, item=MEDKIT, character=GHOUL, uses=2), hand0=(GHOUL, TORCH, MEDKIT))
    rejected(g, C.TransferItem(seat=0, character=WOLF, to=GHOUL), "has_item")


def test_every_rejection_code_of_the_rules_has_a_case():
    import re
    from pathlib import Path

    from croupier.games.nightfall import rules

    source = Path(rules.__file__).read_text(encoding="utf-8")
    codes = set(re.findall(r'_reject\("([a-z_]+)"', source)) | set(rules._NOT_A.values())
    assert codes - set(CASES) == set()
