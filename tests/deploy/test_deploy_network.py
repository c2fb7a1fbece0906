"""The network policies admit to Redis, the rules services and Kafka exactly the pods that
call them, and the selectors and ports they name match the rendered pods (a relabelled
Deployment would otherwise be cut off, or let through, without anyone noticing)."""

from __future__ import annotations

import pytest
from deploy_objects import OVERLAYS, pod_spec

WORKLOADS = ("Deployment", "StatefulSet")


def matches(selector: dict, labels: dict) -> bool:
    assert set(selector) <= {"matchLabels"}, f"only matchLabels is checked here: {selector}"
    return all(labels.get(k) == v for k, v in selector.get("matchLabels", {}).items())


def pods(rendered) -> list[tuple[dict, dict]]:
    """(workload, its pod template's labels) for every workload of the overlay."""
    return [(o, o["spec"]["template"]["metadata"]["labels"]) for kind in WORKLOADS for o in rendered.of_kind(kind)]


def selected(rendered, selector: dict) -> set[str]:
    return {o["metadata"]["name"] for o, labels in pods(rendered) if matches(selector, labels)}


def admitted(rendered, peers: list[dict]) -> set[str]:
    names: set[str] = set()
    for peer in peers:
        if "namespaceSelector" in peer:
            continue  # another namespace (the ingress controller's): not this overlay's pods
        assert set(peer) == {"podSelector"}, f"a peer by address: {peer}"
        if peer["podSelector"] == {}:
            names |= {o["metadata"]["name"] for o, _ in pods(rendered)}
            continue
        found = selected(rendered, peer["podSelector"])
        assert found, f"the peer {peer} matches no pod"
        names |= found
    return names


def clients_of(rendered, setting: str) -> set[str]:
    """Workloads with a container (init containers too) that is given ``setting``."""
    out = set()
    for obj, _ in pods(rendered):
        spec = pod_spec(obj)
        for c in spec.get("initContainers", []) + spec["containers"]:
            if rendered.env_of(c).get(setting):
                out.add(obj["metadata"]["name"])
    return out


def port_names(obj: dict) -> set[str]:
    return {p["name"] for c in pod_spec(obj)["containers"] for p in c.get("ports", []) if "name" in p}


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_policy_selects_pods_and_names_their_ports(rendered, overlay):
    r = rendered[overlay]
    policies = r.of_kind("NetworkPolicy")
    assert {p["metadata"]["name"] for p in policies} >= {"rules", "redis", "projector", "gateway"}
    workloads = {o["metadata"]["name"]: o for o, _ in pods(r)}
    for policy in policies:
        targets = selected(r, policy["spec"]["podSelector"])
        assert targets, f"NetworkPolicy {policy['metadata']['name']} selects no pod"
        assert policy["spec"]["policyTypes"] == ["Ingress"]
        for rule in policy["spec"].get("ingress", []):
            admitted(r, rule.get("from", []))
            for port in rule.get("ports", []):
                for name in targets:
                    assert port["port"] in port_names(workloads[name]), (
                        f"{policy['metadata']['name']}: {name} has no port {port['port']}")


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_redis_admits_exactly_the_pods_that_use_it(rendered, overlay):
    r = rendered[overlay]
    policy = r.require("NetworkPolicy", "redis")
    assert selected(r, policy["spec"]["podSelector"]) == {"redis"}
    (rule,) = policy["spec"]["ingress"]
    users = clients_of(r, "CROUPIER_REDIS_URL")
    assert users and "redis" not in users
    assert admitted(r, rule["from"]) == users
    assert rule["ports"] == [{"port": "redis"}]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_kafka_admits_exactly_the_pods_that_use_it(rendered, overlay):
    r = rendered[overlay]
    (listener,) = r.require("Kafka", "croupier")["spec"]["kafka"]["listeners"]
    users = clients_of(r, "CROUPIER_KAFKA_BOOTSTRAP")
    assert {"projector", "gateway"} <= users
    assert admitted(r, listener["networkPolicyPeers"]) == users


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_rules_services_take_commands_from_the_gateway_and_the_operators_pod_only(rendered, overlay):
    r = rendered[overlay]
    policy = r.require("NetworkPolicy", "rules")
    rules = {o["metadata"]["name"] for o in r.of_kind("Deployment") if o["metadata"]["name"].startswith("rules-")}
    assert rules and selected(r, policy["spec"]["podSelector"]) == rules
    by_port = {port["port"]: rule for rule in policy["spec"]["ingress"] for port in rule["ports"]}
    assert set(by_port) == {"grpc", "metrics"}
    assert admitted(r, by_port["grpc"]["from"]) == {"gateway", "projector"}
    assert "from" not in by_port["metrics"], "Prometheus scrapes from wherever it runs"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_projector_takes_no_connection(rendered, overlay):
    r = rendered[overlay]
    policy = r.require("NetworkPolicy", "projector")
    assert selected(r, policy["spec"]["podSelector"]) == {"projector"}
    assert policy["spec"]["ingress"] == []


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_gateway_takes_players_from_the_ingress_controller_only_as_it_believes_its_forwarded_for(
        rendered, overlay):
    """The gateway believes X-Forwarded-For from any peer ("*"): safe only while nothing outside
    the namespace but the ingress controller reaches it."""
    r = rendered[overlay]
    gateway = r.require("Deployment", "gateway")
    from deploy_objects import container

    assert r.env_of(container(gateway, "gateway"))["CROUPIER_GATEWAY_FORWARDED_ALLOW_IPS"] == "*"
    policy = r.require("NetworkPolicy", "gateway")
    assert selected(r, policy["spec"]["podSelector"]) == {"gateway"}
    players, scrape = policy["spec"]["ingress"]
    # Prometheus may scrape the metrics port from wherever it runs, and nothing else there.
    assert scrape == {"ports": [{"port": "metrics"}]}
    rule = players
    outside = [p for p in rule["from"] if "namespaceSelector" in p]
    assert outside == [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}}}]
    assert all(set(p) == {"podSelector"} for p in rule["from"] if p not in outside)  # this namespace's pods
    assert {p["port"] for p in rule["ports"]} == {"http", "grpc"}

