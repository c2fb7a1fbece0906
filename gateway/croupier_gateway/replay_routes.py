"""The operator's replay and audit routes (issue 12: Replay and audit) belong here.

`register(router, auth, gw)` is called by app.create_app with the /v1/operator router and
the operator credential's dependency, so every route added here is behind it:

    @router.get("/games/{game_id}/replay", dependencies=auth)   # the game as seat S saw it at step N
    @router.get("/games/{game_id}/audit", dependencies=auth)    # hash chain and shuffle checks
    @router.get("/games/{game_id}/export", dependencies=auth)   # the events as a file
    @router.post("/games/{game_id}/fork", dependencies=auth)    # a new table from step N

They read a game's events back from Kafka (croupier.rules.store.read_partition), never from
the players' side of the gateway. Until then there are none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fastapi import APIRouter


def register(router: APIRouter, auth: Sequence[Any], gw: Callable[[], Any]) -> None:
    return None
