"""Prometheus metrics of the rules service."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class RulesMetrics:
    def __init__(self, game: str):
        self.registry = CollectorRegistry()
        labels = {"game_type": game}
        self.commands = Counter("croupier_rules_commands", "Commands handled", ["game_type", "rpc", "outcome"], registry=self.registry)
        self.rejections = Counter("croupier_rules_rejections", "Commands rejected, by code", ["game_type", "code"], registry=self.registry)
        self.latency = Histogram("croupier_rules_command_seconds", "Time from receipt to answer", ["game_type", "rpc"],
                                 buckets=LATENCY_BUCKETS, registry=self.registry)
        self.append_latency = Histogram("croupier_rules_append_seconds", "Kafka transaction time per batch",
                                        buckets=LATENCY_BUCKETS, registry=self.registry)
        self.owned_games = Gauge("croupier_rules_owned_games", "Games held in memory", registry=self.registry)
        self.retired_games = Gauge("croupier_rules_retired_games",
                                   "Finished games retired from memory (their version and last results kept)",
                                   registry=self.registry)
        self.snapshots = Counter("croupier_rules_snapshots",
                                 "Partition snapshots: saved, superseded (a later one was stored), failed; "
                                 "and at a rebuild used or ignored (did not match the log or the code)",
                                 ["outcome"], registry=self.registry)
        self.forgotten_games = Gauge("croupier_rules_forgotten_games",
                                     "Finished games forgotten (only their ids kept, in a Bloom filter)",
                                     registry=self.registry)
        self.owned_partitions = Gauge("croupier_rules_owned_partitions", "Partitions owned", registry=self.registry)
        self._game = labels["game_type"]

    def serve(self, port: int, host: str = "127.0.0.1") -> None:
        start_http_server(port, addr=host, registry=self.registry)
