"""Errors by layer (issue 42, item 5) as a user meets them: ``status`` through the CLI on a
sandbox world, its topology changed in one way at a time. A host whose sshd answers and
refuses the key is ``refused our credentials`` (a fix of the credentials), a closed SSH
port is ``unreachable`` (a fix of the host or the network), an identity file that is not
there is topology.env's mistake (nothing was tried): three facts, three fixes."""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import asyncssh
import pytest

from product import cli
from skupper_sandbox.layout import WorldSpec, env_prefix
from skupper_sandbox.testing import World, running_world

pytestmark = [pytest.mark.sandbox, pytest.mark.spawns]

PROVIDER = "rhel-ai"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(
        tmp_path_factory.mktemp("layers"), WorldSpec(providers=1, kubernetes=False)
    ) as made:
        yield made


def _changed(world: World, path: Path, change: Callable[[str], str]) -> Path:
    path.write_text(change(world.topology.read_text()))
    return path


def _rows(topology: Path) -> dict[str, dict]:
    done = cli(topology, "--json", "status")
    assert done.stdout, done.stderr
    return {row["host"]: row for row in json.loads(done.stdout)["sites"]}


def _closed_port(address: str) -> int:
    with socket.socket() as probe:
        probe.bind((address, 0))
        return int(probe.getsockname()[1])  # closed once the probe is


def test_a_key_the_host_does_not_authorize_is_refused_not_unreachable(
    world: World, tmp_path: Path
) -> None:
    stranger = tmp_path / "stranger"
    asyncssh.generate_private_key("ssh-ed25519").write_private_key(str(stranger))
    stranger.chmod(0o600)
    topology = _changed(
        world,
        tmp_path / "stranger.env",
        lambda text: re.sub(r"(?m)^SSH_IDENTITY=.*$", f"SSH_IDENTITY={stranger}", text),
    )
    row = _rows(topology)[PROVIDER]
    assert row["reachable"] is False
    assert row["detail"].startswith(f"{PROVIDER} refused our credentials: authentication failed")


def test_a_closed_ssh_port_is_unreachable(world: World, tmp_path: Path) -> None:
    address = world.hosts[PROVIDER].address
    port = _closed_port(address)
    prefix = env_prefix(PROVIDER)
    topology = _changed(
        world,
        tmp_path / "closed.env",
        lambda text: re.sub(rf"(?m)^{prefix}SSH_PORT=.*$", f"{prefix}SSH_PORT={port}", text),
    )
    rows = _rows(topology)
    assert rows[PROVIDER]["reachable"] is False
    assert rows[PROVIDER]["state"] == "unreachable"
    assert rows[PROVIDER]["detail"].startswith(f"{PROVIDER} unreachable: connection refused")
    assert rows["local"]["reachable"] is True  # the others are read as ever


def test_an_identity_file_that_is_not_there_is_the_topologys_mistake(
    world: World, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-key"
    topology = _changed(
        world,
        tmp_path / "missing.env",
        lambda text: re.sub(r"(?m)^SSH_IDENTITY=.*$", f"SSH_IDENTITY={missing}", text),
    )
    row = _rows(topology)[PROVIDER]
    assert row["reachable"] is False
    assert "cannot be used as configured" in row["detail"] and "SSH_IDENTITY" in row["detail"]
