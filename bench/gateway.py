"""Moves through the gateway: tables played by random bots over gRPC or HTTP+WebSocket.

    python bench/gateway.py [--tables 8] [--seconds 20] [--transport grpc|http|both]

Starts a rules replica of the game, the projector and the gateway against the running stack
(croupier stack up), then plays `--tables` tables at once for `--seconds`. Reports moves/s,
the submit latency (answer after the events are committed, without waiting for the views)
and the move-to-view latency (from submitting a move until the seat's stream shows it).
Results: bench/results/gateway.json.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import cleanup_prefix, write  # noqa: E402

from croupier.runtime import run as run_loop  # noqa: E402
from croupier_gateway.bots import create_and_seat  # noqa: E402
from croupier_gateway.client import GatewayError, GrpcGateway, HttpGateway  # noqa: E402
from croupier_gateway.launcher import Launcher  # noqa: E402


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))] * 1000, 2)


async def seat_loop(client, game_id, token, stop_at, submit_ms, view_ms, moves):
    rng = random.Random()
    sent_at = None
    try:
        async for update in client.updates(game_id, token, 0):
            if sent_at is not None:
                view_ms.append(time.perf_counter() - sent_at)
                sent_at = None
            if update.over or time.monotonic() > stop_at:
                return
            if update.actions:
                action = rng.choice(update.actions)
                t0 = time.perf_counter()
                try:
                    await client.submit(game_id, token, uuid.uuid4().hex, action, expected_version=update.version,
                                        wait=False)
                except GatewayError as exc:
                    if exc.status != 409:
                        raise
                    continue
                submit_ms.append(time.perf_counter() - t0)
                sent_at = t0
                moves.append(1)
    except ConnectionError:
        return


async def run(client, game: str, tables: int, seconds: float) -> dict:
    submit, view, moves = [], [], []
    seated = await asyncio.gather(*[create_and_seat(client, game, ["random", "random"]) for _ in range(tables)])
    stop_at = time.monotonic() + seconds
    started = time.perf_counter()
    await asyncio.gather(*[seat_loop(client, gid, tok, stop_at, submit, view, moves)
                           for gid, tokens in seated for tok in tokens])
    elapsed = time.perf_counter() - started
    return {"tables": tables, "seconds": round(elapsed, 1), "moves": len(moves),
            "moves_per_s": round(len(moves) / elapsed, 1),
            "submit_p50_ms": pct(submit, 0.5), "submit_p99_ms": pct(submit, 0.99),
            "move_to_view_p50_ms": pct(view, 0.5), "move_to_view_p99_ms": pct(view, 0.99),
            "submit_mean_ms": round(statistics.mean(submit) * 1000, 2) if submit else 0}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tables", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--game", default="expeditions")
    parser.add_argument("--transport", default="both", choices=["grpc", "http", "both"])
    args = parser.parse_args(argv)
    from croupier.config import StackSettings

    stack = StackSettings.from_env()
    prefix = f"bench{uuid.uuid4().hex[:6]}."
    launcher = Launcher({"CROUPIER_KAFKA_BOOTSTRAP": stack.kafka_bootstrap, "CROUPIER_REDIS_URL": stack.redis_url,
                         "CROUPIER_TOPIC_PREFIX": prefix, "CROUPIER_KEY_PREFIX": prefix,
                         "CROUPIER_RATE_LIMIT_PER_S": "100000", "CROUPIER_RATE_LIMIT_BURST": "100000",
                         "CROUPIER_LOG_LEVEL": "warning"},
                        Path(stack.state_dir).resolve() / "logs" / "bench-gateway")
    launcher.start([args.game])
    results = {}
    try:
        launcher.wait_ready(120)
        for transport in (["grpc", "http"] if args.transport == "both" else [args.transport]):
            target = launcher.grpc_address if transport == "grpc" else launcher.http_url
            results[transport] = run_loop(_bench(transport, target, args.game, args.tables, args.seconds))
            print(transport, results[transport], flush=True)
    finally:
        launcher.stop()
        cleanup_prefix(stack.kafka_bootstrap, stack.redis_url, prefix, [args.game])
    path = write("gateway", {"game": args.game, "results": results})
    print(f"wrote {path}")
    return 0


async def _bench(transport: str, target: str, game: str, tables: int, seconds: float) -> dict:
    client = GrpcGateway(target) if transport == "grpc" else HttpGateway(target)
    try:
        return await run(client, game, tables, seconds)
    finally:
        await client.close()


if __name__ == "__main__":
    sys.exit(main())
