"""The deployment's files as the tests see them: rendered overlays, the compose file, games."""

from __future__ import annotations

from pathlib import Path

import kustomize_lite

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
K8S = ROOT / "k8s"
OVERLAYS = sorted(p.name for p in (K8S / "overlays").iterdir() if (p / "kustomization.yaml").is_file())
COMPOSE_FILE = ROOT / "deploy" / "compose.yaml"
# The five game types of the design; the registry may not list them all yet, and each must
# be deployable all the same.
KNOWN_GAMES = ("expeditions", "virtues", "journey", "delve", "nightfall")
# Secrets an overlay expects to exist (created outside git), and the file listing their keys.
EXTERNAL_SECRETS = {"prod": {"croupier-gateway-secrets": K8S / "overlays" / "prod" / "secrets.env.example"}}


def games() -> list[str]:
    from croupier.engine import registry

    return sorted(set(registry.GAME_IDS) | set(KNOWN_GAMES))


class Rendered:
    """One overlay's objects, with the look-ups the tests need."""

    def __init__(self, name: str, objects: list[dict]):
        self.name = name
        self.objects = objects

    def of_kind(self, kind: str) -> list[dict]:
        return [o for o in self.objects if o["kind"] == kind]

    def get(self, kind: str, name: str) -> dict | None:
        return next((o for o in self.objects if o["kind"] == kind and o["metadata"]["name"] == name), None)

    def require(self, kind: str, name: str) -> dict:
        obj = self.get(kind, name)
        assert obj is not None, f"overlay {self.name}: no {kind} {name}"
        return obj

    def config(self, name: str) -> dict[str, str]:
        return self.require("ConfigMap", name).get("data") or {}

    def secret_keys(self, name: str) -> set[str] | None:
        secret = self.get("Secret", name)
        if secret is not None:
            return set(secret.get("data") or {}) | set(secret.get("stringData") or {})
        listed = EXTERNAL_SECRETS.get(self.name, {}).get(name)
        if listed is None:
            return None
        return {line.split("=", 1)[0].strip() for line in listed.read_text().splitlines()
                if "=" in line and not line.lstrip().startswith("#")}

    def env_of(self, container: dict) -> dict[str, str | None]:
        """Every variable a container gets: envFrom ConfigMaps (values) and Secrets (None),
        then env (a value, or None for valueFrom); later entries win, as in Kubernetes."""
        env: dict[str, str | None] = {}
        for source in container.get("envFrom", []):
            if "configMapRef" in source:
                env.update(self.config(source["configMapRef"]["name"]))
            elif "secretRef" in source:
                keys = self.secret_keys(source["secretRef"]["name"])
                assert keys is not None, f"overlay {self.name}: no Secret {source['secretRef']['name']}"
                env.update(dict.fromkeys(keys))
        for item in container.get("env", []):
            env[item["name"]] = item.get("value") if "valueFrom" not in item else None
        return env


def pod_spec(obj: dict) -> dict:
    return obj["spec"]["template"]["spec"]


def container(obj: dict, name: str) -> dict:
    found = [c for c in pod_spec(obj)["containers"] if c["name"] == name]
    assert found, f"{obj['kind']} {obj['metadata']['name']} has no container {name}"
    return found[0]


def compose_env(service: dict) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return {k: ("" if v is None else str(v)) for k, v in env.items()}


def render_all() -> dict[str, Rendered]:
    return {name: Rendered(name, kustomize_lite.build(K8S / "overlays" / name)) for name in OVERLAYS}


def load_compose() -> dict:
    return kustomize_lite.load(COMPOSE_FILE.read_text())
