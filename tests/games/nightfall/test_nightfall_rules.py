"""Every rule of the text, as given / when / then on events."""

from __future__ import annotations

from nightfall_setup import LIGHT, MOOR, deal, enter, game, place, turn

from croupier.engine.contract import Start
from croupier.engine.testing import scenario
from croupier.games.nightfall import SPEC
from croupier.games.nightfall import commands as C
from croupier.games.nightfall import events as E
from croupier.games.nightfall.cards import deck_cards
from croupier.games.nightfall.rules import legal_actions

WOLF = "s0-werewolf-1"  # 50 HP, Maul 15, beast: +10 DMG
GHOUL = "s0-ghoul-1"  # 30 HP, Claw 10
TROLL = "s0-swamp-troll-1"  # 60 HP, Smash 15, secondary armor 5
VAMP = "s0-vampire-1"  # 40 HP, Bite 10, undead: drain 10, secondary drain 5
BANSHEE = "s0-banshee-1"  # 20 HP, spirit: strike 10
WITCH = "s0-witch-1"  # 20 HP, mystic: draw 1
KNIGHT = "s1-knight-1"  # 50 HP, Longsword 15, soldier: armor 10
PRIEST = "s1-priest-1"  # 30 HP, Smite 5, mystic: heal 15
RANGER = "s1-ranger-1"  # 30 HP, Arrow 10
GUARD = "s1-town-guard-1"  # 30 HP, Spear 10, secondary armor 5


def fight(*extra, hand0=(), hand1=(), deck0=(), deck1=(), options=None, now=3):
    """Werewolf (seat 0) and Knight (seat 1) face each other on the Misty Moor; it is turn
    `now` of seat 0 (turn 3 by default, so Location conditions are in use)."""
    return game(
        *deal(hand0=(WOLF, *hand0), hand1=(KNIGHT, *hand1), deck0=deck0, deck1=deck1),
        enter(0, WOLF, MOOR, 50),
        turn(1, 2),
        enter(1, KNIGHT, MOOR, 50),
        turn(0, now),
        *extra,
        options=options,
    )


# --- Press Play -------------------------------------------------------------------------


def test_start_shuffles_each_deck_and_deals_six_cards():
    monsters, defenders = deck_cards(0, "monsters"), deck_cards(1, "defenders")
    # Unshuffled, each list opens with its six Locations, so no redraw is needed.
    game().when(Start(), outcomes=[list(range(len(monsters))), list(range(len(defenders)))]).then(
        E.DeckShuffled(seat=0, order=monsters),
        E.CardsDrawn(seat=0, count=6, reason="deal"),
        E.DeckShuffled(seat=1, order=defenders),
        E.CardsDrawn(seat=1, count=6, reason="deal"),
        E.HandsDealt(),
    )


def test_opening_hand_without_a_location_is_shuffled_back_and_drawn_again():
    monsters, defenders = deck_cards(0, "monsters"), deck_cards(1, "defenders")
    backwards = list(reversed(range(len(monsters))))  # Traps, Events and Items on top
    result = game().when(Start(), outcomes=[backwards, backwards, list(range(len(defenders)))])
    # The redraw shuffles hand + deck (the reversed list again) backwards: Locations on top.
    assert result.events[:5] == [
        E.DeckShuffled(seat=0, order=tuple(reversed(monsters))),
        E.CardsDrawn(seat=0, count=6, reason="deal"),
        E.HandRedrawn(seat=0, order=monsters),
        E.CardsDrawn(seat=0, count=6, reason="deal"),
        E.DeckShuffled(seat=1, order=defenders),
    ]
    assert result.then_state().players[0].redraws == 1


def test_first_locations_are_laid_face_down_then_turned_up_together():
    g = game(*deal()[:5])
    g.when(C.PlayOpeningLocation(seat=1, card=LIGHT)).then(E.OpeningLocationChosen(seat=1, card=LIGHT))


def test_lowest_capacity_first_location_takes_the_first_turn():
    mine = "s0-abandoned-mine-1"  # capacity 40 < Lighthouse 90
    g = game(*deal(open0=mine)[:5], E.OpeningLocationChosen(seat=1, card=LIGHT))
    g.when(C.PlayOpeningLocation(seat=0, card=mine)).then(
        E.OpeningLocationChosen(seat=0, card=mine),
        E.OpeningLocationsRevealed(cards=(mine, LIGHT), first=0, tie_broken=False),
        E.TurnStarted(seat=0, turn=1, started_empty=True),
    )
    bridge = "s1-old-bridge-1"  # capacity 40 < Misty Moor 90
    g = game(*deal(open1=bridge)[:5], E.OpeningLocationChosen(seat=1, card=bridge))
    g.when(C.PlayOpeningLocation(seat=0, card=MOOR)).then(
        E.OpeningLocationChosen(seat=0, card=MOOR),
        E.OpeningLocationsRevealed(cards=(MOOR, bridge), first=1, tie_broken=False),
        E.TurnStarted(seat=1, turn=1, started_empty=True),
    )


def test_equal_capacities_choose_the_first_player_at_random_and_record_it():
    g = game(*deal()[:5], E.OpeningLocationChosen(seat=0, card=MOOR))
    g.when(C.PlayOpeningLocation(seat=1, card=LIGHT), outcomes=[1]).then(
        E.OpeningLocationChosen(seat=1, card=LIGHT),
        E.OpeningLocationsRevealed(cards=(MOOR, LIGHT), first=1, tie_broken=True),
        E.TurnStarted(seat=1, turn=1, started_empty=True),
    )


def test_first_locations_of_the_same_design_may_both_open():
    mirror = {"deck_1": "monsters"}
    other = "s1-misty-moor-1"
    g = game(*deal(open1=other)[:5], E.OpeningLocationChosen(seat=0, card=MOOR), options=mirror)
    events = g.when(C.PlayOpeningLocation(seat=1, card=other), outcomes=[0]).events
    assert events[1] == E.OpeningLocationsRevealed(cards=(MOOR, other), first=0, tie_broken=True)


# --- Character cards --------------------------------------------------------------------


def test_putting_a_character_into_play_expends_one_of_its_three_actions():
    game(*deal(hand0=(WOLF,))).when(C.PlayCharacter(seat=0, card=WOLF, location=LIGHT)).then(
        E.CharacterPlayed(seat=0, card=WOLF, location=LIGHT, hp=50, actions=2, withdrawn=False)
    )


def test_one_character_per_turn():
    g = game(*deal(hand0=(WOLF, GHOUL)), enter(0, WOLF, MOOR, 50))
    g.when(C.PlayCharacter(seat=0, card=GHOUL, location=MOOR)).rejects("character_already_played")


def test_no_duplicate_character_in_play_even_across_players():
    other_wolf = "s1-werewolf-1"
    g = game(*deal(hand0=(WOLF,), hand1=(other_wolf,)), enter(0, WOLF, MOOR, 50), turn(1, 2),
             options={"deck_1": "monsters"})
    g.when(C.PlayCharacter(seat=1, card=other_wolf, location=LIGHT)).rejects("duplicate_character")


def test_hp_capacity_counts_current_hp_of_both_players_plus_the_new_printed_hp():
    # Capacity 90 + 90 = 180. In play: Troll 60 and Knight at 50 and Werewolf 50 -> 160; damaged Knight at 30 -> 140.
    g = fight(enter(0, TROLL, LIGHT, 60), hand0=(TROLL, GHOUL))
    g.given(turn(1, 4), E.CharacterDamaged(character=KNIGHT, amount=20, hp=30, source="attack"), turn(0, 5))
    # 140 + Ghoul 30 = 170 <= 180: fits
    g.when(C.PlayCharacter(seat=0, card=GHOUL, location=MOOR)).then(
        E.CharacterPlayed(seat=0, card=GHOUL, location=MOOR, hp=30, actions=2, withdrawn=False))
    g2 = fight(enter(0, TROLL, LIGHT, 60), hand0=(TROLL, GHOUL))  # 160 + 30 = 190 > 180
    g2.given(turn(1, 4), turn(0, 5)).when(C.PlayCharacter(seat=0, card=GHOUL, location=MOOR)).rejects("over_capacity")


def test_character_on_a_new_location_counts_its_capacity_and_starts_there_without_a_draw():
    crypt = "s0-old-crypt-1"
    g = game(*deal(hand0=(GHOUL, crypt), deck0=("s0-torch-1",)), turn(1, 2), turn(0, 3))
    g.when(C.PlayCharacterOnNewLocation(seat=0, card=GHOUL, location=crypt)).then(
        E.PlacementPending(seat=0, kind="character", character=GHOUL, location=crypt))
    g.given(E.PlacementPending(seat=0, kind="character", character=GHOUL, location=crypt))
    g.when(C.PlaceLocation(seat=0, x=-1, y=1)).then(
        E.LocationPlayed(seat=0, card=crypt, x=-1, y=1, character=None, cost=0),
        E.CharacterPlayed(seat=0, card=GHOUL, location=crypt, hp=30, actions=2, withdrawn=False),
    )


def test_new_location_capacity_lets_a_character_in_that_would_not_fit():
    crypt = "s0-old-crypt-1"
    # 180 capacity; in play 60 + 50 + 50 = 160; Ghoul 30 fits only with the Crypt's 50.
    g = fight(enter(0, TROLL, LIGHT, 60), turn(1, 4), turn(0, 5), hand0=(TROLL, GHOUL, crypt))
    g.when(C.PlayCharacterOnNewLocation(seat=0, card=GHOUL, location=crypt)).then(
        E.PlacementPending(seat=0, kind="character", character=GHOUL, location=crypt))


# --- Location cards ---------------------------------------------------------------------


def test_no_new_location_in_the_first_round():
    crypt = "s0-old-crypt-1"
    g = game(*deal(hand0=(GHOUL, crypt)))
    g.when(C.PlayCharacterOnNewLocation(seat=0, card=GHOUL, location=crypt)).rejects("first_round")


def test_play_location_action_costs_two_and_the_location_touches_the_characters_by_edge_or_corner():
    crypt = "s0-old-crypt-1"
    g = fight(hand0=(crypt,))
    g.when(C.PlayLocation(seat=0, character=WOLF, location=crypt)).then(
        E.PlacementPending(seat=0, kind="discover", character=WOLF, location=crypt))
    g.given(E.PlacementPending(seat=0, kind="discover", character=WOLF, location=crypt))
    g.when(C.PlaceLocation(seat=0, x=-1, y=-1)).then(  # corner of the Misty Moor at (0, 0)
        E.LocationPlayed(seat=0, card=crypt, x=-1, y=-1, character=WOLF, cost=2))
    g.when(C.PlaceLocation(seat=0, x=2, y=0)).rejects("cell_not_adjacent")  # touches only the Lighthouse
    g.when(C.PlaceLocation(seat=0, x=1, y=0)).rejects("cell_occupied")
    state = g.when(C.PlaceLocation(seat=0, x=-1, y=-1)).then_state()
    assert [f.actions for f in state.fighters if f.card == WOLF] == [1]


def test_then_move_to_the_discovered_location():
    crypt = "s0-old-crypt-1"
    g = fight(E.PlacementPending(seat=0, kind="discover", character=WOLF, location=crypt),
              E.LocationPlayed(seat=0, card=crypt, x=-1, y=-1, character=WOLF, cost=2), hand0=(crypt,))
    g.when(C.MoveCharacter(seat=0, character=WOLF, to=crypt)).then(
        E.CharacterMoved(character=WOLF, to=crypt, cost=1))  # deck empty: no draw


def test_character_on_new_location_may_touch_any_location():
    crypt = "s0-old-crypt-1"
    g = game(*deal(hand0=(GHOUL, crypt)), turn(1, 2), turn(0, 3),
             E.PlacementPending(seat=0, kind="character", character=GHOUL, location=crypt))
    g.when(C.PlaceLocation(seat=0, x=2, y=1)).then(
        E.LocationPlayed(seat=0, card=crypt, x=2, y=1, character=None, cost=0),
        E.CharacterPlayed(seat=0, card=GHOUL, location=crypt, hp=30, actions=2, withdrawn=False))
    g.when(C.PlaceLocation(seat=0, x=3, y=0)).rejects("cell_not_adjacent")


def test_no_duplicate_locations_in_play():
    other = "s0-lighthouse-1"  # the same design as seat 1's first Location
    g = fight(hand0=(other,))
    g.when(C.PlayLocation(seat=0, character=WOLF, location=other)).rejects("duplicate_location")


# --- Move To Location -------------------------------------------------------------------


def test_first_move_of_the_turn_draws_a_card_and_later_moves_do_not():
    torch = "s0-torch-1"
    g = fight(deck0=(torch, "s0-medkit-1"))
    g.when(C.MoveCharacter(seat=0, character=WOLF, to=LIGHT)).then(
        E.CharacterMoved(character=WOLF, to=LIGHT, cost=1), E.CardsDrawn(seat=0, count=1, reason="move"))
    g.given(E.CharacterMoved(character=WOLF, to=LIGHT, cost=1), E.CardsDrawn(seat=0, count=1, reason="move"))
    g.when(C.MoveCharacter(seat=0, character=WOLF, to=MOOR)).then(E.CharacterMoved(character=WOLF, to=MOOR, cost=1))


def test_move_only_to_an_adjacent_location():
    far = "s0-old-crypt-1"
    g = fight(place(0, far, 3, 0), hand0=(far,))
    g.when(C.MoveCharacter(seat=0, character=WOLF, to=far)).rejects("not_adjacent")


# --- Drawing a card as an action --------------------------------------------------------


def test_paid_draw_adds_ten_hp_to_the_graveyard_and_draws_one_once_per_turn():
    g = fight(deck0=("s0-torch-1", "s0-medkit-1"))
    g.when(C.DrawCard(seat=0)).then(
        E.GraveyardPenalty(seat=0, amount=10, reason="paid_draw"), E.CardsDrawn(seat=0, count=1, reason="paid"))
    g.given(E.GraveyardPenalty(seat=0, amount=10, reason="paid_draw"), E.CardsDrawn(seat=0, count=1, reason="paid"))
    g.when(C.DrawCard(seat=0)).rejects("already_drawn")


def test_no_draw_from_an_empty_deck():
    fight().when(C.DrawCard(seat=0)).rejects("deck_empty")


# --- Attack -----------------------------------------------------------------------------


def test_attack_costs_two_actions_and_subtracts_the_attack_dmg():
    g = fight()
    g.when(C.Attack(seat=0, attacker=WOLF, target=KNIGHT)).then(
        E.Attacked(attacker=WOLF, target=KNIGHT, dmg=15, item=None, cost=2),
        E.CharacterDamaged(character=KNIGHT, amount=15, hp=35, source="attack"),
    )
    state = g.then_state()
    assert [f.actions for f in state.fighters if f.card == WOLF] == [1]


def test_attack_only_on_the_same_location():
    g = fight(E.CharacterMoved(character=KNIGHT, to=LIGHT, cost=1))
    g.when(C.Attack(seat=0, attacker=WOLF, target=KNIGHT)).rejects("not_same_location")


def test_item_dmg_is_added_to_the_attack_and_spends_one_use():
    sword = "s0-silver-sword-1"  # weapon +15, 3 uses
    g = fight(E.ItemAttached(seat=0, item=sword, character=WOLF, uses=3), hand0=(sword,))
    g.when(C.Attack(seat=0, attacker=WOLF, target=KNIGHT, with_item=True)).then(
        E.Attacked(attacker=WOLF, target=KNIGHT, dmg=30, item=sword, cost=2),
        E.ItemUsed(character=WOLF, item=sword, uses=2),
        E.CharacterDamaged(character=KNIGHT, amount=30, hp=20, source="attack"),
    )


def test_item_is_discarded_when_its_use_limit_runs_out():
    stake = "s0-wooden-stake-1"  # weapon +25, 1 use
    g = fight(E.ItemAttached(seat=0, item=stake, character=WOLF, uses=1), hand0=(stake,))
    events = g.when(C.Attack(seat=0, attacker=WOLF, target=KNIGHT, with_item=True)).events
    assert events[1:3] == [E.ItemUsed(character=WOLF, item=stake, uses=0),
                           E.ItemDiscarded(character=WOLF, item=stake, reason="used_up")]
    state = g.then_state()
    assert stake in state.players[0].discard and state.fighters[0].item is None


def test_defeated_character_goes_to_its_owners_graveyard_with_its_printed_hp():
    sword = "s1-silver-sword-1"
    g = fight(E.ItemAttached(seat=1, item=sword, character=KNIGHT, uses=3),
              E.CharacterDamaged(character=KNIGHT, amount=40, hp=10, source="attack"), hand1=(sword,))
    g.when(C.Attack(seat=0, attacker=WOLF, target=KNIGHT)).then(
        E.Attacked(attacker=WOLF, target=KNIGHT, dmg=15, item=None, cost=2),
        E.CharacterDamaged(character=KNIGHT, amount=15, hp=0, source="attack"),
        E.CharacterDefeated(character=KNIGHT, seat=1, hp=50),
    )
    state = g.then_state()
    assert state.players[1].graveyard == (KNIGHT,) and state.players[1].grave_hp == 50
    assert sword in state.players[1].discard and [f.card for f in state.fighters] == [WOLF]


def test_graveyard_reaching_200_loses():
    g = fight(E.GraveyardPenalty(seat=1, amount=150, reason="no_character"),
              E.CharacterDamaged(character=KNIGHT, amount=40, hp=10, source="attack"))
    events = g.when(C.Attack(seat=0, attacker=WOLF, target=KNIGHT)).events
    assert events[-1] == E.GameEnded(winners=(0,), reason="graveyard", graveyard=(0, 200))
    state = g.then_state()
    from croupier.games.nightfall.rules import is_over, result
    assert is_over(state) and result(state)["winners"] == [0] and result(state)["scores"] == [200, 0]


def test_special_ability_works_only_on_a_location_showing_its_type_icon():
    forest = "s0-moonlit-forest-1"  # beast/hunter, attacks here +5
    g = fight(place(0, forest, -1, 0), E.CharacterMoved(character=WOLF, to=forest, cost=0),
              E.CharacterMoved(character=KNIGHT, to=forest, cost=0), hand0=(forest,))
    # Maul 15 + beast icon 10 + the Forest's condition 5
    g.when(C.Attack(seat=0, attacker=WOLF, target=KNIGHT)).then(
        E.Attacked(attacker=WOLF, target=KNIGHT, dmg=30, item=None, cost=2),
        E.CharacterDamaged(character=KNIGHT, amount=30, hp=20, source="attack"))


def test_location_condition_is_not_used_on_the_first_turn_of_the_game():
    forest = "s0-moonlit-forest-1"
    g = game(*deal(hand0=(GHOUL,), hand1=(KNIGHT,), open0=forest), enter(1, KNIGHT, forest, 50),
             enter(0, GHOUL, forest, 30, actions=3))
    # Turn 1: Claw 10, no +5 from the Forest
    g.when(C.Attack(seat=0, attacker=GHOUL, target=KNIGHT)).then(
        E.Attacked(attacker=GHOUL, target=KNIGHT, dmg=10, item=None, cost=2),
        E.CharacterDamaged(character=KNIGHT, amount=10, hp=40, source="attack"))
    # The second player's first turn may use it.
    g2 = game(*deal(hand0=(GHOUL,), hand1=(KNIGHT,), open0=forest), enter(0, GHOUL, forest, 30), turn(1, 2),
              enter(1, KNIGHT, forest, 50, actions=3))
    g2.when(C.Attack(seat=1, attacker=KNIGHT, target=GHOUL)).then(
        E.Attacked(attacker=KNIGHT, target=GHOUL, dmg=20, item=None, cost=2),
        E.CharacterDamaged(character=GHOUL, amount=20, hp=10, source="attack"))


def test_secondary_ability_always_applies():
    # Town Guard: armor 5 always; Misty Moor shows no soldier icon, so no Spear bonus.
    g = game(*deal(hand0=(WOLF,), hand1=(GUARD,)), enter(0, WOLF, MOOR, 50), turn(1, 2), enter(1, GUARD, MOOR, 30),
             turn(0, 3))
    g.when(C.Attack(seat=0, attacker=WOLF, target=GUARD)).then(
        E.Attacked(attacker=WOLF, target=GUARD, dmg=15, item=None, cost=2),
        E.CharacterDamaged(character=GUARD, amount=10, hp=20, source="attack"))


def test_drain_heals_the_attacker_after_it_deals_dmg():
    manor = "s0-haunted-manor-1"  # undead/spirit, armor 5 here
    g = game(*deal(hand0=(VAMP, manor), hand1=(PRIEST,)), turn(1, 2), turn(0, 3), place(0, manor, -1, 0),
             enter(0, VAMP, manor, 40), turn(1, 4), enter(1, PRIEST, manor, 30), turn(0, 5),
             E.CharacterDamaged(character=VAMP, amount=30, hp=10, source="attack"))
    # Bite 10 - the Manor's armor 5 = 5 dealt; drain 10 (undead icon) + 5 (secondary)
    g.when(C.Attack(seat=0, attacker=VAMP, target=PRIEST)).then(
        E.Attacked(attacker=VAMP, target=PRIEST, dmg=10, item=None, cost=2),
        E.CharacterDamaged(character=PRIEST, amount=5, hp=25, source="attack"),
        E.CharacterHealed(character=VAMP, amount=15, hp=25, source="drain"))


def test_no_attack_on_a_sanctuary_location():
    chapel = "s1-stone-chapel-1"
    g = fight(place(1, chapel, 0, 1), E.CharacterMoved(character=WOLF, to=chapel, cost=0),
              E.CharacterMoved(character=KNIGHT, to=chapel, cost=0), hand1=(chapel,))
    g.when(C.Attack(seat=0, attacker=WOLF, target=KNIGHT)).rejects("no_attack_here")


# --- Special abilities that are actions --------------------------------------------------


def test_heal_ability_on_a_friendly_character_on_the_same_location():
    watch = "s1-watchtower-1"  # soldier/mystic: the Priest's mystic icon
    g = game(*deal(hand1=(PRIEST, watch)), turn(1, 4), place(1, watch, 1, 1), enter(1, PRIEST, watch, 30, actions=3),
             E.CharacterDamaged(character=PRIEST, amount=20, hp=10, source="attack"))
    g.when(C.UseAbility(seat=1, character=PRIEST, target=PRIEST)).then(
        E.AbilityUsed(character=PRIEST, kind="heal", target=PRIEST, cost=1),
        E.CharacterHealed(character=PRIEST, amount=15, hp=25, source="ability"))
    g.given(E.AbilityUsed(character=PRIEST, kind="heal", target=PRIEST, cost=1))
    g.when(C.UseAbility(seat=1, character=PRIEST, target=PRIEST)).rejects("ability_used")


def test_ability_needs_its_type_icon_on_the_location():
    g = game(*deal(hand1=(PRIEST,)), turn(1, 2), enter(1, PRIEST, MOOR, 30))  # Moor: spirit/hunter
    g.when(C.UseAbility(seat=1, character=PRIEST, target=PRIEST)).rejects("ability_inactive")


def test_strike_ability_hits_an_enemy_on_an_adjacent_location():
    # Banshee on the Misty Moor (spirit icon), the Knight on the Lighthouse next to it.
    g = game(*deal(hand0=(BANSHEE,), hand1=(KNIGHT,)), enter(0, BANSHEE, MOOR, 20), turn(1, 2),
             enter(1, KNIGHT, LIGHT, 50), turn(0, 3))
    g.when(C.UseAbility(seat=0, character=BANSHEE, target=KNIGHT)).then(
        E.AbilityUsed(character=BANSHEE, kind="strike", target=KNIGHT, cost=1),
        E.CharacterDamaged(character=KNIGHT, amount=10, hp=40, source="strike"))


def test_draw_ability():
    crypt = "s0-old-crypt-1"  # undead/mystic
    g = game(*deal(hand0=(WITCH, crypt), deck0=("s0-torch-1",)), turn(1, 2), turn(0, 3), place(0, crypt, -1, 0),
             enter(0, WITCH, crypt, 20))
    g.when(C.UseAbility(seat=0, character=WITCH)).then(
        E.AbilityUsed(character=WITCH, kind="draw", target=None, cost=1), E.CardsDrawn(seat=0, count=1, reason="ability"))


# --- Items ------------------------------------------------------------------------------


def test_item_attaches_to_a_character_before_it_uses_any_action():
    torch = "s0-torch-1"
    g = fight(hand0=(torch,))
    g.when(C.PlayItem(seat=0, card=torch, character=WOLF)).then(
        E.ItemAttached(seat=0, item=torch, character=WOLF, uses=5))
    g.given(E.CharacterMoved(character=WOLF, to=LIGHT, cost=1))
    g.when(C.PlayItem(seat=0, card=torch, character=WOLF)).rejects("already_acted")


def test_a_character_holds_one_item_at_a_time():
    torch, charm = "s0-torch-1", "s0-lucky-charm-1"
    g = fight(E.ItemAttached(seat=0, item=torch, character=WOLF, uses=5), hand0=(torch, charm))
    g.when(C.PlayItem(seat=0, card=charm, character=WOLF)).rejects("has_item")


def test_the_same_item_is_used_once_per_turn():
    medkit = "s0-medkit-1"
    g = fight(E.ItemAttached(seat=0, item=medkit, character=WOLF, uses=2),
              E.CharacterDamaged(character=WOLF, amount=40, hp=10, source="attack"), hand0=(medkit,))
    g.when(C.UseItem(seat=0, character=WOLF)).then(
        E.ItemUsed(character=WOLF, item=medkit, uses=1),
        E.CharacterHealed(character=WOLF, amount=20, hp=30, source="item"))
    g.given(E.ItemUsed(character=WOLF, item=medkit, uses=1))
    g.when(C.UseItem(seat=0, character=WOLF)).rejects("item_used")
    g.given(turn(1, 4), turn(0, 5))  # a new turn: usable again
    g.when(C.UseItem(seat=0, character=WOLF)).then(
        E.ItemUsed(character=WOLF, item=medkit, uses=0),
        E.ItemDiscarded(character=WOLF, item=medkit, reason="used_up"),
        E.CharacterHealed(character=WOLF, amount=20, hp=30, source="item"))


def test_weapon_once_per_turn():
    torch = "s0-torch-1"
    g = fight(E.ItemAttached(seat=0, item=torch, character=WOLF, uses=5), E.ItemUsed(character=WOLF, item=torch, uses=4),
              E.ActionsChanged(character=WOLF, actions=3, reason="event"), hand0=(torch,))
    g.when(C.Attack(seat=0, attacker=WOLF, target=KNIGHT, with_item=True)).rejects("no_weapon")


def test_ward_item_reduces_attacks_until_its_owners_next_turn():
    shield = "s1-iron-shield-1"  # ward 10
    g = game(*deal(hand0=(WOLF,), hand1=(KNIGHT, shield)), turn(1, 2), enter(1, KNIGHT, MOOR, 50),
             E.ItemAttached(seat=1, item=shield, character=KNIGHT, uses=3))
    g.when(C.UseItem(seat=1, character=KNIGHT)).then(
        E.ItemUsed(character=KNIGHT, item=shield, uses=2), E.CharacterWarded(character=KNIGHT, ward=10))
    g.given(E.ItemUsed(character=KNIGHT, item=shield, uses=2), E.CharacterWarded(character=KNIGHT, ward=10),
            turn(0, 3), enter(0, WOLF, MOOR, 50, actions=3))
    g.when(C.Attack(seat=0, attacker=WOLF, target=KNIGHT)).then(
        E.Attacked(attacker=WOLF, target=KNIGHT, dmg=15, item=None, cost=2),
        E.CharacterDamaged(character=KNIGHT, amount=5, hp=45, source="attack"))
    assert g.given(turn(1, 4)).state.fighters[0].ward == 0


def test_haste_item_gives_an_extra_action():
    boots = "s0-running-boots-1"
    g = fight(E.ItemAttached(seat=0, item=boots, character=WOLF, uses=3), hand0=(boots,))
    g.when(C.UseItem(seat=0, character=WOLF)).then(
        E.ItemUsed(character=WOLF, item=boots, uses=2), E.ActionsChanged(character=WOLF, actions=4, reason="item"))


def test_transfer_item_costs_one_action_once_per_turn_and_keeps_its_uses():
    torch = "s0-torch-1"
    g = fight(enter(0, GHOUL, MOOR, 30), E.ItemAttached(seat=0, item=torch, character=WOLF, uses=5),
              E.ItemUsed(character=WOLF, item=torch, uses=3), hand0=(GHOUL, torch))
    g.when(C.TransferItem(seat=0, character=WOLF, to=GHOUL)).then(
        E.ItemTransferred(character=WOLF, to=GHOUL, item=torch, cost=1))
    state = g.then_state()
    ghoul = next(f for f in state.fighters if f.card == GHOUL)
    wolf = next(f for f in state.fighters if f.card == WOLF)
    assert (ghoul.item, ghoul.uses, ghoul.item_used) == (torch, 3, True) and wolf.actions == 2
    g.given(E.ItemTransferred(character=WOLF, to=GHOUL, item=torch, cost=1),
            E.ItemTransferred(character=GHOUL, to=WOLF, item=torch, cost=1))
    g.when(C.TransferItem(seat=0, character=WOLF, to=GHOUL)).rejects("already_transferred")


def test_discard_an_item_at_will():
    torch = "s0-torch-1"
    g = fight(E.ItemAttached(seat=0, item=torch, character=WOLF, uses=5), hand0=(torch,))
    g.when(C.DiscardItem(seat=0, character=WOLF)).then(E.ItemDiscarded(character=WOLF, item=torch, reason="discarded"))


# --- Events -----------------------------------------------------------------------------


def test_one_event_per_turn():
    supply, rally = "s0-supply-run-1", "s0-rally-1"
    g = fight(E.EventPlayed(seat=0, card=supply, target=None), hand0=(supply, rally))
    g.when(C.PlayEvent(seat=0, card=rally)).rejects("event_already_played")


def test_draw_event_draws_what_the_deck_holds():
    supply = "s0-supply-run-1"
    g = fight(hand0=(supply,), deck0=("s0-torch-1",))
    g.when(C.PlayEvent(seat=0, card=supply)).then(
        E.EventPlayed(seat=0, card=supply, target=None), E.CardsDrawn(seat=0, count=1, reason="event"))


def test_heal_all_event():
    rally = "s0-rally-1"
    g = fight(E.CharacterDamaged(character=WOLF, amount=5, hp=45, source="attack"), hand0=(rally,))
    g.when(C.PlayEvent(seat=0, card=rally)).then(
        E.EventPlayed(seat=0, card=rally, target=None), E.CharacterHealed(character=WOLF, amount=5, hp=50, source="event"))


def test_damage_event_hits_an_enemy_anywhere():
    bolt = "s0-lightning-strike-1"
    g = fight(hand0=(bolt,))
    g.when(C.PlayEvent(seat=0, card=bolt, target=KNIGHT)).then(
        E.EventPlayed(seat=0, card=bolt, target=KNIGHT),
        E.CharacterDamaged(character=KNIGHT, amount=15, hp=35, source="event"))
    g.when(C.PlayEvent(seat=0, card=bolt, target=WOLF)).rejects("own_character")


def test_refresh_event_gives_actions():
    wind = "s0-second-wind-1"
    g = fight(hand0=(wind,))
    g.when(C.PlayEvent(seat=0, card=wind, target=WOLF)).then(
        E.EventPlayed(seat=0, card=wind, target=WOLF), E.ActionsChanged(character=WOLF, actions=5, reason="event"))


def test_discard_random_event_records_the_card():
    nightmare = "s0-nightmare-1"
    g = fight(hand0=(nightmare,), hand1=("s1-torch-1", "s1-medkit-1"))
    g.when(C.PlayEvent(seat=0, card=nightmare), outcomes=[1]).then(
        E.EventPlayed(seat=0, card=nightmare, target=None),
        E.CardsDiscarded(seat=1, cards=("s1-medkit-1",), reason="event"))


def test_empower_event_stays_attached_until_its_terms_are_met():
    rage = "s0-bloodlust-1"  # next attack +15
    g = fight(E.EventPlayed(seat=0, card=rage, target=WOLF), hand0=(rage,))
    assert g.state.fighters[0].attached == (rage,)
    g.when(C.Attack(seat=0, attacker=WOLF, target=KNIGHT)).then(
        E.Attacked(attacker=WOLF, target=KNIGHT, dmg=30, item=None, cost=2),
        E.EventDiscarded(character=WOLF, card=rage, reason="spent"),
        E.CharacterDamaged(character=KNIGHT, amount=30, hp=20, source="attack"))


def test_shield_event_prevents_dmg_then_is_discarded():
    angel = "s1-guardian-angel-1"  # prevents up to 20
    g = fight(turn(1, 4), E.EventPlayed(seat=1, card=angel, target=KNIGHT), turn(0, 5), hand1=(angel,))
    g.when(C.Attack(seat=0, attacker=WOLF, target=KNIGHT)).then(
        E.Attacked(attacker=WOLF, target=KNIGHT, dmg=15, item=None, cost=2),
        E.EventDiscarded(character=KNIGHT, card=angel, reason="spent"))


def test_snare_event_takes_the_targets_actions_on_its_owners_next_turn():
    snare = "s0-paralysis-1"
    g = fight(E.EventPlayed(seat=0, card=snare, target=KNIGHT), hand0=(snare,))
    g.when(C.EndTurn(seat=0)).then(
        E.TurnEnded(seat=0),
        E.TurnStarted(seat=1, turn=4, started_empty=False),
        E.ActionsChanged(character=KNIGHT, actions=0, reason="snare"),
        E.EventDiscarded(character=KNIGHT, card=snare, reason="spent"))


# --- Traps ------------------------------------------------------------------------------


PIT1, PIT2 = "s0-spike-pit-1", "s0-spike-pit-2"  # 1/2
TURN_ENDS = (E.TurnEnded(seat=0), E.TurnStarted(seat=1, turn=4, started_empty=False))


def test_trap_needs_all_its_components_in_hand():
    fight(hand0=(PIT1,)).when(C.SetTrap(seat=0, trap="spike-pit", location=MOOR)).rejects("trap_incomplete")
    g = fight(hand0=(PIT1, PIT2))
    # Laid from the main phase, which it ends: a window in which more may be laid.
    g.when(C.SetTrap(seat=0, trap="spike-pit", location=MOOR)).then(
        E.TrapWindowOpened(seat=0), E.TrapSet(seat=0, trap="spike-pit", cards=(PIT1, PIT2), location=MOOR))
    g.when(C.SetTrap(seat=0, trap="poison-gas", location=MOOR)).rejects("trap_incomplete")
    window = fight(E.TrapWindowOpened(seat=0), hand0=(PIT1, PIT2))
    window.when(C.SetTrap(seat=0, trap="spike-pit", location=MOOR)).then(
        E.TrapSet(seat=0, trap="spike-pit", cards=(PIT1, PIT2), location=MOOR))
    window.when(C.DrawCard(seat=0)).rejects("wrong_phase")  # the main phase is over
    window.when(C.EndTurn(seat=0)).then(*TURN_ENDS)


def test_ending_the_turn_shows_nothing_of_the_hand():
    """EndTurn ends the turn the same way whether or not the hand holds a complete Trap: the
    phase, which the opponent and spectators see, no longer tells them (rules version 1
    opened a trap window here only for a hand that could lay one)."""
    fight(hand0=(PIT1,)).when(C.EndTurn(seat=0)).then(*TURN_ENDS)
    fight(hand0=(PIT1, PIT2)).when(C.EndTurn(seat=0)).then(*TURN_ENDS)
    legal = legal_actions(fight(hand0=(PIT1, PIT2)).state, 0)
    assert C.SetTrap(seat=0, trap="spike-pit", location=MOOR) in legal  # offered to the seat alone


def test_games_created_under_rules_version_1_keep_its_trap_window():
    v1 = SPEC.for_version(1)
    assert (SPEC.rules_version, v1.rules_version) == (2, 1)
    g = scenario(v1, 2).given_state(fight(hand0=(PIT1, PIT2)).state)
    g.when(C.EndTurn(seat=0)).then(E.TrapWindowOpened(seat=0))
    g.when(C.SetTrap(seat=0, trap="spike-pit", location=MOOR)).rejects("wrong_phase")
    assert not any(isinstance(a, C.SetTrap) for a in v1.legal_actions(g.state, 0))
    g.given(E.TrapWindowOpened(seat=0))
    g.when(C.SetTrap(seat=0, trap="spike-pit", location=MOOR)).then(
        E.TrapSet(seat=0, trap="spike-pit", cards=(PIT1, PIT2), location=MOOR))
    assert C.SetTrap(seat=0, trap="spike-pit", location=MOOR) in v1.legal_actions(g.state, 0)
    scenario(v1, 2).given_state(fight(hand0=(PIT1,)).state).when(C.EndTurn(seat=0)).then(*TURN_ENDS)


def test_trap_fires_at_the_start_of_the_opponents_next_turn_before_anything_else():
    gas = ("s0-poison-gas-1", "s0-poison-gas-2", "s0-poison-gas-3")  # 30 DMG
    swamp = "s1-black-swamp-1"  # 5 DMG at the start of a turn
    g = fight(place(1, swamp, 0, 1), E.CharacterMoved(character=KNIGHT, to=swamp, cost=0), E.TrapWindowOpened(seat=0),
              E.TrapSet(seat=0, trap="poison-gas", cards=gas, location=swamp), hand0=gas, hand1=(swamp,))
    g.when(C.EndTurn(seat=0)).then(
        E.TurnEnded(seat=0),
        E.TurnStarted(seat=1, turn=4, started_empty=False),
        E.TrapSprung(seat=0, trap="poison-gas", cards=gas, location=swamp),
        E.CharacterDamaged(character=KNIGHT, amount=30, hp=20, source="trap"),
        E.CharacterDamaged(character=KNIGHT, amount=5, hp=15, source="location"))
    assert set(gas) <= set(g.then_state().players[0].discard) and not g.then_state().traps


def test_stun_and_disarm_traps():
    net = "s0-snare-net-1"  # stun 2
    g = fight(E.TrapWindowOpened(seat=0), E.TrapSet(seat=0, trap="snare-net", cards=(net,), location=MOOR), hand0=(net,))
    g.when(C.EndTurn(seat=0)).then(
        E.TurnEnded(seat=0), E.TurnStarted(seat=1, turn=4, started_empty=False),
        E.TrapSprung(seat=0, trap="snare-net", cards=(net,), location=MOOR),
        E.ActionsChanged(character=KNIGHT, actions=1, reason="trap"))
    wire = ("s0-tripwire-1", "s0-tripwire-2")
    sword = "s1-silver-sword-1"
    g = fight(E.TrapWindowOpened(seat=0), E.TrapSet(seat=0, trap="tripwire", cards=wire, location=MOOR),
              E.ItemAttached(seat=1, item=sword, character=KNIGHT, uses=3), hand0=wire, hand1=(sword,))
    g.when(C.EndTurn(seat=0)).then(
        E.TurnEnded(seat=0), E.TurnStarted(seat=1, turn=4, started_empty=False),
        E.TrapSprung(seat=0, trap="tripwire", cards=wire, location=MOOR),
        E.ItemDiscarded(character=KNIGHT, item=sword, reason="trap"))


# --- Withdraw ---------------------------------------------------------------------------


def test_withdraw_costs_three_actions():
    g = fight(E.CharacterMoved(character=WOLF, to=LIGHT, cost=1))
    g.when(C.Withdraw(seat=0, character=WOLF)).rejects("not_enough_actions")
    fight().when(C.Withdraw(seat=0, character=WOLF)).then(E.CharacterWithdrawn(character=WOLF, hp=50, cost=3))


def test_withdraw_costs_two_with_the_tables_setting():
    g = fight(E.CharacterMoved(character=WOLF, to=LIGHT, cost=1), options={"withdraw_cost": 2})
    g.when(C.Withdraw(seat=0, character=WOLF)).then(E.CharacterWithdrawn(character=WOLF, hp=50, cost=2))


def test_withdrawn_character_keeps_its_dmg_and_discards_its_items_and_events():
    torch, rage = "s0-torch-1", "s0-bloodlust-1"
    g = fight(E.ItemAttached(seat=0, item=torch, character=WOLF, uses=5), E.EventPlayed(seat=0, card=rage, target=WOLF),
              E.CharacterDamaged(character=WOLF, amount=20, hp=30, source="attack"), hand0=(torch, rage))
    g.when(C.Withdraw(seat=0, character=WOLF)).then(
        E.ItemDiscarded(character=WOLF, item=torch, reason="withdrawn"),
        E.EventDiscarded(character=WOLF, card=rage, reason="withdrawn"),
        E.CharacterWithdrawn(character=WOLF, hp=30, cost=3))
    state = g.then_state()
    assert state.players[0].withdrawn == ((WOLF, 30),) and {torch, rage} <= set(state.players[0].discard)


def test_withdrawn_character_is_played_again_like_a_card_in_hand_with_its_dmg():
    g = fight(E.CharacterWithdrawn(character=WOLF, hp=30, cost=3), turn(1, 4), turn(0, 5))
    g.when(C.PlayCharacter(seat=0, card=WOLF, location=LIGHT)).then(
        E.CharacterPlayed(seat=0, card=WOLF, location=LIGHT, hp=30, actions=2, withdrawn=True))


# --- Graveyard --------------------------------------------------------------------------


def test_a_turn_begun_and_ended_without_a_character_adds_ten_hp():
    g = game(*deal(hand0=(GHOUL,)))
    g.when(C.EndTurn(seat=0)).then(
        E.GraveyardPenalty(seat=0, amount=10, reason="no_character"),
        E.TurnEnded(seat=0), E.TurnStarted(seat=1, turn=2, started_empty=True))


def test_no_penalty_when_a_character_came_into_play_during_the_turn():
    g = game(*deal(hand0=(GHOUL,)), enter(0, GHOUL, MOOR, 30))
    g.when(C.EndTurn(seat=0)).then(E.TurnEnded(seat=0), E.TurnStarted(seat=1, turn=2, started_empty=True))


def test_penalty_reaching_200_ends_the_game():
    g = game(*deal(), E.GraveyardPenalty(seat=0, amount=190, reason="no_character"))
    g.when(C.EndTurn(seat=0)).then(
        E.GraveyardPenalty(seat=0, amount=10, reason="no_character"),
        E.GameEnded(winners=(1,), reason="graveyard", graveyard=(200, 0)))


# --- Location conditions at the start of a turn -----------------------------------------


def test_start_of_turn_location_conditions_and_regeneration():
    crypt, mine = "s0-old-crypt-1", "s0-abandoned-mine-1"  # heal 10 / +1 action
    zombie = "s0-zombie-horde-1"  # undead +5 DMG, secondary regenerate 5
    g = game(*deal(hand0=(GHOUL, zombie, crypt, mine)), turn(1, 2), turn(0, 3),
             place(0, crypt, -1, 0), place(0, mine, -1, 1), enter(0, GHOUL, crypt, 30), turn(1, 4), turn(0, 5),
             enter(0, zombie, mine, 40),
             E.CharacterDamaged(character=GHOUL, amount=25, hp=5, source="attack"),
             E.CharacterDamaged(character=zombie, amount=20, hp=20, source="attack"), turn(1, 6))
    # Ghoul on the Crypt: Crypt heals 10 + undead regenerate 10; Zombie on the Mine: secondary regenerate 5,
    # and the Mine's +1 action.
    g.when(C.EndTurn(seat=1)).then(
        E.TurnEnded(seat=1), E.TurnStarted(seat=0, turn=7, started_empty=False),
        E.CharacterHealed(character=GHOUL, amount=20, hp=25, source="regenerate"),
        E.CharacterHealed(character=zombie, amount=5, hp=25, source="regenerate"),
        E.ActionsChanged(character=zombie, actions=4, reason="location"))


# --- Guard against endless games --------------------------------------------------------


def test_round_limit_ends_the_game_and_the_lower_graveyard_wins():
    g = game(*deal(hand0=(GHOUL,), hand1=(KNIGHT,)), enter(0, GHOUL, MOOR, 30), turn(1, 2), enter(1, KNIGHT, MOOR, 50),
             E.GraveyardPenalty(seat=0, amount=10, reason="paid_draw"), options={"max_rounds": 1})
    g.when(C.EndTurn(seat=1)).then(
        E.TurnEnded(seat=1), E.GameEnded(winners=(1,), reason="round_limit", graveyard=(10, 0)))


def test_round_limit_with_equal_graveyards_is_a_draw():
    g = game(*deal(hand0=(GHOUL,), hand1=(KNIGHT,)), enter(0, GHOUL, MOOR, 30), turn(1, 2), enter(1, KNIGHT, MOOR, 50),
             options={"max_rounds": 1})
    g.when(C.EndTurn(seat=1)).then(E.TurnEnded(seat=1), E.GameEnded(winners=(), reason="round_limit", graveyard=(0, 0)))
    from croupier.games.nightfall.rules import result
    assert result(g.then_state())["draw"] is True
