"""``skupper-mcp init``: the starter topology a stranger begins from."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skupper_mcp.cli import main
from skupper_mcp.topology import load_topology, parse_topology
from skupper_mcp.topology.starter import starter_text


def test_init_writes_a_starter_that_parses_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "conf" / "topology.env"
    assert main(["init", str(target)]) == 0
    assert "setup --check" in capsys.readouterr().out
    topology = load_topology(target)
    assert [p.name for p in topology.providers] == ["gpu1"]
    assert topology.providers[0].ssh.host == "gpu1.example.com"
    assert topology.kubernetes is None  # the cluster is optional: commented out


def test_init_refuses_to_overwrite_unless_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "topology.env"
    target.write_text("mine\n")
    assert main(["init", str(target)]) == 2
    assert "already exists" in capsys.readouterr().err and target.read_text() == "mine\n"
    assert main(["init", "--force", str(target)]) == 0
    assert target.read_text() == starter_text()


def test_init_defaults_to_the_environment_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKUPPER_MCP_TOPOLOGY", str(tmp_path / "t.env"))
    assert main(["init"]) == 0
    assert (tmp_path / "t.env").read_text() == starter_text()


def test_the_starters_commented_sections_parse_once_uncommented() -> None:
    text = starter_text()
    cluster = re.sub(r"^# (CRC_|LOCAL_PUBLIC_HOST|LOCAL_SANS)", r"\1", text, flags=re.M)
    kube = parse_topology(cluster).kubernetes
    assert kube is not None and kube.listeners == {"gpu1": 8000}
    second = re.sub(r"^# (GPU2_)", r"\1", text, flags=re.M)
    second = second.replace('PROVIDER_HOSTS="gpu1"', 'PROVIDER_HOSTS="gpu1 gpu2"')
    assert [p.name for p in parse_topology(second).providers] == ["gpu1", "gpu2"]
