"""Sandbox worlds shared by the sandbox tests: one asyncssh world, one OpenSSH world, a
small one a module starts for itself, and a demo whose world cannot start."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from skupper_sandbox import real_podman
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


@pytest.fixture(scope="module")
def small_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """The local site and rhel-ai only (no second provider, no crc), one a module."""
    with running_world(
        tmp_path_factory.mktemp("small"), WorldSpec(providers=1, kubernetes=False)
    ) as started:
        yield started


@pytest.fixture(scope="session")
def unset_world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """The local site and rhel-ai, never set up and never changed: a test reads it (status,
    a plan, a topology of its own pointing at it) and sets nothing up. Shared by the files
    that read a world never set up (``SHARED_WORLDS`` in tests/conftest.py keeps them on
    one worker, so it is made once)."""
    with running_world(
        tmp_path_factory.mktemp("unset"), WorldSpec(providers=1, kubernetes=False)
    ) as started:
        yield started


@pytest.fixture
def demo_that_cannot_start(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``python -m skupper_sandbox.demo`` asked for a podman kind that does not exist (so its
    world cannot start), its TMPDIR the test's ``tmp_path``; what it printed and its exit."""
    env = {**os.environ, "TMPDIR": str(tmp_path), real_podman.MODE_VAR: "no-such-kind"}
    return subprocess.run(
        [sys.executable, "-m", "skupper_sandbox.demo"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
