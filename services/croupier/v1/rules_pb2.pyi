from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CommandResult(_message.Message):
    __slots__ = ("game_id", "first_seq", "last_seq", "version", "duplicate", "event_types")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    FIRST_SEQ_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    first_seq: int
    last_seq: int
    version: int
    duplicate: bool
    event_types: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, game_id: _Optional[str] = ..., first_seq: _Optional[int] = ..., last_seq: _Optional[int] = ..., version: _Optional[int] = ..., duplicate: _Optional[bool] = ..., event_types: _Optional[_Iterable[str]] = ...) -> None: ...

class CreateGameRequest(_message.Message):
    __slots__ = ("game_type", "game_id", "seats", "options", "command_id")
    class OptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    GAME_TYPE_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    COMMAND_ID_FIELD_NUMBER: _ClassVar[int]
    game_type: str
    game_id: str
    seats: int
    options: _containers.ScalarMap[str, str]
    command_id: str
    def __init__(self, game_type: _Optional[str] = ..., game_id: _Optional[str] = ..., seats: _Optional[int] = ..., options: _Optional[_Mapping[str, str]] = ..., command_id: _Optional[str] = ...) -> None: ...

class CreateGameResponse(_message.Message):
    __slots__ = ("result", "seed_hash")
    RESULT_FIELD_NUMBER: _ClassVar[int]
    SEED_HASH_FIELD_NUMBER: _ClassVar[int]
    result: CommandResult
    seed_hash: str
    def __init__(self, result: _Optional[_Union[CommandResult, _Mapping]] = ..., seed_hash: _Optional[str] = ...) -> None: ...

class JoinSeatRequest(_message.Message):
    __slots__ = ("game_type", "game_id", "seat", "player", "bot", "entropy", "command_id")
    GAME_TYPE_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYER_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    ENTROPY_FIELD_NUMBER: _ClassVar[int]
    COMMAND_ID_FIELD_NUMBER: _ClassVar[int]
    game_type: str
    game_id: str
    seat: int
    player: str
    bot: str
    entropy: str
    command_id: str
    def __init__(self, game_type: _Optional[str] = ..., game_id: _Optional[str] = ..., seat: _Optional[int] = ..., player: _Optional[str] = ..., bot: _Optional[str] = ..., entropy: _Optional[str] = ..., command_id: _Optional[str] = ...) -> None: ...

class JoinSeatResponse(_message.Message):
    __slots__ = ("result",)
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: CommandResult
    def __init__(self, result: _Optional[_Union[CommandResult, _Mapping]] = ...) -> None: ...

class LeaveSeatRequest(_message.Message):
    __slots__ = ("game_type", "game_id", "seat", "command_id")
    GAME_TYPE_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    COMMAND_ID_FIELD_NUMBER: _ClassVar[int]
    game_type: str
    game_id: str
    seat: int
    command_id: str
    def __init__(self, game_type: _Optional[str] = ..., game_id: _Optional[str] = ..., seat: _Optional[int] = ..., command_id: _Optional[str] = ...) -> None: ...

class LeaveSeatResponse(_message.Message):
    __slots__ = ("result",)
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: CommandResult
    def __init__(self, result: _Optional[_Union[CommandResult, _Mapping]] = ...) -> None: ...

class HandleCommandRequest(_message.Message):
    __slots__ = ("game_type", "game_id", "seat", "command_id", "expected_version", "action_json", "want_next")
    GAME_TYPE_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    COMMAND_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    ACTION_JSON_FIELD_NUMBER: _ClassVar[int]
    WANT_NEXT_FIELD_NUMBER: _ClassVar[int]
    game_type: str
    game_id: str
    seat: int
    command_id: str
    expected_version: int
    action_json: str
    want_next: bool
    def __init__(self, game_type: _Optional[str] = ..., game_id: _Optional[str] = ..., seat: _Optional[int] = ..., command_id: _Optional[str] = ..., expected_version: _Optional[int] = ..., action_json: _Optional[str] = ..., want_next: _Optional[bool] = ...) -> None: ...

class HandleCommandResponse(_message.Message):
    __slots__ = ("result", "next", "over")
    RESULT_FIELD_NUMBER: _ClassVar[int]
    NEXT_FIELD_NUMBER: _ClassVar[int]
    OVER_FIELD_NUMBER: _ClassVar[int]
    result: CommandResult
    next: _containers.RepeatedCompositeFieldContainer[SeatActions]
    over: bool
    def __init__(self, result: _Optional[_Union[CommandResult, _Mapping]] = ..., next: _Optional[_Iterable[_Union[SeatActions, _Mapping]]] = ..., over: _Optional[bool] = ...) -> None: ...

class SeatActions(_message.Message):
    __slots__ = ("seat", "actions_json")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_JSON_FIELD_NUMBER: _ClassVar[int]
    seat: int
    actions_json: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, seat: _Optional[int] = ..., actions_json: _Optional[_Iterable[str]] = ...) -> None: ...

class ForceEndRequest(_message.Message):
    __slots__ = ("game_type", "game_id", "reason", "command_id")
    GAME_TYPE_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    COMMAND_ID_FIELD_NUMBER: _ClassVar[int]
    game_type: str
    game_id: str
    reason: str
    command_id: str
    def __init__(self, game_type: _Optional[str] = ..., game_id: _Optional[str] = ..., reason: _Optional[str] = ..., command_id: _Optional[str] = ...) -> None: ...

class ForceEndResponse(_message.Message):
    __slots__ = ("result",)
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: CommandResult
    def __init__(self, result: _Optional[_Union[CommandResult, _Mapping]] = ...) -> None: ...

class GetStateRequest(_message.Message):
    __slots__ = ("game_type", "game_id", "seat")
    GAME_TYPE_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    game_type: str
    game_id: str
    seat: int
    def __init__(self, game_type: _Optional[str] = ..., game_id: _Optional[str] = ..., seat: _Optional[int] = ...) -> None: ...

class GetStateResponse(_message.Message):
    __slots__ = ("view_json", "version")
    VIEW_JSON_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    view_json: str
    version: int
    def __init__(self, view_json: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class ListLegalActionsRequest(_message.Message):
    __slots__ = ("game_type", "game_id", "seat")
    GAME_TYPE_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    game_type: str
    game_id: str
    seat: int
    def __init__(self, game_type: _Optional[str] = ..., game_id: _Optional[str] = ..., seat: _Optional[int] = ...) -> None: ...

class ListLegalActionsResponse(_message.Message):
    __slots__ = ("actions_json", "version")
    ACTIONS_JSON_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    actions_json: _containers.RepeatedScalarFieldContainer[str]
    version: int
    def __init__(self, actions_json: _Optional[_Iterable[str]] = ..., version: _Optional[int] = ...) -> None: ...
