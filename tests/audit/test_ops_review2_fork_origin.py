"""A fork's audit checks the origin's log it carries against the origin's own log. It only
re-checked the carried log by itself, which holds for any game played under the origin's id:
a fork made from a game that was never played (hands of someone's choosing) audited clean
while the real origin audited clean too."""

from __future__ import annotations

import dataclasses
import functools
import json

from croupier.cli.main import main
from croupier.engine import registry
from croupier.engine.audit import audit
from croupier.engine.envelope import GENESIS_HASH, compute_hash
from croupier.engine.selfplay import SelfplayReport, play_one
from croupier.engine.table import TableHost

GAME = "expeditions"


@functools.cache
def _played(seed: int) -> tuple:
    spec = registry.get(GAME)
    table = play_one(spec, seats=2, seat_bots=["random", "random"], options=spec.parse_options({}), seed=seed,
                     index=0, report=SelfplayReport(game=GAME), check_all_legal=False)
    return tuple(table.envelopes)


def as_game(envs, game_id: str) -> list:
    """The same events under another game id, the chain taken again (what a forger does)."""
    out, prev = [], GENESIS_HASH
    for env in envs:
        env = dataclasses.replace(env, game_id=game_id, prev_hash=prev)
        env = dataclasses.replace(env, hash=compute_hash(prev, env.body()))
        out.append(env)
        prev = env.hash
    return out


def fork_of(origin: list, fork_id: str) -> list:
    at = len(origin) // 2
    while origin[at].cause is None:  # where a command's events end
        at += 1
    return TableHost(registry.get(GAME)).fork(fork_id, origin[:at], "ef" * 32, now=origin[at - 1].time)


def write(path, *games) -> str:
    path.write_text("\n".join(env.to_json() for envs in games for env in envs) + "\n", encoding="utf-8")
    return str(path)


def test_a_fork_made_from_a_game_that_was_never_played_fails_against_the_origins_log(tmp_path, capsys):
    real = as_game(_played(1), f"{GAME}-real")
    made_up = as_game(_played(2), f"{GAME}-real")  # another game, under the real one's id
    genuine, forged = fork_of(real, f"{GAME}-fork-a"), fork_of(made_up, f"{GAME}-fork-b")
    assert audit(forged).ok and audit(real).ok  # each holds by itself

    code = main(["audit", "--file", write(tmp_path / "all.jsonl", real, genuine, forged), "--all", "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 1 and summary["games"] == 3 and summary["clean"] == 2, summary
    (fault,) = summary["faulty"]
    assert fault["game_id"] == f"{GAME}-fork-b" and fault["first_fault"]["check"] == "origin"
    assert f"{GAME}-real" in fault["first_fault"]["what"]


def test_the_check_itself(tmp_path):
    from croupier.engine.audit import check_origin

    real = as_game(_played(1), f"{GAME}-real")
    genuine, forged = fork_of(real, f"{GAME}-fork-a"), fork_of(as_game(_played(2), f"{GAME}-real"), f"{GAME}-fork-b")
    report = audit(genuine)
    check_origin(report, genuine, real)
    assert report.ok
    report = audit(forged)
    check_origin(report, forged, real)
    assert [f["check"] for f in report.faults] == ["origin"] and report.faults[0]["seq"] == 1
    report = audit(genuine)
    check_origin(report, genuine, real[:10])  # the origin's log holds no event at the step
    assert report.faults[0]["check"] == "origin" and "does not hold" in report.faults[0]["what"]


def test_a_fork_audited_without_its_origins_log_says_so(tmp_path, capsys):
    """`audit --file FORK` cannot read the origin's log: "clean" then holds only for the
    origin's log the fork carries, and the verdict says so (JSON origin_checked false), rather
    than read as the whole check. A game that is no fork has origin_checked null."""
    real = as_game(_played(1), f"{GAME}-real")
    fork = fork_of(real, f"{GAME}-fork-a")
    path = write(tmp_path / "fork.jsonl", fork)
    assert main(["audit", "--file", path, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["origin_checked"] is False
    assert main(["audit", "--file", path]) == 0
    assert "its origin's own log was not at hand" in capsys.readouterr().out
    assert main(["audit", "--file", write(tmp_path / "real.jsonl", real), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["origin_checked"] is None
    from croupier.engine.audit import check_origin

    report = audit(fork)
    check_origin(report, fork, real)
    assert report.ok and report.as_dict()["origin_checked"] is True
