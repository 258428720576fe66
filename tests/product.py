"""The product as the sandbox tests drive it: its command line on a topology, a world set
up and up through the engine, and a world whose model servers want a bearer key. One copy
here, for every test that needs them."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from skupper_mcp.engine.core import Engine
from skupper_mcp.topology import load_topology
from skupper_sandbox import real_podman
from skupper_sandbox.layout import WorldSpec, env_prefix
from skupper_sandbox.testing import World, reachable_dir, running_world

#: The podman kinds a world may run on (``podman_kind``).
PODMAN_KINDS = ["emulated", "real"]

#: How long one CLI run may take on a loaded machine (setup of a world is the longest).
CLI_TIMEOUT = 180


def cli(
    topology: Path | None, *args: str, timeout: float = CLI_TIMEOUT
) -> subprocess.CompletedProcess[str]:
    """``python -m skupper_mcp [--topology TOPOLOGY] ARGS``, its output captured; never
    raises for its exit status (the test reads it)."""
    where = ["--topology", str(topology)] if topology is not None else []
    return subprocess.run(
        [sys.executable, "-m", "skupper_mcp", *where, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def cli_json(
    topology: Path, *args: str, timeout: float = CLI_TIMEOUT
) -> tuple[int, dict[str, Any]]:
    """``cli`` with ``--json``: its exit status and its JSON answer (an ``AssertionError``
    showing both streams when the output is no JSON)."""
    done = cli(topology, *args, "--json", timeout=timeout)
    try:
        return done.returncode, json.loads(done.stdout)
    except json.JSONDecodeError:
        raise AssertionError(f"{args}: {done.returncode}\n{done.stdout}\n{done.stderr}") from None


def status_sites(topology: Path, timeout: float = CLI_TIMEOUT) -> dict[str, dict[str, Any]]:
    """``status --json``'s site rows, by host."""
    _, status = cli_json(topology, "status", timeout=timeout)
    return {s["host"]: s for s in status["sites"]}


def reboot(world: World, host: str) -> None:
    """``skupper-sandbox reboot HOST``, which must succeed."""
    done = world.sandbox("reboot", host)
    assert done.returncode == 0, done.stderr


def set_up(topology: Path) -> None:
    """``setup`` of every site of ``topology`` through the engine, ok (its result shown
    when not)."""

    async def build() -> None:
        async with Engine(load_topology(topology)) as engine:
            result = await engine.setup()
        assert result.ok, result.model_dump_json(indent=1)

    asyncio.run(build())


def set_up_and_up(topology: Path) -> None:
    """``setup`` then ``up`` of every site of ``topology`` through the engine, each ok."""

    async def build() -> None:
        async with Engine(load_topology(topology)) as engine:
            assert (await engine.setup()).ok
            assert (await engine.up()).ok

    asyncio.run(build())


@dataclass
class KeyedWorld:
    """A world whose model servers want a bearer key (as vLLM ``--api-key``): ``key_file``
    is the product's copy (0600), ``keyed`` the world's topology with
    ``<PREFIX>_MODEL_API_KEY_FILE`` naming it for the keyed providers, ``plain`` without."""

    world: World
    key_file: Path
    keyed: Path

    @property
    def plain(self) -> Path:
        return self.world.topology


@contextlib.contextmanager
def keyed_world(
    root: Path,
    key: str,
    keyed: tuple[str, ...],
    *,
    server_args: tuple[str, ...] = (),
    server_env: str = "",
    **spec: Any,
) -> Iterator[KeyedWorld]:
    """Start a world (``WorldSpec(kubernetes=False, **spec)``) under ``root`` whose model
    servers take ``key`` from a copy the hosts' users reach (``server_args`` after the
    built-in server's own, ``server_env`` before it: ``MODEL_ID=...``); stopped after."""
    key_file = root / "model.key"
    key_file.write_text(key + "\n")
    key_file.chmod(0o600)
    with contextlib.ExitStack() as stack:
        # the model servers run as the hosts' users: their copy of the key where they reach it
        served_key = stack.enter_context(reachable_dir(f"{root.name}-key")) / "model.key"
        served_key.write_text(key + "\n")
        served_key.chmod(0o644)
        server = [sys.executable, "-m", "skupper_sandbox.model_server"]
        command = shlex.join([*server, "--api-key-file", str(served_key), *server_args])
        world_spec = WorldSpec(
            kubernetes=False,
            model_server_command=f"{server_env} {command}" if server_env else command,
            model_server_volumes=(str(served_key.parent),),
            **spec,
        )
        world = stack.enter_context(running_world(root / "world", world_spec))
        topology = root / "keyed.env"
        lines = [f"{env_prefix(p)}MODEL_API_KEY_FILE={key_file}" for p in keyed]
        topology.write_text(world.topology.read_text() + "\n" + "\n".join(lines) + "\n")
        yield KeyedWorld(world, key_file, topology)


def podman_kind(request: pytest.FixtureRequest) -> str:
    """The podman kind a fixture parametrized with ``params=PODMAN_KINDS`` starts its world
    on: the emulation, or this machine's real podman (the world a user's hosts are),
    skipped saying why where that cannot run a container."""
    kind = str(request.param)
    if kind == "real" and (why_not := real_podman.probe()) is not None:
        pytest.skip(f"real podman cannot run here: {why_not}")
    return kind
