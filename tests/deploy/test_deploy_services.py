"""Every service of the code has its Deployment in every overlay, started with the same entry
point as `croupier serve`, with probes on the ports its settings give, a graceful stop, and
(for each game type) its Service, HorizontalPodAutoscaler and KafkaTopic."""

from __future__ import annotations

import re

import code_settings
import pytest
from deploy_objects import OVERLAYS, container, games, pod_spec

GAMES = games()
RULES_HEALTH_SERVICE = "croupier.v1.RulesService"


def parse_serve(args: list[str]):
    """The container's arguments, as the `croupier` command (the image's entry point) reads them."""
    from croupier.cli.main import build_parser

    parsed = build_parser().parse_args(args)
    assert parsed.command == "serve", args
    return parsed


def deployment_for(rendered, service: str, game: str | None = None) -> dict:
    name = f"rules-{game}" if service == "rules" else service
    return rendered.require("Deployment", name)


def int_setting(rendered, obj: dict, name: str, setting: str) -> int:
    value = rendered.env_of(container(obj, name)).get(setting)
    assert value not in (None, ""), f"{obj['metadata']['name']}: {setting} has no literal value"
    return int(value)


def test_the_code_has_the_services_deployed():
    """The services are read from serve.py; this list grows when the code grows."""
    assert {"rules", "projector"} <= set(code_settings.services())
    assert set(code_settings.services()) <= {"rules", "projector", "gateway"}, (
        "a new `croupier serve` service: give it a Deployment in k8s/base and a service in deploy/compose.yaml")


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_service_has_a_deployment_started_by_its_entry_point(rendered, overlay):
    r = rendered[overlay]
    for service in ["rules", "projector", "gateway"]:
        for game in (GAMES if service == "rules" else [None]):
            obj = deployment_for(r, service, game)
            main = container(obj, service)
            if service == "gateway" and code_settings.gateway_pending():
                continue  # its Deployment is there; its entry point lands with its code
            assert "command" not in main, "the image's entry point (croupier) starts every service"
            parsed = parse_serve(main["args"])
            assert parsed.service == service
            if game:
                assert parsed.game == game
            assert main["image"].split("/")[-1].split(":")[0] == "croupier"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_probes_and_graceful_shutdown(rendered, overlay):
    r = rendered[overlay]
    for service in ["rules", "projector", "gateway"]:
        for game in (GAMES if service == "rules" else [None]):
            obj = deployment_for(r, service, game)
            name = obj["metadata"]["name"]
            spec = pod_spec(obj)
            main = container(obj, service)
            for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
                assert probe in main, f"{name}: no {probe}"
            assert 20 <= spec.get("terminationGracePeriodSeconds", 30) <= 60, name
            pre_stop = main["lifecycle"]["preStop"]["exec"]["command"]
            assert pre_stop[0] == "sleep" and 1 <= int(pre_stop[1]) < spec["terminationGracePeriodSeconds"], name
            assert spec["securityContext"]["runAsNonRoot"] is True, name
            assert main["securityContext"]["allowPrivilegeEscalation"] is False, name
            assert main["resources"]["requests"] and main["resources"]["limits"]["memory"], name
            ports = {p["name"]: p["containerPort"] for p in main.get("ports", [])}
            if service == "rules":
                grpc_port = int_setting(r, obj, service, "CROUPIER_RULES_PORT")
                assert ports["grpc"] == grpc_port, name
                assert ports["metrics"] == int_setting(r, obj, service, "CROUPIER_RULES_METRICS_PORT"), name
                for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
                    assert main[probe]["grpc"]["port"] == grpc_port, f"{name} {probe}"
                assert main["readinessProbe"]["grpc"]["service"] == RULES_HEALTH_SERVICE
                assert r.env_of(main)["CROUPIER_RULES_HOST"] == "0.0.0.0"
            elif service == "projector":
                metrics_port = int_setting(r, obj, service, "CROUPIER_PROJECTOR_METRICS_PORT")
                for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
                    assert main[probe]["exec"]["command"] == [
                        "croupier-probe", "http", f"http://127.0.0.1:{metrics_port}/metrics"], f"{name} {probe}"
            else:
                http_port = int_setting(r, obj, service, "CROUPIER_GATEWAY_PORT")
                grpc_port = int_setting(r, obj, service, "CROUPIER_GATEWAY_GRPC_PORT")
                metrics_port = int_setting(r, obj, service, "CROUPIER_GATEWAY_METRICS_PORT")
                assert ports == {"http": http_port, "grpc": grpc_port, "metrics": metrics_port}
                # Prometheus scrapes the port of its own, which no Ingress routes to (the
                # HTTP port, which they do route, then has no /metrics).
                annotations = obj["spec"]["template"]["metadata"]["annotations"]
                assert annotations["prometheus.io/port"] == str(metrics_port), name
                for ingress in r.of_kind("Ingress"):
                    for rule in ingress["spec"]["rules"]:
                        for path in rule["http"]["paths"]:
                            assert path["backend"]["service"]["port"]["name"] in ("http", "grpc"), ingress["metadata"]["name"]
                assert main["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
                assert main["livenessProbe"]["grpc"]["port"] == grpc_port
                assert r.env_of(main)["CROUPIER_GATEWAY_HOST"] == "0.0.0.0"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_game_has_deployment_service_autoscaler_and_topic(rendered, overlay):
    r = rendered[overlay]
    kafka = r.of_kind("Kafka")
    assert len(kafka) == 1
    cluster = kafka[0]["metadata"]["name"]
    shared = r.config("croupier-config")
    prefix = shared["CROUPIER_TOPIC_PREFIX"]
    assert shared["CROUPIER_KAFKA_BOOTSTRAP"] == f"{cluster}-kafka-bootstrap:{kafka[0]['spec']['kafka']['listeners'][0]['port']}"
    topics = {t["spec"]["topicName"]: t for t in r.of_kind("KafkaTopic")}
    assert set(topics) == {f"{prefix}croupier.events.{g}" for g in GAMES}, "one topic per game, no other"
    for game in GAMES:
        name = f"rules-{game}"
        deployment = r.require("Deployment", name)
        pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert pod_labels["croupier.io/game"] == game

        service = r.require("Service", name)
        assert service["spec"]["selector"].items() <= pod_labels.items()
        grpc_port = int_setting(r, deployment, "rules", "CROUPIER_RULES_PORT")
        assert {p["name"]: p["port"] for p in service["spec"]["ports"]}["grpc"] == grpc_port

        topic = topics[f"{prefix}croupier.events.{game}"]
        assert topic["metadata"]["labels"]["strimzi.io/cluster"] == cluster
        assert topic["spec"]["config"]["retention.ms"] == -1, "the log is the truth: unlimited retention"
        assert topic["spec"]["config"]["retention.bytes"] == -1
        partitions = topic["spec"]["partitions"]
        assert int_setting(r, deployment, "rules", "CROUPIER_PARTITIONS") == partitions, (
            f"{name}: CROUPIER_PARTITIONS must be its topic's partitions")

        hpas = [h for h in r.of_kind("HorizontalPodAutoscaler") if h["spec"]["scaleTargetRef"]["name"] == name]
        assert len(hpas) == 1, f"{name}: one HorizontalPodAutoscaler"
        hpa = hpas[0]["spec"]
        assert hpa["scaleTargetRef"]["kind"] == "Deployment"
        assert 1 <= hpa["minReplicas"] <= hpa["maxReplicas"] <= partitions, (
            f"{name}: replicas beyond the {partitions} partitions would own nothing")
        assert "replicas" not in deployment["spec"], f"{name}: the autoscaler owns the replica count"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_rules_replicas_advertise_their_pod_address(rendered, overlay):
    r = rendered[overlay]
    for game in GAMES:
        deployment = r.require("Deployment", f"rules-{game}")
        main = container(deployment, "rules")
        env = main["env"]
        names = [e["name"] for e in env]
        pod_ip = env[names.index("POD_IP")]
        assert pod_ip["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
        advertise = env[names.index("CROUPIER_RULES_ADVERTISE")]["value"]
        port = int_setting(r, deployment, "rules", "CROUPIER_RULES_PORT")
        assert advertise == f"$(POD_IP):{port}"
        assert names.index("POD_IP") < names.index("CROUPIER_RULES_ADVERTISE"), "$(POD_IP) must be defined first"
        init = {c["name"]: c for c in pod_spec(deployment)["initContainers"]}["wait-for-topic"]
        assert init["command"] == ["croupier-probe"] and init["args"][:3] == ["topics", "--game", game]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_references_resolve(rendered, overlay):
    """Services select pods, autoscalers and Ingresses name what exists, env sources exist."""
    r = rendered[overlay]
    workloads = r.of_kind("Deployment") + r.of_kind("StatefulSet")
    for service in r.of_kind("Service"):
        selector = service["spec"]["selector"]
        matched = [w for w in workloads if selector.items() <= w["spec"]["template"]["metadata"]["labels"].items()]
        assert len(matched) == 1, f"Service {service['metadata']['name']} selects {len(matched)} workloads"
        named = {p["name"] for c in pod_spec(matched[0])["containers"] for p in c.get("ports", [])}
        for port in service["spec"]["ports"]:
            assert port["targetPort"] in named, f"Service {service['metadata']['name']}: no container port {port['targetPort']}"
    for hpa in r.of_kind("HorizontalPodAutoscaler"):
        r.require(hpa["spec"]["scaleTargetRef"]["kind"], hpa["spec"]["scaleTargetRef"]["name"])
    for ingress in r.of_kind("Ingress"):
        for rule in ingress["spec"]["rules"]:
            for path in rule["http"]["paths"]:
                backend = path["backend"]["service"]
                service = r.require("Service", backend["name"])
                assert backend["port"]["name"] in {p["name"] for p in service["spec"]["ports"]}
    for workload in workloads:
        spec = pod_spec(workload)
        if spec.get("serviceAccountName"):
            r.require("ServiceAccount", spec["serviceAccountName"])
        for c in spec["containers"] + spec.get("initContainers", []):
            for source in c.get("envFrom", []):
                if "configMapRef" in source:
                    r.require("ConfigMap", source["configMapRef"]["name"])
            for item in c.get("env", []):
                ref = item.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    keys = r.secret_keys(ref["name"])
                    assert keys is not None, f"{workload['metadata']['name']}: no Secret {ref['name']}"
                    assert ref["key"] in keys, f"Secret {ref['name']} has no key {ref['key']}"


def test_dev_runs_one_of_each(rendered):
    dev = rendered["dev"]
    for deployment in dev.of_kind("Deployment") + dev.of_kind("StatefulSet"):
        assert deployment["spec"].get("replicas", 1) == 1, deployment["metadata"]["name"]
    for hpa in dev.of_kind("HorizontalPodAutoscaler"):
        assert hpa["spec"]["minReplicas"] == hpa["spec"]["maxReplicas"] == 1
    assert [p["spec"]["replicas"] for p in dev.of_kind("KafkaNodePool")] == [1]


def test_prod_scales_and_survives_disruption(rendered):
    prod = rendered["prod"]
    hpas = {h["spec"]["scaleTargetRef"]["name"]: h["spec"] for h in prod.of_kind("HorizontalPodAutoscaler")}
    pdbs = prod.of_kind("PodDisruptionBudget")
    for deployment in prod.of_kind("Deployment"):
        name = deployment["metadata"]["name"]
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        replicas = hpas[name]["minReplicas"] if name in hpas else deployment["spec"].get("replicas", 1)
        assert replicas >= 2, f"{name}: at least two replicas in prod"
        covering = [p for p in pdbs if p["spec"]["selector"]["matchLabels"].items() <= labels.items()]
        assert len(covering) == 1, f"{name}: one PodDisruptionBudget"
        assert covering[0]["spec"].get("maxUnavailable") == 1
        anti = pod_spec(deployment)["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
        assert any(t["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
                   and t["podAffinityTerm"]["labelSelector"]["matchLabels"].items() <= labels.items() for t in anti), name
        for c in pod_spec(deployment)["containers"]:
            assert c["resources"]["requests"]["cpu"] and c["resources"]["limits"]["memory"], name
    for name in [f"rules-{g}" for g in GAMES] + ["gateway"]:
        assert name in hpas, f"{name}: autoscaled in prod"
    pools = prod.of_kind("KafkaNodePool")
    assert sum(p["spec"]["replicas"] for p in pools if "broker" in p["spec"]["roles"]) >= 3
    config = prod.of_kind("Kafka")[0]["spec"]["kafka"]["config"]
    for topic in prod.of_kind("KafkaTopic"):
        assert topic["spec"]["replicas"] == 3
        assert topic["spec"]["config"]["min.insync.replicas"] == 2
    assert config["transaction.state.log.replication.factor"] == 3
    assert config["min.insync.replicas"] == 2
    assert prod.config("croupier-config")["CROUPIER_REPLICATION_FACTOR"] == "3"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_images_are_pinned(rendered, overlay):
    for workload in rendered[overlay].of_kind("Deployment") + rendered[overlay].of_kind("StatefulSet"):
        for c in pod_spec(workload)["containers"] + pod_spec(workload).get("initContainers", []):
            assert re.search(r":[\w.-]+$|@sha256:", c["image"]) and not c["image"].endswith(":latest"), c["image"]
