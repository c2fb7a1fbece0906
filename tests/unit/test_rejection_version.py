"""A version_conflict carries the game's version as a field, from the rules to the caller.

The gateway read the version out of the rules service's words ("the game is at 5"), which
would vanish without a sound if the words changed. croupier.v1.Rejection now has
`current_version`; the gateway falls back to the words only for a rules service older than
the field."""

from __future__ import annotations

import pytest

from croupier.engine import registry
from croupier.engine.contract import Rejection
from croupier.engine.selfplay import SelfplayReport, play_one
from croupier.engine.table import ForceEnd, TableHost
from croupier.rules.errors import from_proto, to_proto
from croupier.v1 import events_pb2
from croupier_gateway.errors import ApiError


def test_the_engines_conflict_names_the_version_of_the_table():
    spec = registry.get("expeditions")
    table = play_one(spec, seats=2, seat_bots=["random"] * 2, options=spec.parse_options({}), seed=3, index=0,
                     report=SelfplayReport(game="expeditions"), check_all_legal=False)
    host = TableHost(spec)
    state = host.fold(table.envelopes[:12])
    with pytest.raises(Rejection) as refused:
        host.decide(state, ForceEnd(reason="x"), command_id="c", now=state.last_time + 1,
                    expected_version=state.version - 1)
    assert refused.value.code == "version_conflict" and refused.value.current_version == state.version == 12


def test_the_version_crosses_grpc_and_reaches_the_gateways_answer():
    sent = Rejection("version_conflict", "words that name no version", "conflict", current_version=41)
    wire = events_pb2.Rejection.FromString(to_proto(sent).SerializeToString())
    assert wire.HasField("current_version") and wire.current_version == 41
    got, _ = from_proto(wire)
    assert got.current_version == 41
    answer = ApiError.from_rejection(got)
    assert answer.current_version == 41 and answer.body()["error"]["current_version"] == 41


def test_other_refusals_carry_no_version_and_an_older_rules_services_words_still_do():
    other = events_pb2.Rejection.FromString(to_proto(Rejection("not_your_turn", "wait", "illegal")).SerializeToString())
    assert not other.HasField("current_version")
    assert from_proto(other)[0].current_version is None
    older = events_pb2.Rejection(kind=events_pb2.REJECTION_KIND_CONFLICT, code="version_conflict",
                                 message="expected version 3, the game is at 5")  # no field: an older service
    assert ApiError.from_rejection(from_proto(older)[0]).current_version == 5
