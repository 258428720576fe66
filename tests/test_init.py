"""``skupper-mcp init``: the starter topology a stranger begins from."""

from __future__ import annotations

import re
import stat
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


def test_init_writes_a_file_only_its_user_reads(tmp_path: Path) -> None:
    target = tmp_path / "conf" / "topology.env"
    assert main(["init", str(target)]) == 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert stat.S_IMODE(target.parent.stat().st_mode) == 0o700
    assert main(["init", "--force", str(target)]) == 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in target.parent.iterdir()] == ["topology.env"]  # nothing staged left


@pytest.mark.parametrize("force", [False, True])
@pytest.mark.parametrize("victim_exists", [True, False])
def test_init_never_writes_through_a_link_planted_at_the_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], force: bool, victim_exists: bool
) -> None:
    """A link left where init writes (a shared folder's topology.env pointing at the user's
    ~/.bashrc) would have the starter written over what it points to."""
    victim = tmp_path / "victim"
    if victim_exists:
        victim.write_text("precious\n")
    target = tmp_path / "shared" / "topology.env"
    target.parent.mkdir()
    target.symlink_to(victim)
    assert main(["init", *(["--force"] if force else []), str(target)]) == 2
    assert "is a symbolic link" in capsys.readouterr().err
    assert target.is_symlink()
    if victim_exists:
        assert victim.read_text() == "precious\n"
    else:
        assert not victim.exists()


def test_init_never_writes_into_a_linked_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    linked = tmp_path / "conf"
    linked.symlink_to(elsewhere, target_is_directory=True)
    assert main(["init", str(linked / "topology.env")]) == 2
    assert "is a symbolic link" in capsys.readouterr().err
    assert main(["init", str(linked)]) == 2  # the directory named itself: a link too
    assert list(elsewhere.iterdir()) == []


def test_init_names_no_topology_for_the_file_every_verb_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("SKUPPER_MCP_TOPOLOGY", raising=False)
    assert main(["init"]) == 0
    said = capsys.readouterr().out
    assert "`skupper-mcp setup --check`" in said and "--topology" not in said
    elsewhere = tmp_path / "elsewhere.env"
    assert main(["init", str(elsewhere)]) == 0
    assert f"`skupper-mcp --topology {elsewhere} setup --check`" in capsys.readouterr().out
