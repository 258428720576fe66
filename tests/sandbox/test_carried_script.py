"""A root host's system paths are translated inside the script the product carries as base64
(``shell.login_command``), as a mount namespace would show them to whatever it opens."""

from __future__ import annotations

import subprocess
from pathlib import Path

from skupper_mcp.connectors.shell import ENV_PRELUDE, login_command
from skupper_sandbox import hostenv


def _root_host(tmp_path: Path) -> hostenv.HostInfo:
    return hostenv.HostInfo(
        name="rhel-ai",
        address="127.0.0.2",
        user="root",
        uid=0,
        role="provider",
        skupper_version="2.1.3",
        tmp_writable=True,
        world_id="w",
        world_dir=str(tmp_path),
        host_dir=str(tmp_path / "rhel-ai"),
    )


def test_the_carried_script_sees_the_hosts_system_paths(tmp_path: Path) -> None:
    info = _root_host(tmp_path)
    command = login_command(f"{ENV_PRELUDE}\necho /var/lib/skupper/namespaces")
    mapped = hostenv.map_system_paths(command, info)
    out = subprocess.run(["sh", "-c", mapped], capture_output=True, check=True, text=True)
    assert out.stdout == f"{info.sysroot / 'var/lib/skupper'}/namespaces\n"


def test_a_plain_command_is_translated_as_before(tmp_path: Path) -> None:
    info = _root_host(tmp_path)
    mapped = hostenv.map_system_paths("ls /var/lib/skupper/namespaces", info)
    assert mapped == f"ls {info.sysroot / 'var/lib/skupper'}/namespaces"


def test_a_payload_that_is_not_base64_text_is_left_alone(tmp_path: Path) -> None:
    info = _root_host(tmp_path)
    command = "exec sh -c 'eval x' skupper-mcp QUJD/w=="  # not UTF-8 once decoded
    assert hostenv.map_system_paths(command, info) == command
