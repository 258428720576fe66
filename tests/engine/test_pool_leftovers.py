"""A pool whose strategy changed leaves nothing of the old one: over the recorded site
states with the resources the other strategy built added, setup's plan removes them (and
reloads), status's setup-needed list names them, and once they are gone nothing is needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from fake_connector import FakeConnector
from skupper_mcp.engine.desired.leftovers import hub_pool_keys, listener_pool_keys
from skupper_mcp.engine.desired.needs import setup_needed
from skupper_mcp.engine.desired.podman import hub_resources, local_base_resources
from skupper_mcp.engine.operations.setup import podman_setup_actions
from skupper_mcp.engine.readings import PodmanReading
from skupper_mcp.engine.scope import site_ref
from skupper_mcp.facts.site_state import SiteState, parse_site_state
from skupper_mcp.sites import resources as cr
from skupper_mcp.sites.podman import PodmanSite
from skupper_mcp.sites.work import ApiCall, Script
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
    owned = listener_pool_keys(after) if p is None else hub_pool_keys(after)
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


@pytest.mark.parametrize(
    ("old", "new"), [("any", "priority"), ("priority", "any"), ("priority", "none")]
)
def test_the_cluster_drops_the_pools_earlier_listener_before_it_applies_the_new_one(
    old: str, new: str
) -> None:
    """The cluster holding what ``old`` built (a Listener or a MultiKeyListener on
    model-pool-chat, all Ready): with ``new`` (none: the pool lost _CRC_PORT) setup's plan
    deletes it first and the setup-needed list says why."""
    from skupper_mcp.engine.desired.cluster import base_resources, kube_resources_without_secrets
    from skupper_mcp.engine.desired.needs import cluster_needs
    from skupper_mcp.engine.operations.setup import kube_setup_actions
    from skupper_mcp.engine.readings import ClusterReading
    from skupper_mcp.sites.kube import ClusterSite, KubeState
    from skupper_mcp.topology import parse_topology
    from topology_samples import SMALL_TOPOLOGY

    def cluster_topology(strategy: str) -> Topology:
        kind = strategy if strategy != "none" else "priority"
        text = (
            SMALL_TOPOLOGY
            + "CRC_SITE_NAME=crc-test\nCRC_MODEL_PORT=8000\nSKUPPER_MIN_VERSION=2.2.0\n"
            + 'POOLS="chat"\nPOOL_CHAT_PROVIDERS="alpha beta"\nPOOL_CHAT_LOCAL_PORT=9100\n'
            + f"POOL_CHAT_STRATEGY={kind}\n"
            + ("POOL_CHAT_CRC_PORT=8100\n" if strategy != "none" else "")
        )
        return parse_topology(text, Path("topology.env"))

    before, after = cluster_topology(old), cluster_topology(new)
    held = {cr.key(r): r for r in kube_resources_without_secrets(before)}
    ready = {"status": {"status": "Ready", "message": "OK"}}
    by_kind = {
        kind: {n: {**r, **ready} for (k, n), r in held.items() if k == kind}
        for kind in ("Site", "Link", "Listener", "MultiKeyListener")
    }
    state = KubeState(
        version="v1.31.6",
        site=next(iter(by_kind["Site"].values())),
        links=by_kind["Link"],
        listeners=by_kind["Listener"],
        multi_key_listeners=by_kind["MultiKeyListener"],
        secrets={n: {"metadata": {"name": n}} for n in by_kind["Link"]},
    )
    stale = [
        cr.key(r)
        for r in base_resources(before)
        if cr.key(r)[1] == "pool-chat"
        and cr.key(r) not in {cr.key(w) for w in base_resources(after)}
    ]
    assert stale, (old, new)
    ref = site_ref(after, "crc")
    site = ClusterSite(api=None, namespace="default")  # type: ignore[arg-type]  # never called
    needed = setup_needed(after, ClusterReading(ref, site, state, "setup")) or []
    [(kind, name)] = stale
    assert needed[0].startswith(f"{kind}/{name}: left by an earlier setup of pool chat"), needed
    need = cluster_needs(after, state, "setup")
    assert need.remove == stale
    todo, _ = kube_setup_actions(after, site, state, {}, "setup")
    names = [a.name for a in todo]
    assert names[0] == "remove resources", names
    [call] = todo[0].does
    assert isinstance(call, ApiCall)
    assert (call.verb, call.kind, call.name) == ("delete", kind, name)
    if new == "none":
        assert "apply site and listeners" not in names
    else:
        assert names[1] == "apply site and listeners", names


def test_a_member_that_leaves_an_any_pool_has_its_connector_of_the_pool_removed() -> None:
    """gamma leaves the pool: its hub's second Connector (the pool's key) is a leftover;
    the members that stay keep theirs."""
    from skupper_mcp.engine.desired.needs import podman_needs
    from skupper_mcp.topology import parse_topology
    from topology_samples import SMALL_TOPOLOGY

    gamma = (
        SMALL_TOPOLOGY.replace('"alpha beta"', '"alpha beta gamma"')
        + "GAMMA_SSH_HOST=127.207.0.4\nGAMMA_PUBLIC_HOST=127.207.0.4\n"
        + 'GAMMA_INTER_ROUTER_PORT=8002\nGAMMA_MODEL_PORT=11000\nGAMMA_PROFILES="g=org/g"\n'
        + 'POOLS="chat"\nPOOL_CHAT_LOCAL_PORT=9100\n'
    )
    before = parse_topology(gamma + 'POOL_CHAT_PROVIDERS="alpha beta gamma"\n', Path("t.env"))
    after = parse_topology(gamma + 'POOL_CHAT_PROVIDERS="alpha beta"\n', Path("t.env"))
    for host, left in (("gamma", [("Connector", "pool-chat")]), ("alpha", [])):
        p_before, p_after = before.provider(host), after.provider(host)
        assert p_before is not None and p_after is not None
        held = {cr.key(r): r for r in hub_resources(p_before, before.pools)}
        state = parse_site_state((STATES / "up" / "rhtevan-work.txt").read_text())
        state.input_resources.update(held)
        desired = hub_resources(p_after, after.pools)
        need = podman_needs(
            state, desired, namespace="default", tmpfs=False, owned=hub_pool_keys(after)
        )
        assert need.remove == left, (host, need.remove)


class _RefusingApi:
    """A cluster API whose multikeylisteners list answers ``status``."""

    def __init__(self, status: int) -> None:
        self.status = status

    async def list(self, plural: str, *, namespace: str) -> list[dict[str, object]]:
        from skupper_mcp.errors import KubeError

        assert plural == "multikeylisteners"
        raise KubeError("crc", f"answered {self.status}", self.status)


@pytest.mark.parametrize(("status", "none"), [(404, True), (403, True), (500, False)])
async def test_a_cluster_without_the_kind_or_the_right_to_list_it_holds_no_multikeylistener(
    status: int, none: bool
) -> None:
    """A cluster before Skupper 2.2 has no such resource (404), a namespace role without
    the kind is refused (403): neither is a failed read; anything else is."""
    from skupper_mcp.errors import KubeError
    from skupper_mcp.sites.kube import ClusterSite

    site = ClusterSite(_RefusingApi(status), "default", (), True)  # type: ignore[arg-type]
    if none:
        assert await site._multi_key_listeners() == []
    else:
        with pytest.raises(KubeError):
            await site._multi_key_listeners()
    assert await ClusterSite(_RefusingApi(status), "d")._multi_key_listeners() == []  # type: ignore[arg-type]


def test_a_multikeylistener_whose_strategy_changes_is_removed_and_rendered_without_first(
    tmp_path: Path,
) -> None:
    """The local site runs granite as priority; topology.env says weighted: Skupper 2.2.1
    refuses the other kind against the running state, so setup removes it, reloads, then
    applies it anew and reloads (site_state_validator.go@2.2.1:229-234)."""
    weighted = pool_topology(tmp_path, "priority")
    path = Path(weighted.path)
    path.write_text(path.read_text().replace("STRATEGY=priority", "STRATEGY=weighted"))
    weighted = load_topology(path)
    running = built_by(pool_topology(tmp_path, "priority"), "local")
    state = holding("local", running)
    state.runtime_resources.update({cr.key(r): r for r in running})
    needed = setup_needed(weighted, reading(weighted, "local", state)) or []
    assert any(
        line.startswith("MultiKeyListener/pool-granite: runs another strategy") for line in needed
    ), needed
    desired = local_base_resources(weighted) + [
        r for r in state.input_resources.values() if r["kind"] in ("Link", "Secret")
    ]
    site = PodmanSite(FakeConnector("local"), "default")
    plan = podman_setup_actions(
        site, state, desired, tmpfs=False, restore_ca=None, owned=listener_pool_keys(weighted)
    )
    names = [a.name for a in plan]
    order = [
        "remove resources",
        "reload without the old strategy",
        "apply resources",
        "skupper system reload",
    ]
    assert [n for n in names if n in order] == order, names
    # input already weighted (an earlier setup's reload was refused): still made anew
    state.input_resources.update({cr.key(r): r for r in built_by(weighted, "local")})
    again = podman_setup_actions(
        site, state, desired, tmpfs=False, restore_ca=None, owned=listener_pool_keys(weighted)
    )
    assert [a.name for a in again if a.name in order] == order
