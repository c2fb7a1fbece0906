"""croupier.engine.records: the fast replace must mean exactly what dataclasses.replace means."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from croupier.engine.records import replacer


@dataclasses.dataclass(frozen=True, slots=True)
class Inner:
    a: int = 0
    b: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class Outer:
    n: int
    name: str = "x"
    inner: Inner = Inner()
    other: Inner | None = None


def test_replace_is_dataclasses_replace():
    replace = replacer(Outer)
    before = Outer(n=1, other=Inner(a=2))
    for changes in ({}, {"n": 5}, {"name": "y", "n": 2}, {"inner": Inner(a=9)}, {"other": None, "name": "z"}):
        got = replace(before, **changes)
        assert type(got) is Outer
        assert got == dataclasses.replace(before, **changes)
        assert got is not before
        assert hash(got) == hash(dataclasses.replace(before, **changes))
    assert before == Outer(n=1, other=Inner(a=2))  # the original is untouched


def test_copies_stay_frozen_and_pickle():
    copy = replacer(Outer)(Outer(n=1), n=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        copy.n = 3
    assert pickle.loads(pickle.dumps(copy)) == Outer(n=2)


def test_unknown_fields_are_refused():
    replace = replacer(Outer)
    with pytest.raises(TypeError):
        replace(Outer(n=1), nope=1)


def test_groups_write_through_to_the_inner_record():
    replace = replacer(Outer, {"inner": Inner})
    before = Outer(n=1, inner=Inner(a=1, b=("c",)))
    got = replace(before, a=7, n=2)
    assert got == Outer(n=2, inner=Inner(a=7, b=("c",)))
    assert type(got.inner) is Inner and got.inner.b is before.inner.b
    assert replace(before, name="q").inner is before.inner  # an unchanged record is shared
    with pytest.raises(TypeError):
        replace(before, inner=Inner(), a=1)  # the record and one of its fields at once
