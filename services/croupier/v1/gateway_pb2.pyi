from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TableStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TABLE_STATUS_UNSPECIFIED: _ClassVar[TableStatus]
    TABLE_STATUS_OPEN: _ClassVar[TableStatus]
    TABLE_STATUS_RUNNING: _ClassVar[TableStatus]
    TABLE_STATUS_OVER: _ClassVar[TableStatus]
TABLE_STATUS_UNSPECIFIED: TableStatus
TABLE_STATUS_OPEN: TableStatus
TABLE_STATUS_RUNNING: TableStatus
TABLE_STATUS_OVER: TableStatus

class GameOption(_message.Message):
    __slots__ = ("name", "doc", "default_json", "choices_json")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DOC_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_JSON_FIELD_NUMBER: _ClassVar[int]
    CHOICES_JSON_FIELD_NUMBER: _ClassVar[int]
    name: str
    doc: str
    default_json: str
    choices_json: str
    def __init__(self, name: _Optional[str] = ..., doc: _Optional[str] = ..., default_json: _Optional[str] = ..., choices_json: _Optional[str] = ...) -> None: ...

class GameInfo(_message.Message):
    __slots__ = ("id", "name", "summary", "min_seats", "max_seats", "rules_version", "bots", "options", "cooperative")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    MIN_SEATS_FIELD_NUMBER: _ClassVar[int]
    MAX_SEATS_FIELD_NUMBER: _ClassVar[int]
    RULES_VERSION_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    COOPERATIVE_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    summary: str
    min_seats: int
    max_seats: int
    rules_version: int
    bots: _containers.RepeatedScalarFieldContainer[str]
    options: _containers.RepeatedCompositeFieldContainer[GameOption]
    cooperative: bool
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., summary: _Optional[str] = ..., min_seats: _Optional[int] = ..., max_seats: _Optional[int] = ..., rules_version: _Optional[int] = ..., bots: _Optional[_Iterable[str]] = ..., options: _Optional[_Iterable[_Union[GameOption, _Mapping]]] = ..., cooperative: _Optional[bool] = ...) -> None: ...

class ListGamesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListGamesResponse(_message.Message):
    __slots__ = ("games",)
    GAMES_FIELD_NUMBER: _ClassVar[int]
    games: _containers.RepeatedCompositeFieldContainer[GameInfo]
    def __init__(self, games: _Optional[_Iterable[_Union[GameInfo, _Mapping]]] = ...) -> None: ...

class Table(_message.Message):
    __slots__ = ("game_id", "game_type", "status", "version", "seats", "free_seats", "players_json", "options_json", "seed_hash", "created_ms", "updated_ms", "result_json", "end_reason")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_TYPE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    FREE_SEATS_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_JSON_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_JSON_FIELD_NUMBER: _ClassVar[int]
    SEED_HASH_FIELD_NUMBER: _ClassVar[int]
    CREATED_MS_FIELD_NUMBER: _ClassVar[int]
    UPDATED_MS_FIELD_NUMBER: _ClassVar[int]
    RESULT_JSON_FIELD_NUMBER: _ClassVar[int]
    END_REASON_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    game_type: str
    status: TableStatus
    version: int
    seats: int
    free_seats: int
    players_json: str
    options_json: str
    seed_hash: str
    created_ms: int
    updated_ms: int
    result_json: str
    end_reason: str
    def __init__(self, game_id: _Optional[str] = ..., game_type: _Optional[str] = ..., status: _Optional[_Union[TableStatus, str]] = ..., version: _Optional[int] = ..., seats: _Optional[int] = ..., free_seats: _Optional[int] = ..., players_json: _Optional[str] = ..., options_json: _Optional[str] = ..., seed_hash: _Optional[str] = ..., created_ms: _Optional[int] = ..., updated_ms: _Optional[int] = ..., result_json: _Optional[str] = ..., end_reason: _Optional[str] = ...) -> None: ...

class CreateTableRequest(_message.Message):
    __slots__ = ("game_type", "seats", "options", "command_id")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    GAME_TYPE_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    COMMAND_ID_FIELD_NUMBER: _ClassVar[int]
    game_type: str
    seats: int
    options: _containers.ScalarMap[str, str]
    command_id: str
    def __init__(self, game_type: _Optional[str] = ..., seats: _Optional[int] = ..., options: _Optional[_Mapping[str, str]] = ..., command_id: _Optional[str] = ...) -> None: ...

class CreateTableResponse(_message.Message):
    __slots__ = ("game_id", "game_type", "seats", "seed_hash", "version")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_TYPE_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    SEED_HASH_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    game_type: str
    seats: int
    seed_hash: str
    version: int
    def __init__(self, game_id: _Optional[str] = ..., game_type: _Optional[str] = ..., seats: _Optional[int] = ..., seed_hash: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class ListTablesRequest(_message.Message):
    __slots__ = ("game_type", "status", "limit", "offset")
    GAME_TYPE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    game_type: str
    status: TableStatus
    limit: int
    offset: int
    def __init__(self, game_type: _Optional[str] = ..., status: _Optional[_Union[TableStatus, str]] = ..., limit: _Optional[int] = ..., offset: _Optional[int] = ...) -> None: ...

class ListTablesResponse(_message.Message):
    __slots__ = ("tables",)
    TABLES_FIELD_NUMBER: _ClassVar[int]
    tables: _containers.RepeatedCompositeFieldContainer[Table]
    def __init__(self, tables: _Optional[_Iterable[_Union[Table, _Mapping]]] = ...) -> None: ...

class GetTableRequest(_message.Message):
    __slots__ = ("game_id",)
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    def __init__(self, game_id: _Optional[str] = ...) -> None: ...

class GetTableResponse(_message.Message):
    __slots__ = ("table",)
    TABLE_FIELD_NUMBER: _ClassVar[int]
    table: Table
    def __init__(self, table: _Optional[_Union[Table, _Mapping]] = ...) -> None: ...

class JoinTableRequest(_message.Message):
    __slots__ = ("game_id", "seat", "player", "bot", "entropy", "command_id")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    ENTROPY_FIELD_NUMBER: _ClassVar[int]
    COMMAND_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    player: str
    bot: str
    entropy: str
    command_id: str
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., player: _Optional[str] = ..., bot: _Optional[str] = ..., entropy: _Optional[str] = ..., command_id: _Optional[str] = ...) -> None: ...

class JoinTableResponse(_message.Message):
    __slots__ = ("game_id", "seat", "token", "expires_at", "version")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    token: str
    expires_at: int
    version: int
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., token: _Optional[str] = ..., expires_at: _Optional[int] = ..., version: _Optional[int] = ...) -> None: ...

class LeaveTableRequest(_message.Message):
    __slots__ = ("game_id", "seat", "command_id")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    COMMAND_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    command_id: str
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., command_id: _Optional[str] = ...) -> None: ...

class LeaveTableResponse(_message.Message):
    __slots__ = ("game_id", "seat", "version")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    version: int
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., version: _Optional[int] = ...) -> None: ...

class GetViewRequest(_message.Message):
    __slots__ = ("game_id", "min_version", "timeout_ms")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    MIN_VERSION_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    min_version: int
    timeout_ms: int
    def __init__(self, game_id: _Optional[str] = ..., min_version: _Optional[int] = ..., timeout_ms: _Optional[int] = ...) -> None: ...

class GetViewResponse(_message.Message):
    __slots__ = ("version", "seat", "view_json")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    VIEW_JSON_FIELD_NUMBER: _ClassVar[int]
    version: int
    seat: int
    view_json: str
    def __init__(self, version: _Optional[int] = ..., seat: _Optional[int] = ..., view_json: _Optional[str] = ...) -> None: ...

class ListActionsRequest(_message.Message):
    __slots__ = ("game_id",)
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    def __init__(self, game_id: _Optional[str] = ...) -> None: ...

class ListActionsResponse(_message.Message):
    __slots__ = ("version", "seat", "actions_json")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_JSON_FIELD_NUMBER: _ClassVar[int]
    version: int
    seat: int
    actions_json: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, version: _Optional[int] = ..., seat: _Optional[int] = ..., actions_json: _Optional[_Iterable[str]] = ...) -> None: ...

class SubmitCommandRequest(_message.Message):
    __slots__ = ("game_id", "command_id", "expected_version", "action_json", "no_wait")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    COMMAND_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    ACTION_JSON_FIELD_NUMBER: _ClassVar[int]
    NO_WAIT_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    command_id: str
    expected_version: int
    action_json: str
    no_wait: bool
    def __init__(self, game_id: _Optional[str] = ..., command_id: _Optional[str] = ..., expected_version: _Optional[int] = ..., action_json: _Optional[str] = ..., no_wait: _Optional[bool] = ...) -> None: ...

class SubmitCommandResponse(_message.Message):
    __slots__ = ("game_id", "seat", "version", "first_seq", "last_seq", "duplicate")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    FIRST_SEQ_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    version: int
    first_seq: int
    last_seq: int
    duplicate: bool
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., version: _Optional[int] = ..., first_seq: _Optional[int] = ..., last_seq: _Optional[int] = ..., duplicate: _Optional[bool] = ...) -> None: ...

class StreamUpdatesRequest(_message.Message):
    __slots__ = ("game_id", "from_version")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_VERSION_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    from_version: int
    def __init__(self, game_id: _Optional[str] = ..., from_version: _Optional[int] = ...) -> None: ...

class StreamUpdatesResponse(_message.Message):
    __slots__ = ("version", "view_json", "actions_json")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    VIEW_JSON_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_JSON_FIELD_NUMBER: _ClassVar[int]
    version: int
    view_json: str
    actions_json: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, version: _Optional[int] = ..., view_json: _Optional[str] = ..., actions_json: _Optional[_Iterable[str]] = ...) -> None: ...
