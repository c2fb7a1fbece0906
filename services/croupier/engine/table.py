"""The table: the platform's own decider around a game's decider.

A table is created (the seed's hash committed), seats join (adding entropy), the game starts
when every seat is taken, runs, and ends (the seed revealed). The table's events live in the
same log as the game's, before and after them. `TableHost` is the pure core that both the
in-process runner and the rules service use: it turns a command into sealed envelopes and
folds envelopes into state. It does no I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from croupier.engine.codec import CodecError, MessageCodec, canonical_json, field_type_problem
from croupier.engine.contract import (
    CONFLICT,
    ECHO_CHARS,
    FORBIDDEN,
    MALFORMED,
    Command,
    Context,
    Event,
    GameSpec,
    Rejection,
    Start,
    Tick,
    clip,
    echo,
)
from croupier.engine.envelope import GENESIS_HASH, Envelope, seal
from croupier.engine.records import setstate_with_defaults
from croupier.engine.rng import FairRng, commitment, entropy_string

OPEN, RUNNING, OVER = "open", "running", "over"

# Table options, taken out of the options before the game sees them.
TURN_CLOCK_MS = "turn_clock_ms"  # 0: no clock; else ms a seat has for each move
TURN_CLOCK_ACTION = "turn_clock_action"  # "default" (play the first legal action) or "forfeit"
CLOCK_ACTIONS = ("default", "forfeit")
# The clock's rules are part of a game's rules version (GameSpec.clock_version), so a table in
# the log keeps the ones it was created with. 1: the clock's move for to_act[0] whenever it
# runs out. 2: no clock while the game's own deadline runs (delve's votes: the game's timer
# decides, and several seats may be waited on), and a table whose seats all stopped moving
# ends after CLOCK_IDLE_MOVES_PER_SEAT clock moves a seat in a row (the first legal action
# can go round in circles: expeditions' discard and take back), rather than play for good.
CLOCK_IDLE_MOVES_PER_SEAT = 10
MIN_TURN_CLOCK_MS = 1000
MAX_TURN_CLOCK_MS = 86_400_000


def table_options() -> list[dict[str, Any]]:
    """The table's own options, which every game takes beside its own (the turn clock), as the
    listings describe an option: `croupier games` and the gateway's GET /v1/games."""
    return [
        {"name": TURN_CLOCK_MS, "default": 0, "choices": None, "minimum": 0, "maximum": MAX_TURN_CLOCK_MS,
         "doc": f"the turn clock: ms a seat has for each move, 0 (off) or {MIN_TURN_CLOCK_MS}..{MAX_TURN_CLOCK_MS}"},
        {"name": TURN_CLOCK_ACTION, "default": CLOCK_ACTIONS[0], "choices": list(CLOCK_ACTIONS), "minimum": None,
         "maximum": None, "doc": f"what the clock does when a seat's time runs out: {' or '.join(CLOCK_ACTIONS)}"},
    ]
MAX_CLOCK_DIGITS = len(str(MAX_TURN_CLOCK_MS))
MAX_PLAYER_NAME = 64
MAX_ENTROPY = 256
# legal_action_texts keeps at most this many actions' wire texts per host (a game has a few
# hundred distinct actions at most; the bound is for a game whose actions carry free values).
ACTION_TEXTS_KEPT = 4096


# --- table commands -------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class CreateTable(Command):
    TYPE: ClassVar[str] = "CreateTable"
    seats: int
    options: dict
    seed: str
    origin: dict | None = None


@dataclass(frozen=True, kw_only=True)
class JoinSeat(Command):
    """`seat` (the field of every command) is the seat taken."""

    TYPE: ClassVar[str] = "JoinSeat"
    player: str = ""
    bot: str | None = None
    entropy: str = ""


@dataclass(frozen=True, kw_only=True)
class LeaveSeat(Command):
    TYPE: ClassVar[str] = "LeaveSeat"


@dataclass(frozen=True, kw_only=True)
class ForceEnd(Command):
    """An operator ends a stuck or disputed table; no seat sends it."""

    TYPE: ClassVar[str] = "ForceEnd"
    reason: str = ""


# --- table events ---------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class TableCreated(Event):
    TYPE: ClassVar[str] = "TableCreated"
    seats: int
    options: dict
    seed_hash: str
    # The secret seed stays in the log (inside the platform's trust boundary) so that a
    # new owner can go on after a crash; no view shows it before TableEnded.
    seed: str
    origin: dict | None = None


@dataclass(frozen=True, kw_only=True)
class SeatJoined(Event):
    TYPE: ClassVar[str] = "SeatJoined"
    seat: int
    player: str
    bot: str | None
    entropy: str


@dataclass(frozen=True, kw_only=True)
class SeatLeft(Event):
    TYPE: ClassVar[str] = "SeatLeft"
    seat: int


@dataclass(frozen=True, kw_only=True)
class TableStarted(Event):
    TYPE: ClassVar[str] = "TableStarted"
    entropy: str


@dataclass(frozen=True, kw_only=True)
class TableEnded(Event):
    TYPE: ClassVar[str] = "TableEnded"
    reason: str
    result: dict
    seed: str


@dataclass(frozen=True, kw_only=True)
class ForkTable(Command):
    """Start a new table from step `at_seq` of another game: the same position, its hidden
    cards dealt again or, with `deal` DEAL_KEPT, as they lay ("what if", or resuming an
    interrupted game). The origin's envelopes up to that step travel in the command."""

    TYPE: ClassVar[str] = "ForkTable"
    origin_events: tuple
    seed: str
    # The fork's count of clock moves in a row starts at 0 (its seats get the whole allowance
    # again); False, as forks made before 2026-12-02 were recorded: the origin's count.
    reset_idle: bool = False
    # How the fork deals the cards its seats may not see: DEAL_KEPT (0, as every fork made
    # before 2026-12-03 was recorded) keeps the origin's; DEAL_AGAIN (1) deals them again with
    # the fork's own randomness (GameSpec.redeal), so that the origin's record, once it is
    # open to all, gives none of them away.
    deal: int = 0


DEAL_KEPT = 0
DEAL_AGAIN = 1


@dataclass(frozen=True, kw_only=True)
class TableForked(Event):
    """The origin's log up to the fork point, verbatim: the new table's state is the fold of
    it (so an audit of the fork re-checks the origin too); fresh randomness comes from this
    table's own seed from here on."""

    TYPE: ClassVar[str] = "TableForked"
    origin_game_id: str
    origin_seq: int
    origin_hash: str
    events: tuple
    # The count of clock moves in a row the fork starts with: 0 when its ForkTable said
    # reset_idle; None (and absent from forks logged before 2026-12-02): the origin's.
    idle_moves: int | None = None


TABLE_COMMANDS = (CreateTable, JoinSeat, LeaveSeat, ForceEnd, Start, Tick, ForkTable)
TABLE_EVENTS = (TableCreated, SeatJoined, SeatLeft, TableStarted, TableEnded, TableForked)


@dataclass(frozen=True, slots=True)
class TableState:
    game_id: str
    game_type: str
    rules_version: int
    seats: int
    options: dict
    seed_hash: str
    seed: str
    players: tuple  # per seat: None or {"player": str, "bot": str | None}
    entropies: tuple  # per seat: str or None
    status: str = OPEN
    clock_ms: int = 0
    clock_action: str = "default"
    last_time: int = 0
    created: int = 0
    game: Any = None
    version: int = 0
    last_hash: str = GENESIS_HASH
    rng_counter: int = 0
    entropy: str = ""
    result: dict | None = None
    end_reason: str | None = None
    origin: dict | None = None
    clock_version: int = 1
    # Commands in a row that the platform made (a Tick's: the clock's moves, the game's
    # deadlines) with no seat's command between them.
    idle_moves: int = 0

    # Unpickled (a projector's stored state, a snapshot): a state pickled before the last
    # fields were added gets their defaults rather than no value at all.
    __setstate__ = setstate_with_defaults


def check_fork_point(events: Sequence[Envelope], at: int) -> None:
    """Refuses `mid_command` a fork point inside the events of one command: a fork starts after
    a whole command, where one command's events end (`events`: a game's log, at least up to
    `at`)."""
    head = next((e for e in reversed(events) if e.seq <= at and e.cause is not None), None)
    if head is not None and head.command_end != at:
        end = head.command_end
        raise Rejection("mid_command", f"seq {at} is inside the events of one command ({head.seq}..{end}); "
                        f"fork at {head.seq - 1} or {end}", MALFORMED)


def advanced(state: TableState, game: Any, version: int, last_hash: str, rng_counter: int, last_time: int,
             idle_moves: int) -> TableState:
    """The table after game events: dataclasses.replace, spelt out (it is the hottest
    copy in every fold, and replace costs twice as much)."""
    return TableState(
        state.game_id, state.game_type, state.rules_version, state.seats, state.options, state.seed_hash, state.seed,
        state.players, state.entropies, state.status, state.clock_ms, state.clock_action, last_time, state.created,
        game, version, last_hash, rng_counter, state.entropy, state.result, state.end_reason, state.origin,
        state.clock_version, idle_moves,
    )


assert [f.name for f in dataclasses.fields(TableState)] == [
    "game_id", "game_type", "rules_version", "seats", "options", "seed_hash", "seed", "players", "entropies", "status",
    "clock_ms", "clock_action", "last_time", "created", "game", "version", "last_hash", "rng_counter", "entropy",
    "result", "end_reason", "origin", "clock_version", "idle_moves",
], "advanced() lists TableState's fields in order: keep them in step"


def idle_moves_after(state: TableState, env: Envelope) -> int:
    """idle_moves after this envelope: a command's first event (the one with `cause`) counts
    one more when the platform sent it (no seat; a Tick), and starts again at 0 when a seat did."""
    cause = env.cause
    if cause is None:
        return state.idle_moves
    if cause.get("seat") is None and cause.get("command", {}).get("type") == "Tick":
        return state.idle_moves + 1
    return 0


class TableHost:
    """Decide and evolve for the tables of one game type, with their envelopes."""

    def __init__(self, spec: GameSpec):
        self.spec = spec
        self._versions: dict[int, TableHost] = {spec.rules_version: self}
        self.events = MessageCodec(TABLE_EVENTS + spec.events, spec.upcasters)
        self.commands = MessageCodec(TABLE_COMMANDS + spec.commands, seat_in_envelope=True)
        self._game_commands = frozenset(spec.commands)
        self._action_texts: dict[Command, str] = {}

    # -- commands from the wire ---------------------------------------------------------

    def decode_action(self, wire: Mapping[str, Any], seat: int | None) -> Command:
        """A player's action (wire dict) as a game command; table commands are not actions."""
        try:
            command = self.commands.decode(wire, seat=seat)
        except CodecError as exc:
            raise Rejection("malformed_command", clip(str(exc), 3 * ECHO_CHARS), MALFORMED) from None
        if type(command) not in self._game_commands:
            raise Rejection("not_an_action", f"{clip(str(wire.get('type')))} is not a move of {self.spec.id}", MALFORMED)
        # Exact types for what a player sends (the log's recorded commands are read as they
        # were written, so an audit of an older game is not refused by this check).
        problem = field_type_problem(command)
        if problem is not None:
            raise Rejection("malformed_command", problem, MALFORMED)
        return command

    def encode_action(self, command: Command) -> dict[str, Any]:
        return self.commands.encode(command)

    # -- decide -------------------------------------------------------------------------

    def create(
        self,
        game_id: str,
        seats: int,
        options: Mapping[str, Any] | None,
        seed_hex: str,
        *,
        now: int = 0,
        command_id: str | None = None,
        origin: dict | None = None,
    ) -> list[Envelope]:
        self.spec.check_seats(seats)
        parsed = self.parse_options(options)
        if len(seed_hex) != 64 or any(c not in "0123456789abcdef" for c in seed_hex):
            raise Rejection("invalid_seed", "the seed must be 32 bytes as lowercase hex", MALFORMED)
        event = TableCreated(seats=seats, options=parsed, seed_hash=commitment(seed_hex), seed=seed_hex, origin=origin)
        cmd = CreateTable(seats=seats, options=parsed, seed=seed_hex, origin=origin)
        return self._seal(None, game_id, [event], cmd, [], command_id, now)

    def parse_options(self, options: Mapping[str, Any] | None) -> dict[str, Any]:
        """The game's options plus the table's own (the turn clock)."""
        raw = dict(options or {})
        clock_raw = raw.pop(TURN_CLOCK_MS, 0)
        action = raw.pop(TURN_CLOCK_ACTION, "default")
        # An integer, or its digits as text (gRPC carries options as text); not True or 1.9.
        # Digits beyond the largest clock's are out of range, not converted (int() refuses
        # more than 4,300 of them with a ValueError). Only zeros ("0", "000") are 0: the clock
        # off (their digits past the leading zeros are none, and int("") raised ValueError).
        text = clock_raw.strip() if isinstance(clock_raw, str) else ""
        if type(clock_raw) is int:
            clock = clock_raw
        elif text.isascii() and text.isdigit():
            digits = text.lstrip("0")
            clock = int(digits or "0") if len(digits) <= MAX_CLOCK_DIGITS else MAX_TURN_CLOCK_MS + 1
        else:
            raise Rejection("invalid_option", f"option {TURN_CLOCK_MS}: {echo(clock_raw)} is not an integer", MALFORMED)
        if clock != 0 and not MIN_TURN_CLOCK_MS <= clock <= MAX_TURN_CLOCK_MS:
            raise Rejection("invalid_option",
                            f"option {TURN_CLOCK_MS}: 0 (off) or {MIN_TURN_CLOCK_MS} to {MAX_TURN_CLOCK_MS} ms", MALFORMED)
        if action not in CLOCK_ACTIONS:
            raise Rejection("invalid_option", f"option {TURN_CLOCK_ACTION}: one of {list(CLOCK_ACTIONS)}", MALFORMED)
        parsed = self.spec.parse_options(raw)
        if clock:
            parsed[TURN_CLOCK_MS] = clock
            parsed[TURN_CLOCK_ACTION] = action
        return parsed

    def game_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in options.items() if k not in (TURN_CLOCK_MS, TURN_CLOCK_ACTION)}

    def fork(
        self,
        game_id: str,
        origin: Sequence[Envelope],
        seed_hex: str,
        *,
        now: int = 0,
        command_id: str | None = None,
        reset_idle: bool = True,
        deal: int = DEAL_AGAIN,
    ) -> list[Envelope]:
        """A new table whose first events name its origin and carry the origin's log up to
        the fork point. The origin must be a clean log of this game type. `reset_idle`: the
        fork's count of clock moves in a row starts at 0; `deal`: DEAL_AGAIN deals the cards
        hidden at the fork's step again (the game's redeal; a game without one keeps them and
        records DEAL_KEPT). An audit re-runs a fork with what its recorded command said."""
        from croupier.engine.envelope import verify_chain

        if not origin:
            raise Rejection("empty_origin", "nothing to fork from", MALFORMED)
        if origin[0].game_type != self.spec.id:
            raise Rejection("wrong_game_type", f"the origin is a {origin[0].game_type} game", MALFORMED)
        fault = verify_chain(origin)
        if fault:
            raise Rejection("origin_corrupt", f"the origin's log is broken at {fault}", "illegal")
        check_fork_point(origin, origin[-1].seq)
        origin_state = self.fold(origin)
        if origin_state.status == OPEN:
            raise Rejection("origin_not_started", "fork from a step after the game started", "illegal")
        if origin_state.status == OVER and origin[-1].type == "TableEnded":
            raise Rejection("origin_over", "fork from a step before the game ended", "illegal")
        last = origin[-1]
        link = {"game_id": last.game_id, "seq": last.seq, "hash": last.hash}
        created = TableCreated(seats=origin_state.seats, options=dict(origin_state.options),
                               seed_hash=commitment(seed_hex), seed=seed_hex, origin=link)
        forked = TableForked(origin_game_id=last.game_id, origin_seq=last.seq, origin_hash=last.hash,
                             events=tuple(env.to_dict() for env in origin), idle_moves=0 if reset_idle else None)
        if deal not in (DEAL_KEPT, DEAL_AGAIN):
            raise Rejection("unknown_deal", f"a fork deals with {DEAL_KEPT} or {DEAL_AGAIN}, not {deal!r}", MALFORMED)
        redeal = self.spec.redeal if deal == DEAL_AGAIN else None
        cmd = ForkTable(origin_events=(), seed=seed_hex, reset_idle=reset_idle, deal=DEAL_KEPT if redeal is None else deal)
        sealed = self._seal(None, game_id, [created, forked], cmd, [], command_id, now)
        if redeal is None:
            return sealed
        # The new deal, from the fork's own seed (its draws are the first of its counter).
        state = self.fold(sealed)
        rng = FairRng(state.seed, state.entropy, state.rng_counter)
        dealt = redeal(state.game, Context(rng=rng, now=now))
        return self._seal(None, game_id, [created, forked, *dealt], cmd, rng.draws, command_id, now)

    def for_version(self, rules_version: int) -> "TableHost":
        """The host of the rules version a table was created with: a game keeps the rules
        it started under, even after the service has been upgraded."""
        host = self._versions.get(rules_version)
        if host is None:
            host = self._versions[rules_version] = TableHost(self.spec.for_version(rules_version))
        return host

    def decide(
        self,
        state: TableState,
        command: Command,
        *,
        command_id: str | None = None,
        now: int = 0,
        expected_version: int | None = None,
    ) -> list[Envelope]:
        if state.rules_version != self.spec.rules_version:
            return self.for_version(state.rules_version).decide(
                state, command, command_id=command_id, now=now, expected_version=expected_version)
        if expected_version is not None and expected_version != state.version:
            raise Rejection(
                "version_conflict", f"expected version {expected_version}, the table is at {state.version}", CONFLICT,
                current_version=state.version,
            )
        rng = FairRng(state.seed, state.entropy, state.rng_counter)
        events = self.decide_events(state, command, Context(rng=rng, now=now))
        return self._seal(state, state.game_id, events, command, rng.draws, command_id, now)

    def rerun(self, state: TableState, command: Command, *, now: int) -> tuple[list[Event], list[tuple[str, int, dict]], list, Any]:
        """decide without sealing, for audit (the chain is checked on its own): the events,
        their (type, version, payload) wire triples, the random draws made, and the game
        state after them when decide already folded them (None when it did not)."""
        if state.rules_version != self.spec.rules_version:
            return self.for_version(state.rules_version).rerun(state, command, now=now)
        rng = FairRng(state.seed, state.entropy, state.rng_counter)
        events, game = self._decide(state, command, Context(rng=rng, now=now))
        events = self._final(state, events)
        codec = self.events
        return events, [(e.TYPE, e.VERSION, codec.payload(e)) for e in events], rng.draws, game

    def decide_events(self, state: TableState, command: Command, ctx: Context) -> list[Event]:
        """The table's decide: the events a command yields, or a Rejection."""
        return self._decide(state, command, ctx)[0]

    def _decide(self, state: TableState, command: Command, ctx: Context) -> tuple[list[Event], Any]:
        """decide_events, and the game after its events when that was computed on the way
        (deciding whether the game is over folds them; None otherwise)."""
        spec = self.spec
        if state.status == OVER:
            raise Rejection("game_over", "this table has ended", "illegal")
        if isinstance(command, ForceEnd):
            reason = str(command.reason or "ended by an operator")[:200]
            return [TableEnded(reason="forced", result={"aborted": True, "why": reason}, seed=state.seed)], None
        if isinstance(command, JoinSeat):
            return self._join(state, command, ctx), None
        if isinstance(command, LeaveSeat):
            return self._leave(state, command), None
        if state.status == OPEN:
            raise Rejection("not_started", "the table is waiting for players", "illegal")
        if isinstance(command, (Start, CreateTable)):
            raise Rejection("not_an_action", f"{command.TYPE} is sent only by the table itself", FORBIDDEN)
        if isinstance(command, Tick):
            clocked = self._clock(state, command, ctx)
            if clocked is not None:
                return clocked, None
            due = spec.deadline(state.game)
            if due is None or ctx.now < due:
                raise Rejection("not_due", "no deadline of this table has passed", "illegal")
        if not isinstance(command, Tick) and type(command) not in self._game_commands:
            raise Rejection("not_an_action", f"{command.TYPE} is not a move of {spec.id}", MALFORMED)
        if not isinstance(command, Tick) and (command.seat is None or not 0 <= command.seat < state.seats):
            raise Rejection("no_such_seat", f"seat {command.seat!r} is not at this table (0..{state.seats - 1})",
                            MALFORMED)
        events = list(spec.decide(command, state.game, ctx))
        ending, game = self._ending(state.game, events)
        return events + ending, (None if ending else game)

    def clock_deadline(self, state: TableState) -> int | None:
        if state.rules_version != self.spec.rules_version:
            # The table's own rules (their game's deadline and to_act), as decide takes them.
            return self.for_version(state.rules_version).clock_deadline(state)
        if state.status != RUNNING or not state.clock_ms or not self.spec.to_act(state.game):
            return None
        if state.clock_version >= 2 and self.spec.deadline(state.game) is not None:
            return None  # the game's own timer decides this phase (and may wait on several seats)
        return state.last_time + state.clock_ms

    def _clock(self, state: TableState, tick: Tick, ctx: Context) -> list[Event] | None:
        """The turn clock ran out: the seat to act plays its default move or forfeits; with
        clock version 2, a table where no seat has moved for CLOCK_IDLE_MOVES_PER_SEAT clock
        moves a seat is ended as abandoned instead."""
        due = self.clock_deadline(state)
        if due is None or ctx.now < due:
            return None
        limit = CLOCK_IDLE_MOVES_PER_SEAT * state.seats
        if state.clock_version >= 2 and state.idle_moves >= limit:
            why = f"abandoned: {state.idle_moves} turn clock moves in a row and no seat moved"
            return [TableEnded(reason="forced", result={"aborted": True, "why": why}, seed="")]
        seat = self.spec.to_act(state.game)[0]
        if state.clock_action == "forfeit":
            others = [s for s in range(state.seats) if s != seat]
            winners = others if self.spec.max_seats > 1 and others and not self._cooperative() else []
            return [TableEnded(reason="forfeit", result={"winners": winners, "forfeited": seat,
                                                           "why": f"seat {seat} let the turn clock run out"}, seed="")]
        # The first seat to act that has a move plays its first one. A seat to act with no
        # legal action (no game's rules lead there: selfplay checks every seat to act) used
        # to leave the Tick refused, and the owner sent it again every second until the idle
        # end; with no seat able to move and no timer of the game's own to decide, the table
        # is stuck, and the clock ends it. Neither was ever recorded (a refused Tick leaves
        # nothing in the log), so no log replays otherwise.
        to_act = self.spec.to_act(state.game)
        for seat in to_act:
            legal = self.spec.legal_actions(state.game, seat)
            if legal:
                events = list(self.spec.decide(legal[0], state.game, ctx))
                return events + self._ending(state.game, events)[0]
        if self.spec.deadline(state.game) is not None:
            return None  # the game's own timer decides (when it is due)
        why = f"stuck: the turn clock ran out and no seat to act ({', '.join(map(str, to_act))}) has a legal move"
        return [TableEnded(reason="forced", result={"aborted": True, "why": why}, seed="")]

    def _cooperative(self) -> bool:
        return self.spec.cooperative

    def _join(self, state: TableState, command: JoinSeat, ctx: Context) -> list[Event]:
        seat = command.seat
        if state.status != OPEN:
            raise Rejection("table_full", "the game has started; every seat is taken", "illegal")
        if not isinstance(seat, int) or not 0 <= seat < state.seats:
            raise Rejection("no_such_seat", f"seat {seat!r} is not at this table (0..{state.seats - 1})", MALFORMED)
        if state.players[seat] is not None:
            raise Rejection("seat_taken", f"seat {seat} is taken", "illegal")
        if not isinstance(command.player, str) or len(command.player) > MAX_PLAYER_NAME:
            raise Rejection("invalid_player", f"a player name is a string of at most {MAX_PLAYER_NAME}", MALFORMED)
        if not isinstance(command.entropy, str) or len(command.entropy) > MAX_ENTROPY:
            raise Rejection("invalid_entropy", f"entropy is a string of at most {MAX_ENTROPY}", MALFORMED)
        if command.bot is not None and command.bot not in ("random", *self.spec.bots):
            raise Rejection("unknown_bot", f"{self.spec.id} has no bot {echo(command.bot)}", MALFORMED)
        joined = SeatJoined(seat=seat, player=command.player, bot=command.bot, entropy=command.entropy)
        events: list[Event] = [joined]
        if sum(p is not None for p in state.players) + 1 == state.seats:
            entropies = list(state.entropies)
            entropies[seat] = command.entropy
            entropy = entropy_string(entropies)
            events.append(TableStarted(entropy=entropy))
            # The game's setup draws from the entropy that is fixed from now on.
            rng = FairRng(state.seed, entropy, state.rng_counter)
            rng.draws = ctx.rng.draws  # type: ignore[attr-defined]
            game = self.spec.initial_state(self.game_options(state.options), state.seats)
            setup = list(self.spec.decide(Start(), game, Context(rng=rng, now=ctx.now)))
            events.extend(setup)
            events.extend(self._ending(game, setup)[0])
        return events

    def _leave(self, state: TableState, command: LeaveSeat) -> list[Event]:
        if state.status != OPEN:
            raise Rejection("game_started", "seats cannot be left once the game has started", "illegal")
        seat = command.seat
        if not isinstance(seat, int) or not 0 <= seat < state.seats:
            # As a join of it is refused: no such seat is malformed, not an empty one.
            raise Rejection("no_such_seat", f"seat {seat!r} is not at this table (0..{state.seats - 1})", MALFORMED)
        if state.players[seat] is None:
            raise Rejection("seat_empty", f"seat {seat!r} is not taken", "illegal")
        return [SeatLeft(seat=seat)]

    def _ending(self, game: Any, events: Sequence[Event]) -> tuple[list[Event], Any]:
        """The TableEnded the events lead to, if any, and the game after them."""
        evolve = self.spec.evolve
        for event in events:
            game = evolve(game, event)
        if self.spec.is_over(game):
            return [TableEnded(reason="finished", result=self.spec.result(game), seed="")], game
        return [], game

    @staticmethod
    def _final(state, events) -> list[Event]:
        """The events as recorded: the table's end reveals the seed it committed to."""
        return [dataclasses.replace(e, seed=state.seed) if isinstance(e, TableEnded) and not e.seed else e for e in events]

    def _seal(self, state, game_id, events, command, draws, command_id, now) -> list[Envelope]:
        codec = self.events
        triples = [(event.TYPE, event.VERSION, codec.payload(event)) for event in self._final(state, events)]
        cause = {
            "command": self.commands.encode(command),
            "seat": command.seat,
            "draws": list(draws),
            "events": len(triples),
        }
        return seal(
            game_id=game_id,
            game_type=self.spec.id,
            first_seq=(state.version if state else 0) + 1,
            prev_hash=state.last_hash if state else GENESIS_HASH,
            rules_version=self.spec.rules_version,
            command_id=command_id,
            seat=command.seat,
            time=now,
            cause=cause,
            events=triples,
        )

    # -- evolve -------------------------------------------------------------------------

    def decode_event(self, env: Envelope) -> Event:
        return self.events.decode_payload(env.type, env.version, env.payload)

    def evolve(self, state: TableState | None, env: Envelope, event: Event | None = None) -> TableState:
        """Fold one envelope (`event`: its payload already decoded, when the caller has it).
        Total for any envelope that decide produced."""
        if env.rules_version != self.spec.rules_version:
            return self.for_version(env.rules_version).evolve(state, env, event)
        if event is None:
            event = self.decode_event(env)
        if state is not None and not isinstance(event, TABLE_EVENTS):
            # The common case, a game event: one copy of the state, not two.
            return advanced(state, self.spec.evolve(state.game, event), env.seq, env.hash,
                            state.rng_counter + (len(env.cause["draws"]) if env.cause else 0), env.time,
                            state.idle_moves if env.cause is None else idle_moves_after(state, env))
        if state is None:
            if not isinstance(event, TableCreated):
                raise ValueError(f"a table's first event must be TableCreated, not {env.type}")
            # The rules checked the table's size when they made the event; a record written to
            # the topic by anything else is not trusted with it (a billion seats would take the
            # memory of every reader that folds it: rules replicas, the projector, audits).
            if type(event.seats) is not int or not self.spec.min_seats <= event.seats <= self.spec.max_seats:
                raise ValueError(f"{str(event.seats)[:40]} seats: {self.spec.id} is for "
                                 f"{self.spec.min_seats} to {self.spec.max_seats}")
            options = dict(event.options)
            state = TableState(
                clock_ms=int(options.get(TURN_CLOCK_MS, 0)),
                clock_action=str(options.get(TURN_CLOCK_ACTION, "default")),
                created=env.time,
                game_id=env.game_id,
                game_type=env.game_type,
                rules_version=env.rules_version,
                seats=event.seats,
                options=options,
                seed_hash=event.seed_hash,
                seed=event.seed,
                players=(None,) * event.seats,
                entropies=(None,) * event.seats,
                origin=event.origin,
                clock_version=self.spec.clock_version,
            )
        else:
            state = self.apply(state, event, env.time)
        draws = len(env.cause["draws"]) if env.cause else 0
        return dataclasses.replace(
            state, version=env.seq, last_hash=env.hash, rng_counter=state.rng_counter + draws, last_time=env.time,
            idle_moves=idle_moves_after(state, env),
        )

    def apply(self, state: TableState, event: Event, time: int = 0) -> TableState:
        """A table event's (or a game event's) effect on the table; `time`: its envelope's."""
        if isinstance(event, SeatJoined):
            players = list(state.players)
            players[event.seat] = {"player": event.player, "bot": event.bot}
            entropies = list(state.entropies)
            entropies[event.seat] = event.entropy
            return dataclasses.replace(state, players=tuple(players), entropies=tuple(entropies))
        if isinstance(event, SeatLeft):
            players = list(state.players)
            players[event.seat] = None
            entropies = list(state.entropies)
            entropies[event.seat] = None
            return dataclasses.replace(state, players=tuple(players), entropies=tuple(entropies))
        if isinstance(event, TableStarted):
            game = self.spec.initial_state(self.game_options(state.options), state.seats)
            return dataclasses.replace(state, status=RUNNING, game=game, entropy=event.entropy)
        if isinstance(event, TableEnded):
            return dataclasses.replace(state, status=OVER, result=dict(event.result), end_reason=event.reason)
        if isinstance(event, TableCreated):
            return state
        if isinstance(event, TableForked):
            origin = self.fold(Envelope.from_dict(e) for e in event.events)
            # The origin's game, as its own rules version makes a fork of it (a deadline of
            # the origin's time restarted, where that version says so: GameSpec.forked).
            game = origin.game
            forked = self.for_version(origin.rules_version).spec.forked
            if forked is not None and game is not None:
                game = forked(game, time)
            # The origin's seats, game and clock; this table's own id, seed and counter.
            return dataclasses.replace(
                origin, game=game, game_id=state.game_id, seed=state.seed, seed_hash=state.seed_hash,
                origin=state.origin, created=state.created, version=state.version, last_hash=state.last_hash,
                # This table's own draws so far: its new deal's (ForkTable.deal), counted on
                # the fork's first envelope; 0 for a fork that keeps the origin's cards.
                rng_counter=state.rng_counter,
                idle_moves=origin.idle_moves if event.idle_moves is None else event.idle_moves,
            )
        return dataclasses.replace(state, game=self.spec.evolve(state.game, event))

    def fold(self, envelopes: Iterable[Envelope], state: TableState | None = None) -> TableState | None:
        for env in envelopes:
            state = self.evolve(state, env)
        return state

    # -- reads --------------------------------------------------------------------------

    def to_act(self, state: TableState) -> tuple[int, ...]:
        """The seats to act now, by the table's own rules version (as legal_actions)."""
        if state.status != RUNNING:
            return ()
        if state.rules_version != self.spec.rules_version:
            return self.for_version(state.rules_version).to_act(state)
        return tuple(self.spec.to_act(state.game))

    def view(self, state: TableState, seat: int | None) -> dict[str, Any]:
        """What `seat` (None: a spectator) may see of the table. The seed only once over. By
        the table's own rules version's view and to_act, as its moves are decided by them."""
        if state.rules_version != self.spec.rules_version:
            return self.for_version(state.rules_version).view(state, seat)
        spec = self.spec
        game = state.game
        running = state.status == RUNNING
        return {
            "game_id": state.game_id,
            "game_type": state.game_type,
            "rules_version": state.rules_version,
            "status": state.status,
            "version": state.version,
            "seats": [None if p is None else dict(p) for p in state.players],
            "you": seat,
            "options": dict(state.options),
            "seed_hash": state.seed_hash,
            "seed": state.seed if state.status == OVER else None,
            "entropy": state.entropy if state.status != OPEN else None,
            "to_act": list(spec.to_act(game)) if running else [],
            "game": spec.view(game, seat) if game is not None else None,
            "result": state.result,
            "end_reason": state.end_reason,
            "origin": state.origin,
        }

    def legal_actions(self, state: TableState, seat: int) -> list[Command]:
        if state.status != RUNNING:
            return []
        if state.rules_version != self.spec.rules_version:
            # What that version's decide takes: a game keeps the rules it was created with.
            return self.for_version(state.rules_version).legal_actions(state, seat)
        return self.spec.legal_actions(state.game, seat)

    def legal_action_texts(self, state: TableState, seat: int) -> list[str]:
        """legal_actions in their wire form, each as canonical JSON (what the rules service
        and the read models hand to players). A game's actions recur move after move (the
        same card, the same pile), so each one's text is made once per host and looked up
        after: the commands are frozen dataclasses, equal only to their own type with the
        same fields, seat included."""
        texts = self._action_texts
        out = []
        for action in self.legal_actions(state, seat):
            try:
                text = texts.get(action)
            except TypeError:  # a field that does not hash: encoded each time
                out.append(canonical_json(self.encode_action(action)))
                continue
            if text is None:
                if len(texts) >= ACTION_TEXTS_KEPT:
                    texts.clear()
                text = texts[action] = canonical_json(self.encode_action(action))
            out.append(text)
        return out

    def legal_actions_json(self, state: TableState, seat: int) -> str:
        """The seat's legal actions as one canonical JSON list (the read models' form)."""
        return "[" + ",".join(self.legal_action_texts(state, seat)) + "]"

    def deadline(self, state: TableState) -> int | None:
        """When the host must send Tick: the game's own deadline or the turn clock's."""
        if state.status != RUNNING:
            return None
        if state.rules_version != self.spec.rules_version:
            # The deadline of the rules that decide its Tick (decide hands the table to them):
            # the current version's game may have another deadline, or none.
            return self.for_version(state.rules_version).deadline(state)
        found = [d for d in (self.spec.deadline(state.game), self.clock_deadline(state)) if d is not None]
        return min(found) if found else None
