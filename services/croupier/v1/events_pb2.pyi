from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RejectionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REJECTION_KIND_UNSPECIFIED: _ClassVar[RejectionKind]
    REJECTION_KIND_MALFORMED: _ClassVar[RejectionKind]
    REJECTION_KIND_ILLEGAL: _ClassVar[RejectionKind]
    REJECTION_KIND_CONFLICT: _ClassVar[RejectionKind]
    REJECTION_KIND_NOT_FOUND: _ClassVar[RejectionKind]
    REJECTION_KIND_FORBIDDEN: _ClassVar[RejectionKind]
    REJECTION_KIND_NOT_OWNER: _ClassVar[RejectionKind]
    REJECTION_KIND_UNAVAILABLE: _ClassVar[RejectionKind]
    REJECTION_KIND_ALREADY_EXISTS: _ClassVar[RejectionKind]
REJECTION_KIND_UNSPECIFIED: RejectionKind
REJECTION_KIND_MALFORMED: RejectionKind
REJECTION_KIND_ILLEGAL: RejectionKind
REJECTION_KIND_CONFLICT: RejectionKind
REJECTION_KIND_NOT_FOUND: RejectionKind
REJECTION_KIND_FORBIDDEN: RejectionKind
REJECTION_KIND_NOT_OWNER: RejectionKind
REJECTION_KIND_UNAVAILABLE: RejectionKind
REJECTION_KIND_ALREADY_EXISTS: RejectionKind

class EventEnvelope(_message.Message):
    __slots__ = ("game_id", "game_type", "seq", "type", "version", "payload_json", "rules_version", "command_id", "seat", "time_ms", "cause_json", "prev_hash", "hash")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_TYPE_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_JSON_FIELD_NUMBER: _ClassVar[int]
    RULES_VERSION_FIELD_NUMBER: _ClassVar[int]
    COMMAND_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TIME_MS_FIELD_NUMBER: _ClassVar[int]
    CAUSE_JSON_FIELD_NUMBER: _ClassVar[int]
    PREV_HASH_FIELD_NUMBER: _ClassVar[int]
    HASH_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    game_type: str
    seq: int
    type: str
    version: int
    payload_json: str
    rules_version: int
    command_id: str
    seat: int
    time_ms: int
    cause_json: str
    prev_hash: str
    hash: str
    def __init__(self, game_id: _Optional[str] = ..., game_type: _Optional[str] = ..., seq: _Optional[int] = ..., type: _Optional[str] = ..., version: _Optional[int] = ..., payload_json: _Optional[str] = ..., rules_version: _Optional[int] = ..., command_id: _Optional[str] = ..., seat: _Optional[int] = ..., time_ms: _Optional[int] = ..., cause_json: _Optional[str] = ..., prev_hash: _Optional[str] = ..., hash: _Optional[str] = ...) -> None: ...

class Rejection(_message.Message):
    __slots__ = ("kind", "code", "message", "owner")
    KIND_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    kind: RejectionKind
    code: str
    message: str
    owner: str
    def __init__(self, kind: _Optional[_Union[RejectionKind, str]] = ..., code: _Optional[str] = ..., message: _Optional[str] = ..., owner: _Optional[str] = ...) -> None: ...
