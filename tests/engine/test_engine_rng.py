"""Fair randomness: outcomes derive from the committed seed, entropy and counter only."""

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from croupier.engine.rng import FairRng, ReplayRng, commitment, rederive, verify_draws

SEED = "ab" * 32


def test_same_seed_entropy_counter_give_the_same_outcomes():
    a, b = FairRng(SEED, "e", 0), FairRng(SEED, "e", 0)
    assert a.shuffle(list(range(52))) == b.shuffle(list(range(52)))
    assert a.randint(1, 6) == b.randint(1, 6)
    assert a.draws == b.draws


def test_entropy_changes_the_outcome():
    deck = list(range(52))
    assert FairRng(SEED, "alice", 0).shuffle(deck) != FairRng(SEED, "bob", 0).shuffle(deck)


def test_each_draw_advances_the_counter_and_is_recorded():
    rng = FairRng(SEED, "", 5)
    rng.shuffle([1, 2, 3])
    rng.below(10)
    rng.randint(1, 6)
    assert [d["n"] for d in rng.draws] == [5, 6, 7]
    assert rng.counter == 8
    assert [d["op"] for d in rng.draws] == ["shuffle", "below", "randint"]


def test_recorded_draws_verify_and_a_forged_one_is_named():
    rng = FairRng(SEED, "x", 0)
    rng.shuffle(list(range(20)))
    rng.randint(1, 6)
    assert list(verify_draws(SEED, "x", rng.draws)) == []
    forged = [dict(d) for d in rng.draws]
    forged[0]["out"] = list(reversed(forged[0]["out"]))
    problems = list(verify_draws(SEED, "x", forged))
    assert problems and "draw 0" in problems[0]


def test_a_wrong_seed_does_not_verify():
    rng = FairRng(SEED, "", 0)
    rng.shuffle(list(range(10)))
    assert list(verify_draws("cd" * 32, "", rng.draws))


def test_commitment_is_sha256_of_the_seed_bytes():
    import hashlib

    assert commitment(SEED) == hashlib.sha256(bytes.fromhex(SEED)).hexdigest()


@settings(max_examples=50, deadline=None)
@given(n=st.integers(1, 500), counter=st.integers(0, 10_000))
def test_below_is_in_range_and_rederives(n, counter):
    rng = FairRng(SEED, "h", counter)
    value = rng.below(n)
    assert 0 <= value < n
    assert rederive(SEED, "h", rng.draws[0]) == value


@settings(max_examples=30, deadline=None)
@given(size=st.integers(0, 60), counter=st.integers(0, 1000))
def test_shuffle_is_a_permutation(size, counter):
    items = list(range(size))
    assert sorted(FairRng(SEED, "", counter).shuffle(items)) == items


def test_outcomes_are_roughly_uniform():
    rng = FairRng(SEED, "", 0)
    counts = Counter(rng.randint(1, 6) for _ in range(6000))
    assert set(counts) == {1, 2, 3, 4, 5, 6}
    assert all(800 < c < 1200 for c in counts.values()), counts


def test_replay_rng_hands_back_recorded_outcomes():
    rng = FairRng(SEED, "", 0)
    deck = rng.shuffle(list("abcdef"))
    roll = rng.randint(1, 6)
    replay = ReplayRng(rng.draws)
    assert replay.shuffle(list("abcdef")) == deck
    assert replay.randint(1, 6) == roll
