"""given / when / then for deciders, in the style of fmodel's tests.

    scenario(SPEC, seats=2).given(Dealt(...), CardPlayed(...)).when(PlayCard(seat=0, card="r5a")).then(CardPlayed(...))
    scenario(SPEC, seats=2).given(...).when(...).rejects("not_your_turn")

`given` folds game events onto initial_state (no table around it), `when` runs decide
with a scripted RNG (outcomes listed in order) or a seeded fair one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from croupier.engine.contract import Command, Context, Event, GameSpec, Rejection
from croupier.engine.rng import FairRng


class ScriptedRng:
    """Hands out the outcomes it was given, in order; `shuffle` takes a permutation or the
    shuffled list itself."""

    def __init__(self, outcomes: Sequence[Any] = ()):
        self._outcomes = list(outcomes)
        self.draws: list[dict[str, Any]] = []

    def _next(self) -> Any:
        if not self._outcomes:
            raise AssertionError("decide asked for a random outcome the test did not script")
        return self._outcomes.pop(0)

    def below(self, n: int) -> int:
        value = self._next()
        assert 0 <= value < n, f"scripted {value} not below {n}"
        return value

    def randint(self, lo: int, hi: int) -> int:
        value = self._next()
        assert lo <= value <= hi, f"scripted {value} not in {lo}..{hi}"
        return value

    def choice(self, items: Sequence[Any]) -> Any:
        return items[self.below(len(items))]

    def shuffle(self, items: Sequence[Any]) -> list[Any]:
        value = list(self._next())
        if sorted(map(repr, value)) == sorted(map(repr, items)):
            return value
        assert sorted(value) == list(range(len(items))), "scripted shuffle is neither a permutation nor the items"
        return [items[i] for i in value]


class Scenario:
    def __init__(self, spec: GameSpec, seats: int, options: Mapping[str, Any] | None = None):
        self.spec = spec
        self.state = spec.initial_state(spec.parse_options(options), seats)
        self._result: list[Event] | Rejection | None = None

    def given(self, *events: Event) -> "Scenario":
        for event in events:
            self.state = self.spec.evolve(self.state, event)
        return self

    def given_state(self, state: Any) -> "Scenario":
        self.state = state
        return self

    def when(self, command: Command, *, rng: Any = None, outcomes: Sequence[Any] = (), now: int = 0) -> "Scenario":
        rng = rng if rng is not None else ScriptedRng(outcomes)
        try:
            self._result = list(self.spec.decide(command, self.state, Context(rng=rng, now=now)))
        except Rejection as exc:
            self._result = exc
        return self

    @property
    def events(self) -> list[Event]:
        if isinstance(self._result, Rejection):
            raise AssertionError(f"expected events, got rejection {self._result}")
        assert self._result is not None, "call when() first"
        return self._result

    def then(self, *expected: Event) -> "Scenario":
        assert self.events == list(expected), f"\nexpected {list(expected)}\n     got {self.events}"
        return self

    def then_state(self) -> Any:
        """The state after the events of `when`, for assertions on views."""
        state = self.state
        for event in self.events:
            state = self.spec.evolve(state, event)
        return state

    def rejects(self, code: str) -> Rejection:
        assert isinstance(self._result, Rejection), f"expected rejection {code!r}, got events {self._result}"
        assert self._result.code == code, f"expected rejection {code!r}, got {self._result.code!r}: {self._result.message}"
        return self._result


def scenario(spec: GameSpec, seats: int, options: Mapping[str, Any] | None = None) -> Scenario:
    return Scenario(spec, seats, options)


def fair_rng(seed: str = "00" * 32, entropy: str = "") -> FairRng:
    return FairRng(seed, entropy, 0)


def random_steps(table: Any, rnd: Any, cap: int) -> Iterator[tuple[Any, int]]:
    """Plays a LocalTable (joined) by random seats' random legal actions, a second apart, the
    game's timers (the table's deadline) fired by a Tick once due or when no seat may act;
    yields (state, time) before each seat's move, until the game is over or `cap` steps."""
    from croupier.engine.contract import Tick

    spec = table.host.spec
    now = steps = 0
    while table.state.status == "running" and steps < cap:
        steps, now = steps + 1, now + 1000
        st = table.state
        due, to_act = table.host.deadline(st), spec.to_act(st.game)
        if due is not None and (now >= due or not to_act):
            now = max(now, due)
            table.handle(Tick(now=now), now=now)
            continue
        yield st, now
        seat = rnd.choice(list(to_act))
        table.handle(rnd.choice(spec.legal_actions(st.game, seat)), now=now)
