"""Every overlay of k8s/ renders, and every object validates against its schema: the
Kubernetes JSON schemas shipped by kubernetes-validate (strict: an unknown field is an error),
at the oldest version the manifests support and the newest the package ships; the Strimzi
resources against the minimal schema checked in beside this file."""

from __future__ import annotations

import copy
import shutil
import subprocess

import k8s_schemas
import kustomize_lite
import pytest
from deploy_objects import K8S, OVERLAYS

# gRPC probes are GA since 1.27, autoscaling/v2 since 1.23; 1.30 is the oldest we claim.
OLDEST = "1.30"
VERSIONS = sorted({OLDEST, k8s_schemas.schema_versions()[-1]})


def test_overlays_exist():
    assert {"dev", "prod"} <= set(OVERLAYS)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_overlay_renders_into_its_namespace(rendered, overlay):
    objects = rendered[overlay].objects
    assert objects
    namespaces = [o for o in objects if o["kind"] == "Namespace"]
    assert len(namespaces) == 1, "an overlay creates its own namespace"
    namespace = namespaces[0]["metadata"]["name"]
    for obj in objects:
        if obj["kind"] not in kustomize_lite.CLUSTER_SCOPED:
            assert obj["metadata"].get("namespace") == namespace, kustomize_lite.object_id(obj)
    ids = [kustomize_lite.object_id(o) for o in objects]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_object_validates(rendered, overlay, version):
    problems = {}
    for obj in rendered[overlay].objects:
        found = k8s_schemas.errors(obj, version)  # raises SchemaMissing for a kind without a schema
        if found:
            problems[kustomize_lite.object_id(obj)] = found
    assert not problems, f"overlay {overlay} against Kubernetes {version}: {problems}"


def test_the_schemas_catch_mistakes(rendered):
    """The validation bites: a typo, a wrong type, a missing required field."""
    prod = rendered["prod"]
    deployment = copy.deepcopy(prod.require("Deployment", "gateway"))
    deployment["spec"]["template"]["spec"]["containers"][0]["envv"] = []
    deployment["spec"]["replicas"] = "two"
    assert len(k8s_schemas.errors(deployment, OLDEST)) == 2
    hpa = copy.deepcopy(prod.of_kind("HorizontalPodAutoscaler")[0])
    del hpa["spec"]["maxReplicas"]
    assert k8s_schemas.errors(hpa, OLDEST)
    topic = copy.deepcopy(prod.of_kind("KafkaTopic")[0])
    topic["spec"]["partitons"] = 3
    del topic["metadata"]["labels"]["strimzi.io/cluster"]
    assert len(k8s_schemas.errors(topic, OLDEST)) == 2
    pool = copy.deepcopy(prod.of_kind("KafkaNodePool")[0])
    pool["spec"]["roles"] = ["brokr"]
    del pool["spec"]["storage"]["volumes"][0]["size"]
    assert len(k8s_schemas.errors(pool, OLDEST)) == 2
    kafka = copy.deepcopy(prod.of_kind("Kafka")[0])
    kafka["spec"]["kafka"]["listeners"][0].pop("tls")
    assert k8s_schemas.errors(kafka, OLDEST)


def _kustomize_command() -> list[str] | None:
    if shutil.which("kustomize"):
        return ["kustomize", "build"]
    if shutil.which("kubectl"):
        return ["kubectl", "kustomize"]
    return None


@pytest.mark.skipif(_kustomize_command() is None, reason="no kustomize binary (kustomize or kubectl) here")
@pytest.mark.parametrize("overlay", OVERLAYS)
def test_renderer_agrees_with_kustomize(rendered, overlay):
    out = subprocess.run([*_kustomize_command(), str(K8S / "overlays" / overlay)], capture_output=True,
                         text=True, timeout=60, check=True).stdout
    theirs = {kustomize_lite.object_id(o): o for o in kustomize_lite.load_all(out)}
    mine = {kustomize_lite.object_id(o): o for o in rendered[overlay].objects}
    assert sorted(mine) == sorted(theirs)
    for key, obj in mine.items():
        assert obj == theirs[key], key


def test_renderer_strategic_merge_orders_like_kustomize():
    original = {"spec": {"containers": [
        {"name": "one", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}, {"name": "C", "value": "3"}]},
        {"name": "two", "image": "i"},
    ]}}
    patch = {"spec": {"containers": [
        {"name": "two", "args": ["x"]},
        {"name": "one", "env": [{"name": "C", "value": "9"}, {"name": "D", "value": "4"}]},
    ]}}
    merged = kustomize_lite.strategic_merge(original, patch)
    assert [c["name"] for c in merged["spec"]["containers"]] == ["two", "one"]
    assert merged["spec"]["containers"][0] == {"name": "two", "image": "i", "args": ["x"]}
    assert merged["spec"]["containers"][1]["env"] == [
        {"name": "C", "value": "9"}, {"name": "D", "value": "4"}, {"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    # No merge key: the list is replaced; null deletes.
    assert kustomize_lite.strategic_merge({"args": [1, 2], "x": 1}, {"args": [3], "x": None}) == {"args": [3]}
    # JSON merge patch (custom resources): lists replaced, maps merged.
    assert kustomize_lite.json_merge_patch({"a": {"b": 1, "c": [1]}}, {"a": {"c": [2], "d": 3}}) == {"a": {"b": 1, "c": [2], "d": 3}}


def test_renderer_images_and_unsupported_fields(tmp_path):
    rules = [{"name": "croupier", "newName": "reg.example/croupier", "newTag": "1.2"}]
    assert kustomize_lite._set_image("croupier", rules) == "reg.example/croupier:1.2"
    assert kustomize_lite._set_image("croupier:old", rules) == "reg.example/croupier:1.2"
    assert kustomize_lite._set_image("redis:7.4", rules) == "redis:7.4"
    (tmp_path / "kustomization.yaml").write_text("resources: []\ncommonLabels: {a: b}\n")
    with pytest.raises(kustomize_lite.KustomizeError, match="outside the supported subset"):
        kustomize_lite.build(tmp_path)


def _bytes(quantity: str) -> int:
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "kb": 2**10, "mb": 2**20, "gb": 2**30}
    for unit, factor in units.items():
        if quantity.lower().endswith(unit.lower()):
            return int(float(quantity[:-len(unit)]) * factor)
    return int(quantity)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_redis_refuses_writes_when_full_below_its_container_s_limit(rendered, overlay):
    """A Redis that fills its container is OOM-killed and reloads the same append-only file into
    the same limit, again and again; one that evicts may drop a game's state under its meta.
    Each overlay's Redis has a maxmemory at most 80 % of its memory limit (room for the file's
    rewrite, a fork), and evicts nothing."""
    from deploy_objects import container

    redis = container(rendered[overlay].require("StatefulSet", "redis"), "redis")
    args = redis["args"]
    limit = _bytes(redis["resources"]["limits"]["memory"])
    maxmemory = _bytes(args[args.index("--maxmemory") + 1])
    assert 0 < maxmemory <= 0.8 * limit, (maxmemory, limit)
    assert args[args.index("--maxmemory-policy") + 1] == "noeviction"
    assert args[args.index("--appendonly") + 1] == "yes"
