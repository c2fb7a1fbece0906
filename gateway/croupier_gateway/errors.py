"""Errors a client can act on, one vocabulary for HTTP, WebSocket and gRPC.

Every refusal is an `ApiError` with a stable `code`, words for a person, a `kind` that fixes
the HTTP status and the gRPC status code, and for bad input the `field` at fault. A
Rejection from a rules service maps by its kind.
"""

from __future__ import annotations

import re

import grpc

from croupier.engine.contract import Rejection
from croupier.rules.errors import BUSY, BUSY_RETRY_S

# kind -> (HTTP status, gRPC status code)
KINDS: dict[str, tuple[int, grpc.StatusCode]] = {
    "malformed": (400, grpc.StatusCode.INVALID_ARGUMENT),
    "unauthenticated": (401, grpc.StatusCode.UNAUTHENTICATED),
    "forbidden": (403, grpc.StatusCode.PERMISSION_DENIED),
    "not_found": (404, grpc.StatusCode.NOT_FOUND),
    "conflict": (409, grpc.StatusCode.ABORTED),
    "already_exists": (409, grpc.StatusCode.ALREADY_EXISTS),
    "too_large": (413, grpc.StatusCode.INVALID_ARGUMENT),
    "illegal": (422, grpc.StatusCode.FAILED_PRECONDITION),
    "rate_limited": (429, grpc.StatusCode.RESOURCE_EXHAUSTED),
    "unavailable": (503, grpc.StatusCode.UNAVAILABLE),
    "not_owner": (503, grpc.StatusCode.UNAVAILABLE),
}

# WebSocket close codes: 4000 + the HTTP status.
WS_CLOSE_BASE = 4000


class ApiError(Exception):
    def __init__(self, kind: str, code: str, message: str, *, field: str | None = None,
                 retry_after_s: float | None = None, current_version: int | None = None):
        super().__init__(f"{code}: {message}")
        if kind not in KINDS:
            kind = "unavailable"
        self.kind = kind
        self.code = code
        # Words that quote a client's input may hold what UTF-8 cannot carry (a lone
        # surrogate from a JSON escape): escaped here, so that no refusal fails to be sent.
        self.message = _sendable(message)
        self.field = None if field is None else _sendable(field)
        self.retry_after_s = retry_after_s
        # A version_conflict's version of the game now (the version to expect next), so that
        # a client need not read it out of the words: the body's `current_version`, gRPC's
        # `current-version` trailing metadata, a Play answer's `current_version`.
        self.current_version = current_version

    @property
    def http_status(self) -> int:
        return KINDS[self.kind][0]

    @property
    def retry_after(self) -> int | None:
        """Whole seconds to wait before a retry (HTTP's Retry-After, a WebSocket refusal's
        `retry_after_s`, gRPC's `retry-after` trailing metadata); None: not said."""
        if self.retry_after_s is None:
            return None
        return max(1, int(self.retry_after_s + 0.999))

    @property
    def retry_after_ms(self) -> int | None:
        """Milliseconds to wait before a retry, not rounded up to whole seconds (a Play
        answer's retry_after_ms: a rate limit's wait is a few milliseconds); None: not said."""
        if self.retry_after_s is None:
            return None
        return max(1, int(self.retry_after_s * 1000 + 0.999))

    @property
    def grpc_status(self) -> grpc.StatusCode:
        return KINDS[self.kind][1]

    def body(self) -> dict:
        error: dict = {"code": self.code, "message": self.message, "kind": self.kind}
        if self.field is not None:
            error["field"] = self.field
        if self.current_version is not None:
            error["current_version"] = self.current_version
        return {"error": error}

    @classmethod
    def from_rejection(cls, rejection: Rejection, field: str | None = None) -> "ApiError":
        kind = rejection.kind
        if kind == "not_owner":
            # The router follows owners itself; one that still says so is passing trouble.
            kind = "unavailable"
        retry_after = BUSY_RETRY_S if rejection.code in BUSY else None
        current = getattr(rejection, "current_version", None)
        if current is None:  # a rules service older than Rejection.current_version: its words
            current = conflict_version(rejection.code, rejection.message)
        return cls(kind, rejection.code, rejection.message, field=field, retry_after_s=retry_after,
                   current_version=current)


# The rules service's words for a version conflict (croupier/engine/table.py: "expected version
# 3, the table is at 5"; croupier/rules/partition.py: "..., the game is at 5"). Its Rejection
# (events.proto) carries the version in `current_version`; a rules service older than that field
# says it only in these words, so the gateway reads it from them then (a rolling upgrade).
_CONFLICT_AT = re.compile(r"\bthe (?:game|table) is at (\d{1,19})\b")


def conflict_version(code: str, message: str) -> int | None:
    """The game's current version a version_conflict names (None: another refusal, or words
    that do not name it)."""
    if code != "version_conflict":
        return None
    found = _CONFLICT_AT.search(message)
    return int(found.group(1)) if found else None


def _sendable(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def bad_request(code: str, message: str, field: str | None = None) -> ApiError:
    return ApiError("malformed", code, message, field=field)


def unauthenticated(message: str = "a valid token is required") -> ApiError:
    return ApiError("unauthenticated", "unauthenticated", message)


def forbidden(code: str, message: str) -> ApiError:
    return ApiError("forbidden", code, message)


def not_found(code: str, message: str) -> ApiError:
    return ApiError("not_found", code, message)


def unavailable(code: str, message: str) -> ApiError:
    return ApiError("unavailable", code, message)


def store_unavailable() -> ApiError:
    """Redis (views, owners, seat holders) did not answer: a retry will do, never a 500."""
    return ApiError("unavailable", "store_unavailable", "the gateway's store did not answer; retry shortly",
                    retry_after_s=1.0)
