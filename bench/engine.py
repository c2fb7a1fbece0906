"""bench/engine: per game, on one core, in process.

- commands/s: decide + evolve + the acting seat's legal_actions, over recorded games
- replay events/s: evolve only, over the same games' events
- bytes per live game: tracemalloc growth per table held mid-game

Targets (issue: Engine core): >= 10,000 commands/s and >= 50,000 replayed events/s per game.

    python bench/engine.py [--games N] [--game ID]
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import write  # noqa: E402

from croupier.engine import registry  # noqa: E402
from croupier.engine.contract import Context  # noqa: E402
from croupier.engine.rng import FairRng  # noqa: E402
from croupier.engine.selfplay import SelfplayReport, play_one  # noqa: E402
from croupier.engine.table import TableHost  # noqa: E402

TARGET_COMMANDS = 10_000
TARGET_REPLAY = 50_000


def record_games(spec, games: int):
    """Whole games played by the random bot: the initial game state after setup, then
    (command, events) pairs, all decoded."""
    out = []
    report = SelfplayReport(game=spec.id)
    for i in range(games):
        seats = spec.min_seats + i % (spec.max_seats - spec.min_seats + 1)
        table = play_one(spec, seats=seats, seat_bots=["random"] * seats, options=spec.parse_options({}),
                         seed=99, index=i, report=report, check_all_legal=False, verify=False)
        host = table.host
        envs = table.envelopes
        state = None
        steps = []
        start_state = None
        i_env = 0
        while i_env < len(envs):
            env = envs[i_env]
            n = env.cause["events"] if env.cause else 1
            batch = envs[i_env:i_env + n]
            if start_state is None and state is not None and state.status == "running":
                start_state = state
            if start_state is not None:
                command = host.commands.decode(env.cause["command"], seat=env.cause["seat"])
                events = [host.decode_event(e) for e in batch if e.type in {c.TYPE for c in spec.events}]
                steps.append((state, command, events))
            for e in batch:
                state = host.evolve(state, e)
            i_env += n
        out.append((start_state, steps))
    return out


def bench_game(spec, games: int) -> dict:
    host = TableHost(spec)
    recorded = record_games(spec, games)
    # The recorded games (every state of 60 games) are the benchmark's input, not what an
    # engine holds: keep the collector from walking them again and again during the timed
    # loops (it made the last game measured up to twice as slow as the same game alone).
    gc.collect()
    gc.freeze()
    try:
        return _timed(spec, host, recorded)
    finally:
        gc.unfreeze()


def _timed(spec, host, recorded) -> dict:
    decide, evolve, legal = spec.decide, spec.evolve, spec.legal_actions
    commands = 0
    c0 = time.process_time()
    t0 = time.perf_counter()
    for _start, steps in recorded:
        for table_state, command, _events in steps:
            game = table_state.game
            if command.seat is not None:
                legal(game, command.seat)
            ctx = Context(rng=FairRng(table_state.seed, table_state.entropy, table_state.rng_counter), now=0)
            for event in decide(command, game, ctx):
                game = evolve(game, event)
            commands += 1
    t_cmd = time.perf_counter() - t0
    c_cmd = time.process_time() - c0

    all_events = [(steps[0][0].game if steps else None, [e for _s, _c, evs in steps for e in evs]) for _st, steps in recorded]
    n_events = sum(len(evs) for _g, evs in all_events)
    c0 = time.process_time()
    t0 = time.perf_counter()
    for game, events in all_events:
        for event in events:
            game = evolve(game, event)
    t_replay = time.perf_counter() - t0
    c_replay = time.process_time() - c0

    # Memory: tables held mid-game (as a rules service holds them).
    mids = [steps[len(steps) // 2][0] for _s, steps in recorded if steps]
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    held = []
    for table_state in mids * max(1, 200 // max(1, len(mids))):
        # Rebuild a copy from its events so nothing is shared with the recorded ones.
        held.append(_copy(host, table_state))
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    per_game = (after - before) / max(1, len(held))
    return {
        "games": len(recorded),
        "commands": commands,
        "commands_per_s": round(commands / t_cmd, 1) if t_cmd else None,
        "events": n_events,
        "replay_events_per_s": round(n_events / t_replay, 1) if t_replay else None,
        # Per CPU-second of this process: what one core does, even on a busy machine.
        "commands_per_cpu_s": round(commands / c_cmd, 1) if c_cmd else None,
        "replay_events_per_cpu_s": round(n_events / c_replay, 1) if c_replay else None,
        "bytes_per_live_game": round(per_game),
        "targets": {"commands_per_s": TARGET_COMMANDS, "replay_events_per_s": TARGET_REPLAY},
        "meets_targets": bool(t_cmd and commands / t_cmd >= TARGET_COMMANDS and t_replay and n_events / t_replay >= TARGET_REPLAY),
    }


def _copy(host, state):
    import pickle

    return pickle.loads(pickle.dumps(state))


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--games", type=int, default=60)
    p.add_argument("--game", default=None, choices=list(registry.GAME_IDS),
                   help="one game only: its figures are printed, bench/results/engine.json (every game of one "
                        "run) is left as it is")
    args = p.parse_args(argv)
    ids = [args.game] if args.game else list(registry.GAME_IDS)
    results = {}
    for game_id in ids:
        spec = registry.get(game_id)
        r = bench_game(spec, args.games)
        results[game_id] = r
        print(f"{game_id:<12} {r['commands_per_s']:>10,.0f} commands/s ({r['commands_per_cpu_s']:,.0f}/CPU-s)  "
              f"{r['replay_events_per_s']:>10,.0f} events/s replayed ({r['replay_events_per_cpu_s']:,.0f}/CPU-s)  "
              f"{r['bytes_per_live_game']:>8,} B/live game  ({r['commands']} commands, {r['events']} events)", flush=True)
    if args.game:  # one game's figures are not the file's (every game, one run): printed only
        print(f"--game {args.game}: not written to bench/results/engine.json, which holds every game of one run")
        return 0
    path = write("engine", {"games": results})
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
