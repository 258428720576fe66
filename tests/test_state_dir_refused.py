"""A STATE_DIR that is a symbolic link stops every front the same way: the message of
``statedir`` on stderr and exit 1, from the CLI's verbs and from the server in either
transport (over streamable-http it was a traceback: the token file lives there)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from skupper_mcp.cli import EXIT_FAILED, main
from topology_samples import SMALL_TOPOLOGY

START_TIMEOUT = 60.0
MESSAGE = "is a symbolic link; our state folders must be real directories"


def linked_state_topology(tmp_path: Path) -> Path:
    real = tmp_path / "real-state"
    real.mkdir(mode=0o700)
    (tmp_path / "state").symlink_to(real, target_is_directory=True)
    path = tmp_path / "topology.env"
    path.write_text(SMALL_TOPOLOGY + f"STATE_DIR={tmp_path / 'state'}\n")
    return path


def test_a_cli_verb_says_it_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--topology", str(linked_state_topology(tmp_path)), "status"]) == EXIT_FAILED
    err = capsys.readouterr().err
    assert f"skupper-mcp: {tmp_path / 'state'}: {MESSAGE}" in err
    assert list((tmp_path / "real-state").iterdir()) == []


@pytest.mark.spawns
@pytest.mark.parametrize("transport", ["stdio", "streamable-http"])
def test_the_server_says_it_and_exits_1_in_either_transport(tmp_path: Path, transport: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SKUPPER_MCP_HTTP_TOKEN"}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "skupper_mcp",
            "--topology",
            str(linked_state_topology(tmp_path)),
            "--transport",
            transport,
            "--port",
            "1",  # never bound: the server stops before it listens
        ],
        input="",
        capture_output=True,
        text=True,
        env=env,
        timeout=START_TIMEOUT,
        check=False,
    )
    assert result.returncode == EXIT_FAILED, result.stderr
    assert f"skupper-mcp: {tmp_path / 'state'}: {MESSAGE}" in result.stderr
    assert "Traceback" not in result.stderr
    assert list((tmp_path / "real-state").iterdir()) == []  # no token written through it
