"""The load test's latency histogram: percentiles within a bucket's width of the exact ones,
and merging histograms the same as recording everything in one."""

from __future__ import annotations

import random

from croupier_gateway.loadtest import Histogram


def exact(values, q):
    ordered = sorted(values)
    return ordered[max(0, -(-int(q * 10**6) * len(ordered) // 10**6) - 1)]


def test_percentiles_are_within_a_bucket_of_exact():
    rng = random.Random(7)
    values = [rng.lognormvariate(-4.5, 1.2) for _ in range(20_000)]  # seconds: ~1 ms to ~1 s
    h = Histogram()
    for v in values:
        h.record(v)
    for q in (0.5, 0.95, 0.99):
        want = exact(values, q) * 1e6
        assert abs(h.percentile_us(q) - want) / want < 0.012, q
    assert h.max_us == max(values) * 1e6
    assert h.count == len(values)
    s = h.summary()
    assert s["p50_ms"] <= s["p95_ms"] <= s["p99_ms"] <= s["max_ms"]


def test_merged_equals_one_and_survives_the_wire():
    rng = random.Random(3)
    parts = [[rng.expovariate(100) for _ in range(1000)] for _ in range(3)]
    whole = Histogram()
    merged = Histogram()
    for part in parts:
        h = Histogram()
        for v in part:
            h.record(v)
            whole.record(v)
        merged.merge(Histogram.from_wire(h.to_wire()))
    assert merged.buckets == whole.buckets
    assert merged.summary() == whole.summary()


def test_empty_histogram_summary_is_zero():
    h = Histogram()
    assert h.summary()["count"] == 0 and h.percentile_us(0.99) == 0.0
    assert Histogram.from_wire(h.to_wire()).merge(h).count == 0
