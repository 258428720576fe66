"""The product's CLI and server, ``skupper-sandbox`` and ``make demo`` print nothing the
user did not cause: a library's warnings (asyncssh's import warns ``DSA is deprecated``
with the cryptography release ``make venv`` installs) go to the log at DEBUG."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import running_world

pytestmark = [pytest.mark.sandbox, pytest.mark.spawns]

#: what a Python warning looks like when it reaches a terminal
WARNING_TEXT = ("Warning:", "warnings.warn", "DSA is deprecated")


def _no_warning(stderr: str) -> None:
    for text in WARNING_TEXT:
        assert text not in stderr, stderr


def _product(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skupper_mcp", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_sandbox_up_the_products_status_and_its_server_print_no_library_warning(
    tmp_path: Path,
) -> None:
    with running_world(tmp_path, WorldSpec(providers=1, kubernetes=False)) as world:
        up_stderr = world.stderr
        status = _product("--topology", str(world.topology), "status")
        debug = _product("--topology", str(world.topology), "--log-level", "DEBUG", "status")
        served = _stdio_status(world.topology)
        # the world daemon's log, whose tail up shows when the world does not start
        daemon_log = world.layout.world_log.read_text()
    assert "podman:" in up_stderr  # what up says on stderr is still said
    _no_warning(up_stderr)
    assert status.returncode in (0, 3), status.stdout + status.stderr
    _no_warning(status.stderr)
    _no_warning(served)
    _no_warning(daemon_log)
    # the log keeps them, for whoever asks for DEBUG
    assert "DEBUG py.warnings" in debug.stderr and "DSA is deprecated" in debug.stderr


def _stdio_status(topology: Path) -> str:
    """The stdio server's stderr after it answered one ``status`` call (an agent's)."""
    server = subprocess.Popen(
        [sys.executable, "-m", "skupper_mcp", "--topology", str(topology)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert server.stdin and server.stdout
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}}
    hello["clientInfo"] = {"name": "test", "version": "0"}
    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "status"}},
    ):
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()
    try:
        for line in server.stdout:  # the call's answer; the test's timeout bounds the wait
            if json.loads(line).get("id") == 2:
                break
        else:
            pytest.fail("the server ended without answering status")
    finally:
        server.stdin.close()  # the client hangs up: the server ends
        try:
            server.wait(timeout=60)
        finally:
            server.kill()
    assert server.stderr
    return server.stderr.read()


def test_a_demo_that_cannot_start_says_why_without_library_warnings(
    demo_that_cannot_start: subprocess.CompletedProcess[str],
) -> None:
    demo = demo_that_cannot_start
    assert demo.returncode == 1 and "--podman no-such-kind" in demo.stdout
    _no_warning(demo.stdout + demo.stderr)
