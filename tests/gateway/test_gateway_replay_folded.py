"""A player's replay reads the log as every reader folds it (helper-65's review of the CLI's
replay, 854f07c, found the same in the gateway's route): a record at a seq already folded (a
record written again, or put there from outside the rules) is passed over. The route took
the last record's seq for the end of a finished game, so a copy of a middle event appended
to the log made "the end" a step in the middle of it; and a seq missing from the log was
answered 400 naming the `as` parameter, which was not at fault."""

from __future__ import annotations

import dataclasses
import functools

from test_gateway_http import bearer, error, seated

from croupier.engine import registry
from croupier.engine.envelope import compute_hash
from croupier.engine.selfplay import SelfplayReport, play_one


@functools.cache
def _finished(game_type: str = "pebbles") -> tuple:
    spec = registry.get(game_type)
    table = play_one(spec, seats=spec.min_seats, seat_bots=["random"] * spec.min_seats,
                     options=spec.parse_options({}), seed=7, index=0, report=SelfplayReport(game=game_type),
                     check_all_legal=False)
    assert table.envelopes[-1].type == "TableEnded"
    return tuple(table.envelopes)


def _served(monkeypatch, envelopes):
    import croupier_gateway.replay_routes as routes

    async def log(gw, game_id):
        return list(envelopes)

    monkeypatch.setattr(routes, "_log", log)


def test_a_record_written_again_does_not_move_the_end_of_a_finished_games_replay(client, monkeypatch):
    game = list(_finished())
    middle = game[len(game) // 2]
    gid, (t0, _) = seated(client)
    _served(monkeypatch, game)
    clean = client.get(f"/v1/tables/{gid}/replay", headers=bearer(t0))
    assert clean.status_code == 200, clean.text
    _served(monkeypatch, [*game, middle])  # a copy of a middle event, after the end
    copied = client.get(f"/v1/tables/{gid}/replay", headers=bearer(t0))
    assert copied.status_code == 200, copied.text
    assert copied.json()["to"] == game[-1].seq == clean.json()["to"]
    assert copied.json()["view"] == clean.json()["view"]


def test_a_seq_missing_from_the_log_is_no_fault_of_the_request(client, monkeypatch):
    game = list(_finished())
    cut = [*game[:5], *game[6:]]  # seq 6 is not in the log
    gid, (t0, _) = seated(client)
    _served(monkeypatch, cut)
    refused = error(client.get(f"/v1/tables/{gid}/replay", headers=bearer(t0)), 422)
    assert refused["code"] == "log_gap" and refused.get("field") is None, refused


def test_a_table_ended_put_at_a_seq_already_folded_opens_no_record(client, monkeypatch):
    """A TableEnded written at a seq the game already has (from outside the rules) ends
    nothing for any reader: it must not open a running game's record to every seat."""
    game = list(_finished())
    running = game[:len(game) // 2]
    forged = dataclasses.replace(game[-1], seq=running[-1].seq)
    forged = dataclasses.replace(forged, hash=compute_hash(forged.prev_hash, forged.body()))
    gid, (t0, _) = seated(client)
    gw = client.app.state.holder["gw"]

    async def over_meta(game_id):
        return {"status": "over", "game_type": "pebbles"}

    monkeypatch.setattr(gw.reads, "meta", over_meta)  # read models that say over (stale, or wrong)
    _served(monkeypatch, [*running, forged])
    refused = error(client.get(f"/v1/tables/{gid}/replay", headers=bearer(t0), params={"as": "1"}), 403)
    assert refused["code"] == "replay_while_running"
