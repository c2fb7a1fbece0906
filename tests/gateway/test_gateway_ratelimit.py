"""Token buckets: a burst, then the rate; memory bounded."""

from __future__ import annotations

from croupier_gateway.ratelimit import RateLimiter


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_burst_then_refused_then_refilled():
    clock = Clock()
    limiter = RateLimiter(2.0, 3, clock=clock)
    assert [limiter.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = limiter.take("a")
    assert 0.49 < wait <= 0.5
    assert limiter.take("b") == 0.0  # buckets are per caller
    clock.t += 0.5
    assert limiter.take("a") == 0.0
    assert limiter.take("a") > 0


def test_refill_is_capped_at_burst():
    clock = Clock()
    limiter = RateLimiter(10.0, 2, clock=clock)
    clock.t += 1000
    assert [limiter.take("a") == 0.0 for _ in range(3)] == [True, True, False]


def test_forgets_least_recently_used_past_max_keys():
    limiter = RateLimiter(1.0, 1, max_keys=10, clock=Clock())
    for i in range(100):
        limiter.take(f"k{i}")
    assert len(limiter) == 10
