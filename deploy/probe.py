#!/usr/bin/env python3
"""Health probes and start-up waits for Croupier's containers.

The image installs this file as ``croupier-probe``; compose health checks and the Kubernetes
exec probes and init containers call it:

    croupier-probe grpc 127.0.0.1:50051 --service croupier.v1.RulesService
    croupier-probe http http://127.0.0.1:9100/metrics
    croupier-probe topics --game expeditions --wait 300     # or --all (every registered game)

Exit status 0 means healthy (or: every topic exists), 1 means not, 2 a usage error. The
topic wait reads the same settings as the services (CROUPIER_KAFKA_BOOTSTRAP,
CROUPIER_TOPIC_PREFIX), so it waits for exactly the topics the services will use. It exists
so that a rules service or the projector never creates a game's topic itself (with
CROUPIER_PARTITIONS) before the operator has created it with the partitions it declares.
"""

from __future__ import annotations

import argparse
import sys
import time
import urllib.error
import urllib.request


def probe_grpc(address: str, service: str, timeout: float) -> bool:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(address) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=timeout
            )
        except grpc.RpcError as exc:
            print(f"grpc {address} {service or '(server)'}: {exc.code().name}", file=sys.stderr)
            return False
    if reply.status != health_pb2.HealthCheckResponse.SERVING:
        print(f"grpc {address} {service or '(server)'}: {health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)}",
              file=sys.stderr)
        return False
    return True


def probe_http(url: str, timeout: float) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as reply:  # noqa: S310 (a probe of our own port)
            return 200 <= reply.status < 300
    except (urllib.error.URLError, OSError) as exc:
        print(f"http {url}: {exc}", file=sys.stderr)
        return False


def wanted_topics(games: list[str], all_games: bool) -> list[str]:
    from croupier.engine import registry
    from croupier.rules.settings import KafkaSettings

    kafka = KafkaSettings.from_env()
    ids = list(registry.GAME_IDS) if all_games else games
    return [kafka.topic(game) for game in ids]


def wait_topics(topics: list[str], wait_s: float, bootstrap: str | None = None) -> bool:
    from kafka import KafkaConsumer
    from kafka.errors import KafkaError

    from croupier.rules.settings import KafkaSettings

    bootstrap = bootstrap or KafkaSettings.from_env().bootstrap
    deadline = time.monotonic() + wait_s
    missing = set(topics)
    while True:
        try:
            budget_ms = int(1000 * min(10.0, max(1.0, deadline - time.monotonic())))
            consumer = KafkaConsumer(bootstrap_servers=bootstrap, client_id="croupier-probe",
                                     request_timeout_ms=10_000, bootstrap_timeout_ms=budget_ms)
            try:
                missing = set(topics) - set(consumer.topics())
            finally:
                consumer.close()
        except (KafkaError, OSError, ValueError) as exc:
            print(f"kafka {bootstrap}: {type(exc).__name__}: {exc}", file=sys.stderr)
        if not missing:
            print(f"topics ready: {', '.join(sorted(topics))}")
            return True
        if time.monotonic() >= deadline:
            print(f"topics still missing after {wait_s:g} s: {', '.join(sorted(missing))}", file=sys.stderr)
            return False
        print(f"waiting for topics: {', '.join(sorted(missing))}", file=sys.stderr)
        time.sleep(min(2.0, max(0.0, deadline - time.monotonic())))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="croupier-probe", description=__doc__.split("\n\n")[0])
    kinds = parser.add_subparsers(dest="kind", metavar="KIND")
    kinds.required = True
    g = kinds.add_parser("grpc", help="grpc.health.v1 Check: exit 0 when SERVING")
    g.add_argument("address", help="host:port")
    g.add_argument("--service", default="", help="the service name to check ('' = the server)")
    g.add_argument("--timeout", type=float, default=3.0)
    h = kinds.add_parser("http", help="GET: exit 0 on a 2xx answer")
    h.add_argument("url")
    h.add_argument("--timeout", type=float, default=3.0)
    t = kinds.add_parser("topics", help="wait until the games' event topics exist")
    which = t.add_mutually_exclusive_group(required=True)
    which.add_argument("--game", action="append", default=[], help="a game id (repeatable)")
    which.add_argument("--all", action="store_true", help="every game of the registry")
    t.add_argument("--wait", type=float, default=300.0, metavar="S", help="give up after S seconds")
    t.add_argument("--bootstrap", default=None, help="default: CROUPIER_KAFKA_BOOTSTRAP")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.kind == "grpc":
        return 0 if probe_grpc(args.address, args.service, args.timeout) else 1
    if args.kind == "http":
        return 0 if probe_http(args.url, args.timeout) else 1
    return 0 if wait_topics(wanted_topics(args.game, args.all), args.wait, args.bootstrap) else 1


if __name__ == "__main__":
    sys.exit(main())
