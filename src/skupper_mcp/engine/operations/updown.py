"""``up`` and ``down``: start and stop the network with the seed's scoping rules.

Both read every site they may touch (one round trip each, all at once), and each site acts
as soon as its own reading is in: a silent host holds up no other site, only its own result
(T9a, T9c), which says why it was skipped. ``down`` decides about the local site from the
providers' readings, each taken before that provider stopped. ``plan=True`` lists the steps
instead of taking them.
"""

from __future__ import annotations

import asyncio
import time

from ...facts import names
from ...facts.site_state import SiteState
from ...models import ListenerStatus, OperationResult, SiteResult
from ...sites import resources as cr
from ...sites import units
from ...sites.kube import (
    RESTART_ROUTER,
    ClusterSite,
    KubeState,
    apply_calls,
    delete_calls,
    ready,
)
from ...sites.podman import PodmanSite
from ...topology import Topology
from ...vocabulary import LOCAL_HOST, Progress
from .. import model_actions as actions_for
from ..desired.cluster import Certs, base_resources, differing, link_resources, link_targets
from ..listeners import ROUTE_MAX_AGE, closing, listener_row, listener_state, stopped_since
from ..runner import Action, SiteRun, on_cluster, on_host, operation_result
from ..scope import SiteRef, local_stops, resolve_target, scope
from ..scope import sites as all_sites
from ..sitemap import SiteMap, SiteView, served_models
from ..verify import probe_listeners, tcp_probe, wait_for_links, wait_router

#: How long ``up`` waits for the routers it started to run, and then, from when they all
#: run, for each provider's local listener to bind (the link connects and the provider's
#: connector becomes reachable): a slow start is not counted against the links.
ROUTER_DEADLINE = 25.0
LISTENER_DEADLINE = 25.0


def _setup_problem(sites: SiteMap, view: SiteView) -> str | None:
    """Why ``up`` cannot start this podman site: it was never set up, or is too old."""
    assert view.state is not None and view.podman is not None
    state = view.state
    problem = sites.version_problem(state)
    if problem:
        return problem
    ns = view.podman.namespace
    if not state.rendered:
        return f"Skupper namespace {ns!r} is not set up on {view.ref.host}: run setup first"
    wanted = units.site_units(ns, state.user, state.podman_path or "podman")
    if any(state.unit_files.get(w.name) != w.content for w in wanted):
        return f"the auto-restart units are not installed on {view.ref.host}: run setup first"
    return None


def podman_up_actions(site: PodmanSite, state: SiteState) -> list[Action]:
    """Controllers first, then routers; only what is not already active."""
    ns = site.namespace
    todo: list[Action] = []
    controller = names.controller_unit()
    router = names.router_unit(ns)
    if not state.unit(controller).active:
        todo.append(on_host("start controller", site, site.start([controller])))
    if not state.unit(router).active:
        todo.append(on_host("start router", site, site.start([router])))
    return todo


def podman_down_actions(site: PodmanSite, state: SiteState, tmpfs: bool) -> list[Action]:
    """Routers first, then controllers; ``podman stop`` as a safety net on tmpfs hosts."""
    ns = site.namespace
    todo: list[Action] = []
    controller = names.controller_unit()
    router = names.router_unit(ns)
    container = names.router_container(ns)
    if state.unit(router).active:
        todo.append(on_host("stop router", site, site.systemctl("stop", [router])))
    if tmpfs and state.container_running(container):
        todo.append(on_host("podman stop router", site, site.podman_stop(container)))
    if state.unit(controller).active:
        todo.append(on_host("stop controller", site, site.systemctl("stop", [controller])))
    return todo


def kube_up_actions(
    topology: Topology, site: ClusterSite, state: KubeState, certs: Certs, live: set[str]
) -> list[Action]:
    """``up crc``: re-create the links to live peers that are not connected, restart the
    router pod so it mounts their Secrets, and wait for them. A link to a peer that is down
    is left alone: it could not connect, and re-creating it every time would never settle."""
    links, _ = link_resources(topology, state, certs)
    base = differing(state, base_resources(topology))
    hosts = {cr.link_name(t.site): h for h, t in link_targets(topology).items()}
    wanted = [r for r in links if hosts.get(r["metadata"]["name"]) in live]
    broken = [
        r
        for r in wanted
        if (r["kind"] == "Link" and not ready(state.links.get(r["metadata"]["name"])))
        or (r["kind"] == "Secret" and not cr.same(r, state.existing(r)))
    ]
    todo: list[Action] = []
    if base:
        todo.append(on_cluster("apply site and listeners", site, apply_calls(base)))
    if broken:
        stale = [
            cr.key(r)
            for r in broken
            if r["kind"] == "Link" and r["metadata"]["name"] in state.links
        ]
        if stale:
            todo.append(on_cluster("delete stale links", site, delete_calls(stale)))
        todo.append(on_cluster("create links", site, apply_calls(broken)))
        todo.append(on_cluster("restart router pod", site, (RESTART_ROUTER,)))
        names = [r["metadata"]["name"] for r in wanted if r["kind"] == "Link"]
        todo.append(wait_for_links(site, names))
    return todo


def kube_down_actions(topology: Topology, site: ClusterSite, state: KubeState) -> list[Action]:
    """``down crc``: delete the cluster's links (the Secrets stay for the next ``up``)."""
    names = [cr.link_name(t.site) for t in link_targets(topology).values()]
    present = [("Link", n) for n in names if n in state.links]
    return [on_cluster("delete links", site, delete_calls(present))] if present else []


async def up(
    sites: SiteMap,
    target_query: str = "all",
    *,
    plan: bool = False,
    progress: Progress | None = None,
) -> OperationResult:
    topology = sites.topology
    target = resolve_target(topology, target_query)
    refs = scope(topology, target)
    peers = _cluster_peers(topology, refs)
    runs = {ref.host: SiteRun(ref, plan, progress) for ref in refs}
    podman = {r.host for r in refs if r.platform == "podman"}

    async def read_then_up(ref: SiteRef) -> SiteView:
        view = await sites.view(ref)
        if ref.host in podman:
            await _up_podman(sites, runs[ref.host], view)
        return view

    found = await asyncio.gather(*(read_then_up(r) for r in [*refs, *peers]))
    views = {v.ref.host: v for v in found}
    if not plan:
        await _verify_up(sites, runs, views)
    for ref in refs:
        if ref.platform == "kubernetes":
            live = _live_peers(runs, views, peers)
            await _up_cluster(sites, runs[ref.host], views[ref.host], live)
    results = [runs[ref.host].result("up") for ref in refs]
    served = served_models(views)
    return operation_result(
        "up",
        target_query,
        results,
        actions_for.model_actions("up", topology, results, served, target.profile),
        plan,
    )


async def _up_podman(sites: SiteMap, run: SiteRun, view: SiteView) -> None:
    if not view.usable(run):
        return
    assert view.podman is not None and view.state is not None
    problem = _setup_problem(sites, view)
    if problem:
        run.fail(problem)
        return
    todo = podman_up_actions(view.podman, view.state)
    if not todo:
        await run.note("up", "already running", seconds=view.seconds)
    await run.perform(todo)


async def _up_cluster(sites: SiteMap, run: SiteRun, view: SiteView, live: set[str]) -> None:
    """After the podman sites: the cluster's links can only connect to peers that are up."""
    if not view.usable(run):
        return
    assert view.kube is not None and view.kube_state is not None
    # Only live peers' links are touched: a dead peer's certificate is not needed, and
    # reading it would wait out a silent host's connect timeout a second time.
    targets = {h: t for h, t in link_targets(sites.topology).items() if h in live}
    certs = await sites.client_certs(targets)
    todo = kube_up_actions(sites.topology, view.kube, view.kube_state, certs, live)
    if not todo:
        await run.note("up", "links already connected", seconds=view.seconds)
    await run.perform(todo)


def _cluster_peers(topology: Topology, refs: list[SiteRef]) -> list[SiteRef]:
    """Providers the cluster links to directly that this ``up`` does not touch."""
    kube = topology.kubernetes
    if kube is None or not any(r.platform == "kubernetes" for r in refs):
        return []
    hosts = {r.host for r in refs}
    return [r for r in all_sites(topology) if r.host in kube.direct_links and r.host not in hosts]


def _live_peers(
    runs: dict[str, SiteRun], views: dict[str, SiteView], peers: list[SiteRef]
) -> set[str]:
    live = {h for h, run in runs.items() if run.ref.platform == "podman" and not run.failed}
    live |= {p.host for p in peers if views[p.host].ok and views[p.host].router_active()}
    return live


async def _verify_up(sites: SiteMap, runs: dict[str, SiteRun], views: dict[str, SiteView]) -> None:
    """Wait until every started router runs and each up provider's listener is bound."""
    deadline = time.monotonic() + ROUTER_DEADLINE
    checks = []
    for host, run in runs.items():
        view = views[host]
        if run.failed or view.podman is None:
            continue
        checks.append(wait_router(run, view.podman, deadline))
    await asyncio.gather(*checks)
    local_run = runs.get(LOCAL_HOST)
    if local_run is None or local_run.failed:
        return
    providers = [
        sites.provider(h)
        for h, run in runs.items()
        if run.ref.role == "provider" and not run.failed
    ]
    started = time.monotonic()
    bound = await probe_listeners(
        sites.topology.local.listener_host, providers, started + LISTENER_DEADLINE
    )
    waited = time.monotonic() - started
    for p in providers:
        seconds = bound.get(p.name)
        ok = seconds is not None
        await runs[p.name].note(
            "verify listener",
            f":{p.local_port} on the local site {'accepts' if ok else 'did not bind'}",
            ok=ok,
            seconds=waited if seconds is None else seconds,
        )
        if not ok:
            runs[p.name].fail(
                f"the local listener :{p.local_port} for {p.name} did not come up within "
                f"{LISTENER_DEADLINE:g}s of the routers running (is the local site's link "
                f"to {p.site_name} connected?)"
            )


async def down(
    sites: SiteMap,
    target_query: str = "all",
    *,
    plan: bool = False,
    progress: Progress | None = None,
) -> OperationResult:
    topology = sites.topology
    target = resolve_target(topology, target_query)
    refs = scope(topology, target)
    providers = [r for r in all_sites(topology) if r.role == "provider"]
    to_read = {r.host: r for r in [*refs, *providers]}
    reads = {host: asyncio.ensure_future(sites.view(r)) for host, r in to_read.items()}
    runs = {ref.host: SiteRun(ref, plan, progress) for ref in refs}

    async def local_decision() -> tuple[bool, str]:
        others = [p.host for p in providers if p.host != target.host]
        found = {host: await reads[host] for host in others}
        active = {h: (v.router_active() if v.ok else None) for h, v in found.items()}
        return local_stops(topology, target, active)

    async def read_then_down(ref: SiteRef) -> None:
        view = await reads[ref.host]
        run = runs[ref.host]
        if not view.usable(run):
            return
        if ref.host == LOCAL_HOST:
            stop_local, why = await local_decision()
            if not stop_local:
                run.outcome = "up" if view.router_active() else "down"
                await run.note("keep local site", why)
                return
        if ref.platform == "kubernetes":
            assert view.kube is not None and view.kube_state is not None
            todo = kube_down_actions(topology, view.kube, view.kube_state)
        else:
            assert view.podman is not None and view.state is not None
            tmpfs = ref.role == "provider" and sites.provider(ref.host).tmpfs_workaround
            todo = podman_down_actions(view.podman, view.state, tmpfs)
        if not todo:
            await run.note("down", "already stopped", seconds=view.seconds)
        await run.perform(todo)

    try:
        await asyncio.gather(*(read_then_down(ref) for ref in refs))
        views = {host: await read for host, read in reads.items()}
    finally:
        for read in reads.values():  # a cancelled down leaves no reading running
            read.cancel()
    results = [runs[ref.host].result("down") for ref in refs]
    served = served_models(views)
    result = operation_result(
        "down",
        target_query,
        results,
        actions_for.model_actions("down", topology, results, served),
        plan,
    )
    if not plan:
        result.listeners = await _listeners_after_down(sites, results, views)
        lingering = [li for li in result.listeners if li.state == "closing"]
        if lingering:
            ports = ", ".join(f":{li.port} ({li.provider})" for li in lingering)
            result.summary += (
                f"; local listener {ports} still bound but closing: no route behind it until "
                f"the local router drops it (up to {ROUTE_MAX_AGE:g} s)"
            )
    return result


async def _listeners_after_down(
    sites: SiteMap, results: list[SiteResult], views: dict[str, SiteView]
) -> list[ListenerStatus]:
    """The local listeners of the providers now down, probed: one still bound is closing,
    since its provider's router is stopped (just now by this call, or since its container
    exited), and the local router keeps the route for up to ``ROUTE_MAX_AGE`` after."""
    topo = sites.topology
    down = [r for r in results if r.role == "provider" and r.outcome == "down"]
    providers = [sites.provider(r.host) for r in down]
    host = topo.local.listener_host
    probes = await asyncio.gather(*(tcp_probe(host, p.local_port) for p in providers))
    rows = []
    for r, p, bound in zip(down, providers, probes, strict=True):
        site = topo.local.site_name
        if not bound:
            state = listener_state(False, p.name, None, site)
        else:
            view = views.get(p.name)
            stopped_for = 0.0 if r.changed else stopped_since(view)
            state = closing(p.name, site, stopped_for)
        rows.append(listener_row(site, p.local_port, p.routing_key, bound, p.name, state))
    return rows
