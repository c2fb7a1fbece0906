"""Every kind of illegal command is rejected with its stable code."""

from __future__ import annotations

from dataclasses import replace

import pytest
from delve_helpers import (
    F1,
    F2,
    at_boss,
    facing,
    floor0,
    market_first,
    new,
    run,
    started,
    state_of,
)

from croupier.engine.contract import Start, Tick
from croupier.engine.testing import scenario
from croupier.games.delve import SPEC
from croupier.games.delve import commands as C
from croupier.games.delve import events as E


def rejects(st, cmd, code, seats=None, **kw):
    scenario(SPEC, seats or st.seats).given_state(st).when(cmd, **kw).rejects(code)
    if isinstance(cmd.seat, int) and 0 <= cmd.seat < st.seats and not isinstance(cmd, Tick):
        assert cmd not in SPEC.legal_actions(st, cmd.seat)


def test_start_twice():
    rejects(new(1), Start(), "already_started")


def test_commands_before_the_start():
    scenario(SPEC, 1).when(C.Vote(seat=0, slot=0)).rejects("not_started")


def test_commands_after_the_end():
    st, _ = run(facing(events=[E.DamageTaken(seat=0, amount=8, health=1)]), C.AcceptPenalty(seat=0))
    rejects(st, C.Vote(seat=0, slot=1), "game_over")
    rejects(st, Tick(now=10**9), "game_over")


def test_a_move_of_another_game():
    from croupier.engine.contract import Command

    class Foreign(Command):
        TYPE = "Foreign"

    rejects(new(1), Foreign(seat=0), "unknown_command")


# --- votes -------------------------------------------------------------------------------


def test_vote_for_a_covered_encounter():
    rejects(new(1), C.Vote(seat=0, slot=3), "not_selectable")


def test_vote_for_no_slot_at_all():
    rejects(new(1), C.Vote(seat=0, slot="0"), "not_selectable")
    rejects(new(1), C.Vote(seat=0, slot=99), "not_selectable")


def test_vote_by_an_unconscious_adventurer():
    st = SPEC.evolve(new(2), E.DamageTaken(seat=1, amount=9, health=0))
    rejects(st, C.Vote(seat=1, slot=0), "unconscious")


def test_other_moves_during_the_vote():
    rejects(new(2), C.RollDice(seat=0, skill="strength"), "wrong_phase")
    rejects(new(2), C.BuyCard(seat=0, card="iron-sword.1"), "wrong_phase")


def test_tick_before_the_deadline():
    rejects(new(2), Tick(now=29999), "too_early", now=29999)


def test_tick_without_a_deadline():
    rejects(new(1), Tick(now=10**9), "no_deadline")
    rejects(facing(seats=2), Tick(now=10**9), "no_deadline")


# --- turns ----------------------------------------------------------------------------------


def test_acting_out_of_turn():
    st = facing(seats=2)
    rejects(st, C.RollDice(seat=1, skill="strength"), "not_your_turn")
    rejects(st, C.AcceptPenalty(seat=1), "not_your_turn")


# --- choices of cards -----------------------------------------------------------------------------


def _limit_open():
    st, _ = run(new(1), C.Vote(seat=0, slot=0))
    return st


def test_the_picker_cannot_be_dismissed_another_move_keeps_the_choice_pending():
    rejects(_limit_open(), C.RollDice(seat=0, skill="strength"), "choice_pending")
    rejects(_limit_open(), C.Vote(seat=0, slot=1), "choice_pending")


def test_confirming_before_enough_cards_are_chosen():
    rejects(_limit_open(), C.ConfirmPick(seat=0), "choice_incomplete")


def test_choosing_a_card_that_is_not_there():
    rejects(_limit_open(), C.PickCard(seat=0, card="spark.s0.1"), "card_not_available")  # in the draw pile


def test_choosing_more_cards_than_asked():
    st, _ = run(_limit_open(), C.PickCard(seat=0, card="punch.s0.1"))
    rejects(st, C.PickCard(seat=0, card="punch.s0.2"), "choice_full")


def test_choosing_with_no_choice_pending():
    rejects(facing(), C.PickCard(seat=0, card="punch.s0.1"), "no_choice")
    rejects(facing(), C.ConfirmPick(seat=0), "no_choice")


def test_choosing_for_someone_else():
    st, _ = run(new(2), C.Vote(seat=0, slot=0))
    st, _ = run(st, C.Vote(seat=1, slot=0))
    rejects(st, C.PickCard(seat=1, card="punch.s1.1"), "not_your_turn")


# --- facing an encounter ---------------------------------------------------------------------------


def test_committing_a_card_not_in_hand():
    rejects(facing(), C.CommitCard(seat=0, card="spark.s0.1"), "card_not_in_hand")


def test_committing_a_card_twice():
    st, _ = run(facing(), C.CommitCard(seat=0, card="punch.s0.1"))
    rejects(st, C.CommitCard(seat=0, card="punch.s0.1"), "already_committed")


def test_rolling_an_unknown_skill():
    rejects(facing(), C.RollDice(seat=0, skill="charisma"), "unknown_skill")
    rejects(facing(seats=2), C.OfferAttack(seat=0, skill="luck"), "unknown_skill")


def test_offering_an_attack_alone():
    rejects(facing(), C.OfferAttack(seat=0, skill="strength"), "no_supporter")


def test_switching_after_committing_cards():
    st, _ = run(facing(), C.CommitCard(seat=0, card="punch.s0.1"))
    rejects(st, C.SwitchEncounter(seat=0, slot=3), "cards_committed")


def test_switching_twice():
    st, _ = run(facing(), C.SwitchEncounter(seat=0, slot=3))
    rejects(st, C.SwitchEncounter(seat=0, slot=5), "already_switched")


def test_switching_to_a_face_up_or_cleared_encounter():
    rejects(facing(), C.SwitchEncounter(seat=0, slot=1), "not_face_down")
    rejects(facing(), C.SwitchEncounter(seat=0, slot=0), "not_face_down")
    rejects(facing(), C.SwitchEncounter(seat=0, slot=4), "not_face_down")  # the market is face up


def test_switching_off_the_floor():
    rejects(facing(), C.SwitchEncounter(seat=0, slot=7), "no_such_slot")


def test_switching_away_from_an_extra_encounter_or_theat_boss():
    st, _ = run(facing(slot=2), C.RollDice(seat=0, skill="strength"), outcomes=[8])  # the mimic
    rejects(st, C.SwitchEncounter(seat=0, slot=3), "cannot_switch")
    rejects(at_boss(), C.SwitchEncounter(seat=0, slot=3), "cannot_switch")


def test_bribing_what_cannot_be_bribed():
    rejects(facing(slot=1), C.PayBribe(seat=0), "no_bribe")  # Giant Rats
    rejects(at_boss(), C.PayBribe(seat=0), "no_bribe")


def test_bribing_without_the_coins():
    rejects(facing(), C.PayBribe(seat=0), "not_enough_coins")


def test_bribing_a_switched_to_encounter():
    st = facing(events=[E.CoinsGained(seat=0, amount=9)], floors=(floor0(s0="enc:giant-rats", s3="enc:goblin-scouts"), F1, F2))
    st, _ = run(st, C.SwitchEncounter(seat=0, slot=3))
    rejects(st, C.PayBribe(seat=0), "cannot_bribe_switched")


def test_support_moves_out_of_place():
    st, _ = run(facing(seats=2), C.OfferAttack(seat=0, skill="strength"))
    rejects(st, C.SupportAttack(seat=1, card="punch.s0.1"), "card_not_in_hand")
    rejects(st, C.SupportAttack(seat=0, card="punch.s0.1"), "not_your_turn")
    rejects(st, C.RollDice(seat=1, skill="strength"), "wrong_phase")
    st, _ = run(st, C.SupportAttack(seat=1, card="punch.s1.1"))
    rejects(st, C.SupportAttack(seat=1, card="punch.s1.1"), "already_given")


def test_market_moves_while_facing_an_encounter():
    rejects(facing(), C.BuyCard(seat=0, card="iron-sword.1"), "wrong_phase")


# --- markets ------------------------------------------------------------------------------------


def _visiting(coins=0, health=9, cards=None):
    st = market_first(coins=coins) if cards is None else state_of(1, [
        *started(1, decks=[cards], floors=(floor0(s0="enc:wandering-merchant"), F1, F2)),
        E.VoteOpened(session=1, options=(0, 1, 2), deadline=None),
    ])
    if health < 9:
        st = SPEC.evolve(st, E.DamageTaken(seat=0, amount=9 - health, health=health))
    st, _ = run(st, C.Vote(seat=0, slot=0))
    return st


def test_buying_what_the_market_does_not_offer():
    rejects(_visiting(coins=9), C.BuyCard(seat=0, card="spellbook.1"), "not_in_market")


def test_buying_without_the_coins():
    rejects(_visiting(coins=2), C.BuyCard(seat=0, card="iron-sword.1"), "not_enough_coins")


def test_buying_after_resting():
    st, _ = run(_visiting(coins=9, health=5), C.Rest(seat=0))
    rejects(st, C.BuyCard(seat=0, card="iron-sword.1"), "already_rested")
    rejects(st, C.Rest(seat=0), "already_rested")


def test_resting_after_buying():
    st, _ = run(_visiting(coins=9, health=5), C.BuyCard(seat=0, card="iron-sword.1"))
    rejects(st, C.Rest(seat=0), "already_bought")


def test_resting_unhurt():
    rejects(_visiting(), C.Rest(seat=0), "full_health")


def test_selling_a_basic_card():
    rejects(_visiting(), C.SellCard(seat=0, card="punch.s0.1"), "basic_not_sellable")


def test_selling_a_card_one_does_not_own():
    rejects(_visiting(), C.SellCard(seat=0, card="iron-sword.1"), "card_not_owned")


# --- camp --------------------------------------------------------------------------------------


def _camp():
    st = facing(seats=3, events=[E.DamageTaken(seat=1, amount=8, health=1)])
    st, _ = run(st, C.RollDice(seat=0, skill="strength"), outcomes=[1])
    st, _ = run(st, C.AcceptPenalty(seat=1))
    st, _ = run(st, C.RollDice(seat=2, skill="strength"), outcomes=[1])
    assert st.stage == "camp"
    return st


def test_rescuing_a_conscious_teammate():
    rejects(_camp(), C.RescueTeammate(seat=0, target=2), "not_unconscious")


def test_rescuing_oneself_or_nobody():
    rejects(_camp(), C.RescueTeammate(seat=0, target=0), "invalid_target")
    rejects(_camp(), C.RescueTeammate(seat=0, target=5), "invalid_target")


def test_rescuing_without_two_pile_cards():
    st = _camp()
    p = st.players[0]
    st = replace(st, players=(replace(p, draw=(), discard=p.discard[:1]), *st.players[1:]))
    rejects(st, C.RescueTeammate(seat=0, target=1), "not_enough_cards")


def test_camp_moves_out_of_turn_or_place():
    rejects(_camp(), C.RescueTeammate(seat=2, target=1), "not_your_turn")
    rejects(_camp(), C.Vote(seat=0, slot=1), "wrong_phase")


@pytest.mark.parametrize("seat", [0, 1])
def test_a_seat_that_is_not_to_act_has_no_legal_action(seat):
    st = facing(seats=2)
    acting = SPEC.to_act(st)
    assert acting == (0,)
    assert (SPEC.legal_actions(st, seat) == []) == (seat not in acting)


def test_legal_actions_come_in_the_engines_sorted_order():
    from croupier.engine.contract import sort_actions

    for st in (facing(seats=2), _visiting(coins=9), _camp(), new(3), _limit_open()):
        for seat in SPEC.to_act(st):
            legal = SPEC.legal_actions(st, seat)
            assert legal and legal == sort_actions(legal)
