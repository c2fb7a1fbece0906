"""Prometheus metrics of the gateway (served at /metrics)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


class GatewayMetrics:
    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        self.requests = Counter("croupier_gateway_requests", "HTTP requests, by route and status",
                                ["method", "route", "status"], registry=r)
        self.latency = Histogram("croupier_gateway_request_seconds", "HTTP request time, by route",
                                 ["method", "route"], buckets=BUCKETS, registry=r)
        self.grpc = Counter("croupier_gateway_grpc_requests", "gRPC requests, by method and code",
                            ["method", "code"], registry=r)
        self.grpc_latency = Histogram("croupier_gateway_grpc_seconds", "gRPC request time, by method",
                                      ["method"], buckets=BUCKETS, registry=r)
        self.rules_calls = Counter("croupier_gateway_rules_calls", "Calls to rules services, by outcome",
                                   ["method", "outcome"], registry=r)
        self.streams = Gauge("croupier_gateway_streams", "Open update streams (WebSocket and gRPC)", registry=r)
        self.stream_messages = Counter("croupier_gateway_stream_messages", "Updates sent on streams", registry=r)
        self.rate_limited = Counter("croupier_gateway_rate_limited", "Requests refused by the rate limit", registry=r)
