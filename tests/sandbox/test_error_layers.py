"""Errors by layer (issue 42, item 5) as a user meets them: ``status`` through the CLI on a
sandbox world, its topology changed in one way at a time. A host whose sshd answers and
refuses the key is ``refused our credentials`` (a fix of the credentials), a closed SSH
port is ``unreachable`` (a fix of the host or the network), an identity file that is not
there is topology.env's mistake (nothing was tried): three facts, three fixes."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import asyncssh
import pytest

from product import cli
from skupper_sandbox.layout import env_prefix
from skupper_sandbox.testing import World

pytestmark = [pytest.mark.sandbox, pytest.mark.spawns]

PROVIDER = "rhel-ai"


def _with(world: World, path: Path, variable: str, value: object) -> Path:
    """``world``'s topology with ``variable`` set to ``value``, written at ``path``."""
    text = re.sub(rf"(?m)^{variable}=.*$", f"{variable}={value}", world.topology.read_text())
    path.write_text(text)
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
    unset_world: World, tmp_path: Path
) -> None:
    stranger = tmp_path / "stranger"
    asyncssh.generate_private_key("ssh-ed25519").write_private_key(str(stranger))
    stranger.chmod(0o600)
    row = _rows(_with(unset_world, tmp_path / "stranger.env", "SSH_IDENTITY", stranger))[PROVIDER]
    assert row["reachable"] is False
    assert row["state_reason"].startswith(
        f"{PROVIDER} refused our credentials: authentication failed"
    )


def test_a_closed_ssh_port_is_unreachable(unset_world: World, tmp_path: Path) -> None:
    port = _closed_port(unset_world.hosts[PROVIDER].address)
    variable = f"{env_prefix(PROVIDER)}SSH_PORT"
    rows = _rows(_with(unset_world, tmp_path / "closed.env", variable, port))
    assert rows[PROVIDER]["reachable"] is False
    assert rows[PROVIDER]["state"] == "unreachable"
    assert rows[PROVIDER]["state_reason"].startswith(f"{PROVIDER} unreachable: connection refused")
    assert rows["local"]["reachable"] is True  # the others are read as ever


def test_an_identity_file_that_is_not_there_is_the_topologys_mistake(
    unset_world: World, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-key"
    row = _rows(_with(unset_world, tmp_path / "missing.env", "SSH_IDENTITY", missing))[PROVIDER]
    assert row["reachable"] is False
    why = row["state_reason"]
    assert "cannot be used as configured" in why and "SSH_IDENTITY" in why
