"""A replay shows the game its players saw: the log as the rules services and the projector
fold it (each seq from the first record that holds it), even when the log holds a record
written again or a second event at a seq already taken, and it says (exit 1, one line)
that such a log is at fault, as `croupier audit` does. A log with a seq missing is refused,
as the services refuse the game from there."""

from __future__ import annotations

import dataclasses
import functools
import json

import pytest

from croupier.cli.main import main
from croupier.engine import audit as audit_log
from croupier.engine import registry
from croupier.engine.audit import audit, moves, step_end, view_as
from croupier.engine.contract import Rejection
from croupier.engine.envelope import compute_hash
from croupier.engine.selfplay import SelfplayReport, play_one


@functools.cache
def _played(game_id: str) -> tuple:
    spec = registry.get(game_id)
    table = play_one(spec, seats=spec.min_seats, seat_bots=["random"] * spec.min_seats,
                     options=spec.parse_options({}), seed=5, index=0, report=SelfplayReport(game=game_id),
                     check_all_legal=False)
    return tuple(table.envelopes)


def played(game_id: str = "virtues") -> list:
    return list(_played(game_id))


def write(tmp_path, name, envs) -> str:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(env.to_json() for env in envs) + "\n", encoding="utf-8")
    return str(path)


def replay_json(capsys, path, *more) -> tuple[int, dict, str]:
    code = main(["replay", "--file", path, "--json", *more])
    out = capsys.readouterr()
    return code, json.loads(out.out), out.err


def other_event_at(env):
    """A second, different event at env's seq, its hash made to hold (what a writer from
    outside the rules that knows the format would write)."""
    other = dataclasses.replace(env, time=env.time + 1)
    return dataclasses.replace(other, hash=compute_hash(other.prev_hash, other.body()))


@pytest.mark.parametrize("game_id", list(registry.GAME_IDS))
def test_a_record_written_again_changes_nothing_a_replay_shows(game_id):
    """An exact copy of a mid-game event, appended after the game's end: the services pass
    over it (a seq already folded). The replay folded it again: in virtues the table came out
    not over, `to` named the copy's seq, and the last line of moves was the copy's."""
    envs = played(game_id)
    copied = envs + [envs[len(envs) // 2]]
    for viewer in ("operator", "spectator", "0"):
        assert view_as(copied, None, viewer) == view_as(envs, None, viewer)
        assert moves(copied, None, viewer) == moves(envs, None, viewer)
    assert step_end(copied, None) == envs[-1].seq
    assert audit_log.folded(copied) == envs
    assert not audit(copied).ok  # the log itself is still at fault


def test_a_second_event_at_a_seq_already_folded_is_passed_over_the_first_stays():
    envs = played()
    i = len(envs) // 2
    conflicting = envs[: i + 1] + [other_event_at(envs[i])] + envs[i + 1:]
    assert view_as(conflicting, None, "operator") == view_as(envs, None, "operator")
    assert moves(conflicting, envs[i].seq + 3, "1") == moves(envs, envs[i].seq + 3, "1")
    assert audit_log.folded(conflicting) == envs
    fault = audit(conflicting).faults[0]
    assert fault["check"] == "chain" and fault["seq"] == envs[i].seq + 1


def test_a_log_with_a_seq_missing_is_refused_not_replayed_past_the_gap():
    envs = played()
    gapped = envs[:10] + envs[11:]
    with pytest.raises(Rejection) as refused:
        view_as(gapped, None, "operator")
    assert refused.value.code == "log_gap" and "from seq 10 to seq 12" in refused.value.message
    with pytest.raises(Rejection):
        moves(gapped, None, "0")


def test_the_cli_shows_the_folded_game_and_says_the_log_is_at_fault(tmp_path, capsys):
    envs = played()
    clean = write(tmp_path, "clean", envs)
    code, want, err = replay_json(capsys, clean, "--as", "1")
    assert code == 0 and err == "" and want["log_fault"] is None

    copied = write(tmp_path, "copied", envs + [envs[len(envs) // 2]])
    code, got, err = replay_json(capsys, copied, "--as", "1")
    assert code == 1, err
    assert {k: got[k] for k in ("to", "view", "moves")} == {k: want[k] for k in ("to", "view", "moves")}
    assert got["log_fault"]["seq"] == envs[-1].seq + 1 and got["log_fault"]["check"] == "chain"
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "croupier replay:" in lines[0] and f"at fault at seq {envs[-1].seq + 1}" in lines[0]
    assert "Traceback" not in err

    # An event altered in place (a file edited): shown as recorded, but never as if it held.
    altered = list(envs)
    altered[7] = dataclasses.replace(altered[7], time=altered[7].time + 5)
    code = main(["replay", "--file", write(tmp_path, "altered", altered)])
    err = capsys.readouterr().err
    assert code == 1 and "at fault at seq 8" in err and "altered" in err

    code = main(["replay", "--file", write(tmp_path, "gapped", envs[:10] + envs[11:]), "--as", "0"])
    out = capsys.readouterr()
    assert code == 2 and out.out == "", out
    lines = out.err.strip().splitlines()
    assert len(lines) == 1 and "cannot be replayed" in lines[0] and "skips from seq 10 to seq 12" in lines[0]


def test_a_log_that_does_not_begin_at_seq_1_says_so():
    envs = played()
    with pytest.raises(Rejection) as refused:
        step_end(envs[3:], None)
    assert refused.value.code == "log_gap" and "begins at seq 4, not 1" in refused.value.message


def test_fork_checks_its_step_in_the_log_as_folded():
    """croupier fork's own check of --at (before any replica is asked) read the log as
    recorded: an event written again at its end made that event's seq the log's 'end' (a
    later --at refused as past it) and its command the one a good --at fell inside."""
    from croupier.cli.replay import _check_fork_point

    envs = played()
    i = next(i for i in range(len(envs) // 2, len(envs)) if envs[i].cause is not None and envs[i].cause["events"] > 1)
    copied = envs + [envs[i]]
    at = envs[-2].seq if envs[-1].cause is None else envs[-1].seq - 1
    while not any(e.seq == at + 1 and e.cause is not None for e in envs):  # where a command's events end
        at -= 1
    _check_fork_point("g", copied, at)  # refused before: past the end, or inside the copied command
    with pytest.raises(Rejection) as refused:
        _check_fork_point("g", copied, envs[-1].seq + 1)
    assert refused.value.code == "bad_seq" and f"1..{envs[-1].seq}" in refused.value.message
