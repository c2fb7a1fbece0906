"""Rejections on the wire: kinds to gRPC status codes and back."""

from __future__ import annotations

import grpc

from croupier.engine.contract import Rejection
from croupier.v1 import events_pb2

REJECTION_METADATA = "croupier-rejection-bin"

KIND_TO_PROTO = {
    "malformed": events_pb2.REJECTION_KIND_MALFORMED,
    "illegal": events_pb2.REJECTION_KIND_ILLEGAL,
    "conflict": events_pb2.REJECTION_KIND_CONFLICT,
    "not_found": events_pb2.REJECTION_KIND_NOT_FOUND,
    "forbidden": events_pb2.REJECTION_KIND_FORBIDDEN,
    "not_owner": events_pb2.REJECTION_KIND_NOT_OWNER,
    "unavailable": events_pb2.REJECTION_KIND_UNAVAILABLE,
    "already_exists": events_pb2.REJECTION_KIND_ALREADY_EXISTS,
    # the gateway's own kinds (a rules replica does not give them)
    "unauthenticated": events_pb2.REJECTION_KIND_UNAUTHENTICATED,
    "too_large": events_pb2.REJECTION_KIND_TOO_LARGE,
    "rate_limited": events_pb2.REJECTION_KIND_RATE_LIMITED,
}
PROTO_TO_KIND = {v: k for k, v in KIND_TO_PROTO.items()}

KIND_TO_STATUS = {
    "malformed": grpc.StatusCode.INVALID_ARGUMENT,
    "illegal": grpc.StatusCode.FAILED_PRECONDITION,
    "conflict": grpc.StatusCode.ABORTED,
    "not_found": grpc.StatusCode.NOT_FOUND,
    "forbidden": grpc.StatusCode.PERMISSION_DENIED,
    "not_owner": grpc.StatusCode.UNAVAILABLE,
    "unavailable": grpc.StatusCode.UNAVAILABLE,
    "already_exists": grpc.StatusCode.ALREADY_EXISTS,
}

RETRYABLE = frozenset({"not_owner", "unavailable"})
# Retryable answers of an owner that is there but has more than it takes (a partition's queue
# full, its replica's log reads all under way), or holds a game it cannot read until a newer
# rules service takes it (game_unreadable): the caller retries later, not at once, and the
# owner is not looked up again.
BUSY = frozenset({"partition_busy", "log_reads_busy", "game_unreadable"})
BUSY_RETRY_S = 1.0

# A rejection's message is sent at most this long (UTF-8 bytes), twice in the answer's
# trailing metadata (the status details, percent-encoded beyond ASCII, and the Rejection),
# which gRPC limits to 8 KB: a longer answer reaches the caller as RESOURCE_EXHAUSTED with no
# rejection, which clients take for "retry". The rejections clip the values they echo
# (engine.contract.echo); this bounds every other message.
MAX_MESSAGE_BYTES = 1024


def bounded(message: str) -> str:
    """The message, cut to MAX_MESSAGE_BYTES of UTF-8 (at a character) with an ellipsis."""
    if len(message) * 4 <= MAX_MESSAGE_BYTES:
        return message
    raw = message.encode("utf-8", "replace")
    if len(raw) <= MAX_MESSAGE_BYTES:
        return message
    return raw[: MAX_MESSAGE_BYTES - 3].decode("utf-8", "ignore") + "…"


class Refusal(Exception):
    """A Rejection carried as an exception where no gRPC status ends the call (a move on a
    HandleCommands stream, either end), with the owner's address for not_owner."""

    def __init__(self, rejection: Rejection, owner: str = ""):
        super().__init__(rejection.code)
        self.rejection = rejection
        self.owner = owner


def from_proto(msg: events_pb2.Rejection) -> tuple[Rejection, str]:
    """The Rejection a croupier.v1.Rejection carries, and the owner it names."""
    current = msg.current_version if msg.HasField("current_version") else None
    return Rejection(msg.code, msg.message, PROTO_TO_KIND.get(msg.kind, "unavailable"), current_version=current), msg.owner


def to_proto(rejection: Rejection, owner: str = "") -> events_pb2.Rejection:
    return events_pb2.Rejection(
        kind=KIND_TO_PROTO.get(rejection.kind, events_pb2.REJECTION_KIND_UNSPECIFIED),
        code=rejection.code,
        message=bounded(rejection.message),
        owner=owner,
        current_version=getattr(rejection, "current_version", None),
    )


def trailing(rejection: Rejection, owner: str = "") -> tuple[tuple[str, bytes], ...]:
    return ((REJECTION_METADATA, to_proto(rejection, owner).SerializeToString()),)


def from_rpc_error(error: grpc.RpcError) -> tuple[Rejection, str]:
    """The Rejection a failed call carried (and the owner it named), or one made from the
    status when the call failed below Croupier (deadline, connection)."""
    metadata = error.trailing_metadata() or ()
    for key, value in metadata:
        if key == REJECTION_METADATA:
            return from_proto(events_pb2.Rejection.FromString(value))
    code = error.code()
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED,
                grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL):
        return Rejection("unavailable", f"rules service: {code.name.lower()}: {error.details()}", "unavailable"), ""
    kind = {v: k for k, v in KIND_TO_STATUS.items()}.get(code, "malformed")
    return Rejection(code.name.lower(), error.details() or code.name, kind), ""
