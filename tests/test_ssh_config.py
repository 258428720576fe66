"""~/.ssh/config honoured as the user's own ssh honours it: HostName, Port, User,
IdentityFile and ProxyJump of a topology's alias, the topology's values winning, each
value's source told. Every test has a HOME of its own: the machine's ~/.ssh is never read.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skupper_mcp.connectors import ssh_config
from skupper_mcp.connectors.base import SSHOptions, SSHTarget
from skupper_mcp.connectors.ssh import SSHConnector
from skupper_mcp.errors import ConnectError, SiteConfigError
from sshkit import asyncssh_server, known_hosts_line

TARGET_ADDRESS = "127.204.0.30"
JUMP_ADDRESS = "127.204.0.31"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    return home


def _config(home: Path, text: str) -> Path:
    path = home / ".ssh" / "config"
    path.write_text(text)
    return path


def test_the_config_fills_what_the_topology_leaves_unset(home: Path) -> None:
    key = home / ".ssh" / "gpu_key"
    key.write_text("not read here")
    path = _config(
        home,
        f"Host gpu\n  HostName 10.1.2.3\n  Port 2222\n  User alice\n"
        f"  IdentityFile {key}\n  IdentityFile ~/.ssh/absent\n  ProxyJump bastion:2200\n"
        "Host *\n  Port 22\n",
    )
    resolved = ssh_config.resolve("gpu-host", SSHTarget(host="gpu"), SSHOptions())
    assert (resolved.host, resolved.port, resolved.user) == ("10.1.2.3", 2222, "alice")
    assert resolved.identity_files == (key,)  # the absent one passed over, as ssh does
    assert resolved.proxy_jump == "bastion:2200"
    sources = {s.option: (s.value, s.source) for s in resolved.settings}
    assert sources == {
        "HostName": ("10.1.2.3", str(path)),
        "Port": ("2222", str(path)),
        "User": ("alice", str(path)),
        "IdentityFile": (str(key), str(path)),
        "ProxyJump": ("bastion:2200", str(path)),
    }


def test_the_topology_wins_where_both_say(home: Path) -> None:
    _config(home, "Host gpu\n  HostName 10.1.2.3\n  Port 2222\n  User alice\n")
    own_key = home / "topology_key"
    target = SSHTarget(host="gpu", port=2200, user="bob")
    resolved = ssh_config.resolve("gpu-host", target, SSHOptions(identity_files=(own_key,)))
    assert (resolved.host, resolved.port, resolved.user) == ("10.1.2.3", 2200, "bob")
    assert resolved.identity_files == (own_key,)
    sources = {s.option: s.source for s in resolved.settings}
    assert sources["Port"] == sources["User"] == sources["IdentityFile"] == "topology.env"


def test_no_config_dials_the_topology_on_port_22(home: Path) -> None:
    resolved = ssh_config.resolve("h", SSHTarget(host="gpu.example"), SSHOptions())
    assert (resolved.host, resolved.port, resolved.proxy_jump) == ("gpu.example", 22, None)
    assert {s.option: s.source for s in resolved.settings} == {
        "HostName": "topology.env",
        "Port": "default",
    }


def test_a_config_that_cannot_be_parsed_is_a_typed_error_naming_it(home: Path) -> None:
    path = _config(home, "Host gpu\n  Port notaport\n")
    with pytest.raises(SiteConfigError) as raised:
        ssh_config.resolve("gpu-host", SSHTarget(host="gpu"), SSHOptions())
    assert raised.value.variable == "SSH_CONFIG"
    assert str(path) in str(raised.value)


@pytest.mark.parametrize("jump", ["host:port", "host:", "@", "a,b,c,d,e"])
def test_an_unreadable_proxy_jump_is_refused(jump: str) -> None:
    with pytest.raises(SiteConfigError):
        ssh_config.jump_hops("h", jump)


def test_proxy_jump_hops_read_as_ssh_reads_them() -> None:
    hops = ssh_config.jump_hops("h", "alice@bastion:2200,inner")
    assert hops == [
        SSHTarget(host="bastion", port=2200, user="alice"),
        SSHTarget(host="inner", port=None, user=None),
    ]


async def test_an_alias_with_port_and_proxy_jump_connects(home: Path, tmp_path: Path) -> None:
    """The target only listens on its own loopback address and port, named in the config
    alone; the connection goes through the jump host, which counts what it forwarded."""
    async with (
        asyncssh_server(tmp_path / "jump", JUMP_ADDRESS, forwarding=True) as jump,
        asyncssh_server(tmp_path / "gpu", TARGET_ADDRESS) as gpu,
    ):
        known = home / ".ssh" / "known_hosts"
        known.write_text(
            known_hosts_line(jump.keys.host_key, JUMP_ADDRESS, jump.port)
            + known_hosts_line(gpu.keys.host_key, TARGET_ADDRESS, gpu.port)
        )
        path = _config(
            home,
            f"Host gpu-alias\n  HostName {TARGET_ADDRESS}\n  Port {gpu.port}\n  User tester\n"
            f"  IdentityFile {gpu.keys.client_key}\n  ProxyJump jumpbox\n"
            f"Host jumpbox\n  HostName {JUMP_ADDRESS}\n  Port {jump.port}\n  User tester\n"
            f"  IdentityFile {jump.keys.client_key}\n",
        )
        connector = SSHConnector("gpu-host", SSHTarget(host="gpu-alias"), SSHOptions())
        try:
            result = await connector.run("echo through", check=True)
        finally:
            await connector.close()
        assert result.stdout == "through\n"
        assert jump.connections_accepted == 1 and jump.forwarded == 1
        assert gpu.connections_accepted == 1
        assert connector.resolved is not None
        sources = {s.option: (s.value, s.source) for s in connector.resolved.settings}
        assert sources["Port"] == (str(gpu.port), str(path))
        assert sources["ProxyJump"] == ("jumpbox", str(path))


async def test_a_jump_host_that_refuses_is_named_in_the_error(home: Path, tmp_path: Path) -> None:
    async with asyncssh_server(tmp_path / "jump", JUMP_ADDRESS) as jump:
        known = home / ".ssh" / "known_hosts"
        known.write_text(known_hosts_line(jump.keys.host_key, JUMP_ADDRESS, jump.port))
        _config(
            home,
            f"Host gpu-alias\n  HostName {TARGET_ADDRESS}\n  Port 2222\n  ProxyJump jumpbox\n"
            f"Host jumpbox\n  HostName {JUMP_ADDRESS}\n  Port {jump.port}\n  User tester\n"
            f"  IdentityFile {jump.keys.client_key}\n",
        )
        connector = SSHConnector("gpu-host", SSHTarget(host="gpu-alias"), SSHOptions())
        try:
            with pytest.raises(ConnectError) as raised:
                await connector.run("true")
        finally:
            await connector.close()
        assert "ProxyJump" in str(raised.value) and "jumpbox" in str(raised.value)


async def test_a_jump_host_not_in_known_hosts_is_refused(home: Path, tmp_path: Path) -> None:
    """The jump host is held to the host-key policy too: asyncssh's own ProxyJump would not."""
    async with asyncssh_server(tmp_path / "jump", JUMP_ADDRESS, forwarding=True) as jump:
        (home / ".ssh" / "known_hosts").write_text("")
        _config(
            home,
            f"Host gpu-alias\n  HostName {TARGET_ADDRESS}\n  ProxyJump tester@{JUMP_ADDRESS}:"
            f"{jump.port}\n  IdentityFile {jump.keys.client_key}\n",
        )
        connector = SSHConnector("gpu-host", SSHTarget(host="gpu-alias"), SSHOptions())
        try:
            with pytest.raises(ConnectError, match="unknown"):
                await connector.run("true")
        finally:
            await connector.close()
        assert jump.forwarded == 0
