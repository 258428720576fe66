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
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncssh

from skupper_sandbox import faults, real_users
from skupper_sandbox.cli import up_options, world_processes
from skupper_sandbox.layout import HostEntry, WorldInfo, WorldLayout, WorldSpec, ssh_user

UP_TIMEOUT = 120.0
SSH_TIMEOUT = 30.0


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
        entry = self.hosts[host]
        async with asyncssh.connect(
            entry.address,
            port=entry.ssh_port,
            username=ssh_user(self.info, entry),
            client_keys=[str(self.layout.client_key)],
            known_hosts=str(self.layout.known_hosts),
            connect_timeout=5,
        ) as conn:
            result = await asyncio.wait_for(conn.run(command, input=input), timeout)
        return (
            result.exit_status if result.exit_status is not None else 255,
            str(result.stdout or ""),
            str(result.stderr or ""),
        )

    def ssh(
        self, host: str, command: str, *, input: str | None = None, timeout: float = SSH_TIMEOUT
    ) -> tuple[int, str, str]:
        """Blocking :meth:`assh` (usable from sync and async tests alike)."""
        result: tuple[int, str, str] = _run_coroutine(
            lambda: self.assh(host, command, input=input, timeout=timeout)
        )
        return result


@contextlib.contextmanager
def running_world(tmp_dir: Path, spec: WorldSpec | None = None) -> Iterator[World]:
    """Start the world ``spec`` asks for (``WorldSpec()``: two providers and the crc site)
    in ``tmp_dir`` with ``sandbox up``; always ``sandbox down`` after."""
    root = Path(tmp_dir).resolve()
    args = ["up", "--dir", str(root), *up_options(spec or WorldSpec())]
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
        yield World(dir=root, topology=topology, info=info, stdout=result.stdout)
    finally:
        down = sandbox_command("down", "--dir", str(root))
        if world_id is not None:
            assert_nothing_left(world_id, down)


def assert_nothing_left(world_id: str, down: subprocess.CompletedProcess[str]) -> None:
    """Raise when a world's Unix users or processes outlived its ``sandbox down``."""
    users = [a.name for a in real_users.world_accounts(world_id)]
    processes = world_processes(world_id)
    if users or processes:
        raise SandboxCommandError(
            f"sandbox down left users {users} and processes {processes}:\n"
            f"{down.stdout}{down.stderr}"
        )
