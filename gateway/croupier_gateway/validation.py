"""Checks of client input, shared by every face of the gateway: a failure is a 400 that names
the field at fault, raised before any rules service sees the request."""

from __future__ import annotations

import re
import secrets
from typing import Any

from croupier_gateway.errors import bad_request, unauthenticated

GAME_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
COMMAND_ID_MAX = 100
# The shortest command_id a join takes. A join's command_id is its secret retry key: the same
# join sent again (same player and bot, both public) gets the seat and a new token, the seat's
# hidden cards with it. Our clients send 32 random hex digits; an id such as "join-1" or a
# counter is refused rather than left for anyone to guess (docs/gateway.md).
JOIN_COMMAND_ID_MIN = 16
MAX_SEATS = 64
MAX_OPTIONS = 32
MAX_LIST = 200
# The deepest page of a listing. A page reads offset + limit ids of every game type listed and
# their tables, so a deep page was a cheap way to make the gateway read a hundred thousand.
MAX_OFFSET = 1_000
STATUSES = ("open", "running", "over")
MAX_WAIT_S = 30.0
# The longest action (its canonical JSON, in characters) a rules service takes
# (croupier.rules.service.MAX_ACTION_JSON, which a test holds this to): a longer one is refused
# here, naming the action, and never reaches a rules service.
MAX_ACTION_CHARS = 16 * 1024
# The longest well-formed action the gateway remembers as checked (core.CHECKED_ACTIONS of
# them): a move is a few dozen characters; a seat sending big well-formed ones (a card name
# of 16 KB, refused by the rules as no card) must not fill the gateway's memory.
MAX_REMEMBERED_ACTION = 512
NEW_GAME_WAIT_S = 10.0


def check_game_id(game_id: Any, field: str = "game_id") -> str:
    # fullmatch: match() lets "$" match before a final newline, so "id\n" passed for an id.
    if not isinstance(game_id, str) or not GAME_ID_RE.fullmatch(game_id):
        raise bad_request("invalid_game_id", "a game id is 1..128 letters, digits and . _ : -", field)
    return game_id


def check_command_id(command_id: Any, field: str = "command_id", *, required: bool = True) -> str:
    if command_id is None or command_id == "":
        if required:
            raise bad_request("missing_command_id", "command_id is required (a retry sends the same one)", field)
        return secrets.token_hex(12)
    if not isinstance(command_id, str) or len(command_id) > COMMAND_ID_MAX or not command_id.isprintable():
        raise bad_request("invalid_command_id", f"command_id is 1..{COMMAND_ID_MAX} printable characters", field)
    return command_id


def check_join_command_id(command_id: Any, field: str = "command_id") -> str:
    """A join's command_id (None or "": one made here, secret, which a 503 names for the
    retry): at least JOIN_COMMAND_ID_MIN characters, since whoever repeats it gets the seat."""
    cid = check_command_id(command_id, field, required=False)
    if command_id not in (None, "") and len(cid) < JOIN_COMMAND_ID_MIN:
        raise bad_request("command_id_too_short",
                          f"a join's command_id is its secret retry key (whoever sends it again gets the seat): at "
                          f"least {JOIN_COMMAND_ID_MIN} characters, random (a UUID); or send none", field)
    return cid


def check_seat(seat: Any, field: str = "seat") -> int:
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < MAX_SEATS:
        raise bad_request("invalid_seat", f"a seat is a number from 0 to {MAX_SEATS - 1}", field)
    return seat


def check_text(value: Any, field: str, limit: int) -> str:
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > limit or not value.isprintable():
        raise bad_request(f"invalid_{field}", f"{field} is a printable string of at most {limit} characters", field)
    return value


def is_unicode(text: str) -> bool:
    """Whether `text` is Unicode that UTF-8 can carry: JSON's escapes can name a lone
    surrogate ("\\ud800"), which Python's parser takes, and which then fails whatever encodes
    it (a protobuf field, a JSON answer, Redis) as an exception rather than a 400."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_unicode(text: str, code: str, field: str) -> str:
    if not is_unicode(text):
        raise bad_request(code, f"{field} holds text that is not Unicode (a lone surrogate such as \\ud800)", field)
    return text


# The integers the rules service's JSON parser (orjson) reads back as integers: past them it
# reads a float (or infinity), which is not the action the gateway checked.
JSON_INT_MIN, JSON_INT_MAX = -(2**63), 2**64 - 1


def wide_int(value: Any) -> bool:
    """Whether plain JSON `value` holds an integer outside JSON_INT_MIN..JSON_INT_MAX."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return not JSON_INT_MIN <= value <= JSON_INT_MAX
    if isinstance(value, dict):
        return any(wide_int(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(wide_int(v) for v in value)
    return False


def option_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# Schemes of an Authorization header that are not ours and are left alone (a proxy's).
FOREIGN_AUTH_SCHEMES = ("basic",)


def bearer_token(header: str | None) -> str | None:
    """The token of an Authorization header (HTTP, WebSocket, gRPC metadata): `Bearer <token>`
    (the scheme in any case); None without one, or with a proxy's Basic credentials. Any
    other form (the bare token, another scheme, Bearer without a token) is a 401: taken for
    no token, as before, it served a seat's client a spectator's view without a word."""
    if header is None:
        return None
    header = header.strip()
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    if scheme.lower() in FOREIGN_AUTH_SCHEMES:
        return None
    raise unauthenticated("the Authorization header is `Bearer <token>`")
