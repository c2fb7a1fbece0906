"""The local stack: real Apache Kafka (KRaft, from the jars) and real Redis, as plain processes.

``up`` starts what is not running yet and returns once a Kafka client gets broker metadata
and Redis answers PING; ``down`` stops only the processes that ``up`` started (named by pid
files under the state directory and checked to be the same processes); ``status`` reports.
Everything lives under ``StackSettings.state_dir`` (default ``.croupier/``).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import psutil

from croupier.config import ConfigError, StackSettings
from croupier.stack.kafka import KafkaNode
from croupier.stack.process import PidFile, StackError, is_alive, port_holder, stop, tail, wait_port_free
from croupier.stack.redis import RedisNode

COMPONENTS = ("kafka", "redis")

# How long ``up`` waits for a node's port that is taken before it calls the port taken.
PORT_GRACE_S = 10.0

__all__ = ["COMPONENTS", "ComponentStatus", "StackError", "UpReport", "down", "nodes", "status", "up"]


class Node(Protocol):
    name: str
    pidfile: PidFile

    @property
    def ports(self) -> list[int]: ...
    @property
    def endpoint(self) -> str: ...
    @property
    def log_files(self) -> list: ...
    def preflight(self) -> list[str]: ...
    def start(self) -> psutil.Process: ...
    def probe(self) -> bool: ...


@dataclass(frozen=True)
class ComponentStatus:
    name: str
    state: str  # running | stopped
    pid: int | None
    endpoint: str
    ready: bool
    note: str = ""


@dataclass
class UpReport:
    started: list[str] = field(default_factory=list)
    already_running: list[str] = field(default_factory=list)
    seconds: float = 0.0
    ready_after: dict[str, float] = field(default_factory=dict)


def nodes(settings: StackSettings, components: Iterable[str] = COMPONENTS) -> list[Node]:
    wanted = list(components)
    unknown = [c for c in wanted if c not in COMPONENTS]
    if unknown:
        raise StackError(f"unknown stack component(s): {', '.join(unknown)} (known: {', '.join(COMPONENTS)})")
    made: dict[str, Node] = {"kafka": KafkaNode(settings), "redis": RedisNode(settings)}
    return [made[c] for c in COMPONENTS if c in wanted]


def _log_tails(node: Node, lines: int = 25) -> str:
    out = []
    for path in node.log_files:
        last = tail(path, lines)
        if last:
            out.append(f"--- last lines of {path} ---")
            out.extend(last)
    return "\n".join(out) if out else f"(no log lines from {node.name})"


def _started_with(node: Node) -> Path:
    """Where `up` records the endpoint and ports a node was started with, beside its pid file."""
    return node.pidfile.path.with_name(f"{node.name}.started-with.json")


def _record_start(node: Node) -> None:
    _started_with(node).write_text(json.dumps({"endpoint": node.endpoint, "ports": list(node.ports)}))


def moved(node: Node) -> str:
    """The endpoint a running node was started at, when the settings now name another (a
    CROUPIER_*_PORT changed since `up`); "" when they agree or nothing was recorded."""
    try:
        recorded = json.loads(_started_with(node).read_text())
    except (OSError, ValueError):
        return ""
    if not isinstance(recorded, dict):
        return ""
    if recorded.get("endpoint") == node.endpoint and recorded.get("ports") == list(node.ports):
        return ""
    return str(recorded.get("endpoint") or "other ports")


@contextlib.contextmanager
def _exclusive(settings: StackSettings) -> Iterator[None]:
    """One `up` or `down` at a time per state directory (two shells, two make targets). A
    state directory that cannot be made or written (a file in its place, no permission) is
    a setting that cannot be used: ConfigError, one line, before anything starts."""
    try:
        settings.state_dir.mkdir(parents=True, exist_ok=True)
        handle = open(settings.state_dir / "stack.lock", "w")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise ConfigError(f"CROUPIER_STATE_DIR={settings.state_dir}: cannot be the stack's state directory "
                          f"({exc.strerror or exc})") from None
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def up(settings: StackSettings, components: Iterable[str] = COMPONENTS, timeout: float | None = None) -> UpReport:
    """Start the components that are not running and wait until all of them answer."""
    selected = nodes(settings, components)
    with _exclusive(settings):
        return _up(settings, selected, settings.start_timeout if timeout is None else timeout)


def _up(settings: StackSettings, selected: list[Node], timeout: float) -> UpReport:
    began = time.monotonic()
    report = UpReport()

    to_start: list[Node] = []
    problems = []
    for node in selected:
        process = node.pidfile.owned_process()
        if process is not None:
            report.already_running.append(node.name)
            was = moved(node)
            if was:
                # It would never answer where the settings now look: say so now, not after
                # the whole timeout as "not ready".
                problems.append(f"{node.name} is running (pid {process.pid}) at {was}, where it was started, not at "
                                f"{node.endpoint} as the settings now say: `croupier stack down` stops it, and `up` "
                                "starts it again with these settings")
        else:
            node.pidfile.remove()  # stale: the process is gone or is not ours
            to_start.append(node)

    problems += [p for node in to_start for p in node.preflight()]
    for node in to_start:
        for port in node.ports:
            # A port just let go of (a stopped node's, a client's connection that happened to
            # take it as its local port) is free again within seconds: wait that long first.
            if not wait_port_free(settings.host, port, PORT_GRACE_S):
                holder = port_holder(settings.host, port)
                problems.append(
                    f"{settings.host}:{port} (for {node.name}) is taken"
                    f"{f' by {holder}' if holder else ' by another process'}: stop it, "
                    f"or choose other ports with the CROUPIER_*_PORT variables"
                )
    if problems:
        raise StackError("cannot start the stack:\n  " + "\n  ".join(problems))

    started: dict[str, psutil.Process] = {}
    try:
        # Redis first: it is up in milliseconds while Kafka formats and boots.
        for node in sorted(to_start, key=lambda n: n.name != "redis"):
            process = node.start()
            started[node.name] = process  # before anything else: an interruption from here stops it
            node.pidfile.write(process)
            _record_start(node)
            report.started.append(node.name)
        _wait_ready(selected, started, began, began + timeout, report)
    except BaseException:
        for node in to_start:
            process = started.get(node.name)
            if process is not None:
                stop(process, settings.stop_timeout)
                node.pidfile.remove()
                _started_with(node).unlink(missing_ok=True)
        raise
    report.seconds = time.monotonic() - began
    return report


def _wait_ready(selected: list[Node], started: dict[str, psutil.Process], began: float, deadline: float,
                report: UpReport) -> None:
    # Redis answers in milliseconds; asking it first keeps its time honest while Kafka boots.
    waiting = sorted(selected, key=lambda n: n.name != "redis")
    while waiting:
        for node in list(waiting):
            process = started.get(node.name) or node.pidfile.owned_process()
            if process is None or not is_alive(process):
                raise StackError(f"{node.name} exited while starting\n{_log_tails(node)}")
            if node.probe():
                report.ready_after[node.name] = time.monotonic() - began
                waiting.remove(node)
        if not waiting:
            return
        if time.monotonic() > deadline:
            names = ", ".join(n.name for n in waiting)
            tails = "\n".join(_log_tails(n) for n in waiting)
            raise StackError(f"{names} not ready after {deadline - began:.0f} s\n{tails}")
        time.sleep(0.2)


def down(settings: StackSettings, components: Iterable[str] = COMPONENTS) -> dict[str, str]:
    """Stop the components this stack started; returns what happened to each."""
    outcome: dict[str, str] = {}
    selected = nodes(settings, components)
    if not settings.state_dir.exists():
        return {node.name: "not running" for node in selected}
    with _exclusive(settings):
        # Kafka first, while Redis still serves anything that flushes on the way down.
        for node in sorted(selected, key=lambda n: n.name != "kafka"):
            process = node.pidfile.owned_process()
            if process is None:
                outcome[node.name] = "stale pid file removed" if node.pidfile.exists() else "not running"
            else:
                outcome[node.name] = stop(process, settings.stop_timeout)
            node.pidfile.remove()
            _started_with(node).unlink(missing_ok=True)
    return outcome


def status(settings: StackSettings, components: Iterable[str] = COMPONENTS) -> list[ComponentStatus]:
    out = []
    for node in nodes(settings, components):
        process = node.pidfile.owned_process()
        if process is None:
            note = "stale pid file" if node.pidfile.exists() else ""
            out.append(ComponentStatus(node.name, "stopped", None, node.endpoint, False, note))
        else:
            ready = node.probe()
            was = moved(node)
            note = (f"not answering here: it was started at {was} (croupier stack down, then up, moves it)" if was
                    else "not answering")
            out.append(ComponentStatus(node.name, "running", process.pid, node.endpoint, ready,
                                       "" if ready else note))
    return out
