"""A host's resource file whose ``status:`` is null (Skupper writes the resource before its
controller fills the status; a person may edit it) is that site's reading and nothing more:
through the engine's real status and diagnose over the recorded hosts (``site_replay``), every
site is still read, and every other site says exactly what it says without the edit."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from site_replay import HOSTS, Edit, ReplayedHost, ReplayEngine, probes_answered, replay_topology

RUNTIME = "@@file runtime "


def statuses_null(text: str) -> str:
    """Every runtime resource file of the reading with ``status: null`` for its status."""
    parts = re.split(r"(?m)^(?=@@)", text)
    edited = 0
    for i, part in enumerate(parts):
        if part.startswith(RUNTIME) and "\n|status:\n" in part:
            head = part[: part.index("\n|status:\n")]
            parts[i] = head + "\n|status: null\n"
            edited += 1
    if not edited:
        raise AssertionError("no runtime resource with a status in the recorded reading")
    return "".join(parts)


async def observe(state_dir: Path, edits: dict[str, tuple[Edit, ...]]) -> dict[str, Any]:
    """Status's and diagnose's results (as JSON) over the recorded ``up`` world."""
    topology = replay_topology(state_dir)
    hosts = {h: ReplayedHost(h, "up", edits.get(h, ())) for h in HOSTS}
    with probes_answered(topology, hosts):
        async with ReplayEngine(topology, hosts, "") as engine:
            status = (await engine.status()).model_dump(mode="json")
            diagnose = (await engine.diagnose()).model_dump(mode="json")
    return {"status": status, "diagnose": diagnose}


def sites(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each site's row, without how long its read took (which differs from run to run)."""
    return {s["host"]: {k: v for k, v in s.items() if k != "seconds"} for s in result["sites"]}


def findings(result: dict[str, Any], host: str) -> list[dict[str, Any]]:
    return [f for f in result["findings"] if f["host"] == host]


@pytest.fixture
def state_dirs(tmp_path: Path) -> tuple[Path, Path]:
    """A STATE_DIR for the plain world and one for the edited world."""
    (plain := tmp_path / "plain").mkdir()
    (odd := tmp_path / "odd").mkdir()
    return plain, odd


@pytest.mark.parametrize("edited", HOSTS)
async def test_a_resource_file_with_status_null_fails_only_its_own_site(
    edited: str, state_dirs: tuple[Path, Path]
) -> None:
    plain = await observe(state_dirs[0], {})
    odd = await observe(state_dirs[1], {edited: (statuses_null,)})
    assert set(sites(odd["status"])) == set(sites(plain["status"])) >= set(HOSTS)
    for host in HOSTS:
        if host == edited:
            continue
        assert sites(odd["status"])[host] == sites(plain["status"])[host], host
        assert sites(odd["diagnose"])[host] == sites(plain["diagnose"])[host], host
        assert findings(odd["diagnose"], host) == findings(plain["diagnose"], host), host
    # the edited site is read: its router runs, and no status is no claim of Ready
    row = sites(odd["status"])[edited]
    assert row["reachable"] and row["controller"], row
    assert row["state"] == "up" and row["detail"] == "Pending", row
    assert not row["stale"], row
