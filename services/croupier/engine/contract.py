"""The game contract: what a game is, as data and pure functions.

A game is a decider (see docs/architecture.md):

    initial_state(options, seats) -> state
    decide(command, state, ctx)   -> list[Event]   raises Rejection for an illegal command
    evolve(state, event)          -> state         total: never raises
    view(state, seat | None)      -> dict          what that seat (or a spectator) may see
    legal_actions(state, seat)    -> list[Command] sorted, from the same checks as decide
    is_over(state), result(state)

plus what the platform needs around it: the seats that must act now, the card ids hidden
from a seat (checked against every view), the next deadline, and words for the replay.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from croupier.numbers import parse_int

# Kinds of rejection; the rules service maps them to gRPC status codes, the gateway to HTTP.
MALFORMED = "malformed"  # the command cannot be understood (INVALID_ARGUMENT / 400)
ILLEGAL = "illegal"  # understood, but the rules forbid it now (FAILED_PRECONDITION / 422)
CONFLICT = "conflict"  # expected_version does not match (ABORTED / 409)
NOT_FOUND = "not_found"  # no such game (NOT_FOUND / 404)
FORBIDDEN = "forbidden"  # the seat may not do this (PERMISSION_DENIED / 403)


# A caller's value shown in a rejection's message is cut to this many characters: the
# message travels in the answer's trailing metadata, which gRPC limits (8 KB), and a longer
# answer reached the caller as RESOURCE_EXHAUSTED, with no rejection in it.
ECHO_CHARS = 100


def clip(text: str, limit: int = ECHO_CHARS) -> str:
    """`text` cut to `limit` characters, the cut marked with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def echo(value: Any, limit: int = ECHO_CHARS) -> str:
    """A caller's value as a rejection's message shows it: its repr, clipped."""
    if isinstance(value, str) and len(value) > 4 * limit:
        value = value[: 4 * limit]  # no repr of the whole of a long text
    try:
        text = repr(value)
    except ValueError:  # an int beyond str()'s digits
        text = f"<{type(value).__name__}>"
    return clip(text, limit)


class Rejection(Exception):
    """A command that may not be applied. `code` is stable and machine-readable."""

    def __init__(self, code: str, message: str, kind: str = ILLEGAL, *, current_version: int | None = None):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.kind = kind
        # A version_conflict's version of the game now: what a caller expects next.
        self.current_version = current_version

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message, "kind": self.kind}


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


@dataclass(frozen=True, kw_only=True)
class Command:
    """Base of every command: imperative names (PlayCard). `seat` is who sends it;
    None for commands the platform itself sends (Start, Tick)."""

    TYPE: ClassVar[str] = ""
    VERSION: ClassVar[int] = 1
    seat: int | None = None

    def sort_key(self) -> tuple:
        names = _FIELD_NAMES.get(type(self))
        if names is None:
            names = _FIELD_NAMES[type(self)] = tuple(f.name for f in dataclasses.fields(self))
        return (self.TYPE, *[_key(getattr(self, name)) for name in names])


@dataclass(frozen=True, kw_only=True)
class Event:
    """Base of every event: past participles (CardPlayed). Payload fields only."""

    TYPE: ClassVar[str] = ""
    VERSION: ClassVar[int] = 1


def _key(value: Any) -> tuple:
    """None < tuples < ints (and bools) < everything else by its text. The exact types
    come first: sorting legal actions is a large part of computing them."""
    t = type(value)
    if t is str:
        return (3, value)
    if t is int:
        return (2, value)
    if value is None:
        return (0,)
    if isinstance(value, tuple):
        return (1, tuple([_key(v) for v in value]))
    if isinstance(value, int):  # bool, IntEnum
        return (2, int(value))
    return (3, str(value))


def sort_actions(actions: Sequence[Command]) -> list[Command]:
    """The one stable order of legal actions every game returns."""
    return sorted(actions, key=Command.sort_key)


class Emitter:
    """The events one decide makes, and the game state they lead to: a rule later in the
    same decide reads `state` and sees the events emitted before it. Folded only when read
    (many decides never read it back, and selfplay runs decide for every legal action)."""

    __slots__ = ("_state", "_folded", "_evolve", "events", "ctx")

    def __init__(self, state: Any, evolve: Callable[[Any, Any], Any], ctx: Any = None):
        self._state = state
        self._folded = 0
        self._evolve = evolve
        self.events: list = []
        self.ctx = ctx

    @property
    def state(self) -> Any:
        events = self.events
        while self._folded < len(events):
            self._state = self._evolve(self._state, events[self._folded])
            self._folded += 1
        return self._state

    def emit(self, event: Any) -> None:
        self.events.append(event)


@dataclass(frozen=True, kw_only=True)
class Start(Command):
    """Sent by the table once every seat is taken: the game deals and begins."""

    TYPE: ClassVar[str] = "Start"


@dataclass(frozen=True, kw_only=True)
class Tick(Command):
    """Sent by the service that hosts a game when a recorded deadline has passed.
    `now` is the time (ms) the deadline was checked at: an input, never read by an engine."""

    TYPE: ClassVar[str] = "Tick"
    now: int = 0


class Rng(Protocol):
    """Injected randomness. Every outcome is also recorded by the caller's events."""

    def below(self, n: int) -> int: ...
    def randint(self, lo: int, hi: int) -> int: ...
    def shuffle(self, items: Sequence[Any]) -> list[Any]: ...
    def choice(self, items: Sequence[Any]) -> Any: ...


@dataclass(frozen=True)
class Context:
    """What decide may use besides the state and command: randomness and the time."""

    rng: Rng
    now: int = 0  # ms since the epoch, given by the host


@dataclass(frozen=True)
class OptionSpec:
    """A game option an operator may set at table creation."""

    name: str
    default: Any
    doc: str
    choices: tuple[Any, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None

    def parse(self, raw: Any) -> Any:
        kind = type(self.default)
        value = raw
        if kind is bool and type(raw) is int and raw in (0, 1):
            # 1 and 0 as JSON numbers, as "1" and "0" as text (gRPC carries options as text).
            value = bool(raw)
        elif isinstance(raw, str) and kind is not str:
            text = raw.strip().lower()
            if kind is bool:
                if text in ("1", "true", "yes", "on"):
                    value = True
                elif text in ("0", "false", "no", "off"):
                    value = False
                else:
                    raise Rejection("invalid_option", f"option {self.name}: {echo(raw)} is not a boolean", "malformed")
            elif kind is int:
                value = parse_int(text)
                if value is None:
                    raise Rejection("invalid_option", f"option {self.name}: {echo(raw)} is not an integer",
                                    "malformed")
        if kind is int and isinstance(value, bool) or not isinstance(value, kind):
            raise Rejection(
                "invalid_option", f"option {self.name}: expected {kind.__name__}, got {type(raw).__name__}", "malformed"
            )
        if self.choices is not None and value not in self.choices:
            raise Rejection("invalid_option", f"option {self.name}: {echo(value)} is not one of {list(self.choices)}",
                            "malformed")
        if self.minimum is not None and value < self.minimum:
            raise Rejection("invalid_option", f"option {self.name}: {echo(value)} is below {self.minimum}", "malformed")
        if self.maximum is not None and value > self.maximum:
            raise Rejection("invalid_option", f"option {self.name}: {echo(value)} is above {self.maximum}", "malformed")
        return value


# A bot sees what its seat sees: the seat's view and its legal actions (as wire dicts), so
# the same bot plays in process and through the gateway. It returns one of the actions.
Bot = Callable[[Mapping[str, Any], Sequence[Mapping[str, Any]], Any], Mapping[str, Any]]


@dataclass(frozen=True)
class GameSpec:
    """Everything the platform knows about one game. Built once per game module."""

    id: str
    name: str
    min_seats: int
    max_seats: int
    rules_version: int
    options: tuple[OptionSpec, ...]
    commands: tuple[type[Command], ...]
    events: tuple[type[Event], ...]
    initial_state: Callable[[Mapping[str, Any], int], Any]
    decide: Callable[[Command, Any, Context], list[Event]]
    evolve: Callable[[Any, Event], Any]
    view: Callable[[Any, int | None], dict[str, Any]]
    legal_actions: Callable[[Any, int], list[Command]]
    is_over: Callable[[Any], bool]
    result: Callable[[Any], dict[str, Any]]
    to_act: Callable[[Any], tuple[int, ...]]
    hidden: Callable[[Any, int | None], frozenset[str]]
    describe: Callable[[Event], str]
    bots: Mapping[str, Bot] = field(default_factory=dict)
    deadline: Callable[[Any], int | None] = lambda state: None
    upcasters: Mapping[tuple[str, int], Callable[[dict], dict]] = field(default_factory=dict)
    # Earlier rules versions still replayable: version -> GameSpec of that version.
    previous: Mapping[int, "GameSpec"] = field(default_factory=dict)
    summary: str = ""
    # Co-operative games (all seats win or lose together): a forfeit loses for everyone.
    cooperative: bool = False
    # The turn clock's rules for this rules version (engine/table.py, CLOCK_IDLE_MOVES_PER_SEAT):
    # 1 for the versions written before 2026-12-02, whose games keep the clock they had.
    clock_version: int = 2
    # forked(state, now) -> state: the game of a fork made at `now` (ms, its TableForked's
    # time) from this state, for a game whose state holds absolute times: a deadline copied
    # from the origin has run out by the time the fork is played (delve's route vote, from its
    # rules version 4, restarts). None: the fork's game is the origin's as it was. Part of the
    # rules version, as decide is: a fork folds by its origin's version.
    forked: Callable[[Any, int], Any] | None = None
    # redeal(state, ctx) -> events: a fork's new deal (ForkTable.deal == DEAL_AGAIN). Every
    # card some seat of the fork may not see at its step (in a hand, a deck, face down, in the
    # box) is dealt again with the fork's own randomness (ctx.rng), each pool of cards that
    # the rules let stand for one another gathered, put in a fixed order (sorted), shuffled and
    # laid back in the same places in the same numbers; what a spectator sees stays as it was.
    # The new deal depends only on what is public and on the pools' contents, never on where
    # the origin had its hidden cards: so the origin's record (its replays, its seed once it
    # ends) says nothing of the fork's hidden cards. The events record the deal (the state is
    # their fold). None: the game has none, and its forks keep the origin's cards. The current
    # rules version's redeal deals every fork, whatever its origin's version: its events are
    # sealed and folded under the current version (ForkTable.deal numbers the way of dealing,
    # should it ever change, so that forks already made still audit as they were dealt).
    redeal: Callable[[Any, Context], list[Event]] | None = None

    def parse_options(self, raw: Mapping[str, Any] | None) -> dict[str, Any]:
        raw = dict(raw or {})
        known = {o.name: o for o in self.options}
        unknown = sorted(set(raw) - set(known))
        if unknown:
            # Each name clipped, and only the first few: a caller may send thousands.
            named = ", ".join(clip(str(name)) for name in unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
            raise Rejection("invalid_option", f"{self.id} has no option {named}; it has {sorted(known)}", "malformed")
        return {name: (opt.parse(raw[name]) if name in raw else opt.default) for name, opt in known.items()}

    def check_seats(self, seats: int) -> None:
        if not isinstance(seats, int) or isinstance(seats, bool) or not self.min_seats <= seats <= self.max_seats:
            raise Rejection(
                "invalid_seats", f"{self.id} is for {self.min_seats} to {self.max_seats} seats, not {seats!r}", "malformed"
            )

    def keeping(self, rules_version: int, **changes: Any) -> "GameSpec":
        """This spec, with an earlier rules version kept in `previous`: this spec as that
        version was (`changes`: what differed then), for the games created under it."""
        earlier = dataclasses.replace(self, rules_version=rules_version, previous={}, **changes)
        return dataclasses.replace(self, previous={**self.previous, rules_version: earlier})

    def for_version(self, rules_version: int) -> "GameSpec":
        if rules_version == self.rules_version:
            return self
        try:
            return self.previous[rules_version]
        except KeyError:
            raise Rejection("unknown_rules_version", f"{self.id} has no rules version {rules_version}", "malformed") from None
