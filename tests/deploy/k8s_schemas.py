"""Validate objects against the Kubernetes JSON schemas that the kubernetes-validate package
ships (strict: unknown fields are errors), and the Strimzi resources against the minimal
schema checked in beside this file (strimzi-v1beta2.schema.json).

kubernetes-validate loads its 1 MB definitions file for every object; this loads it once per
Kubernetes version and keeps a validator per kind, with the same files and the same
resolution, so that a whole overlay validates in a fraction of a second.
"""

from __future__ import annotations

import functools
import json
import re
from importlib.resources import files
from pathlib import Path

import jsonschema
import referencing

STRIMZI_SCHEMA = Path(__file__).with_name("strimzi-v1beta2.schema.json")
STRIMZI_GROUP = "kafka.strimzi.io"


class SchemaMissing(LookupError):
    pass


def schema_versions() -> list[str]:
    root = files("kubernetes_validate").joinpath("kubernetes-json-schema")
    found = [m.group(1) for p in root.iterdir() if (m := re.fullmatch(r"v(\d+\.\d+)\.0-local-strict", p.name))]
    return sorted(found, key=lambda v: tuple(int(x) for x in v.split(".")))


@functools.cache
def _schema_dir(version: str):
    return files("kubernetes_validate").joinpath("kubernetes-json-schema", f"v{version}.0-local-strict")


@functools.cache
def _definitions(version: str) -> referencing.Resource:
    contents = json.loads(_schema_dir(version).joinpath("_definitions.json").read_text())
    return referencing.Resource.from_contents(contents)


@functools.cache
def _kubernetes_validator(version: str, kind: str, api_version: str) -> jsonschema.protocols.Validator:
    # As kubernetes-validate names the files: rbac.authorization.k8s.io/v1 -> rbac-v1.
    name = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    path = _schema_dir(version).joinpath(f"{kind.lower()}-{name}.json")
    if not path.is_file():
        raise SchemaMissing(f"no Kubernetes {version} schema for {kind} {api_version}")
    schema = json.loads(path.read_text())
    registry = _definitions(version) @ (referencing.Resource.from_contents(schema) @ referencing.Registry())
    return jsonschema.Draft202012Validator(schema, registry=registry)


@functools.cache
def _strimzi_validator(kind: str) -> jsonschema.protocols.Validator:
    document = json.loads(STRIMZI_SCHEMA.read_text())
    if kind not in document["kinds"]:
        raise SchemaMissing(f"no checked-in schema for the Strimzi kind {kind}")
    schema = {"$schema": document["$schema"], "$defs": document["$defs"], **document["kinds"][kind]}
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def validator_for(obj: dict, version: str) -> jsonschema.protocols.Validator:
    if obj["apiVersion"].split("/")[0] == STRIMZI_GROUP:
        return _strimzi_validator(obj["kind"])
    return _kubernetes_validator(version, obj["kind"], obj["apiVersion"])


def errors(obj: dict, version: str) -> list[str]:
    """Every schema error of one object, as 'path: message' lines (empty when valid)."""
    found = validator_for(obj, version).iter_errors(obj)
    return [f"{'.'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}" for e in found]
