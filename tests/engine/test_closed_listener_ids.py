"""A closed listener names no model: after ``down`` (or teardown, or before setup) the
providers' hosts still serve their models, but nothing accepts on the local port, so the
status row of that port has no model id to show (the one that did was the host's, carried
over). Through the engine's real status over the recorded worlds (``site_replay``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from site_replay import HOSTS, ReplayedHost, ReplayEngine, probes_answered, replay_topology


async def listeners(state_dir: Path, phase: str) -> dict[str, tuple[str | None, list[str]]]:
    topology = replay_topology(state_dir)
    hosts = {h: ReplayedHost(h, phase) for h in HOSTS}
    with probes_answered(topology, hosts):
        async with ReplayEngine(topology, hosts, "") as engine:
            status = await engine.status()
    return {li.provider or "": (li.state, li.model_ids) for li in status.listeners}


@pytest.mark.parametrize("phase", ["down", "fresh"])
async def test_a_closed_listener_shows_no_model_id(tmp_path: Path, phase: str) -> None:
    found = await listeners(tmp_path, phase)
    assert found == {"rhel-ai": ("closed", []), "rhtevan-work": ("closed", [])}, found


async def test_an_open_listener_still_shows_what_its_provider_serves(tmp_path: Path) -> None:
    found = await listeners(tmp_path, "up")
    assert found["rhel-ai"] == ("serving", ["granite-3.3-8b-instruct-fp8"]), found
