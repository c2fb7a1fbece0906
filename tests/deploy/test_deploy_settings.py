"""No setting the code reads is missing from the deployment, and the deployment sets none the
code does not read. The settings are found in the sources (code_settings.py): CROUPIER_*
names, and the names of Env(...) calls of services/croupier/config.py."""

from __future__ import annotations

import re

import code_settings
import pytest
from deploy_objects import OVERLAYS, ROOT, compose_env, container, games

# Settings the code reads that a deployment leaves out on purpose (docs/operations.md lists
# them too). Anything else the code reads must be set for each service that reads it.
NOT_DEPLOYED = {
    # The local stack's ports: they only build the defaults of CROUPIER_KAFKA_BOOTSTRAP and
    # CROUPIER_REDIS_URL, which a deployment sets.
    "CROUPIER_KAFKA_PORT": "local stack",
    "CROUPIER_REDIS_PORT": "local stack",
    # `croupier stack` (the local Kafka and Redis processes) alone reads these.
    "CROUPIER_KAFKA_CONTROLLER_PORT": "local stack",
    "CROUPIER_STATE_DIR": "local stack",
    "CROUPIER_KAFKA_DIR": "local stack",
    "CROUPIER_STACK_HOST": "local stack",
    "CROUPIER_KAFKA_HEAP": "local stack",
    "CROUPIER_KAFKA_JVM_OPTS": "local stack",
    "CROUPIER_JAVA": "local stack",
    "CROUPIER_REDIS_SERVER": "local stack",
    "CROUPIER_REDIS_PERSIST": "local stack",
    "CROUPIER_STACK_START_TIMEOUT": "local stack",
    "CROUPIER_STACK_STOP_TIMEOUT": "local stack",
    # Clients (croupier play, the bots, the load tester): where they find the gateway.
    "CROUPIER_GATEWAY_URL": "client",
}
# The test fixtures' own settings (tests/conftest.py).
NOT_DEPLOYED_PATTERN = re.compile(r"^CROUPIER_TEST_")

# A setting named after a service is that service's alone. The scan works module by module,
# and some modules hold several services' settings (croupier/rules/settings.py has the rules
# service's next to KafkaSettings, which every service uses): without this rule the projector
# would "need" CROUPIER_RULES_PORT.
OWNED_PREFIXES = {"CROUPIER_RULES_": "rules", "CROUPIER_PROJECTOR_": "projector", "CROUPIER_GATEWAY_": "gateway"}

GAMES = games()


def not_deployed(name: str) -> bool:
    return name in NOT_DEPLOYED or bool(NOT_DEPLOYED_PATTERN.match(name))


def owner(name: str) -> str | None:
    return next((service for prefix, service in OWNED_PREFIXES.items() if name.startswith(prefix)), None)


def needed_by(service: str) -> set[str]:
    return {name for name in code_settings.settings_read_by(service)
            if not not_deployed(name) and owner(name) in (None, service)}


def k8s_containers(r, service: str) -> list[tuple[str, dict]]:
    if service == "rules":
        return [(f"rules-{g}", r.require("Deployment", f"rules-{g}")) for g in GAMES]
    return [(service, r.require("Deployment", service))]


def compose_services(compose: dict, service: str) -> list[tuple[str, dict]]:
    names = [f"rules-{g}" for g in GAMES] if service == "rules" else [service]
    for name in names:
        assert name in compose["services"], f"compose: no service {name}"
    return [(name, compose["services"][name]) for name in names]


def test_the_scan_finds_the_settings():
    """The scanner sees both ways the code names a setting."""
    found = code_settings.all_settings()
    assert "CROUPIER_RULES_ADVERTISE" in found  # a literal (services/croupier/rules/settings.py)
    assert "CROUPIER_LOG_LEVEL" in found  # an Env(...) call (services/croupier/config.py)
    assert "CROUPIER_STACK_STOP_TIMEOUT" in found
    assert {"CROUPIER_RULES_PORT", "CROUPIER_KAFKA_BOOTSTRAP", "CROUPIER_LOG_LEVEL"} <= code_settings.settings_read_by("rules")
    assert "CROUPIER_PROJECTOR_METRICS_PORT" in code_settings.settings_read_by("projector")
    assert "CROUPIER_PROJECTOR_METRICS_PORT" not in code_settings.settings_read_by("rules")


def test_every_setting_is_deployed_or_listed_as_not_deployed():
    """A new setting in the code must be given to the services that read it (k8s/, compose),
    or be named in NOT_DEPLOYED with the reason."""
    deployed = set().union(*(needed_by(s) for s in code_settings.services()))
    unclassified = {name: [str(p.relative_to(ROOT)) for p in paths] for name, paths in code_settings.all_settings().items()
                    if name not in deployed and not not_deployed(name)}
    assert not unclassified, f"settings no service reads and NOT_DEPLOYED does not list: {unclassified}"


def test_not_deployed_names_are_still_in_the_code():
    gone = set(NOT_DEPLOYED) - set(code_settings.all_settings())
    if code_settings.gateway_pending():
        gone -= {"CROUPIER_GATEWAY_URL"}  # read by the gateway's clients, which land with it
    assert not gone, f"NOT_DEPLOYED names settings the code reads no more: {gone}"


@pytest.mark.parametrize("service", code_settings.services())
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_k8s_sets_every_setting_its_service_reads(rendered, overlay, service):
    r = rendered[overlay]
    for name, deployment in k8s_containers(r, service):
        missing = needed_by(service) - set(r.env_of(container(deployment, service)))
        assert not missing, f"overlay {overlay}, Deployment {name}: settings the code reads are not set: {sorted(missing)}"


@pytest.mark.parametrize("service", code_settings.services())
def test_compose_sets_every_setting_its_service_reads(compose, service):
    for name, spec in compose_services(compose, service):
        missing = needed_by(service) - set(compose_env(spec))
        assert not missing, f"compose service {name}: settings the code reads are not set: {sorted(missing)}"


def _set_in_k8s(r) -> dict[str, str]:
    found = {}
    for cm in r.of_kind("ConfigMap"):
        found.update(dict.fromkeys(cm.get("data") or {}, f"ConfigMap {cm['metadata']['name']}"))
    for secret in r.of_kind("Secret"):
        keys = set(secret.get("data") or {}) | set(secret.get("stringData") or {})
        found.update(dict.fromkeys(keys, f"Secret {secret['metadata']['name']}"))
    for workload in r.of_kind("Deployment") + r.of_kind("StatefulSet"):
        spec = workload["spec"]["template"]["spec"]
        for c in spec["containers"] + spec.get("initContainers", []):
            found.update(dict.fromkeys((e["name"] for e in c.get("env", [])), f"{workload['kind']} {workload['metadata']['name']}"))
    return {k: v for k, v in found.items() if k.startswith("CROUPIER_")}


def read_by_code(gateway_settings: set[str]) -> set[str]:
    """Every setting the code reads; while the gateway's code is not in this tree, the
    gateway's own settings (as the deployment gives them) count as read."""
    read = set(code_settings.all_settings())
    return read | gateway_settings if code_settings.gateway_pending() else read


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_k8s_sets_no_setting_the_code_does_not_read(rendered, overlay):
    r = rendered[overlay]
    gateway = set(r.config("croupier-gateway-config")) | {e["name"] for e in container(r.require("Deployment", "gateway"), "gateway")["env"]}
    read = read_by_code(gateway)
    unknown = {k: v for k, v in _set_in_k8s(rendered[overlay]).items() if k not in read}
    assert not unknown, f"overlay {overlay} sets settings no code reads (a typo?): {unknown}"


def test_compose_sets_no_setting_the_code_does_not_read(compose):
    read = read_by_code(set(compose_env(compose["services"]["gateway"])))
    unknown = {(service, k) for service, spec in compose["services"].items()
               for k in compose_env(spec) if k.startswith("CROUPIER_") and k not in read}
    assert not unknown, f"compose sets settings no code reads (a typo?): {sorted(unknown)}"


def test_prod_secret_contract_lists_the_keys_the_gateway_reads(rendered):
    """The keys live in a Secret, not in a ConfigMap, in every overlay."""
    secret_names = {"CROUPIER_GATEWAY_SIGNING_KEY", "CROUPIER_GATEWAY_PREVIOUS_SIGNING_KEY", "CROUPIER_OPERATOR_TOKEN"}
    for overlay in OVERLAYS:
        r = rendered[overlay]
        for cm in r.of_kind("ConfigMap"):
            assert not secret_names & set(cm.get("data") or {}), f"{overlay}: a key in ConfigMap {cm['metadata']['name']}"
        gateway = container(r.require("Deployment", "gateway"), "gateway")
        refs = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in gateway["env"] if "secretKeyRef" in e.get("valueFrom", {})}
        assert set(refs) == secret_names
        for name, ref in refs.items():
            assert ref["key"] in (r.secret_keys(ref["name"]) or set()), f"{overlay}: {name}"
