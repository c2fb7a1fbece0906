"""A small renderer for the subset of kustomize that k8s/ uses, so the tests need no binary.

Supported, and nothing else (any other field of a kustomization is an error, so the subset
cannot grow by accident):

- ``resources``: YAML files (many documents each) and directories holding a kustomization;
- ``namespace``: set on every namespaced object;
- ``images``: ``name`` -> ``newName`` / ``newTag`` / ``digest`` on the containers and init
  containers of pod templates;
- ``patches``: ``path`` or inline ``patch``, with an optional ``target`` (``kind``, ``name``,
  ``namespace``, ``group``, ``version``, ``labelSelector`` of ``k=v`` terms). Built-in kinds
  are patched as strategic merge (lists with a merge key merge by it: patch items first, in
  the patch's order, then the rest, as kustomize does); other kinds (the Strimzi resources)
  as JSON merge patch (RFC 7386: lists are replaced).

Where the kustomize binary exists (``kubectl kustomize`` or ``kustomize build``), a test
compares this renderer's output with it.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import yaml

KUSTOMIZATION_KEYS = {"apiVersion", "kind", "resources", "namespace", "images", "patches"}
PATCH_KEYS = {"path", "patch", "target"}
TARGET_KEYS = {"kind", "name", "namespace", "group", "version", "labelSelector"}

CLUSTER_SCOPED = {
    "Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "PersistentVolume",
    "StorageClass", "PriorityClass", "IngressClass", "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
}

# apiVersion groups whose kinds kustomize knows (strategic merge); others get JSON merge patch.
BUILTIN_GROUPS = {"", "apps", "batch", "autoscaling", "policy", "networking.k8s.io", "rbac.authorization.k8s.io"}

POD_TEMPLATE_KINDS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}


# libyaml when PyYAML has it: five times quicker on these files.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_all(text: str) -> list:
    return [doc for doc in yaml.load_all(text, Loader=_LOADER) if doc]


def load(text: str):
    return yaml.load(text, Loader=_LOADER)


class KustomizeError(ValueError):
    pass


def _group_version(api_version: str) -> tuple[str, str]:
    if "/" in api_version:
        group, version = api_version.split("/", 1)
        return group, version
    return "", api_version


def _merge_key(path: tuple[str, ...], field: str) -> str | None:
    """The patchMergeKey of a list field of the built-in kinds k8s/ patches."""
    if field in ("containers", "initContainers", "env", "volumes", "imagePullSecrets"):
        return "name"
    if field == "volumeMounts":
        return "mountPath"
    if field == "ports":
        return "containerPort" if ("containers" in path or "initContainers" in path) else "port"
    if field == "topologySpreadConstraints":
        return "topologyKey"
    return None


def strategic_merge(original: Any, patch: Any, path: tuple[str, ...] = ()) -> Any:
    if not isinstance(patch, dict) or not isinstance(original, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(original)
    for key, value in patch.items():
        if key.startswith("$"):
            raise KustomizeError(f"strategic-merge directive {key} at {'.'.join(path)} is outside the supported subset")
        if value is None:
            out.pop(key, None)
        elif isinstance(value, list) and isinstance(out.get(key), list) and _merge_key(path, key):
            out[key] = _merge_list(out[key], value, _merge_key(path, key), path + (key,))
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = strategic_merge(out[key], value, path + (key,))
        else:
            out[key] = copy.deepcopy(value)
    return out


def _merge_list(original: list, patch: list, key: str, path: tuple[str, ...]) -> list:
    by_key = {item.get(key): item for item in original if isinstance(item, dict)}
    seen = set()
    merged = []
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            raise KustomizeError(f"list {'.'.join(path)}: patch item without its merge key {key!r}")
        seen.add(item[key])
        base = by_key.get(item[key])
        merged.append(strategic_merge(base, item, path) if base is not None else copy.deepcopy(item))
    merged += [copy.deepcopy(item) for item in original if not (isinstance(item, dict) and item.get(key) in seen)]
    return merged


def json_merge_patch(original: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(original) if isinstance(original, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = json_merge_patch(out.get(key), value)
    return out


def _load_documents(path: Path) -> list[dict]:
    docs = load_all(path.read_text())
    for doc in docs:
        if not isinstance(doc, dict) or not {"apiVersion", "kind", "metadata"} <= doc.keys():
            raise KustomizeError(f"{path}: every document needs apiVersion, kind and metadata")
    return docs


def object_id(obj: dict) -> tuple[str, str, str]:
    meta = obj.get("metadata", {})
    return obj["kind"], meta.get("namespace", ""), meta["name"]


def _selector_matches(selector: str, labels: dict) -> bool:
    for term in filter(None, (t.strip() for t in selector.split(","))):
        match = re.fullmatch(r"([^=!]+)(==|=|!=)(.*)", term)
        if not match:
            raise KustomizeError(f"labelSelector term {term!r} is outside the supported subset (k=v, k!=v)")
        name, op, value = match.group(1).strip(), match.group(2), match.group(3).strip()
        if (labels.get(name) == value) != (op != "!="):
            return False
    return True


def _target_matches(target: dict, obj: dict) -> bool:
    unknown = set(target) - TARGET_KEYS
    if unknown:
        raise KustomizeError(f"patch target fields {sorted(unknown)} are outside the supported subset")
    group, version = _group_version(obj["apiVersion"])
    meta = obj["metadata"]
    if "kind" in target and target["kind"] != obj["kind"]:
        return False
    if "group" in target and target["group"] != group:
        return False
    if "version" in target and target["version"] != version:
        return False
    if "name" in target and not re.fullmatch(target["name"], meta["name"]):
        return False
    if "namespace" in target and target["namespace"] != meta.get("namespace", ""):
        return False
    if "labelSelector" in target and not _selector_matches(target["labelSelector"], meta.get("labels") or {}):
        return False
    return True


def _apply_patch(obj: dict, patch: dict, *, with_target: bool) -> dict:
    patch = copy.deepcopy(patch)
    if with_target:  # kustomize applies a targeted patch whatever name the patch carries
        patch.get("metadata", {}).pop("name", None)
        patch.get("metadata", {}).pop("namespace", None)
    group, _ = _group_version(obj["apiVersion"])
    if group in BUILTIN_GROUPS:
        return strategic_merge(obj, patch)
    return json_merge_patch(obj, patch)


def _set_image(image: str, rules: list[dict]) -> str:
    name = re.split(r"@", image, maxsplit=1)[0]
    tagless = re.sub(r":[^:/]+$", "", name)
    for rule in rules:
        if rule["name"] != tagless:
            continue
        new = rule.get("newName", tagless)
        if "digest" in rule:
            return f"{new}@{rule['digest']}"
        if "newTag" in rule:
            return f"{new}:{rule['newTag']}"
        tag = name[len(tagless):]
        return new + tag
    return image


def _pod_spec(obj: dict) -> dict | None:
    if obj["kind"] in POD_TEMPLATE_KINDS:
        return obj.get("spec", {}).get("template", {}).get("spec")
    if obj["kind"] == "Pod":
        return obj.get("spec")
    return None


def build(directory: str | Path) -> list[dict]:
    """The objects that `kustomize build DIRECTORY` prints (in resource order)."""
    directory = Path(directory)
    kfile = directory / "kustomization.yaml"
    if not kfile.is_file():
        raise KustomizeError(f"{directory} has no kustomization.yaml")
    k = load(kfile.read_text()) or {}
    unknown = set(k) - KUSTOMIZATION_KEYS
    if unknown:
        raise KustomizeError(f"{kfile}: fields {sorted(unknown)} are outside the supported subset")

    objects: list[dict] = []
    for entry in k.get("resources", []):
        path = (directory / entry).resolve()
        objects += build(path) if path.is_dir() else _load_documents(path)
    ids = [object_id(o) for o in objects]
    duplicates = {i for i in ids if ids.count(i) > 1}
    if duplicates:
        raise KustomizeError(f"{directory}: objects defined twice: {sorted(duplicates)}")

    for spec in k.get("patches", []):
        unknown = set(spec) - PATCH_KEYS
        if unknown or ("path" in spec) == ("patch" in spec):
            raise KustomizeError(f"{kfile}: a patch needs exactly one of path / patch (and maybe target)")
        text = (directory / spec["path"]).read_text() if "path" in spec else spec["patch"]
        for patch in load_all(text):
            target = spec.get("target")
            if target is not None:
                chosen = [i for i, o in enumerate(objects) if _target_matches(target, o)]
            else:
                chosen = [i for i, o in enumerate(objects)
                          if o["kind"] == patch["kind"] and o["metadata"]["name"] == patch["metadata"]["name"]
                          and o["apiVersion"] == patch["apiVersion"]]
            if not chosen:
                raise KustomizeError(f"{kfile}: patch {spec.get('path', '(inline)')} matches no object")
            for i in chosen:
                objects[i] = _apply_patch(objects[i], patch, with_target=target is not None)

    namespace = k.get("namespace")
    if namespace:
        for obj in objects:
            if obj["kind"] not in CLUSTER_SCOPED:
                obj["metadata"]["namespace"] = namespace

    rules = k.get("images", [])
    for rule in rules:
        if not set(rule) <= {"name", "newName", "newTag", "digest"}:
            raise KustomizeError(f"{kfile}: image rule {rule} is outside the supported subset")
    if rules:
        for obj in objects:
            pod = _pod_spec(obj)
            for container in (pod or {}).get("containers", []) + (pod or {}).get("initContainers", []):
                container["image"] = _set_image(container["image"], rules)
    return objects
