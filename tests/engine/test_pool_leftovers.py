"""A pool whose strategy changed leaves nothing of the old one: over the recorded site
states with the resources the other strategy built added, setup's plan removes them (and
reloads), status's setup-needed list names them, and once they are gone nothing is needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from fake_connector import FakeConnector
from skupper_mcp.engine.desired.leftovers import hub_pool_keys, local_pool_keys
from skupper_mcp.engine.desired.needs import setup_needed
from skupper_mcp.engine.desired.podman import hub_resources, local_base_resources
from skupper_mcp.engine.operations.setup import podman_setup_actions
from skupper_mcp.engine.readings import PodmanReading
from skupper_mcp.engine.scope import site_ref
from skupper_mcp.facts.site_state import SiteState, parse_site_state
from skupper_mcp.sites import resources as cr
from skupper_mcp.sites.podman import PodmanSite
from skupper_mcp.sites.work import Script
from skupper_mcp.topology import Topology, load_topology

STATES = Path(__file__).resolve().parent / "site_states"
POOL = (
    'POOLS="granite"\nPOOL_GRANITE_PROVIDERS="rhel-ai rhtevan-work"\nPOOL_GRANITE_LOCAL_PORT=9100\n'
)
STRATEGY = {
    "any": "POOL_GRANITE_STRATEGY=any\n",
    "priority": "POOL_GRANITE_STRATEGY=priority\nSKUPPER_MIN_VERSION=2.2.0\n",
}


def pool_topology(tmp_path: Path, strategy: str) -> Topology:
    path = tmp_path / f"topology-{strategy}.env"
    text = (STATES / "topology.env").read_text() + POOL + STRATEGY[strategy]
    path.write_text(text + f"STATE_DIR={tmp_path}\n")
    return load_topology(path)


def reading(topology: Topology, host: str, state: SiteState) -> PodmanReading:
    return PodmanReading(
        site_ref(topology, host), PodmanSite(FakeConnector(host), "default"), state
    )


def built_by(topology: Topology, host: str) -> list[cr.Resource]:
    """The pool's resources ``topology`` puts on ``host`` (what its setup applied)."""
    p = topology.provider(host)
    found = local_base_resources(topology) if p is None else hub_resources(p, topology.pools)
    return [r for r in found if cr.key(r)[1] == "pool-granite"]


def holding(host: str, resources: list[cr.Resource]) -> SiteState:
    """The recorded running site with ``resources`` in its input/resources."""
    state = parse_site_state((STATES / "up" / f"{host}.txt").read_text())
    for r in resources:
        state.input_resources[cr.key(r)] = r
    return state


@pytest.mark.parametrize(("old", "new"), [("any", "priority"), ("priority", "any")])
@pytest.mark.parametrize("host", ["local", "rhel-ai"])
def test_setup_removes_what_the_earlier_strategy_built_and_status_says_so(
    tmp_path: Path, old: str, new: str, host: str
) -> None:
    before, after = pool_topology(tmp_path, old), pool_topology(tmp_path, new)
    stale = [cr.key(r) for r in built_by(before, host) if r not in built_by(after, host)]
    wanted = built_by(after, host)
    state = holding(host, built_by(before, host) + wanted)
    if host == "rhel-ai" and old == "priority":
        assert stale == []  # a priority pool adds nothing to a hub: nothing is left there
        assert setup_needed(after, reading(after, host, state)) == []
        return
    assert stale, (host, old)
    needed = setup_needed(after, reading(after, host, state)) or []
    assert needed == [
        f"{kind}/{name}: left by an earlier setup of pool granite, which topology.env no "
        "longer asks for here (setup removes it)"
        for kind, name in stale
    ]
    p = after.provider(host)
    desired = local_base_resources(after) if p is None else hub_resources(p, after.pools)
    owned = local_pool_keys(after) if p is None else hub_pool_keys(after)
    site = PodmanSite(FakeConnector(host), "default")
    # the links and their Secrets are the recording's own: only the pool's resources differ
    desired += [r for r in state.input_resources.values() if r["kind"] in ("Link", "Secret")]
    tmpfs = p is not None and p.tmpfs_workaround
    plan = podman_setup_actions(site, state, desired, tmpfs=tmpfs, restore_ca=None, owned=owned)
    steps = {a.name: a for a in plan}
    assert "apply resources" not in steps  # the new strategy's resources are there already
    [remove] = steps["remove resources"].does
    names = ", ".join(f"{k}/{n}" for k, n in stale)
    assert isinstance(remove, Script)
    assert remove.summary.endswith(f"-f - ({names})"), remove.summary
    assert remove.stdin is not None and all(n in remove.stdin for _, n in stale)
    assert "skupper system reload" in steps  # the router drops the old listener
    for key in stale:
        del state.input_resources[key]
    assert setup_needed(after, reading(after, host, state)) == []
