"""Sandbox worlds driven from Python: ``running_world(...)`` starts one and always stops it.

    with running_world(tmp_path, WorldSpec(providers=2)) as world:
        exit_status, out, err = world.ssh("rhel-ai", "skupper version")

The world is started with ``sandbox up`` in a subprocess of the current Python and is
always stopped with ``sandbox down``, whatever the test did; a world that leaves a Unix user
or a process of its own behind fails the test that made it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skupper_sandbox import engines, faults, real_podman, real_users
from skupper_sandbox.cli import host_run, up_options, world_processes
from skupper_sandbox.layout import HostEntry, WorldInfo, WorldLayout, WorldSpec

UP_TIMEOUT = 120.0
SSH_TIMEOUT = 30.0
#: Where a world whose hosts may get real users is made. Its users must pass through every
#: directory above it, and pytest takes the search bit back from its own temporary root at
#: the start of every run (``_pytest/tmpdir.py``: ``pytest-of-<user>`` is made 0700 again),
#: so another run starting would lock a running world's users out of their homes.
REAL_USERS_BASE = Path(tempfile.gettempdir()) / "skmcp-worlds"
WORLD_LINK = "world"


@contextlib.contextmanager
def reachable_dir(prefix: str) -> Iterator[Path]:
    """A directory every user of this machine may use (1777, as ``/tmp``), removed after:
    for what a test hands the programs a world runs as its hosts' users (a model server's
    key file, the marks a hostile server writes), which pytest's own 0700 temporary
    directories keep from a real user."""
    REAL_USERS_BASE.mkdir(mode=0o711, exist_ok=True)
    made = Path(tempfile.mkdtemp(prefix=f"{prefix}-", dir=REAL_USERS_BASE))
    made.chmod(0o1777)
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


class SandboxCommandError(RuntimeError):
    """A ``sandbox`` command failed; the message carries its output."""


def sandbox_command(*args: str, timeout: float = UP_TIMEOUT) -> subprocess.CompletedProcess[str]:
    """Run ``python -m skupper_sandbox.cli ARGS`` and return its result."""
    return subprocess.run(
        [sys.executable, "-m", "skupper_sandbox.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _run_coroutine(factory: Callable[[], Any]) -> Any:
    """Run a coroutine to completion, also from inside a running event loop (async tests)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())
    box: dict[str, Any] = {}

    def worker() -> None:
        try:
            box["value"] = asyncio.run(factory())
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


@dataclass
class World:
    """A running sandbox world, as a test sees it."""

    dir: Path
    topology: Path
    info: WorldInfo
    stdout: str
    stderr: str = ""  # what sandbox up said on stderr (its choice of podman, say)

    @property
    def layout(self) -> WorldLayout:
        return WorldLayout(self.dir)

    @property
    def hosts(self) -> dict[str, HostEntry]:
        """Host name -> its entry (address, ports, profiles)."""
        return {h.name: h for h in self.info.hosts}

    @property
    def addresses(self) -> dict[str, str]:
        return {h.name: h.address for h in self.info.hosts}

    def host_dir(self, host: str) -> Path:
        """The directory of ``host`` in the world (``DIR/hosts/<host>``)."""
        return self.layout.host_dir(host)

    def sandbox(self, *args: str, timeout: float = UP_TIMEOUT) -> subprocess.CompletedProcess[str]:
        """Run a ``sandbox`` verb against this world (``--dir`` is added)."""
        verb, *rest = args
        return sandbox_command(verb, "--dir", str(self.dir), *rest, timeout=timeout)

    def model(self, host: str, **values: object) -> None:
        """Move ``host``'s model server between states (``engines.Control``'s fields:
        ``sleeping=True``, ``waiting=8``, ``load_seconds=20`` counted from its start, where
        a shorter one ends a load in progress, ...)."""
        engines.write_control(engines.control_path(self.host_dir(host)), **values)

    def fault(self, host: str, kind: str, *args: str) -> None:
        """Apply a fault (``down``, ``blackhole``, ``firewall PORT``, ``slow S``,
        ``kill-router``, ``restore``)."""
        result = self.sandbox("fault", host, kind, *args)
        if result.returncode != 0:
            raise SandboxCommandError(f"fault {host} {kind} failed: {result.stderr.strip()}")

    def restore_all(self) -> None:
        """Undo every fault in the world at once (in-process: quicker than one CLI per host)."""
        for host in self.info.ssh_hosts:
            faults.clear_network(self.info.id, host.name)
            faults.clear_slow(self.layout.host_dir(host.name))
        if self.info.kube is not None and faults.kube_fault(self.layout.kube_fault):
            faults.set_kube_fault(self.layout.kube_fault, None, self.info.kube.pid)

    async def assh(
        self, host: str, command: str, *, input: str | None = None, timeout: float = SSH_TIMEOUT
    ) -> tuple[int, str, str]:
        """Run ``command`` on ``host`` over SSH: (exit status, stdout, stderr)."""
        return await host_run(self.layout, self.info, host, command, input=input, timeout=timeout)

    def ssh(
        self, host: str, command: str, *, input: str | None = None, timeout: float = SSH_TIMEOUT
    ) -> tuple[int, str, str]:
        """Blocking :meth:`assh` (usable from sync and async tests alike)."""
        result: tuple[int, str, str] = _run_coroutine(
            lambda: self.assh(host, command, input=input, timeout=timeout)
        )
        return result


def _may_have_real_users(spec: WorldSpec) -> bool:
    """Whether the world may get real podman, and with it real users (``real_hosts``):
    unless it asks for the emulation, as ``real_podman.choose`` reads the ask (nothing
    asked is ``auto``, which takes real podman where it runs)."""
    mode = spec.podman or os.environ.get(real_podman.MODE_VAR) or "auto"
    return mode in ("real", "auto")


def _world_dir(tmp_dir: Path, spec: WorldSpec) -> tuple[Path, Path | None]:
    """Where the world is made, and the directory made for it outside ``tmp_dir`` (None:
    ``tmp_dir`` itself), which ``tmp_dir/world`` then links to."""
    root = Path(tmp_dir).resolve()
    if not _may_have_real_users(spec):
        return root, None
    REAL_USERS_BASE.mkdir(mode=0o711, exist_ok=True)
    made = Path(tempfile.mkdtemp(prefix=f"{root.name}-", dir=REAL_USERS_BASE))
    made.chmod(0o711)
    root.mkdir(parents=True, exist_ok=True)
    link = root / WORLD_LINK
    link.unlink(missing_ok=True)
    link.symlink_to(made)
    return made, made


@contextlib.contextmanager
def running_world(tmp_dir: Path, spec: WorldSpec | None = None) -> Iterator[World]:
    """Start the world ``spec`` asks for (``WorldSpec()``: two providers and the crc site)
    in ``tmp_dir`` with ``sandbox up``; always ``sandbox down`` after. A world that may get
    real users is made under ``REAL_USERS_BASE`` instead, linked from ``tmp_dir/world``,
    and removed after its ``down``."""
    spec = spec or WorldSpec()
    root, made = _world_dir(Path(tmp_dir), spec)
    args = ["up", "--dir", str(root), *up_options(spec)]
    world_id = None
    try:
        result = sandbox_command(*args)
        if result.returncode != 0:
            raise SandboxCommandError(
                f"sandbox up failed ({result.returncode}):\n{result.stdout}{result.stderr}"
            )
        topology = Path(result.stdout.strip().splitlines()[-1])
        info = WorldLayout(root).load()
        world_id = info.id
        yield World(
            dir=root, topology=topology, info=info, stdout=result.stdout, stderr=result.stderr
        )
    finally:
        down = sandbox_command("down", "--dir", str(root))
        if world_id is not None:
            assert_nothing_left(world_id, down)
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)


def assert_nothing_left(world_id: str, down: subprocess.CompletedProcess[str]) -> None:
    """Raise when a world's Unix users or processes outlived its ``sandbox down``."""
    users = [a.name for a in real_users.world_accounts(world_id)]
    processes = world_processes(world_id)
    if users or processes:
        raise SandboxCommandError(
            f"sandbox down left users {users} and processes {processes}:\n"
            f"{down.stdout}{down.stderr}"
        )
