"""Sandbox worlds shared by the sandbox tests: one asyncssh world, one OpenSSH world."""

from __future__ import annotations

from skupper_mcp.sandbox.testing import world_fixture

world = world_fixture(scope="session", providers=2, name="world")
openssh_world = world_fixture(
    scope="session", providers=2, sshd="openssh", kubernetes=False, name="openssh_world"
)
