"""Audit names the first seq at fault for every kind of tampering; clean games audit clean."""

from __future__ import annotations

import dataclasses
import functools
import json

import pytest

from croupier.engine import registry
from croupier.engine.audit import audit, moves, step_end, view_as
from croupier.engine.contract import Rejection
from croupier.engine.envelope import GENESIS_HASH, compute_hash
from croupier.engine.selfplay import SelfplayReport, leaks, play_one
from croupier.engine.table import DEAL_AGAIN, DEAL_KEPT, TableHost


@functools.cache
def _played(game_id: str, seats: int | None, seed: int):
    spec = registry.get(game_id)
    seats = seats or spec.min_seats
    bot = "heuristic" if "heuristic" in spec.bots else "random"
    table = play_one(spec, seats=seats, seat_bots=[bot] * seats, options=spec.parse_options({}), seed=seed,
                     index=0, report=SelfplayReport(game=game_id), check_all_legal=False)
    return tuple(table.envelopes)


def played(game_id: str = "expeditions", seats: int | None = None, seed: int = 3):
    """A whole game (a fresh list each call; the game itself is played once)."""
    return list(_played(game_id, seats, seed))


def rechain(envelopes):
    """What a forger who knows the format would do: fix every hash after a change."""
    out, prev = [], GENESIS_HASH
    for env in envelopes:
        env = dataclasses.replace(env, prev_hash=prev)
        env = dataclasses.replace(env, hash=compute_hash(prev, env.body()))
        out.append(env)
        prev = env.hash
    return out


def first_fault(envelopes):
    report = audit(envelopes)
    assert not report.ok
    return report.faults[0]


@pytest.mark.parametrize("game_id", list(registry.GAME_IDS))
def test_an_untouched_game_of_every_type_audits_clean(game_id):
    envs = played(game_id)
    report = audit(envs)
    assert report.ok, report.faults[:3]
    assert report.commands > 3 and report.events == len(envs)


def test_one_byte_changed_in_one_event_is_named():
    envs = played()
    i = len(envs) // 2
    env = envs[i]
    raw = env.to_json().replace('"seq":', '"seq": ', 1)  # formatting is not content...
    assert raw  # ...so change a payload byte instead
    key = next(iter(env.payload), None)
    payload = dict(env.payload)
    payload["_x"] = 1 if key is None else payload.get("_x", 0) + 1
    envs[i] = dataclasses.replace(env, payload=payload)
    fault = first_fault(envs)
    assert fault["seq"] == env.seq and fault["check"] == "chain"


def test_two_events_swapped_are_named():
    envs = played()
    i = len(envs) // 3
    envs[i], envs[i + 1] = envs[i + 1], envs[i]
    fault = first_fault(envs)
    assert fault["seq"] == envs[i + 1].seq and fault["check"] == "chain"


def test_an_event_removed_is_named():
    envs = played()
    i = len(envs) // 4
    gone = envs.pop(i)
    fault = first_fault(envs)
    assert fault["seq"] == gone.seq


def test_a_forged_shuffle_is_caught_even_with_a_rebuilt_chain():
    envs = played()
    idx = next(i for i, e in enumerate(envs) if e.cause and e.cause["draws"])
    env = envs[idx]
    cause = dict(env.cause)
    draws = [dict(d) for d in cause["draws"]]
    draws[0]["out"] = list(reversed(draws[0]["out"])) if isinstance(draws[0]["out"], list) else draws[0]["out"] + 1
    cause["draws"] = draws
    envs[idx] = dataclasses.replace(env, cause=cause)
    fault = first_fault(rechain(envs))
    assert fault["seq"] == env.seq and fault["check"] == "randomness"


def test_recorded_events_the_engine_would_not_yield_are_caught_with_a_rebuilt_chain():
    envs = played()
    host = TableHost(registry.get("expeditions"))
    game_events = [i for i, e in enumerate(envs) if e.type not in host.events.names()[:0] and e.type not in
                   ("TableCreated", "SeatJoined", "TableStarted", "TableEnded") and e.cause is None]
    i = game_events[len(game_events) // 2]
    env = envs[i]
    payload = {k: (v + 1 if isinstance(v, int) and not isinstance(v, bool) else v) for k, v in env.payload.items()}
    if payload == env.payload:
        payload = {**env.payload, "forged": True}
    envs[i] = dataclasses.replace(env, payload=payload)
    fault = first_fault(rechain(envs))
    assert fault["seq"] == env.seq and fault["check"] in ("engine", "command")


def test_a_wrong_seed_reveal_is_caught():
    envs = played()
    end = envs[-1]
    assert end.type == "TableEnded"
    envs[-1] = dataclasses.replace(end, payload={**end.payload, "seed": "00" * 32})
    fault = first_fault(rechain(envs))
    assert fault["seq"] == end.seq and fault["check"] == "seed"


@pytest.mark.parametrize("game_id", list(registry.GAME_IDS))
def test_replay_as_a_seat_never_shows_another_seats_hidden_cards_before_the_end(game_id):
    spec = registry.get(game_id)
    envs = played(game_id, seats=spec.max_seats if spec.max_seats > 1 else 1)
    host = TableHost(spec)
    state = None
    checked = 0
    step = max(1, len(envs) // 10)
    for i, env in enumerate(envs[: len(envs) - 1]):
        state = host.evolve(state, env)
        # Look where a command's events end (a move's line describes all of them).
        if state.game is None or env.seq % step > 2 or envs[i + 1].cause is None:
            continue
        for viewer in ["spectator", *map(str, range(state.seats))]:
            seat = None if viewer == "spectator" else int(viewer)
            hidden = spec.hidden(state.game, seat)
            assert not leaks(view_as(envs, env.seq, viewer), hidden)
            # The line of the latest move, as the viewer saw it then (earlier lines were
            # checked at their own step: a card may be public then and in a hand now).
            line = moves(envs, env.seq, viewer)[-1]
            assert not any(h in line for h in hidden), (viewer, line)
            checked += 1
    assert checked > 0


@pytest.mark.parametrize("game_id", list(registry.GAME_IDS))
def test_replay_at_a_step_inside_a_command_shows_the_state_after_the_whole_command(game_id):
    """A command's events are one step: a replay asked for a seq halfway through them shows
    the game after the command (what every viewer saw), never the state in between, which
    the rules need not be able to show (in delve its view raised IndexError)."""
    spec = registry.get(game_id)
    envs = played(game_id, seats=spec.max_seats)
    host = TableHost(spec)
    ends = [e.seq + e.cause["events"] - 1 for e in envs if e.cause]
    assert any(e.cause and e.cause["events"] > 1 for e in envs)
    after = {}  # seq -> the operator's view after the command that ends there
    state = None
    for env in envs:
        state = host.evolve(state, env)
        if env.seq in ends:
            after[env.seq] = {"spectator": host.view(state, None),
                              "seats": {str(s): host.view(state, s) for s in range(state.seats)}}
    for env in envs:
        end = min(e for e in ends if e >= env.seq)
        assert step_end(envs, env.seq) == end
        shown = view_as(envs, env.seq, "operator")
        assert shown["version"] == end
        assert {"spectator": shown["spectator"], "seats": shown["seats"]} == after[end]
    assert step_end(envs, None) == envs[-1].seq


def test_a_fork_names_its_origin_audits_clean_and_plays_on():
    spec = registry.get("expeditions")
    envs = played()
    host = TableHost(spec)
    at = len(envs) // 2
    with pytest.raises(Exception, match="inside the events of one command"):
        host.fork("fork-0", envs[: next(i for i in range(at, len(envs)) if envs[i].cause and envs[i].cause["events"] > 1) + 1], "ef" * 32)
    while envs[at].cause is None:  # fork where a command's events end
        at += 1
    fork = host.fork("fork-1", envs[:at], "ef" * 32, now=1)
    assert fork[0].type == "TableCreated" and fork[0].payload["origin"] == {
        "game_id": envs[0].game_id, "seq": envs[at - 1].seq, "hash": envs[at - 1].hash}
    state = host.fold(fork)
    origin = host.fold(envs[:at])
    # The same public position, its hidden cards dealt again (the audit deals them again too).
    assert spec.view(state.game, None) == spec.view(origin.game, None) and state.game != origin.game
    for i in range(10):
        seat = spec.to_act(state.game)[0]
        new = host.decide(state, host.legal_actions(state, seat)[0], command_id=f"f{i}", now=2)
        state = host.fold(new, state)
        fork += new
    assert audit(fork).ok
    tampered = list(envs[:at])
    tampered[5] = dataclasses.replace(tampered[5], payload={**tampered[5].payload, "x": 1})
    with pytest.raises(Rejection) as refused:
        host.fork("fork-2", tampered, "ef" * 32)
    assert refused.value.code == "origin_corrupt"


def test_a_fork_logged_before_forks_reset_the_clock_count_still_audits_clean():
    """A fork logged before 2026-12-02 has no reset_idle in its ForkTable and no idle_moves in
    its TableForked (nor the deal, 2026-12-03: it kept its origin's cards); its audit re-runs it
    as it was made (the origin's count and cards kept), and the absent field reads as None, as
    the log is read."""
    from croupier.engine.envelope import seal

    spec = registry.get("expeditions")
    envs = played()
    host = TableHost(spec)
    at = len(envs) // 2
    while envs[at].cause is None:
        at += 1
    new = host.fork("fork-new", envs[:at], "ef" * 32, now=1)
    assert new[0].cause["command"]["reset_idle"] is True and new[1].payload["idle_moves"] == 0
    assert new[0].cause["command"]["deal"] == DEAL_AGAIN and len(new) > 2 and new[0].cause["draws"]
    assert audit(new).ok
    made = host.fork("fork-old", envs[:at], "ef" * 32, now=1, reset_idle=False, deal=DEAL_KEPT)
    assert len(made) == 2 and not made[0].cause["draws"]
    cause = {**made[0].cause, "command": {k: v for k, v in made[0].cause["command"].items()
                                          if k not in ("reset_idle", "deal")}}
    triples = [(e.type, e.version, {k: v for k, v in e.payload.items() if k != "idle_moves"}) for e in made]
    old = seal(game_id="fork-old", game_type=spec.id, first_seq=1, prev_hash=GENESIS_HASH,
               rules_version=made[0].rules_version, command_id=made[0].command_id, seat=None, time=1,
               cause=cause, events=triples)
    assert "idle_moves" not in old[1].payload and "reset_idle" not in old[0].cause["command"]
    state = host.fold(old)
    assert state.idle_moves == host.fold(envs[:at]).idle_moves  # the origin's, as before
    assert state.game == host.fold(envs[:at]).game  # the origin's cards, as before
    report = audit(old)
    assert report.ok, report.faults
    # A fork's recorded choice is checked: a TableForked that claims a reset its command did
    # not ask for is a fault.
    forged = seal(game_id="fork-old", game_type=spec.id, first_seq=1, prev_hash=GENESIS_HASH,
                  rules_version=made[0].rules_version, command_id=made[0].command_id, seat=None, time=1,
                  cause=cause, events=[triples[0], (triples[1][0], triples[1][1], {**triples[1][2], "idle_moves": 0})])
    assert not audit(forged).ok


def test_audit_all_checks_every_game_of_an_export_file_and_names_the_faulty_one(tmp_path, capsys):
    from croupier.cli.main import main

    clean = [played(g) for g in ("expeditions", "virtues")]
    broken = played("journey")
    i = len(broken) // 2
    broken[i] = dataclasses.replace(broken[i], payload={**broken[i].payload, "_x": 1})
    path = tmp_path / "export.jsonl"
    lines = [env.to_json() for envs in (*clean, broken) for env in envs]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    assert main(["audit", "--file", str(path), "--all", "--json"]) == 1
    import json

    out = json.loads(capsys.readouterr().out)
    assert out["games"] == 3 and out["clean"] == 2 and not out["ok"]
    assert out["events"] == sum(len(e) for e in (*clean, broken))
    [faulty] = out["faulty"]
    assert faulty["game_id"] == broken[0].game_id and faulty["first_fault"]["seq"] == broken[i].seq

    good = tmp_path / "good.jsonl"
    good.write_text("\n".join(env.to_json() for envs in clean for env in envs) + "\n", encoding="utf-8")
    assert main(["audit", "--file", str(good), "--all"]) == 0
    assert "2 of 2 games clean" in capsys.readouterr().out
    # Without --all a many-game file is refused with a clear message, not half-audited.
    assert main(["audit", "--file", str(good)]) == 2
    assert "holds 2 games; audit them all with --all" in capsys.readouterr().err
    assert main(["replay", "--file", str(good)]) == 2  # in replay's words, not audit's
    err = capsys.readouterr().err
    assert "holds 2 games; replay takes a file of one game" in err and "--all" not in err, err


def test_the_cli_refuses_files_and_steps_it_cannot_use_with_one_line_and_exit_2(tmp_path, capsys):
    """Files an operator may hand the dispute commands by mistake, and steps out of range: a
    line naming the problem and exit 2 (bad input), never a traceback or a clean verdict."""
    from croupier.cli.main import main

    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"\xff\xfe\x00not text\n")
    game = tmp_path / "game.jsonl"
    game.write_text("\n".join(env.to_json() for env in played()) + "\n", encoding="utf-8")
    rows = [json.loads(env.to_json()) for env in played()]

    def variant(name, change):
        path = tmp_path / f"{name}.jsonl"
        changed = [dict(r) for r in rows]
        change(changed)
        path.write_text("\n".join(json.dumps(r) for r in changed) + "\n", encoding="utf-8")
        return str(path)

    seq_text = variant("seq-text", lambda rs: rs[3].update(seq=str(rs[3]["seq"])))
    cause_text = variant("cause-text", lambda rs: rs[3].update(cause="x"))
    no_payload = variant("no-payload", lambda rs: rs[3].update(payload=None))
    relabelled = variant("relabelled", lambda rs: [r.update(game_type="virtues") for r in rs])
    cases = {
        ("audit", "--file", seq_text): "seq is str",
        ("audit", "--file", cause_text): "cause is str",
        ("replay", "--file", no_payload): "payload is NoneType",
        ("replay", "--file", relabelled): "cannot be replayed",
        ("audit", "--file", str(empty)): "holds no events",
        ("audit", "--file", str(empty), "--all"): "holds no events",  # not "0 of 0 games clean"
        ("audit", "--file", str(binary)): "not UTF-8",
        ("audit", "--file", str(tmp_path)): "is not a file",
        ("replay", "--file", str(empty)): "holds no events",
        ("replay", "--file", str(game), "--as", "²"): "--as takes a seat number",
    }
    for argv, words in cases.items():
        assert main(list(argv)) == 2, argv
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err, (argv, err)
    for argv in (["replay", "--file", str(game), "--to", "0"], ["fork", "g", "--at", "-1"],
                 ["fork", "g", "--at", str(2**64)], ["projector", "rebuild", "--wait", "nan"],
                 ["projector", "rebuild", "--wait", "-5"]):
        with pytest.raises(SystemExit) as exit_:  # argparse's own refusal, before anything runs
            main(argv)
        assert exit_.value.code == 2, argv
        capsys.readouterr()
    # A seat given as 01 is seat 1, and the header names the step's real end.
    assert main(["replay", "--file", str(game), "--as", "01", "--to", "2"]) == 0
    env = played()
    header = capsys.readouterr().out.splitlines()[0]
    assert f"as 1, at seq {step_end(env, 2)}" in header


def _malformed(envs, i, where, change):
    """The log with envelope i's payload or cause changed by `change` (a dict -> None), its
    chain rebuilt: the hash holds, the contents are not what the engine writes."""
    envs = list(envs)
    part = dict(getattr(envs[i], where))
    change(part)
    envs[i] = dataclasses.replace(envs[i], **{where: part})
    return rechain(envs)


def _first_with_cause(envs, start=1):
    return next(i for i in range(start, len(envs)) if envs[i].cause is not None)


def test_a_log_whose_chain_holds_but_whose_contents_are_malformed_is_a_format_fault_never_an_exception():
    """A hand-made or damaged log with its chain rebuilt: a seed deleted or not hex, draws
    that are not a list, a cause without its command. Each was a KeyError or TypeError out of
    audit (a traceback, and `audit --all` lost the whole file); each is a `format` fault at
    its seq."""
    envs = played()
    c = _first_with_cause(envs)
    cases = {
        "no seed": (_malformed(envs, 0, "payload", lambda p: p.pop("seed")), 1, "no payload.seed"),
        "seed an int": (_malformed(envs, 0, "payload", lambda p: p.update(seed=123)), 1, "payload.seed is int"),
        "draws an int": (_malformed(envs, c, "cause", lambda p: p.update(draws=5)), envs[c].seq, "cause.draws is int"),
        "no command": (_malformed(envs, c, "cause", lambda p: p.pop("command")), envs[c].seq, "cause.command"),
        "events as text": (_malformed(envs, c, "cause", lambda p: p.update(events=str(p["events"]))), envs[c].seq,
                           "cause.events is str"),
    }
    for name, (log, seq, words) in cases.items():
        fault = first_fault(log)
        assert (fault["check"], fault["seq"]) == ("format", seq) and words in fault["what"], (name, fault)
    # A count that is a number but not the events recorded says so, not "yields 16 but 16".
    n = envs[c].cause["events"]
    fault = first_fault(_malformed(envs, c, "cause", lambda p: p.update(events=n + 1)))
    assert fault["seq"] == envs[c].seq and f"says the command yields {n + 1} events" in fault["what"], fault


def test_audit_and_replay_of_a_malformed_log_say_where_it_is_at_fault_and_audit_all_goes_on(tmp_path, capsys):
    from croupier.cli.main import main

    envs = played()
    c = _first_with_cause(envs)
    broken = _malformed(envs, c, "cause", lambda p: p.update(draws=5))
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join(env.to_json() for env in broken) + "\n", encoding="utf-8")
    assert main(["audit", "--file", str(path)]) == 1
    captured = capsys.readouterr()
    assert f"FAULT at seq {envs[c].seq} (format): cause.draws is int" in captured.out, captured
    assert main(["replay", "--file", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"seq {envs[c].seq}: cause.draws is int" in err and "Traceback" not in err, err

    clean = [played(g) for g in ("virtues", "journey")]
    export = tmp_path / "export.jsonl"
    export.write_text("\n".join(env.to_json() for log in (clean[0], broken, clean[1]) for env in log) + "\n",
                      encoding="utf-8")
    assert main(["audit", "--file", str(export), "--all", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["games"] == 3 and out["clean"] == 2
    [faulty] = out["faulty"]
    assert faulty["game_id"] == envs[0].game_id and faulty["first_fault"]["check"] == "format"


def test_an_envelope_the_engine_would_not_seal_is_caught_with_a_rebuilt_chain():
    """Not only each event's type and payload: the envelope it is sealed in too. An event
    version of 9, another rules version or game type, another seat, or a time or command_id
    that differs from its command's (all sealed at once) audited clean while replay refused
    the log."""
    envs = played()
    head = next(i for i, e in enumerate(envs) if e.cause and e.cause["events"] > 1 and e.seat is not None and i > 3)
    other_seat = (envs[head].seat + 1) % 2
    cases = {
        "version": (head, {"version": 9}),
        "rules_version": (head, {"rules_version": 7}),
        "game_type": (head, {"game_type": "delve"}),
        "seat": (head, {"seat": other_seat}),
        "seat as true": (head, {"seat": True}) if envs[head].seat == 1 else (head, {"seat": False}),
        "time": (head + 1, {"time": envs[head].time + 1}),
        "command_id": (head + 1, {"command_id": "another"}),
    }
    for name, (i, change) in cases.items():
        tampered = list(envs)
        tampered[i] = dataclasses.replace(envs[i], **change)
        fault = first_fault(rechain(tampered))
        field_name = name.split()[0]
        assert (fault["check"], fault["seq"]) == ("envelope", envs[i].seq), (name, fault)
        assert f"with {field_name} " in fault["what"], (name, fault)
    # A cause holding what the engine never records is caught too.
    tampered = list(envs)
    tampered[head] = dataclasses.replace(envs[head], cause={**envs[head].cause, "note": "x"})
    fault = first_fault(rechain(tampered))
    assert (fault["check"], fault["seq"]) == ("envelope", envs[head].seq) and "note" in fault["what"], fault


def test_a_log_cut_between_commands_is_clean_only_so_far_and_says_it_is_incomplete(tmp_path, capsys):
    """A log that does not end with TableEnded (a running game's, or an export cut short)
    audited "clean … hash chain and seed hold": its seed was never revealed. The report says
    where it ends and that it has not ended; exit 0 still (a running game's log is
    incomplete by nature) unless --require-ended."""
    from croupier.cli.main import main

    envs = played()
    cut = next(i for i in range(len(envs) // 2, len(envs)) if envs[i].cause is not None)  # a command starts here
    part = envs[:cut]
    report = audit(part)
    assert report.ok and not report.ended and report.status == "running" and report.last_seq == envs[cut - 1].seq
    whole = audit(envs)
    assert whole.ended and whole.status == "over" and whole.last_seq == envs[-1].seq
    assert audit(envs[:1]).status == "open"
    assert {"last_seq", "ended", "status"} <= audit(part).as_dict().keys()

    path = tmp_path / "cut.jsonl"
    path.write_text("\n".join(env.to_json() for env in part) + "\n", encoding="utf-8")
    assert main(["audit", "--file", str(path)]) == 0
    out = capsys.readouterr().out
    assert "INCOMPLETE" in out and f"ends at seq {envs[cut - 1].seq} without TableEnded" in out, out
    assert "seed hold" not in out and "not revealed" in out, out
    assert main(["audit", "--file", str(path), "--require-ended", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is True and out["ended"] is False and out["status"] == "running"
    assert out["last_seq"] == envs[cut - 1].seq

    export = tmp_path / "export.jsonl"
    export.write_text("\n".join(env.to_json() for env in [*played("virtues"), *part]) + "\n", encoding="utf-8")
    assert main(["audit", "--file", str(export), "--all", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["clean"] == 2 and out["unfinished"] == 1 and out["unfinished_games"] == [envs[0].game_id]
    assert main(["audit", "--file", str(export), "--all", "--require-ended"]) == 1
    out = capsys.readouterr().out
    assert "2 of 2 games clean (1 of them INCOMPLETE" in out and f"{envs[0].game_id} (expeditions): INCOMPLETE" in out


@pytest.mark.parametrize("game_id", list(registry.GAME_IDS))
def test_the_first_line_of_a_replay_says_the_table_was_made_and_never_shows_its_seed(game_id):
    # Before, the creation's line was "table: CreateTable -> " with nothing after the arrow.
    envs = played(game_id, seats=registry.get(game_id).min_seats)
    seed = envs[0].payload["seed"]
    for viewer in ("operator", "spectator", "0"):
        first = moves(envs, envs[0].seq, viewer)[0]
        assert first.endswith(f"table: CreateTable -> a table for {envs[0].payload['seats']} seats")
        assert seed not in first


def _table_played_at(times):
    """An expeditions table joined at 0 and moved by random legal actions at `times` (ms): a
    real log, its chain sealed by the engine, whatever the times."""
    import random

    from croupier.engine.local import LocalTable

    spec = registry.get("expeditions")
    table = LocalTable(spec, "expeditions-clock", 2, spec.parse_options({}), "ab" * 32)
    table.join_all()
    rnd = random.Random(5)
    for now in times:
        seat = next(iter(spec.to_act(table.state.game)))
        table.handle(rnd.choice(spec.legal_actions(table.state.game, seat)), now=now)
    return table.envelopes


def test_a_command_recorded_before_the_one_before_it_is_noted_not_a_fault():
    # The replicas hold a game's times from going back (a new owner's clock is held at the
    # log's latest time): a log that goes back was sealed by clocks that disagree, which an
    # operator settling a turn clock's dispute needs to know; its rules still hold.
    envs = _table_played_at([5_000, 6_000, 4_500, 7_000])
    report = audit(envs)
    assert report.ok, report.faults[:3]
    back = next(e for e in envs if e.time == 4_500)
    before = next(e for e in envs if e.time == 6_000)
    assert [(n["seq"], n["check"]) for n in report.notes] == [(back.seq, "time")]
    assert f"1500 ms before the one at seq {before.seq}" in report.notes[0]["what"]
    assert report.as_dict()["notes"] == report.notes
    assert audit(_table_played_at([5_000, 6_000, 6_000, 7_000])).notes == []  # the same time is not back


@pytest.mark.parametrize("game_id", list(registry.GAME_IDS))
def test_a_game_played_on_one_clock_has_no_notes(game_id):
    assert audit(played(game_id)).notes == []


def test_the_cli_says_a_note_in_its_verdict_and_lists_the_noted_games_of_a_file(tmp_path, capsys):
    from croupier.cli.main import main

    noted, clean = _table_played_at([5_000, 6_000, 4_500, 7_000]), played("virtues")
    one = tmp_path / "one.jsonl"
    one.write_text("\n".join(env.to_json() for env in noted) + "\n", encoding="utf-8")
    assert main(["audit", "--file", str(one)]) == 0  # a note is no fault
    out = capsys.readouterr().out
    assert "clean so far" in out and "NOTE at seq" in out and "(time)" in out, out
    both = tmp_path / "both.jsonl"
    both.write_text("\n".join(env.to_json() for envs in (noted, clean) for env in envs) + "\n", encoding="utf-8")
    assert main(["audit", "--file", str(both), "--all", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert [g["game_id"] for g in summary["noted"]] == ["expeditions-clock"] and summary["clean"] == 2
    assert main(["audit", "--file", str(both), "--all"]) == 0
    out = capsys.readouterr().out
    assert "expeditions-clock (expeditions): INCOMPLETE" in out and "NOTE at seq" in out and "virtues" not in out
