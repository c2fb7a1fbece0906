"""Route choice: solo choice, multiplayer votes with a recorded deadline, changes, ties, silence."""

from __future__ import annotations

from delve_helpers import F0, F2, new, run, started, state_of, to_turn, vote_opened

from croupier.engine.contract import Tick
from croupier.engine.testing import scenario
from croupier.games.delve import SPEC
from croupier.games.delve import commands as C
from croupier.games.delve import events as E
from croupier.games.delve.rules import SILENT_CAP
from croupier.games.delve.state import ROUTE


def _fresh_draw(seats):
    """What follows a chosen normal encounter: everyone draws, the first over the limit discards."""
    return [E.CardsDrawn(seat=s, cards=(f"prayer.s{s}.2",)) for s in range(seats)] + [
        E.ChoiceOpened(seat=0, mode="limit", count=1, target=-1)
    ]


def test_start_opens_the_first_vote_on_the_uncovered_first_row():
    events = scenario(SPEC, 2).when(Start_(), rng=_fair(), now=5000).events
    opened = [e for e in events if isinstance(e, E.VoteOpened)]
    assert opened == [E.VoteOpened(session=1, options=(0, 1, 2), deadline=35000)]


def test_solo_chooses_an_uncovered_encounter_at_once():
    st = new(1)
    assert SPEC.deadline(st) is None
    scenario(SPEC, 1).given_state(st).when(C.Vote(seat=0, slot=2)).then(
        E.VoteCast(seat=0, slot=2),
        E.RouteChosen(slot=2, card=F0[2], votes=(2,), tied=(), how="plurality"),
        E.EncounterStarted(slot=2, card=F0[2], order=(0,)),
        *_fresh_draw(1),
    )


def test_solo_vote_has_no_timer_so_no_tick():
    scenario(SPEC, 1).given_state(new(1)).when(Tick(now=10**9)).rejects("no_deadline")


def test_multiplayer_vote_deadline_is_recorded_from_now_with_the_seconds_option():
    events = scenario(SPEC, 3, {"vote_seconds": 12}).when(Start_(), rng=_fair(), now=1000).events
    assert [e.deadline for e in events if isinstance(e, E.VoteOpened)] == [13000]
    st = state_of(3, events, {"vote_seconds": 12})
    assert SPEC.deadline(st) == 13000


def test_votes_may_change_before_the_deadline_and_the_last_vote_counts():
    st = new(3)
    st, ev = run(st, C.Vote(seat=0, slot=0), now=1000)
    assert ev == [E.VoteCast(seat=0, slot=0)]
    st, ev = run(st, C.Vote(seat=0, slot=1), now=2000)
    assert ev == [E.VoteCast(seat=0, slot=1)]
    assert st.ballot.votes == (1, -1, -1)
    st, _ = run(st, C.Vote(seat=1, slot=0), now=3000)
    scenario(SPEC, 3).given_state(st).when(C.Vote(seat=2, slot=1), now=4000).then(
        E.VoteCast(seat=2, slot=1),
        E.RouteChosen(slot=1, card=F0[1], votes=(1, 0, 1), tied=(), how="plurality"),
        E.EncounterStarted(slot=1, card=F0[1], order=(0, 1, 2)),
        *_fresh_draw(3),
    )


def test_seats_that_voted_may_still_change_while_others_have_not_voted():
    st = new(3)
    st, _ = run(st, C.Vote(seat=0, slot=0))
    assert SPEC.to_act(st) == (0, 1, 2)
    assert {a.slot for a in SPEC.legal_actions(st, 0)} == {0, 1, 2}


def test_deadline_closes_the_vote_with_the_most_votes_among_those_cast():
    st = new(4)
    for seat, slot in ((0, 2), (1, 2), (3, 0)):
        st, _ = run(st, C.Vote(seat=seat, slot=slot))
    scenario(SPEC, 4).given_state(st).when(Tick(now=30000), now=30000).then(
        E.RouteChosen(slot=2, card=F0[2], votes=(2, 2, -1, 0), tied=(), how="plurality"),
        E.EncounterStarted(slot=2, card=F0[2], order=(0, 1, 2, 3)),
        *_fresh_draw(4),
    )


def test_a_tie_is_broken_at_random_among_the_tied_routes_and_recorded():
    st = new(3)
    st, _ = run(st, C.Vote(seat=0, slot=0))
    st, _ = run(st, C.Vote(seat=2, slot=2))
    # choice() among the tied (0, 2): the scripted draw 1 picks slot 2.
    events = scenario(SPEC, 3).given_state(st).when(Tick(now=31000), outcomes=[1], now=31000).events
    assert events[0] == E.RouteChosen(slot=2, card=F0[2], votes=(0, -1, 2), tied=(0, 2), how="tiebreak")


def test_a_tie_when_everyone_has_voted_is_broken_at_once():
    st = new(2)
    st, _ = run(st, C.Vote(seat=0, slot=1))
    events = scenario(SPEC, 2).given_state(st).when(C.Vote(seat=1, slot=0), outcomes=[0]).events
    assert events[1] == E.RouteChosen(slot=0, card=F0[0], votes=(1, 0), tied=(0, 1), how="tiebreak")


def test_a_vote_nobody_votes_in_restarts_with_a_new_session_and_deadline():
    st = new(2)
    scenario(SPEC, 2).given_state(st).when(Tick(now=30000), now=30500).then(
        E.VoteRestarted(session=2, deadline=60500)
    )
    st, _ = run(st, Tick(now=30000), now=30000)
    assert st.stage == ROUTE and st.ballot.session == 2 and SPEC.deadline(st) == 60000
    assert SPEC.to_act(st) == (0, 1)


def test_a_vote_cast_after_a_restart_counts_in_the_new_session():
    st = new(2)
    st, _ = run(st, Tick(now=30000), now=30000)
    st, _ = run(st, C.Vote(seat=1, slot=1), now=31000)
    scenario(SPEC, 2).given_state(st).when(Tick(now=60000), now=60000).then(
        E.RouteChosen(slot=1, card=F0[1], votes=(-1, 1), tied=(), how="plurality"),
        E.EncounterStarted(slot=1, card=F0[1], order=(0, 1)),
        *_fresh_draw(2),
    )


def test_too_many_silent_votes_draw_the_route_at_random():
    st = new(2)
    for k in range(SILENT_CAP - 1):
        st, _ = run(st, Tick(now=30000 * (k + 1)), now=30000 * (k + 1))
    events = scenario(SPEC, 2).given_state(st).when(Tick(now=10**7), outcomes=[1], now=10**7).events
    assert events[0] == E.RouteChosen(slot=1, card=F0[1], votes=(-1, -1), tied=(0, 1, 2), how="random")


def test_an_unconscious_adventurer_does_not_vote_and_the_others_decide():
    events = [*started(2), vote_opened(2, deadline=30000), E.DamageTaken(seat=1, amount=9, health=0),
              E.KnockedOut(seat=1)]
    st = state_of(2, events)
    assert SPEC.to_act(st) == (0,)
    assert SPEC.legal_actions(st, 1) == []
    events = scenario(SPEC, 2).given_state(st).when(C.Vote(seat=0, slot=1)).events
    assert events[1] == E.RouteChosen(slot=1, card=F0[1], votes=(1, -1), tied=(), how="plurality")
    assert events[2] == E.EncounterStarted(slot=1, card=F0[1], order=(0,))


def test_a_single_uncovered_encounter_is_taken_without_a_vote():
    # The Sunken Vaults with slots 0-4 cleared: slot 6 (under 4) and 5 (under 3) are open.
    # Once 6 is faced, only 5 is uncovered (7 lies under 5, 8 under 5 and 6).
    events = [
        *started(1),
        E.FloorDescended(floor=2, revealed=(0, 1, 2, 4), cards=(F2[0], F2[1], F2[2], F2[4])),
        E.RoundEnded(cleared=(0, 1, 2, 3, 4), revealed=(5, 6), cards=(F2[5], F2[6]), floor_done=False,
                     floor_clear=False),
        E.VoteOpened(session=1, options=(5, 6), deadline=None),
    ]
    st = state_of(1, events)
    st = to_turn(st, 6)
    result = scenario(SPEC, 1).given_state(st).when(C.AcceptPenalty(seat=0)).events
    assert E.RouteChosen(slot=5, card=F2[5], votes=(), tied=(), how="only") in result
    assert result[-3:] == [
        E.EncounterStarted(slot=5, card=F2[5], order=(0,)),
        E.CardsDrawn(seat=0, cards=("spark.s0.1",)),
        E.ChoiceOpened(seat=0, mode="limit", count=1, target=-1),
    ]


# --- helpers -------------------------------------------------------------------------


def Start_():
    from croupier.engine.contract import Start

    return Start()


def _fair():
    from croupier.engine.testing import fair_rng

    return fair_rng()
