"""Fast copies of frozen, slotted game-state records.

`dataclasses.replace` re-runs `__init__` through keyword arguments and walks the fields'
metadata on every call; evolve copies a state record for every event, so engines use
`replacer(cls)` instead: `replace(record, **changes)` with the same meaning (a new record,
the named fields changed, every other field shared), made by a small function compiled
once per set of changed field names and kept.

A record may hold other records as fields (`groups`, field name -> record class): a change
may then name a field of such an inner record, which is copied with that change, so a
state split into a few records still reads as one flat `replace(state, field=...)`.

`replace.setter("a", "b")` is the compiled copy itself, `set_ab(record, a, b)`: for the few
hottest copies, it spares the keyword arguments and the look-up of the compiled function.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def _slots(cls: type) -> tuple[str, ...]:
    names = cls.__dict__.get("__slots__")
    if not isinstance(names, tuple) or not names:
        raise TypeError(f"{cls.__name__} is not a slotted record")
    return names


def twin(cls: type) -> type:
    """A plain class with the same slots as the frozen record `cls`: a copy is filled in as
    one of these (plain attribute stores, the fastest there are) and then becomes a `cls`
    (the layouts are the same, so CPython allows the change of class)."""
    names = _slots(cls)
    twin = type(f"_Blank{cls.__name__}", (), {"__slots__": names})
    probe = object.__new__(twin)
    probe.__class__ = cls  # raises TypeError now, not at the first event, if the layouts differ
    return twin


def replacer(cls: type, groups: Mapping[str, type] | None = None) -> Callable[..., Any]:
    """replace(record, **changes) for `cls`, a frozen dataclass with slots."""
    names = _slots(cls)
    groups = dict(groups or {})
    owner: dict[str, str | None] = {name: None for name in names}
    for group, inner in groups.items():
        if group not in names:
            raise TypeError(f"{cls.__name__} has no field {group!r}")
        for name in _slots(inner):
            if name in owner:
                raise TypeError(f"{name!r} is a field of both {cls.__name__} and {inner.__name__}")
            owner[name] = group
    scope: dict[str, Any] = {"_new": object.__new__}
    for c in (cls, *groups.values()):
        scope[f"_cls_{c.__name__}"] = c
        scope[f"_blank_{c.__name__}"] = twin(c)

    def compile_for(key: tuple[str, ...]) -> Callable[..., Any]:
        for name in key:
            if name not in owner:
                raise TypeError(f"{cls.__name__} has no field {name!r}")
            if owner[name] in key:
                raise TypeError(f"{name!r} and {owner[name]!r} changed together")
        params = [f"v{i}" for i in range(len(key))]
        value = dict(zip(key, params))
        lines = [f"def replace(o, {', '.join(params)}):", f"    n = _new(_blank_{cls.__name__})"]
        for name in names:
            inner = groups.get(name)
            if inner is not None and any(owner[k] == name for k in key):
                lines.append(f"    g = o.{name}")
                lines.append(f"    r = _new(_blank_{inner.__name__})")
                lines += [f"    r.{field} = {value.get(field, f'g.{field}')}" for field in _slots(inner)]
                lines.append(f"    r.__class__ = _cls_{inner.__name__}")
                lines.append(f"    n.{name} = r")
            else:
                lines.append(f"    n.{name} = {value.get(name, f'o.{name}')}")
        lines.append(f"    n.__class__ = _cls_{cls.__name__}")
        lines.append("    return n")
        local = dict(scope)
        exec("\n".join(lines), local)  # noqa: S102 - generated from the records' own field names
        return local["replace"]

    compiled: dict[tuple[str, ...], Callable[..., Any]] = {}

    def replace(record: Any, /, **changes: Any) -> Any:
        key = tuple(changes)
        fn = compiled.get(key)
        if fn is None:
            fn = compiled[key] = compile_for(key)
        return fn(record, *changes.values())

    def setter(*names: str) -> Callable[..., Any]:
        """fn(record, *values): replace(record, **dict(zip(names, values))), positionally."""
        if len(set(names)) != len(names):
            raise TypeError(f"a field named twice in {names}")
        fn = compiled.get(names)
        if fn is None:
            fn = compiled[names] = compile_for(names)
        return fn

    replace.__doc__ = f"A copy of a {cls.__name__} with the named fields changed."
    replace.setter = setter  # type: ignore[attr-defined]
    return replace


def setstate_with_defaults(record: Any, state: list) -> None:
    """A frozen slotted dataclass's ``__setstate__`` that also reads what an older version
    of it pickled: fields added since (at the end, with defaults) get their defaults rather
    than no value at all. Use it as ``__setstate__ = setstate_with_defaults`` in the class."""
    import dataclasses

    fields = dataclasses.fields(record)
    for f, value in zip(fields, state):
        object.__setattr__(record, f.name, value)
    for f in fields[len(state):]:
        if f.default is dataclasses.MISSING:
            raise TypeError(f"{type(record).__name__}: a pickled state without {f.name}, which has no default")
        object.__setattr__(record, f.name, f.default)

