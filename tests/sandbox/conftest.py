"""Sandbox worlds shared by the sandbox tests: one asyncssh world, one OpenSSH world."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import World, running_world

SSHD = Path("/usr/sbin/sshd")


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(tmp_path_factory.mktemp("world"), WorldSpec(providers=2)) as started:
        yield started


@pytest.fixture(scope="session")
def openssh_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    if not SSHD.exists():
        pytest.fail(f"OpenSSH's sshd is not installed ({SSHD}): apt-get install -y openssh-server")
    with running_world(
        tmp_path_factory.mktemp("openssh_world"),
        WorldSpec(providers=2, sshd="openssh", kubernetes=False),
    ) as started:
        yield started
