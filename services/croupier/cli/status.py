"""`croupier status`: the whole platform at a glance — owners of each game type's
partitions, projector lag per partition, and the games in Redis."""

from __future__ import annotations

import argparse
import json
import sys
import time


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("status", help="rules owners, projector lag and game counts (from Redis)")
    p.add_argument("--json", action="store_true",
                   help="machine-readable output: redis, kafka, kafka_answers, redis_answers, projector and games "
                        "(per game: partitions, owners, serving, silent_owners, unresolved_owners, table counts, snapshots)")
    p.set_defaults(func=cmd_status)


def collect() -> dict:
    import redis

    from croupier.engine import registry
    from croupier.projector.keys import Keys
    from croupier.projector.service import ProjectorSettings
    from croupier.rules.snapshot import SnapshotStore

    settings = ProjectorSettings.from_env()
    keys = Keys(settings.key_prefix)
    r = redis.Redis.from_url(settings.redis_url, socket_timeout=3)
    out: dict = {"redis": settings.redis_url, "kafka": settings.kafka.bootstrap, "games": {}}
    snapshots = SnapshotStore(r, settings.key_prefix)
    now_ms = int(time.time() * 1000)
    for game in registry.GAME_IDS:
        owners = {int(k): v.decode() for k, v in r.hgetall(keys.owners(game)).items()}
        partitions = int(r.get(keys.partitions(game)) or 0)
        snaps = {}
        for p in range(partitions):
            snap = snapshots.describe(settings.kafka.topic(game), p)
            if snap is not None:
                snap["age_s"] = round(max(0, now_ms - snap["taken_ms"]) / 1000, 1) if snap["taken_ms"] else None
                snaps[str(p)] = snap
        out["games"][game] = {
            "partitions": partitions,
            "owned": len(owners),
            "owners": {str(p): owners[p] for p in sorted(owners)},
            "open_tables": r.zcard(keys.lobby(game)),
            "running": r.zcard(keys.running(game)),
            "finished": r.zcard(keys.finished(game)),
            # Each partition's snapshot (offset, age, size): where its next owner starts reading.
            "snapshots": snaps,
        }
    # The owners' table is what the replicas last wrote: one killed outright (SIGKILL, its
    # node lost) stays named there until another takes its partitions. Each is asked.
    replicas = sorted({a for g in out["games"].values() for a in g["owners"].values()})
    answers = replicas_answer(replicas)
    for g in out["games"].values():
        g["silent_owners"] = sorted({a for a in g["owners"].values() if answers[a] is False})
        # Names this machine cannot resolve (compose's container names, from the host): not asked.
        g["unresolved_owners"] = sorted({a for a in g["owners"].values() if answers[a] is None})
        g["serving"] = sum(1 for a in g["owners"].values() if answers[a])
    lag = {k.decode(): int(v) for k, v in r.hgetall(keys.lag()).items()}
    out["projector"] = {"lag": lag, "total_lag": sum(lag.values()), "reporting": bool(lag)}
    from croupier.stack.kafka import broker_ready

    # What Redis says of the owners may be minutes old; whether the log answers now is asked of it.
    out["kafka_answers"] = broker_ready(settings.kafka.bootstrap, 3.0)
    return out


RULES_HEALTH_TIMEOUT_S = 2.0


def replicas_answer(addresses: list[str], timeout: float = RULES_HEALTH_TIMEOUT_S) -> dict[str, bool | None]:
    """Whether each rules replica (HOST:PORT) answers its gRPC health check SERVING now,
    asked all at once; None for one whose host name does not resolve here (the compose
    services' names, asked from the host), which cannot be told from here."""
    if not addresses:
        return {}
    import socket
    from concurrent.futures import ThreadPoolExecutor

    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    def ask(address: str) -> bool | None:
        host, _, port = address.rpartition(":")
        try:
            socket.getaddrinfo(host.strip("[]"), port or None, type=socket.SOCK_STREAM)
        except socket.gaierror:
            return None
        except (OSError, UnicodeError):
            return False
        try:
            with grpc.insecure_channel(address) as channel:
                reply = health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(service="croupier.v1.RulesService"), timeout=timeout)
            return reply.status == health_pb2.HealthCheckResponse.SERVING
        except Exception:  # noqa: BLE001 - gone, refusing, not a rules replica, not an address
            return False

    with ThreadPoolExecutor(max_workers=min(16, len(addresses))) as pool:
        return dict(zip(addresses, pool.map(ask, addresses)))


def cmd_status(args: argparse.Namespace) -> int:
    import redis

    try:
        out = collect()
    except redis.RedisError as exc:
        message = f"Redis is not reachable ({exc}); is the stack up? (croupier stack status)"
        if args.json:  # still JSON on stdout for a script, and the words on stderr
            print(json.dumps({"redis_answers": False, "error": message}, sort_keys=True))
        print(f"croupier status: {message}", file=sys.stderr)
        return 3
    if args.json:
        print(json.dumps({**out, "redis_answers": True}, indent=2, sort_keys=True))
    else:
        kafka_state = "" if out["kafka_answers"] else " (DOES NOT ANSWER)"
        print(f"kafka {out['kafka']}{kafka_state}   redis {out['redis']}")
        print(f"{'game':<12} {'owned':>9} {'open':>6} {'running':>8} {'finished':>9} {'snapshots':>9}  owners")
        for game, g in out["games"].items():
            owners = [f"{a} (DOES NOT ANSWER)" if a in g["silent_owners"]
                      else f"{a} (not resolved here)" if a in g["unresolved_owners"] else a
                      for a in sorted(set(g["owners"].values()))]
            print(f"{game:<12} {g['owned']:>4}/{g['partitions']:<4} {g['open_tables']:>6} {g['running']:>8} {g['finished']:>9} "
                  f"{len(g['snapshots']):>4}/{g['partitions']:<4}  {', '.join(owners) or '-'}")
        p = out["projector"]
        if p["reporting"]:
            print(f"projector lag: {p['total_lag']} events over {len(p['lag'])} partitions")
        else:
            print("projector: not reporting (not running?)")
    healthy = (all(g["owned"] == g["partitions"] and g["partitions"] and not g["silent_owners"]
                   for g in out["games"].values())
               and out["projector"]["reporting"] and out["kafka_answers"])
    return 0 if healthy else 3
