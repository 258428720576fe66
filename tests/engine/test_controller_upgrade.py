"""Issue 46 item 4, the controller: a host whose skupper CLI was upgraded keeps the system
controller container of the release that installed it (``system install`` skips one that
exists, ``internal/nonkube/bootstrap/install.go@2.2.1:50-55``). setup's plan removes it and
installs again, before the site's reload, and writes the product's units after."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from fake_connector import FakeConnector
from skupper_mcp.engine.desired.leftovers import hub_pool_keys
from skupper_mcp.engine.desired.needs import podman_needs
from skupper_mcp.engine.desired.podman import hub_resources
from skupper_mcp.engine.operations.setup import needs_actions
from skupper_mcp.facts.site_state import SiteState, parse_site_state
from skupper_mcp.facts.skupper_version import Version
from skupper_mcp.sites.podman import PodmanSite
from skupper_mcp.topology import load_topology

STATES = Path(__file__).parent / "site_states"
CONTROLLER = "cloud-user-skupper-controller"


def upgraded(cli: Version) -> SiteState:
    """rhel-ai up at 2.1.3 (its controller system-controller:2.1.3), its CLI now ``cli``."""
    state = parse_site_state((STATES / "up" / "rhel-ai.txt").read_text())
    assert state.containers[CONTROLLER].image == "quay.io/skupper/system-controller:2.1.3"
    state.skupper = dataclasses.replace(state.skupper, cli=cli)
    return state


def plan(state: SiteState) -> list[str]:
    topology = load_topology(STATES / "topology.env")
    p = topology.provider("rhel-ai")
    assert p is not None
    need = podman_needs(
        state,
        hub_resources(p, topology.pools),
        namespace="default",
        tmpfs=False,
        owned=hub_pool_keys(topology),
    )
    site = PodmanSite(FakeConnector("rhel-ai"), "default")
    return [a.name for a in needs_actions(site, state, need, restore_ca=None)]


def test_an_earlier_releases_controller_is_removed_then_installed_again() -> None:
    steps = plan(upgraded(Version(2, 2, 1)))
    assert steps.index("remove old system controller") < steps.index("install system controller")
    assert steps.index("install system controller") < steps.index("skupper system reload")
    # install writes Skupper's controller unit over ours: the product's are written after
    assert steps.index("install system controller") < steps.index("install auto-restart units")


def test_a_controller_of_the_clis_release_is_left_alone() -> None:
    steps = plan(upgraded(Version(2, 1, 3)))
    assert "remove old system controller" not in steps
    assert "install system controller" not in steps
