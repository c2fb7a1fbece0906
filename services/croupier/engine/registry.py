"""The registry of games. Each game package exposes `SPEC: GameSpec`."""

from __future__ import annotations

import importlib

from croupier.engine.contract import GameSpec, Rejection

# Game ids, in the order `croupier games` lists them. A game is added here when it lands.
GAME_IDS: tuple[str, ...] = ("expeditions", "virtues", "journey", "delve", "nightfall")

_cache: dict[str, GameSpec] = {}


def get(game_id: str) -> GameSpec:
    if game_id not in GAME_IDS:
        raise Rejection("unknown_game", f"no game {game_id!r}; games are {', '.join(GAME_IDS)}", "not_found")
    spec = _cache.get(game_id)
    if spec is None:
        spec = importlib.import_module(f"croupier.games.{game_id}").SPEC
        if spec.id != game_id:
            raise RuntimeError(f"croupier.games.{game_id} declares id {spec.id!r}")
        _cache[game_id] = spec
    return spec


def all_games() -> list[GameSpec]:
    return [get(game_id) for game_id in GAME_IDS]
