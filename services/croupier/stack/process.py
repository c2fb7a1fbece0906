"""Background processes that the stack starts, and the pid files that say they are ours.

A pid file holds the pid, the process's creation time and, where /proc has them, its start
in clock ticks since boot and the boot's id. A process counts as ours only when they match, so
a pid that the system reused for something else is never signalled. The start in ticks is
what is compared when it is there: a creation time is the boot time plus that start, and the
kernel moves the boot time whenever the wall clock is stepped (NTP, a VM or laptop resumed),
after which every process would look like someone else's, and `croupier stack down` would
leave the stack running. ``stop`` sends SIGTERM, waits, and only then SIGKILL.
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil


class StackError(RuntimeError):
    """The stack could not be brought up (or down); the message says why, with log lines."""


# Two reads of one process's creation time agree to the clock tick; allow some slack.
_CREATE_TIME_SLACK = 0.05


def start_ticks(pid: int) -> int | None:
    """When the process started, in clock ticks since boot (field 22 of /proc/PID/stat), which
    no change of the wall clock moves; None where /proc does not say."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
        # The command name (field 2) is in parentheses and may hold spaces: count from after it.
        return int(stat[stat.rindex(b")") + 2:].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def boot_id() -> str:
    """This boot's id (a pid and its start in ticks name one process within one boot only)."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as handle:
            return handle.read().strip()
    except OSError:
        return ""


@dataclass(frozen=True)
class PidFile:
    path: Path

    def write(self, process: psutil.Process) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        started = start_ticks(process.pid)
        boot = boot_id()
        extra = f"{started}\n{boot}\n" if started is not None and boot else ""
        tmp.write_text(f"{process.pid}\n{process.create_time():.3f}\n{extra}")
        tmp.replace(self.path)

    def read(self) -> tuple[int, float, int | None, str] | None:
        """(pid, creation time, start in ticks since boot or None, boot id or "")."""
        try:
            lines = self.path.read_text().split()
            pid, created = int(lines[0]), float(lines[1])
        except (OSError, IndexError, ValueError):  # none, unreadable (a directory, a file in the path's way)
            return None
        try:
            return pid, created, int(lines[2]), lines[3]
        except (IndexError, ValueError):
            return pid, created, None, ""  # written before the ticks were recorded

    def exists(self) -> bool:
        return self.path.exists()

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)

    def owned_process(self) -> psutil.Process | None:
        """The live process this file names, or None if it is gone or is not the one we started."""
        recorded = self.read()
        if recorded is None:
            return None
        pid, created, ticks, boot = recorded
        try:
            process = psutil.Process(pid)
            now_ticks = start_ticks(pid) if ticks is not None else None
            if now_ticks is not None:
                if now_ticks != ticks or boot != boot_id():
                    return None
            elif abs(process.create_time() - created) > _CREATE_TIME_SLACK:
                return None
            if process.status() == psutil.STATUS_ZOMBIE:
                _reap(pid)
                return None
            return process
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            return None


def spawn(argv: Sequence[str], *, log_path: Path, cwd: Path, env: dict[str, str] | None = None) -> psutil.Process:
    """Start ``argv`` detached from our session (it outlives the CLI), output to ``log_path``."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        popen = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    # Popen would warn when collected while the child still runs; the pid file owns it now.
    popen.returncode = 0
    return psutil.Process(popen.pid)


def is_alive(process: psutil.Process) -> bool:
    try:
        if process.status() == psutil.STATUS_ZOMBIE:
            _reap(process.pid)
            return False
        return process.is_running()
    except psutil.NoSuchProcess:
        return False


def _reap(pid: int) -> None:
    """Collect the exit status if the process is our child (else its parent does)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def wait_gone(process: psutil.Process, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not is_alive(process):
            return True
        time.sleep(0.05)
    return not is_alive(process)


def stop(process: psutil.Process, timeout: float) -> str:
    """Stop a process: SIGTERM, then SIGKILL after ``timeout`` s. Returns how it ended."""
    if not is_alive(process):
        return "already gone"
    try:
        process.send_signal(signal.SIGTERM)
    except psutil.NoSuchProcess:
        return "already gone"
    if wait_gone(process, timeout):
        return "stopped"
    try:
        process.kill()
    except psutil.NoSuchProcess:
        return "stopped"
    if not wait_gone(process, 10.0):
        raise RuntimeError(f"process {process.pid} survived SIGKILL")
    return "killed"


def port_open(host: str, port: int, timeout: float = 0.2) -> bool:
    """True when something accepts TCP connections on host:port."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def port_free(host: str, port: int) -> bool:
    """True when we could bind host:port now (nothing listens there)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def port_holder(host: str, port: int) -> str:
    """Who holds host:port, as "pid N (name)" or "a connection in STATE", for an error message;
    "" when it cannot be told (another user's process, say)."""
    try:
        conns = psutil.net_connections(kind="tcp")
    except (psutil.Error, OSError):
        return ""
    mine = [c for c in conns if c.laddr and c.laddr.port == port and c.laddr.ip in (host, "0.0.0.0", "::")]
    for c in sorted(mine, key=lambda c: c.status != psutil.CONN_LISTEN):
        if c.pid:
            try:
                return f"pid {c.pid} ({psutil.Process(c.pid).name()}), {c.status}"
            except psutil.Error:
                return f"pid {c.pid}, {c.status}"
        return f"a connection in {c.status}"
    return ""


def wait_port_free(host: str, port: int, timeout: float) -> bool:
    """True once host:port can be bound, polling for up to ``timeout`` s: a port held by a
    process on its way out, or by a client's short-lived connection, is free again soon."""
    deadline = time.monotonic() + timeout
    while not port_free(host, port):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)
    return True


# Ports handed to services we start are taken from below the kernel's ephemeral range:
# bind(0) picks from that range, and so does every outgoing connection for its local port, so
# a port picked that way can be taken by some client's connection (a service connecting to
# Kafka, say) before the service that was given it binds it, which then fails with "Address
# already in use". Below the range only another listener can take it.
PICK_FROM = 20_000

# The ports this process handed out lately. A port is free when it is picked, but the service
# it is for binds it only once it has started, a second or two later: a second pick in
# between could return the same port (a launcher picks a dozen at once). The rules service
# once started two replicas on one port that way, and with SO_REUSEPORT both bound it and one
# got the other's commands. Never handing out a port twice within the last HANDED_KEEP picks
# rules that out within one process; a collision with another process fails at bind.
HANDED_KEEP = 2_000
_handed: dict[int, None] = {}  # insertion-ordered: the oldest first
_handed_lock = threading.Lock()


def _hand_out(port: int) -> bool:
    """Record port as handed out; False if it was, lately."""
    with _handed_lock:
        if port in _handed:
            return False
        _handed[port] = None
        while len(_handed) > HANDED_KEEP:
            del _handed[next(iter(_handed))]
        return True


def reserve_ports(*ports: int) -> None:
    """Ports a service of this process will listen on, given from outside (settings, flags):
    never handed out for another. (A demo given its gateway's ports picked one of them for a
    rules replica that started first, and the gateway could not bind it.)"""
    for port in ports:
        if port:
            _hand_out(int(port))


def _ephemeral_floor() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` distinct ports that are free now, for the services we start (and for tests
    that run their own stack): below the ephemeral range where there is room (PICK_FROM),
    and none this process handed out lately (HANDED_KEEP)."""
    floor = _ephemeral_floor()
    ports: list[int] = []
    if floor - PICK_FROM >= 1_000:
        rng = random.SystemRandom()
        for _ in range(200 * count):
            port = rng.randrange(PICK_FROM, floor)
            if port_free(host, port) and _hand_out(port):
                ports.append(port)
                if len(ports) == count:
                    return ports
    sockets = []  # no room below the range (or it is full): let the kernel choose
    try:
        while len(ports) < count:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((host, 0))
            sockets.append(sock)  # held until the end: the kernel gives each a port of its own
            if _hand_out(port := sock.getsockname()[1]):
                ports.append(port)
        return ports
    finally:
        for sock in sockets:
            sock.close()


def tail(path: Path, lines: int = 30) -> list[str]:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 64 * 1024))
            text = handle.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return []
    return text.splitlines()[-lines:]
