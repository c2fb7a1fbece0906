"""The table's seats as every game has them: leaving a seat that is not at the table is
malformed (as joining it is), leaving an empty one is illegal; a move from a seat that is not
at the table is malformed too (as a read of its state or actions is), not forbidden."""

from __future__ import annotations

import pytest

from croupier.engine import registry
from croupier.engine.contract import MALFORMED, Rejection
from croupier.engine.table import RUNNING, JoinSeat, LeaveSeat, TableHost


@pytest.mark.parametrize("game_id", list(registry.GAME_IDS))
def test_leaving_a_seat_not_at_the_table_is_malformed_and_an_empty_one_illegal(game_id):
    spec = registry.get(game_id)
    host = TableHost(spec)
    seats = spec.max_seats
    state = host.fold(host.create(f"{game_id}-seats", seats, {}, "ab" * 32, now=1, command_id="c"))
    state = host.fold(host.decide(state, JoinSeat(seat=0, player="p0", entropy="e0"), command_id="j", now=2),
                      state)
    refusals = {}
    for seat in (-1, seats, 2**31, seats - 1):
        with pytest.raises(Rejection) as refused:
            host.decide(state, LeaveSeat(seat=seat), command_id=f"l{seat}", now=3)
        refusals[seat] = (refused.value.code, refused.value.kind)
    left = host.decide(state, LeaveSeat(seat=0), command_id="l0", now=3)
    assert refusals == {-1: ("no_such_seat", MALFORMED), seats: ("no_such_seat", MALFORMED),
                        2**31: ("no_such_seat", MALFORMED), seats - 1: ("seat_empty", "illegal")}
    assert [e.type for e in left] == ["SeatLeft"]


@pytest.mark.parametrize("game_id", list(registry.GAME_IDS))
def test_a_move_from_a_seat_not_at_the_table_is_malformed(game_id):
    spec = registry.get(game_id)
    host = TableHost(spec)
    seats = spec.min_seats
    state = host.fold(host.create(f"{game_id}-moves", seats, {}, "cd" * 32, now=1, command_id="c"))
    for seat in range(seats):
        state = host.fold(host.decide(state, JoinSeat(seat=seat, player=f"p{seat}", entropy=f"e{seat}"),
                                      command_id=f"j{seat}", now=2), state)
    assert state.status == RUNNING
    actor = next(seat for seat in range(seats) if host.legal_actions(state, seat))
    wire = host.encode_action(host.legal_actions(state, actor)[0])
    for seat in (-1, seats, 2**31):
        with pytest.raises(Rejection) as refused:
            host.decide(state, host.decode_action(wire, seat), command_id=f"m{seat}", now=3)
        assert (refused.value.code, refused.value.kind) == ("no_such_seat", MALFORMED), refused.value.message
