"""Processes a test run left running: every process a test starts, it stops.

A process the run started carries the run's temporary directory (pytest's ``basetemp``) in
its command line, its environment or its working directory: the sandbox's daemons and
routers are given paths under it. One still running when the run ends was left by a test,
and it holds what it held (an address, a port) for whatever starts there next: a later run
met a router an earlier one left, and failed for it. The run stops them and names them.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import time
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class Leftover:
    pid: int
    command: str


def _mentions(pid: int, named: re.Pattern[bytes]) -> str | None:
    """The process's command line when its command line, environment or working directory
    matches ``named``; None when none does, or when it is gone, a zombie (no working
    directory) or not ours to read."""
    base = PROC / str(pid)
    try:
        cmdline = (base / "cmdline").read_bytes()
        environ = (base / "environ").read_bytes()
        cwd = os.readlink(base / "cwd").encode()
    except OSError:
        return None
    if any(named.search(blob) for blob in (cmdline, environ, cwd)):
        return cmdline.replace(b"\0", b" ").decode(errors="replace").strip()
    return None


def _naming(directory: Path) -> re.Pattern[bytes]:
    """What names ``directory`` or a path under it: ``/tmp/x/pytest-3`` is not named by
    ``/tmp/x/pytest-30/...``, another run's."""
    return re.compile(re.escape(str(directory).encode()) + rb"(?![^/\0\s:=;,\"'])")


def left_running(directory: Path, grace: float = 10.0) -> list[Leftover]:
    """The processes, other than this one and its ancestors, that mention ``directory`` and
    still run ``grace`` seconds on: one already told to stop may be on its way out (a busy
    machine gives it its turn late), and that is not a leftover."""
    named = _naming(directory)
    spared = {os.getpid(), *_ancestors()}
    found = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) in spared:
            continue
        command = _mentions(int(entry.name), named)
        if command is not None:
            found.append(Leftover(int(entry.name), command))
    deadline = time.monotonic() + grace
    while found and time.monotonic() < deadline:
        time.sleep(0.2)
        found = [f for f in found if _mentions(f.pid, named) is not None]
    return found


def _ancestors() -> list[int]:
    pids = []
    pid = os.getppid()
    while pid > 1:
        pids.append(pid)
        try:
            stat = (PROC / str(pid) / "stat").read_text()
        except OSError:
            break
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return pids


def stop(leftovers: list[Leftover]) -> None:
    for leftover in leftovers:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(leftover.pid, signal.SIGKILL)
