"""Canonical JSON and the wire form of commands and events.

Canonical JSON: sorted keys, no spaces, UTF-8. Every hash in Croupier is taken over it, so
two processes that hold the same value always produce the same bytes.

Message fields are JSON-native: int, str, bool, None, tuples (lists on the wire) and
str-keyed dicts. Decoding turns every list back into a tuple so that a decoded message
compares equal to the original.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import orjson

_dumps = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
).encode

# orjson writes the same bytes as the encoder above for every JSON-native value (a property
# test holds it to that) at a fraction of the cost. What it will not take (ints beyond 64
# bits, lone surrogates) goes the slow way, which encodes it or raises. One difference: it
# writes NaN and infinity as null where the encoder above refuses them, so messages refuse
# them when they are built (to_plain): no log ever holds one.
_ORJSON = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS


def canonical_bytes(value: Any) -> bytes:
    try:
        return orjson.dumps(value, option=_ORJSON)
    except (TypeError, orjson.JSONEncodeError):
        return _dumps(value).encode("utf-8")


def canonical_json(value: Any) -> str:
    try:
        return orjson.dumps(value, option=_ORJSON).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):
        return _dumps(value)


def loads(data: bytes | str) -> Any:
    """JSON text to plain values (lists, dicts), fast."""
    return orjson.loads(data)


_INF = float("inf")


def to_plain(value: Any) -> Any:
    """A JSON-ready copy: tuples to lists, dataclasses to dicts, keys kept."""
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    if isinstance(value, float):
        if value != value or value in (_INF, -_INF):
            raise ValueError(f"{value} is not JSON")
        return value
    if isinstance(value, (tuple, list)):
        return [to_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    raise TypeError(f"not JSON-native: {type(value).__name__}")


def from_plain(value: Any) -> Any:
    """Lists become tuples, recursively, so decoded messages are hashable-shaped."""
    if isinstance(value, list):
        return tuple(from_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: from_plain(v) for k, v in value.items()}
    return value


class CodecError(ValueError):
    """A payload that does not decode into a known message."""


Upcaster = Callable[[dict[str, Any]], dict[str, Any]]


class MessageCodec:
    """Maps stable wire names to message classes, both ways, with upcasters.

    An upcaster registered for (type, v) lifts a payload of schema version v to v + 1;
    decoding applies them in turn until the class's current VERSION is reached.
    With seat_in_envelope (commands), the `seat` field is not part of the payload: it
    travels in the envelope and is passed back in on decode.
    """

    def __init__(
        self,
        classes: Iterable[type],
        upcasters: Mapping[tuple[str, int], Upcaster] | None = None,
        *,
        seat_in_envelope: bool = False,
    ):
        self._by_type: dict[str, type] = {}
        self._fields: dict[type, tuple[str, ...]] = {}
        # name -> (class, its current VERSION, its payload's field names): decode_payload's
        # look-ups for a payload already at the current version, the usual case.
        self._current: dict[str, tuple[type, int, frozenset[str]]] = {}
        for cls in classes:
            name = cls.TYPE
            if name in self._by_type:
                raise ValueError(f"two messages share the wire name {name!r}")
            self._by_type[name] = cls
            self._fields[cls] = tuple(
                f.name for f in dataclasses.fields(cls) if not (seat_in_envelope and f.name == "seat")
            )
            self._current[name] = (cls, cls.VERSION, frozenset(self._fields[cls]))
        self._upcasters = dict(upcasters or {})

    def __contains__(self, name: str) -> bool:
        return name in self._by_type

    def names(self) -> list[str]:
        return sorted(self._by_type)

    def cls(self, name: str) -> type:
        try:
            return self._by_type[name]
        except KeyError:
            raise CodecError(f"unknown message type {name!r}") from None

    def payload(self, message: Any) -> dict[str, Any]:
        return {name: to_plain(getattr(message, name)) for name in self._fields[type(message)]}

    def encode(self, message: Any) -> dict[str, Any]:
        """The wire form: {"type": ..., **fields} (seat travels in the envelope)."""
        out = self.payload(message)
        out["type"] = message.TYPE
        return out

    def decode_payload(self, name: str, version: int, payload: Mapping[str, Any], **extra: Any) -> Any:
        current = self._current.get(name)
        if current is not None and version == current[1] and current[2].issuperset(payload):
            # Every event of every rebuild, projection and audit comes this way: no copy, no
            # upcasting, and only lists and objects converted (from_plain leaves the rest).
            try:
                return current[0](**{k: from_plain(v) if isinstance(v, (list, dict)) else v
                                     for k, v in payload.items()}, **extra)
            except TypeError as exc:
                raise CodecError(f"{name}: {exc}") from None
        cls = self.cls(name)
        data = dict(payload)
        while version < cls.VERSION:
            try:
                data = self._upcasters[(name, version)](data)
            except KeyError:
                raise CodecError(f"no upcaster for {name} v{version}") from None
            version += 1
        if version > cls.VERSION:
            raise CodecError(f"{name} v{version} is newer than this engine's v{cls.VERSION}")
        names = self._fields[cls]
        unknown = set(data) - set(names)
        if unknown:
            raise CodecError(f"{name}: unknown field(s) {sorted(unknown)}")
        try:
            return cls(**{k: from_plain(v) for k, v in data.items()}, **extra)
        except TypeError as exc:
            raise CodecError(f"{name}: {exc}") from None

    def decode(self, wire: Mapping[str, Any], **extra: Any) -> Any:
        """Decode a wire dict {"type": ..., fields...}; extra fields (seat) are passed in."""
        if not isinstance(wire, Mapping) or not isinstance(wire.get("type"), str):
            raise CodecError("a message needs a string 'type'")
        data = {k: v for k, v in wire.items() if k != "type"}
        try:
            return self.decode_payload(wire["type"], self.cls(wire["type"]).VERSION, data, **extra)
        except RecursionError:
            raise CodecError(f"{wire['type']}: a field is nested too deeply") from None


# --- exact field types, for the actions players send ------------------------------------

_EXACT: dict[Any, Callable[[Any], bool]] = {
    int: lambda v: type(v) is int,  # not True, not 1.0
    bool: lambda v: type(v) is bool,  # not 1, not "no"
    str: lambda v: type(v) is str,
    tuple: lambda v: type(v) is tuple,  # a JSON list, as from_plain makes it
    dict: lambda v: type(v) is dict,
    type(None): lambda v: v is None,
}
_FIELD_CHECKS: dict[type, tuple[tuple[str, str, Callable[[Any], bool]], ...]] = {}


def _check_for(hint: Any) -> Callable[[Any], bool] | None:
    """A test of a value against a field's annotation (int, bool, str, tuple, dict and their
    `| None`); None for an annotation it does not know, which is then not checked here."""
    if hint in _EXACT:
        return _EXACT[hint]
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        parts = [_check_for(a) for a in typing.get_args(hint)]
        if any(p is None for p in parts):
            return None
        return lambda v: any(p(v) for p in parts)
    return None


def _field_hint(cls: type, f: dataclasses.Field) -> Any:
    """A field's annotation as a type (a string under `from __future__ import annotations`,
    read in the class's module); None when it cannot be read, and the field is not checked."""
    if not isinstance(f.type, str):
        return f.type
    module = sys.modules.get(cls.__module__)
    try:
        return eval(f.type, {"__builtins__": __builtins__, **vars(module)} if module else {})  # noqa: S307
    except Exception:
        return None


def field_type_problem(message: Any) -> str | None:
    """Which field of a decoded message has a value of another type than its annotation says
    (None: every field checked is right). JSON has one number type and truthy values, so a
    codec that only builds the dataclass takes 1 for True, "no" for a true flag and 1.0 for
    an index; the rules would then read them loosely, and the log would keep what was sent."""
    cls = type(message)
    checks = _FIELD_CHECKS.get(cls)
    if checks is None:
        found = []
        for f in dataclasses.fields(cls):
            if f.name == "seat":
                continue  # from the envelope (the token), never from the action
            hint = _field_hint(cls, f)
            check = _check_for(hint)
            if check is not None:
                found.append((f.name, str(hint).replace("<class '", "").replace("'>", ""), check))
        checks = _FIELD_CHECKS[cls] = tuple(found)
    for name, expected, check in checks:
        value = getattr(message, name)
        if not check(value):
            return f"{cls.TYPE}.{name} is {expected}, not {type(value).__name__} {value!r}"[:300]
    return None
