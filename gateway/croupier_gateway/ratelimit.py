"""Per-caller token buckets: `rate` requests a second on average, up to `burst` at once.

The caller is its seat token's join id when it has one, else the operator, else its address.
Buckets live in this process (each gateway replica limits on its own) and the least recently
used are forgotten past `max_keys`, so memory stays bounded whatever the callers send.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable


class RateLimiter:
    def __init__(self, rate_per_s: float, burst: int, *, max_keys: int = 100_000,
                 clock: Callable[[], float] = time.monotonic):
        if rate_per_s <= 0 or burst < 1:
            raise ValueError("rate and burst must be positive")
        self.rate = float(rate_per_s)
        self.burst = float(burst)
        self.max_keys = max_keys
        self._clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key -> (tokens, at)

    def take(self, key: str, cost: float = 1.0) -> float:
        """0.0 if allowed (and charged), else the seconds until it would be."""
        now = self._clock()
        tokens, at = self._buckets.pop(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - at) * self.rate)
        if tokens >= cost:
            self._buckets[key] = (tokens - cost, now)
            wait = 0.0
        else:
            self._buckets[key] = (tokens, now)
            wait = (cost - tokens) / self.rate
        while len(self._buckets) > self.max_keys:
            self._buckets.popitem(last=False)
        return wait

    def __len__(self) -> int:
        return len(self._buckets)
