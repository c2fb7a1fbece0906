"""The image's recipe (deploy/Dockerfile: slim Python, non-root, the project installed, the
croupier entry point) and croupier-probe (deploy/probe.py), the health checks it carries.
No container engine is needed: the probes run here against servers on 127.0.0.1."""

from __future__ import annotations

import fnmatch
import http.server
import importlib.util
import re
import threading
import tomllib

import pytest
from deploy_objects import ROOT

DOCKERFILE = ROOT / "deploy" / "Dockerfile"


def instructions() -> list[tuple[str, str]]:
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "") for line in lines]


def load_probe():
    spec = importlib.util.spec_from_file_location("croupier_probe", ROOT / "deploy" / "probe.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_dockerfile_builds_a_slim_non_root_image_with_the_croupier_entry_point():
    steps = instructions()
    args = dict(value.split("=", 1) for kind, value in steps if kind == "ARG" and "=" in value)
    assert re.fullmatch(r"python:3\.11-slim(-\w+)?", args["PYTHON_IMAGE"])
    froms = [value for kind, value in steps if kind == "FROM"]
    assert froms[-1] == "${PYTHON_IMAGE}", "the runtime stage is the slim Python image"
    runtime = steps[max(i for i, (kind, _) in enumerate(steps) if kind == "FROM"):]
    users = [value for kind, value in runtime if kind == "USER"]
    assert users and all(part.isdigit() and int(part) >= 1000 for part in users[-1].split(":")), "non-root, numeric"
    assert ("ENTRYPOINT", '["croupier"]') in runtime
    runs = " ".join(value for kind, value in runtime if kind == "RUN")
    assert "pip install --no-index --find-links /wheels croupier" in runs
    assert any(kind == "COPY" and "deploy/probe.py /usr/local/bin/croupier-probe" in value for kind, value in runtime)
    build = " ".join(value for kind, value in steps if kind == "RUN")
    assert "grpc_tools.protoc" in build and "pip wheel" in build, "the gRPC code is generated in the image build"


def test_the_entry_point_and_copied_paths_exist():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["scripts"]["croupier"] == "croupier.cli.main:main"
    for kind, value in instructions():
        if kind == "COPY" and "--from=" not in value:
            sources = [s for s in value.split()[:-1] if not s.startswith("--")]
            for source in sources:
                assert (ROOT / source).exists(), f"COPY {source}: not in the repository"
    ignored = (ROOT / ".dockerignore").read_text().split()
    for needed in ("pyproject.toml", "README.md", "proto/", "services/", "gateway/", "deploy/probe.py"):
        assert f"!{needed}" in ignored, f".dockerignore drops {needed}"


def test_the_wheel_carries_every_data_file():
    """A file under the packages that package-data does not match would be missing from the image."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = project["tool"]["setuptools"]["package-data"]["*"]
    missing = []
    for top in (ROOT / "services" / "croupier", ROOT / "gateway" / "croupier_gateway"):
        for path in top.rglob("*"):
            if path.is_dir() or "__pycache__" in path.parts or path.suffix in (".py", ".pyc", ".pyi") or path.name == ".gitkeep":
                continue
            # package-data patterns are relative to the package (the nearest directory with __init__.py).
            package = path.parent
            while not (package / "__init__.py").exists():
                package = package.parent
            relative = path.relative_to(package).as_posix()
            if not any(fnmatch.fnmatch(relative, p) and relative.count("/") == p.count("/") for p in patterns):
                missing.append(str(path.relative_to(ROOT)))
    assert not missing, f"not in the wheel (pyproject.toml [tool.setuptools.package-data]): {missing}"


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        self.send_response(200 if self.path == "/metrics" else 503)
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


@pytest.fixture
def http_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_probe_http(http_server):
    probe = load_probe()
    assert probe.main(["http", f"{http_server}/metrics"]) == 0
    assert probe.main(["http", f"{http_server}/healthz"]) == 1
    assert probe.main(["http", "http://127.0.0.1:9/metrics", "--timeout", "1"]) == 1


def test_probe_grpc_health():
    import grpc
    from grpc_health.v1 import health, health_pb2, health_pb2_grpc

    probe = load_probe()
    server = grpc.server(__import__("concurrent.futures").futures.ThreadPoolExecutor(max_workers=2))
    servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        servicer.set("", health_pb2.HealthCheckResponse.SERVING)
        servicer.set("croupier.v1.RulesService", health_pb2.HealthCheckResponse.SERVING)
        address = f"127.0.0.1:{port}"
        assert probe.main(["grpc", address]) == 0
        assert probe.main(["grpc", address, "--service", "croupier.v1.RulesService"]) == 0
        servicer.set("croupier.v1.RulesService", health_pb2.HealthCheckResponse.NOT_SERVING)
        assert probe.main(["grpc", address, "--service", "croupier.v1.RulesService"]) == 1
        assert probe.main(["grpc", address, "--service", "no.such.Service"]) == 1
    finally:
        server.stop(0)


def test_probe_topics_are_the_services_topics(monkeypatch):
    from croupier.engine import registry

    probe = load_probe()
    monkeypatch.setenv("CROUPIER_TOPIC_PREFIX", "t1.")
    assert probe.wanted_topics(["expeditions"], False) == ["t1.croupier.events.expeditions"]
    assert probe.wanted_topics([], True) == [f"t1.croupier.events.{g}" for g in registry.GAME_IDS]
    with pytest.raises(SystemExit):
        probe.build_parser().parse_args(["topics"])  # --game or --all


def test_probe_topics_waits_until_every_topic_exists(monkeypatch):
    import kafka

    probe = load_probe()
    listings = iter([set(), {"croupier.events.a"}, {"croupier.events.a", "croupier.events.b", "other"}])

    class FakeConsumer:
        def __init__(self, **config):
            assert config["bootstrap_servers"] == "k:9092"

        def topics(self):
            return next(listings)

        def close(self):
            pass

    monkeypatch.setattr(kafka, "KafkaConsumer", FakeConsumer)
    monkeypatch.setattr(probe.time, "sleep", lambda s: None)
    assert probe.wait_topics(["croupier.events.a", "croupier.events.b"], 60, "k:9092") is True
    listings = iter([set()] * 3)
    assert probe.wait_topics(["croupier.events.a"], 0, "k:9092") is False
