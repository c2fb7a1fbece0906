"""Process-wide settings of a long-running service: the garbage collector.

Called once by `croupier serve ...` and by the load generator's worker processes, after
the imports and settings and before the event loop starts.
"""

from __future__ import annotations

import gc

from croupier.config import GcSettings


def tune_gc(settings: GcSettings | None = None) -> GcSettings:
    """Apply the collector's thresholds, and freeze what is alive now (modules, settings,
    the game registry) into the permanent generation, so that no collection walks it again.
    Frozen objects are never collected; only what start-up made is frozen."""
    settings = settings or GcSettings.from_env()
    if settings.freeze:
        gc.collect()
        gc.freeze()
    if settings.threshold == (0, 0, 0):
        gc.disable()
    else:
        gc.enable()
        gc.set_threshold(*settings.threshold)
    return settings
