"""engine/served.py's rule over the recorded site states: a provider without a key serves
what its host's read listed; one with a key is asked only through its listener, with the
key, and where no route is up what it serves is not known (never the host's 401)."""

from __future__ import annotations

import os
from pathlib import Path

from fake_connector import FakeConnector
from result_parts import podman_result
from skupper_mcp.engine.model_actions import model_actions
from skupper_mcp.engine.readings import PodmanReading, Reading
from skupper_mcp.engine.scope import site_ref
from skupper_mcp.engine.served import read_served, served_ids
from skupper_mcp.facts.site_state import parse_site_state
from skupper_mcp.sites.podman import PodmanSite
from skupper_mcp.topology import Topology, load_topology

STATES = Path(__file__).resolve().parent / "site_states"
FIRST = "granite-3.3-8b-instruct-fp8"  # what rhel-ai's recorded model server lists


def topology(tmp_path: Path, keyed: bool) -> Topology:
    path = tmp_path / "topology.env"
    text = (STATES / "topology.env").read_text() + f"STATE_DIR={tmp_path}\n"
    if keyed:
        key = tmp_path / "model.key"
        key.write_text("sk-test\n")
        os.chmod(key, 0o600)
        text += f"RHEL_AI_MODEL_API_KEY_FILE={key}\n"
    path.write_text(text)
    return load_topology(path)


def readings(topo: Topology) -> dict[str, Reading]:
    found: dict[str, Reading] = {}
    for host in ("rhel-ai", "rhtevan-work"):
        state = parse_site_state((STATES / "up" / f"{host}.txt").read_text())
        site = PodmanSite(FakeConnector(host), "default")
        found[host] = PodmanReading(site_ref(topo, host), site, state)
    return found


async def test_without_a_key_the_hosts_read_is_what_it_serves(tmp_path: Path) -> None:
    topo = topology(tmp_path, keyed=False)
    served = await read_served(topo, readings(topo), routed=lambda p: False)
    assert served["rhel-ai"].ids is not None and served["rhel-ai"].ids[0] == FIRST
    assert served["rhel-ai"].probe is None


async def test_with_a_key_the_hosts_read_is_never_the_answer(tmp_path: Path) -> None:
    """No route up: the keyed provider's models are not known, and its actions say the
    default profile because of that, not because of an answer it gave without the key."""
    topo = topology(tmp_path, keyed=True)
    served = await read_served(topo, readings(topo), routed=lambda p: False)
    assert served["rhel-ai"].ids is None
    assert "takes a key" in (served["rhel-ai"].problem or "")
    assert served["rhtevan-work"].ids  # unkeyed: its host's read
    result = podman_result("rhel-ai", "down")
    [action] = model_actions("down", topo, [result], served_ids(served))
    assert action.reason == "stop the default profile before its router goes down"


def test_a_stop_after_the_run_says_the_router_is_down_not_before_it_goes(tmp_path: Path) -> None:
    """down without plan ran: its router is already down, so the action cannot say "before
    its router goes down" (a plan still does)."""
    topo = topology(tmp_path, keyed=False)
    result = podman_result("rhel-ai", "down")
    [ran] = model_actions("down", topo, [result], {}, planned=False)
    assert ran.action == "stop" and "before" not in ran.reason, ran.reason
    assert ran.reason.startswith("its router is down: stop the default profile"), ran.reason
    [gone] = model_actions(
        "teardown", topo, [podman_result("rhel-ai", "removed")], {}, planned=False
    )
    assert gone.reason.startswith("its router is removed: stop"), gone.reason
    assert "do not remove" in gone.reason, gone.reason
