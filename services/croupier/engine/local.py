"""In-process tables over an in-memory log: for tests, the CLI and the embedded mode."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from croupier.engine.contract import CONFLICT, Command, GameSpec, Rejection
from croupier.engine.envelope import Envelope
from croupier.engine.table import JoinSeat, TableHost, TableState


class MemoryLog:
    """Envelopes per game, appended only if they continue the game's seq."""

    def __init__(self) -> None:
        self._games: dict[str, list[Envelope]] = {}

    def append(self, envelopes: list[Envelope]) -> None:
        if not envelopes:
            return
        log = self._games.setdefault(envelopes[0].game_id, [])
        if envelopes[0].seq != len(log) + 1:
            raise Rejection("version_conflict", f"append at seq {envelopes[0].seq}, log is at {len(log)}", CONFLICT)
        log.extend(envelopes)

    def read(self, game_id: str) -> list[Envelope]:
        return list(self._games.get(game_id, ()))

    def games(self) -> list[str]:
        return list(self._games)


class LocalTable:
    """One table played in process: decide, append to the log, evolve."""

    def __init__(
        self,
        spec: GameSpec,
        game_id: str,
        seats: int,
        options: Mapping[str, Any] | None,
        seed_hex: str,
        *,
        log: MemoryLog | None = None,
        now: int = 0,
    ):
        self.host = TableHost(spec)
        self.log = log if log is not None else MemoryLog()
        self.game_id = game_id
        envelopes = self.host.create(game_id, seats, options, seed_hex, now=now)
        self.log.append(envelopes)
        self.state: TableState = self.host.fold(envelopes)  # type: ignore[assignment]
        self._seen: dict[str, list[Envelope]] = {}

    def handle(
        self,
        command: Command,
        *,
        command_id: str | None = None,
        now: int = 0,
        expected_version: int | None = None,
    ) -> list[Envelope]:
        if command_id is not None and command_id in self._seen:
            return self._seen[command_id]
        envelopes = self.host.decide(
            self.state, command, command_id=command_id, now=now, expected_version=expected_version
        )
        self.log.append(envelopes)
        for env in envelopes:
            self.state = self.host.evolve(self.state, env)
        if command_id is not None:
            self._seen[command_id] = envelopes
        return envelopes

    def join_all(self, bots: list[str | None] | None = None, *, now: int = 0) -> None:
        for seat in range(self.state.seats):
            bot = bots[seat] if bots else None
            self.handle(JoinSeat(seat=seat, player=f"seat{seat}", bot=bot, entropy=f"e{seat}"), now=now)

    @property
    def envelopes(self) -> list[Envelope]:
        return self.log.read(self.game_id)
