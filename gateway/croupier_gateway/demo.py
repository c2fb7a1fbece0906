"""`croupier demo` (what `make run` starts after the stack): a rules replica of every game,
the projector and the gateway, then demo tables of every game played by bots through the
gateway, at a pace a person can follow. It prints where to watch them; a finished table is
replaced by a new one. Ctrl-C stops all of it.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import sys
from pathlib import Path

from croupier.config import StackSettings
from croupier.engine import registry
from croupier_gateway.bots import create_and_seat, default_bot, play_seat
from croupier_gateway.client import HttpGateway
from croupier_gateway.launcher import Launcher


def _print(*parts) -> None:
    print(*parts, flush=True)


def _shut_down_undisturbed() -> None:
    """From here on a further SIGINT or SIGTERM is ignored, so that the shutdown finishes:
    one `kill` of `make run` delivers SIGTERM twice (to the process group, then again from
    make, which passes it on to its children), and the second used to arrive after the
    event loop had put the default handlers back, killing the demo while it was stopping
    the services, which then ran on with no parent. (launcher.stop kills any service that
    has not exited within its timeout, so the shutdown is bounded.)"""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)


async def table_loop(client: HttpGateway, game: str, url: str, pace_s: float, stop: asyncio.Event) -> None:
    spec = registry.get(game)
    seats = min(spec.max_seats, max(spec.min_seats, 2))
    while not stop.is_set():
        bot = default_bot(game)
        try:
            game_id, tokens = await create_and_seat(client, game, [bot] * seats)
        except Exception as exc:  # the gateway or a replica is not there (yet): try again
            _print(f"  {game}: could not create a table ({exc}); retrying")
            await asyncio.sleep(2)
            continue
        _print(f"  {game:<12} {url}/web/table.html?game={game_id}")
        players = [play_seat(client, game_id, s, t, bot, pace_s=pace_s) for s, t in enumerate(tokens)]
        try:
            await asyncio.gather(*players)
        except Exception as exc:
            _print(f"  {game}: table {game_id} stopped: {exc}")
            await asyncio.sleep(1)
            continue
        final = (await client.view(game_id))["view"]
        _print(f"  {game:<12} {game_id} over: {final.get('result')}")
        await asyncio.sleep(3)


async def run_demo(launcher: Launcher, games: list[str], tables_per_game: int, pace_s: float,
                   operator_token: str) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    url = launcher.http_url
    _print(f"\nCroupier is up. The gateway: {url} (API docs {url}/docs, OpenAPI {url}/openapi.json), "
           f"gRPC {launcher.grpc_address}")
    _print(f"Operator token: {operator_token}   (curl -H 'Authorization: Bearer {operator_token}' "
           f"{url}/v1/operator/health)")
    _print(f"The web client (lobby, tables, replay): {url}/   "
           f"(or in the terminal: croupier play --gateway {url} --game {games[0]})")
    metrics = ", ".join(f"{name.removeprefix('rules-')} :{port}" for name, port in launcher.metrics_ports.items())
    _print(f"Prometheus metrics: the gateway {url}/metrics; the rules replicas on 127.0.0.1 ({metrics})")
    _print(f"Service logs: {launcher.log_dir}\n")
    _print("Demo tables, played by bots (open a link to watch; finished tables are replaced):")
    client = HttpGateway(url)
    tasks = [asyncio.create_task(table_loop(client, g, url, pace_s, stop)) for g in games for _ in range(tables_per_game)]
    await stop.wait()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.remove_signal_handler(sig)  # else closing the loop puts the default handlers back
    _shut_down_undisturbed()
    _print("\nstopping...")
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await client.close()


_SETTING = {"kafka": "CROUPIER_KAFKA_PORT", "redis": "CROUPIER_REDIS_PORT"}


def stack_missing(stack_settings: StackSettings) -> str | None:
    """What of the local stack does not answer (its address, and the setting that makes it),
    or None when both do: the probes `croupier stack status` uses. Asked before any service
    starts: without it the services would each wait out their connect timeout and the demo
    would end 30 s later with the same news."""
    from croupier import stack

    for node in stack.nodes(stack_settings):
        if not node.probe():
            return f"{node.name.capitalize()} at {node.endpoint} ({_SETTING[node.name]})"
    return None


def main(*, tables_per_game: int = 1, pace_s: float = 0.4, stop_stack: bool = False) -> int:
    """Raises ConfigError for a setting that cannot be used, before anything starts."""
    from croupier.rules.settings import env_port

    if tables_per_game < 1 or not 0 <= pace_s < float("inf"):  # croupier.cli.demo refuses them as flags
        raise ValueError(f"tables_per_game must be at least 1 and pace_s finite and at least 0, not "
                         f"{tables_per_game} and {pace_s}")
    stack_settings = StackSettings.from_env()
    # The gateway's ports (0: any free one, which the launcher picks and the links name).
    http_port = env_port("CROUPIER_GATEWAY_PORT", 18080)
    grpc_port = env_port("CROUPIER_GATEWAY_GRPC_PORT", 18081)
    missing = stack_missing(stack_settings)
    if missing is not None:
        from croupier.cli.main import EXIT_UNAVAILABLE

        print(f"croupier demo: {missing} does not answer. Is the local stack up? `croupier stack up` "
              "starts it (`make run` starts it and then the demo).", file=sys.stderr)
        return EXIT_UNAVAILABLE
    operator_token = os.environ.get("CROUPIER_OPERATOR_TOKEN") or secrets.token_urlsafe(16)
    env = {
        "CROUPIER_KAFKA_BOOTSTRAP": stack_settings.kafka_bootstrap,
        "CROUPIER_REDIS_URL": stack_settings.redis_url,
        "CROUPIER_OPERATOR_TOKEN": operator_token,
    }
    log_dir = Path(stack_settings.state_dir).resolve() / "logs" / "services"
    games = list(registry.GAME_IDS)
    launcher = Launcher(env, log_dir, http_port=http_port, grpc_port=grpc_port)
    _print(f"starting {len(games)} rules service(s) ({', '.join(games)}), the projector and the gateway...")
    launcher.start(games)
    try:
        launcher.wait_ready(180)
        asyncio.run(run_demo(launcher, games, tables_per_game, pace_s, operator_token))
    except KeyboardInterrupt:
        pass
    except (TimeoutError, RuntimeError) as exc:
        print(f"croupier demo: {exc}", file=sys.stderr)
        return 1
    finally:
        _shut_down_undisturbed()
        launcher.stop()
        _print("services stopped")
        if stop_stack:
            from croupier import stack

            stack.down(stack_settings)
            _print("stack stopped")
    return 0
