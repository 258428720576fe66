"""A stranger's first run: the starter's placeholders and a missing identity file are
named as what they are (a value to fill in, a path in topology.env), never as a host that
is down."""

from __future__ import annotations

from pathlib import Path

import pytest

from skupper_mcp.connectors.base import SSHOptions, SSHTarget
from skupper_mcp.connectors.ssh import SSHConnector
from skupper_mcp.engine.core import Engine
from skupper_mcp.engine.operations.precheck import is_placeholder
from skupper_mcp.errors import SiteConfigError
from skupper_mcp.topology import parse_topology
from skupper_mcp.topology.starter import starter_text
from topology_samples import SMALL_TOPOLOGY


@pytest.mark.parametrize(
    ("host", "placeholder"),
    [
        ("gpu1.example.com", True),
        ("example.com", True),
        ("203.0.113.10", True),
        ("198.51.100.20", True),
        ("gpu1.example.org.", True),
        ("gpu1.lab.internal", False),
        ("127.207.0.2", False),
        ("myexample.com", False),
    ],
)
def test_placeholders_are_the_reserved_example_names_and_addresses(
    host: str, placeholder: bool
) -> None:
    assert is_placeholder(host) is placeholder


async def test_a_missing_identity_file_is_named_before_any_connection(tmp_path: Path) -> None:
    known = tmp_path / "known_hosts"
    known.write_text("")
    missing = tmp_path / "id_nowhere"
    options = SSHOptions(identity_files=(missing,), known_hosts=known, connect_timeout=1)
    # nothing listens there: an attempt to connect would fail differently
    connector = SSHConnector("gpu1", SSHTarget(host="127.207.0.9", port=9), options)
    with pytest.raises(SiteConfigError) as raised:
        await connector.connect()
    assert raised.value.variable == "SSH_IDENTITY"
    assert str(raised.value) == (
        f"cannot connect to gpu1: the SSH identity file {missing} does not exist: SSH_IDENTITY "
        "in topology.env names it; fix the path, or remove SSH_IDENTITY to use the SSH agent "
        "and ~/.ssh/id_*"
    )


async def test_the_precheck_names_a_missing_identity_not_a_down_host(
    tmp_path: Path, write_topology
) -> None:
    text = SMALL_TOPOLOGY + f"SSH_IDENTITY={tmp_path}/id_gone\nSSH_CONNECT_TIMEOUT=1\n"
    async with Engine(parse_topology(text, write_topology(text))) as engine:
        result = await engine.check()
    ssh = {c.site: c for c in result.checks if c.name == "ssh"}
    for host in ("alpha", "beta"):
        assert ssh[host].status == "fail"
        assert "id_gone does not exist" in ssh[host].detail
        assert ssh[host].hint == "fix SSH_IDENTITY in topology.env"


async def test_the_precheck_of_the_starter_asks_to_replace_each_placeholder(
    write_topology,
) -> None:
    text = starter_text()
    async with Engine(parse_topology(text, write_topology(text))) as engine:
        result = await engine.check()
    gpu1 = {c.name: c for c in result.checks if c.site == "gpu1"}
    assert gpu1["ssh"].status == "fail" and gpu1["dns"].status == "fail"
    assert gpu1["ssh"].hint == (
        "replace the placeholder host gpu1.example.com in GPU1_SSH_HOST (topology.env) with "
        "gpu1's name or address"
    )
    assert "203.0.113.10 in GPU1_PUBLIC_HOST" in (gpu1["dns"].hint or "")
    # a name is a name, an address an address
    assert gpu1["ssh"].detail.startswith("gpu1.example.com is a name reserved for examples")
    assert gpu1["dns"].detail.startswith("203.0.113.10 is an address reserved for examples")
    assert "is up" not in " ".join(c.hint or "" for c in gpu1.values())
