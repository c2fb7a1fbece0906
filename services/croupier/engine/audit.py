"""Audit and replay of one game's log, in process (pure: the caller reads the log).

audit() checks, in this order, and names the first seq at fault:
1. seq contiguity and the hash chain (nothing altered, removed, swapped or inserted);
2. the seed against its commitment (TableCreated's seed_hash, TableEnded's revealed seed);
3. every recorded random draw against the seed and the seats' entropy;
4. every recorded command re-run through the engine of the game's rules version: the
   events it yields must be the recorded ones, byte for byte, each in the envelope the
   engine seals it in (its event version, the game type and rules version, the command's
   seat and command_id, and the time recorded for the command; an `envelope` fault if not).

A log that does not end with TableEnded (a running game's, or one cut short) can audit
clean only so far: the report says whether it `ended`, its `last_seq` and the table's
`status` then, and the seed is revealed (and checked against its commitment in the open)
only at the end.

A log whose chain holds but whose contents are not in the shape the engine writes (a seed
that is not hex, a cause without its command, draws that are not a list: a hand-made or
damaged file) is a `format` fault at the seq where it shows, never an exception: an audit
of many games goes on to the next.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from croupier.engine import registry
from croupier.engine.codec import canonical_json
from croupier.engine.contract import Rejection
from croupier.engine.envelope import Envelope, verify_chain
from croupier.engine.rng import commitment, verify_draws
from croupier.engine.table import OPEN, OVER, RUNNING, TableCreated, TableHost, TableState, advanced, idle_moves_after


@dataclass
class AuditReport:
    game_id: str
    game_type: str
    events: int
    commands: int = 0
    draws: int = 0
    faults: list[dict[str, Any]] = field(default_factory=list)
    # What the log holds that breaks no rule but an operator settling a dispute should know:
    # a command recorded at a time before the one before it (`time`: the replicas that sealed
    # them disagree on the clock, as after a failover to one whose clock is behind, or one
    # whose clock ran ahead sealed the earlier, a turn clock's end among them).
    notes: list[dict[str, Any]] = field(default_factory=list)
    last_seq: int = 0
    ended: bool = False  # the log ends with TableEnded (which reveals the seed)
    status: str = ""  # the table's at the log's end: open, running or over
    # A fork's start checked against its origin's own log (check_origin): True once it was,
    # False for a fork whose origin's log was not at hand, None for a game that is no fork.
    origin_checked: bool | None = None
    # The seq being checked, for a `format` fault raised from deep in a check.
    at: int = field(default=0, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return not self.faults

    def fault(self, seq: int, check: str, what: str) -> None:
        self.faults.append({"seq": seq, "check": check, "what": what})

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "game_id": self.game_id,
            "game_type": self.game_type,
            "events": self.events,
            "commands": self.commands,
            "draws": self.draws,
            "last_seq": self.last_seq,
            "ended": self.ended,
            "status": self.status,
            "origin_checked": self.origin_checked,
            "first_fault": self.faults[0] if self.faults else None,
            "faults": self.faults[:20],
            "notes": self.notes[:20],
        }


def batches(envelopes: Sequence[Envelope]) -> list[list[Envelope]]:
    """The log cut into the batches that one command each produced."""
    out: list[list[Envelope]] = []
    for env in envelopes:
        if env.cause is not None or not out:
            out.append([env])
        else:
            out[-1].append(env)
    return out


def host_for(envelopes: Sequence[Envelope]) -> TableHost:
    first = envelopes[0]
    return _host(first.game_type, first.rules_version)


@functools.lru_cache(maxsize=64)
def _host(game_type: str, rules_version: int) -> TableHost:
    """One host per game type and rules version (building one compiles its codecs)."""
    return TableHost(registry.get(game_type).for_version(rules_version))


def _shown(value: Any) -> str:
    return f"{type(value).__name__} {canonical_json(value)[:40]}"


def _is_hex(value: Any, length: int | None = None) -> bool:
    return (isinstance(value, str) and (length is None or len(value) == length) and len(value) % 2 == 0
            and all(c in "0123456789abcdef" for c in value))


def format_fault(envelopes: Sequence[Envelope]) -> tuple[int, str] | None:
    """(seq, what) of the first envelope whose contents are not in the shape the engine
    writes them, where a check or a replay would otherwise stumble (the envelope's own field
    types are the reader's to check: croupier.cli.replay.read_file), or None."""
    first = envelopes[0]
    if first.type == TableCreated.TYPE:
        for name, length in (("seed", 64), ("seed_hash", None)):
            if name not in first.payload:
                return first.seq, f"TableCreated has no payload.{name}"
            if not _is_hex(first.payload[name], length):
                return first.seq, (f"TableCreated's payload.{name} is {_shown(first.payload[name])}, not "
                                   f"{length or 'an even number of'} lowercase hex digits")
    for env in envelopes:
        cause = env.cause
        if cause is None:
            continue
        command = cause.get("command")
        if type(command) is not dict or type(command.get("type")) is not str:
            return env.seq, f"cause.command is {_shown(command)}, not a command (an object with its type)"
        draws = cause.get("draws", [])
        if type(draws) is not list or any(type(d) is not dict for d in draws):
            return env.seq, f"cause.draws is {_shown(draws)}, not a list of draws"
        events = cause.get("events")
        if type(events) is not int or events < 1:
            return env.seq, f"cause.events is {_shown(events)}, not a count of events (an integer from 1)"
        seat = cause.get("seat")
        if seat is not None and type(seat) is not int:
            return env.seq, f"cause.seat is {_shown(seat)}, not a seat number or null"
        if env.type == "TableForked":
            origin = env.payload.get("events")
            if type(origin) is not list or any(type(e) is not dict for e in origin):
                return env.seq, f"TableForked's payload.events is {_shown(origin)}, not a list of envelopes"
    return None


def audit(envelopes: Sequence[Envelope]) -> AuditReport:
    if not envelopes:
        return AuditReport("", "", 0, faults=[{"seq": 0, "check": "log", "what": "the log is empty"}])
    first = envelopes[0]
    report = AuditReport(first.game_id, first.game_type, len(envelopes))
    report.at = first.seq
    report.last_seq = envelopes[-1].seq
    report.ended = envelopes[-1].type == "TableEnded"
    report.origin_checked = False if fork_origin(envelopes) is not None else None
    report.status = OVER if report.ended else (
        RUNNING if any(e.type in ("TableStarted", "TableForked") for e in envelopes) else OPEN)
    try:
        _audit(envelopes, report)
    except Exception as exc:  # noqa: BLE001 - contents no check foresaw: a fault of this log, not a crash
        detail = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
        report.fault(report.at, "format", f"the recorded event cannot be checked: {detail}")
    return report


def _audit(envelopes: Sequence[Envelope], report: AuditReport) -> None:
    first = envelopes[0]
    fault = verify_chain(envelopes)
    if fault:
        report.fault(fault.seq, "chain", fault.what)
        return
    try:
        host = host_for(envelopes)
    except Rejection as exc:
        report.fault(first.seq, "rules_version", exc.message)
        return
    if first.type != TableCreated.TYPE:
        report.fault(first.seq, "seed", "the log does not begin with TableCreated")
        return
    problem = format_fault(envelopes)
    if problem:
        report.fault(problem[0], "format", problem[1])
        return
    created = first.payload
    if commitment(created["seed"]) != created["seed_hash"]:
        report.fault(first.seq, "seed", "the seed does not match the hash committed at creation")
        return
    # Every draw happens once the game has started (the setup draws are recorded in the
    # batch of the last JoinSeat, beside TableStarted), so all use the start's entropy.
    entropy = _entropy(envelopes)
    if len(envelopes) > 1 and envelopes[1].type == "TableForked":
        report.at = envelopes[1].seq
        origin = [Envelope.from_dict(e) for e in envelopes[1].payload["events"]]
        sub = audit(origin)
        if not sub.ok:
            f = sub.faults[0]
            report.fault(envelopes[1].seq, "origin", f"the forked-from log of {sub.game_id} fails at seq {f['seq']}: {f['what']}")
            return
    for env in envelopes:
        report.at = env.seq
        if env.type == "TableEnded" and env.payload.get("seed") != created["seed"]:
            report.fault(env.seq, "seed", "the seed revealed at the end is not the committed one")
            return
        if env.cause:
            for problem in verify_draws(created["seed"], entropy, env.cause.get("draws", [])):
                report.fault(env.seq, "randomness", problem)
                return
            report.draws += len(env.cause.get("draws", []))
    _rerun(host, envelopes, report)


def fork_origin(envelopes: Sequence[Envelope]) -> dict[str, Any] | None:
    """The origin a fork's log names ({"game_id", "seq", "hash"}), None for a game that is
    not a fork (or a log whose first event does not say)."""
    first = envelopes[0] if envelopes else None
    origin = first.payload.get("origin") if first is not None and first.type == TableCreated.TYPE else None
    if not isinstance(origin, dict) or not isinstance(origin.get("game_id"), str):
        return None
    return origin


def check_origin(report: AuditReport, envelopes: Sequence[Envelope], origin_log: Sequence[Envelope]) -> None:
    """A fork's audit re-checks the origin's log it carries, which holds by itself: a fork
    made up from a game that was never played (its own clean chain, seed and moves) under a
    real game's id audits clean that way. Checked here against the origin's log as the log
    holds it (`origin_log`, read by the caller): the origin's event at the fork's step must
    be the one the fork names (its hash pins every event before it). A fault on the report
    (`origin`, at the fork's first seq) if not."""
    origin = fork_origin(envelopes)
    if origin is None or not report.ok:
        return
    report.origin_checked = True
    name, seq = origin["game_id"], origin.get("seq")
    try:
        log = folded(origin_log)
    except Rejection:  # a gap after the step, say: the event at the step is still there to compare
        log = origin_log
    at = next((e for e in log if e.seq == seq), None)
    if at is None:
        report.fault(envelopes[0].seq, "origin", f"the fork names seq {seq} of {name}, which the log of {name} "
                     f"does not hold ({len(origin_log)} events read)")
    elif at.hash != origin.get("hash") or at.game_id != name:
        report.fault(envelopes[0].seq, "origin", f"the fork names seq {seq} of {name} with hash "
                     f"{str(origin.get('hash'))[:16]}..., but that event of the log of {name} has {at.hash[:16]}...: "
                     "the fork was not made from that game as it was played")


def _entropy(envelopes: Sequence[Envelope]) -> str:
    for env in envelopes:
        if env.type == "TableStarted":
            return env.payload.get("entropy", "")
        if env.type == "TableForked":
            return _entropy([Envelope.from_dict(e) for e in env.payload["events"]])
    return ""


_CAUSE_KEYS = frozenset(("command", "seat", "draws", "events"))


def _envelope_fault(env: Envelope, head: Envelope, host: TableHost, seat: int | None, version: int,
                    rules_version: int) -> str | None:
    """What of env's envelope differs from the one the engine seals the event in: the event's
    schema version, the game's type and rules version (the table's), and the seat,
    command_id and time of the command (its first event's: one command is sealed at one
    time). Types too: a seat of true is not seat 1, though they compare equal."""
    for name, want in (("version", version), ("game_type", host.spec.id), ("rules_version", rules_version),
                       ("seat", seat), ("command_id", head.command_id), ("time", head.time)):
        got = getattr(env, name)
        if got != want or type(got) is not type(want):
            said = (f"its command's first event (seq {head.seq}) has {canonical_json(want)[:80]}, and the engine "
                    "seals a command's events with one") if name in ("command_id", "time") and env is not head \
                else f"the engine seals it with {canonical_json(want)[:80]}"
            return f"recorded {env.type} with {name} {canonical_json(got)[:80]}, but {said}"
    return None


def _rerun(host: TableHost, envelopes: Sequence[Envelope], report: AuditReport) -> None:
    state: TableState | None = None
    game_type, rules_version = host.spec.id, host.spec.rules_version
    before: Envelope | None = None  # the last command's first event: its time
    for batch in batches(envelopes):
        head = batch[0]
        report.at = head.seq
        if before is not None and type(head.time) is int and type(before.time) is int and head.time < before.time:
            report.notes.append({"seq": head.seq, "check": "time", "what": (
                f"its command is recorded at {head.time}, {before.time - head.time} ms before the one at seq "
                f"{before.seq} ({before.time}): the clocks of the replicas that sealed them disagree by at least "
                "that much (a failover?), and a turn clock's end sealed by the one ahead came that much early")})
        before = head
        if state is not None:
            # The table's own rules version seals its commands: a fork is made (sealed) by the
            # current rules, and its game then goes on under its origin's, which may be older.
            rules_version = state.rules_version
        cause = head.cause
        if cause is None:
            report.fault(head.seq, "command", "an event with no recorded command")
            return
        report.commands += 1
        try:
            command = host.commands.decode(cause["command"], seat=cause.get("seat"))
        except Exception as exc:
            report.fault(head.seq, "command", f"the recorded command cannot be read: {exc}")
            return
        try:
            if state is None and command.TYPE == "ForkTable":
                forked = batch[1] if len(batch) > 1 else None
                if forked is None or forked.type != "TableForked":
                    report.fault(head.seq, "command", "a fork without its TableForked event")
                    return
                origin = [Envelope.from_dict(e) for e in forked.payload["events"]]
                sealed = host.fork(head.game_id, origin, command.seed, now=head.time, command_id=head.command_id,
                                   reset_idle=command.reset_idle, deal=command.deal)
            elif state is None:
                sealed = host.create(head.game_id, command.seats, command.options, command.seed, now=head.time,
                                     command_id=head.command_id, origin=command.origin)
            else:
                sealed = None
                events, triples, draws, game = host.rerun(state, command, now=head.time)
        except Rejection as exc:
            report.fault(head.seq, "engine", f"the engine refuses the recorded {command.TYPE}: {exc.message}")
            return
        if sealed is not None:
            events, game = [None] * len(sealed), None
            triples = [(e.type, e.version, e.payload) for e in sealed]
            draws = sealed[0].cause["draws"]
        seat, time, command_id = command.seat, head.time, head.command_id
        extra = cause.keys() - _CAUSE_KEYS
        if extra:
            report.fault(head.seq, "envelope", f"its cause has {sorted(extra)}, which the engine never records")
            return
        for (etype, version, payload), want in zip(triples, batch):
            # Byte for byte, as the hash chain sees them (== would take 1 for true); a field an
            # event got after it was logged, None in the engine's, is absent from the record,
            # and the log is read so (the codec's default).
            payload = {k: v for k, v in payload.items() if v is not None or k in want.payload}
            if etype != want.type or canonical_json(payload) != canonical_json(want.payload):
                report.fault(want.seq, "engine",
                             f"recorded {want.type} {canonical_json(want.payload)[:200]} but the engine yields "
                             f"{etype} {canonical_json(payload)[:200]}")
                return
            # The usual case quickly (an audit reads millions of events); the helper says why not.
            if (want.version != version or want.seat != seat or want.time != time or want.command_id != command_id
                    or want.rules_version != rules_version or want.game_type != game_type
                    or type(want.seat) is not type(seat) or type(want.version) is not int
                    or type(want.time) is not int or type(want.rules_version) is not int):
                report.fault(want.seq, "envelope", _envelope_fault(want, head, host, seat, version, rules_version) or "")
                return
        if len(triples) != len(batch):
            report.fault(head.seq, "engine", f"the command yields {len(triples)} events but {len(batch)} are recorded")
            return
        if cause["events"] != len(batch):
            report.fault(head.seq, "engine", f"its cause says the command yields {cause['events']} events, but "
                         f"{len(batch)} are recorded (and the engine yields {len(triples)})")
            return
        recorded_draws = cause.get("draws", [])
        if (draws or recorded_draws) and canonical_json(list(draws)) != canonical_json(recorded_draws):
            report.fault(head.seq, "randomness", "the recorded draws differ from the ones the engine makes")
            return
        if game is not None:
            # decide folded the game already (to see whether it ends): take that state.
            last = batch[-1]
            state = advanced(state, game, last.seq, last.hash, state.rng_counter + len(draws), last.time,
                             idle_moves_after(state, head))
        else:
            for env, event in zip(batch, events):
                report.at = env.seq
                state = host.evolve(state, env, event)


# The highest seq a replay or a fork may name (the gateway's routes and the CLI check it).
MAX_SEQ = 2**62


def folded(envelopes: Sequence[Envelope]) -> Sequence[Envelope]:
    """The log as the rules services and the projector fold it, which is the game its
    players saw: each seq once, from the first record that holds it. A later record at a seq
    already folded (a record written again, or a second, different event that a writer's
    bug or a writer from outside the rules put there) is passed over, as they pass over it;
    folding it too showed another game (an event applied twice, the table not over). A seq
    missing is Rejection `log_gap`: they refuse that game from there on, and no state after
    it is one the game was in. A replay shows this log; `audit` names any such record as
    the fault it is."""
    version = 0
    for env in envelopes:
        if env.seq != version + 1:
            break
        version = env.seq
    else:
        return envelopes  # the usual log: every seq once, in order
    out = list(envelopes[:version])
    for env in envelopes[version:]:
        if env.seq <= version:
            continue
        if env.seq != version + 1:
            where = f"skips from seq {version} to seq {env.seq}" if version else f"begins at seq {env.seq}, not 1"
            raise Rejection("log_gap", f"the log {where}: the events between are not in it, and the rules services "
                            "fold this game no further", "malformed")
        out.append(env)
        version = env.seq
    return out


def step_end(envelopes: Sequence[Envelope], seq: int | None) -> int:
    """The last seq of the command whose events include `seq` (None: the log's end), in the
    folded log. A command's events are one step: no viewer ever saw the game halfway through
    them, and the state there need not be one the rules can show."""
    envelopes = folded(envelopes)
    if seq is not None:
        for batch in batches(envelopes):
            if batch[-1].seq >= seq:
                return batch[-1].seq
    return envelopes[-1].seq


def state_at(envelopes: Sequence[Envelope], seq: int | None = None) -> tuple[TableHost, TableState]:
    """The game after step_end(envelopes, seq): after the whole command `seq` is part of."""
    envelopes = folded(envelopes)
    host = host_for(envelopes)
    state = None
    stop = step_end(envelopes, seq)
    for env in envelopes:
        if env.seq > stop:
            break
        state = host.evolve(state, env)
    return host, state  # type: ignore[return-value]


def view_as(envelopes: Sequence[Envelope], seq: int | None, viewer: str) -> dict[str, Any]:
    """The game at `seq` (after the whole command it is part of: step_end) as a viewer saw
    it: "spectator", a seat number, or "operator" (every seat's view and the table's full
    record)."""
    host, state = state_at(envelopes, seq)
    if viewer == "operator":
        return {
            "version": state.version,
            "status": state.status,
            "spectator": host.view(state, None),
            "seats": {str(s): host.view(state, s) for s in range(state.seats)},
            "seed": state.seed,
            "seed_hash": state.seed_hash,
        }
    seat = None if viewer == "spectator" else int(viewer)
    if seat is not None and not 0 <= seat < state.seats:
        raise Rejection("no_such_seat", f"seat {seat} is not at this table", "malformed")
    return host.view(state, seat)


def moves(envelopes: Sequence[Envelope], seq: int | None, viewer: str) -> list[str]:
    """The moves in words, one line per command, up to `seq`. For a seat or a spectator,
    any card id hidden from that viewer at that moment is replaced by "(hidden)"."""
    envelopes = folded(envelopes)
    host = host_for(envelopes)
    spec = host.spec
    state = None
    lines = []
    seat = None if viewer in ("spectator", "operator") else int(viewer)
    for batch in batches(envelopes):
        if seq is not None and batch[0].seq > seq:
            break
        for env in batch:
            state = host.evolve(state, env)
        words = []
        for env in batch:
            if env.type == "TableCreated":
                # Its seats only: the event also holds the secret seed, which no line may show.
                seats = env.payload.get("seats") if isinstance(env.payload, dict) else None
                words.append(f"a table for {seats} seats" if isinstance(seats, int) else "a table")
            elif env.type in host.events:
                try:
                    event = host.decode_event(env)
                    words.append(_describe(spec, event))
                except Exception:
                    words.append(env.type)
        cause = batch[0].cause or {}
        who = "table" if cause.get("seat") is None else f"seat {cause.get('seat')}"
        command = cause.get("command", {}).get("type", "?")
        line = f"{batch[0].seq:>5}  {who}: {command} -> " + "; ".join(words)
        if viewer != "operator" and state is not None and state.game is not None and state.status != OVER:
            hidden = spec.hidden(state.game, seat)
            for token in hidden:
                if token in line:
                    line = line.replace(token, "(hidden)")
        lines.append(line)
    return lines


def _describe(spec, event) -> str:
    table_words = {
        "SeatJoined": lambda e: f"seat {e.seat} taken by {e.player or 'a player'}" + (f" ({e.bot} bot)" if e.bot else ""),
        "SeatLeft": lambda e: f"seat {e.seat} left",
        "TableStarted": lambda e: "the game starts",
        "TableEnded": lambda e: f"the table ends ({e.reason})",
    }
    if event.TYPE in table_words:
        return table_words[event.TYPE](event)
    return spec.describe(event)
