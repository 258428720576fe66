"""What a user sees when a host cannot be reached, by why: a name that does not resolve is
not a host that is down, and a closed SSH port is neither (``errors.Unreached``). Through the
CLI, over real sockets: a name under ``.test`` (RFC 6761: no resolver answers it) and a
loopback port nothing listens on; the local site runs fake tools."""

from __future__ import annotations

import errno
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import asyncssh
import pytest

from skupper_mcp.engine.unreached import unreached_advice
from skupper_mcp.errors import Unreached, unreached_of
from sshkit import free_port
from topology_samples import ssh_topology

FAKE_TOOLS = {
    "podman": 'echo "podman version 4.9.3"',
    "skupper": 'printf "COMPONENT VERSION\\ncli 2.1.1\\n"',
    "systemctl": 'echo "LoadState=loaded"',
    "loginctl": 'echo "Linger=yes"',
}


@pytest.fixture
def topology(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """gpu-box-1, whose name does not resolve; tower, whose SSH port is closed; the local
    site, on fake tools."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in FAKE_TOOLS.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    key = tmp_path / "id_ed25519"
    asyncssh.generate_private_key("ssh-ed25519").write_private_key(str(key))
    known = tmp_path / "known_hosts"
    known.write_text("")
    text = ssh_topology(
        [("gpu-box-1", "gpu-box-1.test", 22), ("tower", "127.207.9.3", free_port("127.207.9.3"))],
        identities=[str(key)],
        known_hosts=str(known),
        connect_timeout=5,
    ).replace("GPU_BOX_1_PUBLIC_HOST=gpu-box-1.test", "GPU_BOX_1_PUBLIC_HOST=127.207.9.2")
    path = tmp_path / "topology.env"
    path.write_text(text + f"STATE_DIR={tmp_path / 'state'}\n")
    yield path


def cli(topology: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[str, str]:
    from skupper_mcp.cli import main

    assert main(["--topology", str(topology), *args]) != 0  # a host is not reached
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_diagnose_tells_a_name_that_does_not_resolve_from_a_closed_ssh_port(
    topology: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = cli(topology, capsys, "--json", "diagnose")
    found = {f["host"]: f for f in json.loads(out)["findings"] if f["id"] == "site-unreadable"}
    name, closed = found["gpu-box-1"], found["tower"]
    assert "does not resolve" in name["cause"] and "down" not in name["cause"], name
    assert "GPU_BOX_1_SSH_HOST" in name["fix"] and "/etc/hosts" in name["fix"], name
    assert "nothing listens on its SSH port" in closed["cause"], closed
    assert "TOWER_SSH_PORT" in closed["fix"] and "resolve" not in closed["fix"], closed
    # the SSH server's unit by its name on either family (Debian/Ubuntu's is ssh)
    assert "`systemctl start sshd`" in closed["fix"], closed
    assert "`systemctl start ssh` on Debian or Ubuntu" in closed["fix"], closed


def test_the_precheck_hints_the_fix_of_each_unreached_host(
    topology: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = cli(topology, capsys, "--json", "setup", "--check")
    ssh = {c["site"]: c for c in json.loads(out)["checks"] if c["name"] == "ssh"}
    assert ssh["gpu-box-1"]["status"] == "fail"
    assert "GPU_BOX_1_SSH_HOST" in ssh["gpu-box-1"]["hint"], ssh["gpu-box-1"]
    assert "is up" not in ssh["gpu-box-1"]["hint"], ssh["gpu-box-1"]
    assert "TOWER_SSH_PORT" in ssh["tower"]["hint"], ssh["tower"]


def test_the_precheck_reports_progress_one_line_a_site_in_the_tables_order(
    topology: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err = cli(topology, capsys, "setup", "--check")
    progress = [line.strip() for line in err.splitlines() if line.startswith("  ")]
    assert [line.split(":")[0] for line in progress] == ["gpu-box-1", "tower", "local"], err
    # each site's line lists its checks as the table does, in the same order
    table = [line.split() for line in out.splitlines() if line.startswith("gpu-box-1 ")]
    names = [row[1] for row in table if row[1] != "setup-needed"]
    assert progress[0] == "gpu-box-1: " + ", ".join(
        f"{n} {row[2].lower().replace('ok', 'pass')}" for n, row in zip(names, table, strict=False)
    ), (progress[0], table)


def test_status_says_why_a_site_is_unreachable_once(
    topology: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    out, _ = cli(topology, capsys, "--json", "status")
    rows = {s["host"]: s for s in json.loads(out)["sites"]}
    assert "Name or service not known" in rows["gpu-box-1"]["state_reason"] or (
        "resolution" in rows["gpu-box-1"]["state_reason"]
    ), rows["gpu-box-1"]
    assert rows["gpu-box-1"]["detail"] is None, rows["gpu-box-1"]
    table, _ = cli(topology, capsys, "status")
    sites = table.split("\n\n")[0]  # the first table: one row a site
    assert sites.count("connection refused") == 1, sites


@pytest.mark.parametrize(
    ("error", "unreached"),
    [
        (socket.gaierror(socket.EAI_NONAME, "Name or service not known"), Unreached.NAME),
        (socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution"), Unreached.NAME),
        (ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"), Unreached.CLOSED),
        (OSError(errno.EHOSTUNREACH, "No route to host"), Unreached.NO_ROUTE),
        (OSError(errno.ENETUNREACH, "Network is unreachable"), Unreached.NO_ROUTE),
        (TimeoutError(), Unreached.SILENT),
        (ConnectionResetError(errno.ECONNRESET, "reset"), None),  # reached, then lost
    ],
)
def test_each_socket_error_of_a_dial_has_one_reason_and_its_own_fix(
    error: OSError, unreached: Unreached | None
) -> None:
    assert unreached_of(error) is unreached
    if unreached is not None:
        advice = unreached_advice(unreached, "tower", "TOWER")
        others = [unreached_advice(u, "tower", "TOWER").fix for u in Unreached if u != unreached]
        assert advice.fix not in others and "tower" in advice.cause
