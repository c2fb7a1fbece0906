"""The HTTP API's request and response bodies (they make its OpenAPI document)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

CommandId = Field(default=None, min_length=1, max_length=100,
                  description="The client's id for this request; a retry with the same id is answered "
                              "with the first result and changes nothing more")


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CreateTable(_Body):
    game_type: str = Field(min_length=1, max_length=64, description="A game id from GET /v1/games")
    seats: StrictInt | None = Field(default=None, ge=1, le=64, description="Seat count (default: the game's minimum)")
    options: dict[str, StrictStr | StrictInt | StrictBool] = Field(
        default_factory=dict, max_length=32,
        description="Game options by name (see GET /v1/games), plus the table's turn_clock_ms and turn_clock_action")
    command_id: str | None = CommandId


class JoinSeat(_Body):
    player: str = Field(default="", max_length=64, description="A name shown to the table")
    bot: str | None = Field(default=None, max_length=64, description="Marks the seat as played by this bot")
    entropy: str = Field(default="", max_length=256,
                         description="Your own randomness, mixed into the seed after its hash was fixed")
    command_id: str | None = Field(
        default=None, min_length=1, max_length=100,
        description="A secret retry key: repeating a join with it (and the same player and bot) returns the seat "
                    "again with a new token (until a token of that join is used: then 409 join_in_use), so it must "
                    "not be guessable: at least 16 characters, random (a UUID), else 400 command_id_too_short. Left "
                    "out, the gateway makes one")


class LeaveSeat(_Body):
    command_id: str | None = CommandId


class SubmitCommand(_Body):
    command_id: str = Field(min_length=1, max_length=100,
                            description="Required: a retry with the same command_id is applied at most once")
    expected_version: StrictInt | None = Field(default=None, ge=0, le=2**63 - 1,
                                         description="Refused with 409 unless the game is at this version")
    action: dict[str, Any] = Field(description='One of your legal actions: {"type": ..., fields}')


class ForceEnd(_Body):
    reason: str = Field(default="", max_length=200)
    command_id: str | None = CommandId


class ErrorDetail(BaseModel):
    code: str = Field(description="Stable and machine-readable: the rule or check at fault")
    message: str
    kind: str
    field: str | None = Field(default=None, description="For a 400: the request field at fault")
    current_version: int | None = Field(
        default=None, description="For a 409 version_conflict: the game's version now, the expected_version to send")


class ErrorOut(BaseModel):
    error: ErrorDetail


class OptionOut(BaseModel):
    name: str
    default: Any
    doc: str
    choices: list[Any] | None
    minimum: int | None
    maximum: int | None


class GameOut(BaseModel):
    id: str
    name: str
    summary: str
    min_seats: int
    max_seats: int
    rules_version: int
    bots: list[str]
    cooperative: bool
    options: list[OptionOut]
    table_options: list[OptionOut] = Field(
        default_factory=list,
        description="the table's own options, which every game takes beside its own: the turn clock "
                    "(turn_clock_ms, turn_clock_action)")


class GamesOut(BaseModel):
    games: list[GameOut]


class TableOut(BaseModel):
    game_id: str
    game_type: str
    status: str
    version: int
    seats: int
    free_seats: int
    players: list[Any]
    options: dict[str, Any]
    seed_hash: str
    created: int
    updated: int
    result: dict[str, Any] | None = None
    end_reason: str | None = None
    origin: dict[str, Any] | None = Field(
        default=None, description="A fork's origin: the game and step (seq, hash) it was forked from")


class TablesOut(BaseModel):
    tables: list[TableOut]


class CreatedOut(BaseModel):
    game_id: str
    game_type: str
    seats: int
    seed_hash: str
    version: int


class JoinedOut(BaseModel):
    game_id: str
    seat: int
    token: str = Field(description="Send as `Authorization: Bearer <token>`; it names this table and seat")
    expires_at: int = Field(description="Unix time (s) after which the token is refused")
    version: int


class RenewedOut(BaseModel):
    game_id: str
    seat: int
    token: str = Field(description="The seat's new token; the one it replaces holds the seat until it expires")
    expires_at: int = Field(description="Unix time (s) after which the new token is refused")


class LeftOut(BaseModel):
    game_id: str
    seat: int
    version: int
    duplicate: bool = Field(default=False, description="A retry of a leave already made (its answer was lost): "
                            "the first leave's version again, nothing changed")


class ViewOut(BaseModel):
    version: int
    seat: int | None = Field(description="null for a spectator")
    view: dict[str, Any]


class ActionsOut(BaseModel):
    version: int
    seat: int
    actions: list[dict[str, Any]]


class CommandOut(BaseModel):
    game_id: str
    seat: int
    version: int = Field(description="The game's version after the command")
    first_seq: int
    last_seq: int
    duplicate: bool = Field(description="True when this command_id was applied before")


class ForceEndOut(BaseModel):
    game_id: str
    version: int


class Fork(_Body):
    at: StrictInt = Field(ge=1, le=2**62, description="The step (seq) of the origin to start from: a command's last event")
    command_id: str | None = CommandId
    keep_cards: StrictBool = Field(
        False, description="Keep the origin's hidden cards as they lay instead of dealing them again with the fork's own "
                           "seed (the default). The origin's record, open once it is over, then shows them: for a "
                           "'what if' with the same hands, or to resume an interrupted game that stays running")


class ForkOut(BaseModel):
    game_id: str
    game_type: str
    seats: int
    origin: dict[str, Any] = Field(description="{game_id, seq} of the step forked from")
    version: int
    keep_cards: bool = Field(False, description="whether the fork kept the origin's hidden cards (else dealt them again)")


class SeatTokenOut(BaseModel):
    game_id: str
    seat: int
    token: str
    expires_at: int
    version: int


class OperatorGamesOut(BaseModel):
    games: list[TableOut]
    scanned: int = Field(description="listing entries looked at (a whole game id in q is looked up directly: 0)")
    total: int = Field(description="entries in the listing scanned: one game type's tables of one status when both "
                                   "are given, else every game")
    truncated: bool = Field(description="the scan stopped at its limit before the end of the listing with the page "
                                        "not full: games further down that match were not looked at")


class OperatorGameOut(BaseModel):
    table: TableOut
    views: dict[str, Any] = Field(description='"spectator" and each seat\'s view')
    actions: dict[str, Any] = Field(description="Each seat's legal actions")
    owner: str = Field(description="The rules replica that owns the game now")


class HealthOut(BaseModel):
    ok: bool
    status: Literal["ok", "degraded"]
