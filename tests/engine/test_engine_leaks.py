"""The hidden-card check every selfplay step runs: it finds a hidden string wherever it is."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from croupier.engine.selfplay import leaks, leaves

TEXT = st.text(alphabet=st.sampled_from('ab"\\é/c1 \n'), max_size=4)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(TEXT | st.integers(), inner, max_size=4),
    max_leaves=20,
)


@given(JSON, st.frozensets(TEXT, max_size=6))
def test_leaks_finds_exactly_the_hidden_strings_among_keys_and_values(value, hidden):
    assert leaks(value, hidden) == {s for s in leaves(value) if s in hidden}


def test_a_hidden_card_deep_in_a_view_is_found_and_a_visible_one_is_not():
    view = {"seats": [{"hand": ["red-3", "blue-7"]}, {"hand_size": 2}], "log": [("played", "green-2")]}
    assert leaks(view, frozenset({"blue-7", "yellow-9"})) == {"blue-7"}
    assert leaks(view, frozenset()) == set()
