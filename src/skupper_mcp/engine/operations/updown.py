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
from collections.abc import Awaitable, Mapping

from ...errors import SkupperMcpError
from ...facts import names
from ...results import ListenerStatus, OperationResult, PoolDrain, SiteResult
from ...sites import resources as cr
from ...sites.kube import RESTART_ROUTER, ClusterSite, KubeState, apply_calls, delete_calls
from ...topology import ModelEndpoint, Topology
from ...vocabulary import LOCAL_HOST, Progress
from .. import model_actions as actions_for
from ..desired.cluster import Certs, cluster_link_names, link_resources, link_targets
from ..desired.needs import setup_needed, shown
from ..drain import DrainLog, drain_actions, drain_targets
from ..listeners import closing, consumer_hold, listener_row, listener_state, stopped_since
from ..pools import serving_after_down
from ..predicates import (
    controller_unit_active,
    link_connected,
    podman_router_running,
    router_running,
    router_unit_active,
    starts_at_boot,
)
from ..readings import ClusterReading, PodmanReading, Reading, Unread
from ..runner import Action, SiteRun, on_cluster, on_host, operation_result
from ..scope import SiteRef, local_stops, resolve_target, scope
from ..scope import sites as all_sites
from ..served import Served, read_served, served_ids
from ..sitemap import SiteMap, nothing_to_do, skip_or_fail
from ..stopping import stop_requested
from ..verify import probe_listeners, probe_routes, tcp_probe, wait_for_links, wait_router

#: How long ``up`` waits for the routers it started to run, and then, from when they all
#: run, for each provider's local listener to bind (the link connects and the provider's
#: connector becomes reachable): a slow start is not counted against the links.
ROUTER_DEADLINE = 25.0
LISTENER_DEADLINE = 25.0
#: How long up waits for a bound listener's route to answer a request.
ROUTE_DEADLINE = 20.0


def setup_problem(sites: SiteMap, reading: PodmanReading | ClusterReading) -> str | None:
    """Why ``up`` cannot start this site: its Skupper is too old, or setup would change
    something there (``desired.needs``: the same list as status's drift and setup's plan)."""
    if isinstance(reading, PodmanReading):
        problem = sites.version_problem(reading.state)
        if problem:
            return problem
    needed = setup_needed(sites.topology, reading) or []
    if not needed:
        return None
    return (
        f"{reading.ref.host} is not set up as topology.env says ({shown(needed)}): run setup first"
    )


def podman_up_actions(reading: PodmanReading) -> list[Action]:
    """Controllers first, then routers; only what is not already active."""
    site = reading.site
    todo: list[Action] = []
    if not controller_unit_active(reading):
        todo.append(_start(reading, "controller", names.controller_unit()))
    if not router_unit_active(reading):
        todo.append(_start(reading, "router", names.router_unit(site.namespace)))
    return todo


def _start(reading: PodmanReading, what: str, unit: str) -> Action:
    """Start one unit; one that hit its start limit (a quick down/up cycle, a crash loop)
    is reset first, and the step's name says so."""
    site = reading.site
    limit_hit = reading.state.unit(unit).start_limit_hit
    name = f"start {what}" + (" (start limit hit: reset-failed first)" if limit_hit else "")
    return on_host(name, site, site.start([unit], limit_hit=limit_hit))


def podman_down_actions(reading: PodmanReading, tmpfs: bool) -> list[Action]:
    """Routers first, then controllers; ``podman stop`` as a safety net on tmpfs hosts; then
    the units disabled, so a site stopped as asked stays stopped when its host boots (up
    enables them again). The stops come first and close together: the controller, left
    running a moment longer, would write the Site's status as its router stops."""
    site = reading.site
    ns = site.namespace
    todo: list[Action] = []
    router_unit, controller_unit = names.router_unit(ns), names.controller_unit()
    if router_unit_active(reading):
        todo.append(on_host("stop router", site, site.systemctl("stop", [router_unit])))
    if tmpfs and podman_router_running(reading):
        container = names.router_container(ns)
        todo.append(on_host("podman stop router", site, site.podman_stop(container)))
    if controller_unit_active(reading):
        todo.append(on_host("stop controller", site, site.systemctl("stop", [controller_unit])))
    at_boot = [u for u in (router_unit, controller_unit) if starts_at_boot(reading, u)]
    if at_boot:
        todo.append(on_host("disable at boot", site, site.systemctl("disable", at_boot)))
    return todo


def kube_up_actions(
    topology: Topology, site: ClusterSite, state: KubeState, certs: Certs, live: set[str]
) -> list[Action]:
    """``up crc``: re-create the links to live peers that are not connected, restart the
    router pod so it mounts their Secrets, and wait for them. A link to a peer that is down
    is left alone: it could not connect, and re-creating it every time would never settle.
    The Site and Listeners are setup's (``up`` refuses a cluster that lacks them)."""
    links, _ = link_resources(topology, state, certs)
    hosts = {cr.link_name(t.site): h for h, t in link_targets(topology).items()}
    wanted = [r for r in links if hosts.get(r["metadata"]["name"]) in live]
    broken = [
        r
        for r in wanted
        if (r["kind"] == "Link" and not link_connected(state.links.get(r["metadata"]["name"])))
        or (r["kind"] == "Secret" and not cr.same(r, state.existing(r)))
    ]
    todo: list[Action] = []
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
    present = [("Link", n) for n in cluster_link_names(topology) if n in state.links]
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

    async def read_then_up(ref: SiteRef) -> Reading:
        # the cluster's link Secrets whole: up compares their CA with the peers'
        view = await sites.read(ref, secret_data=ref.platform == "kubernetes")
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
    if not plan:
        sites.remember(results, "up", views)
    # after the start: a keyed server is asked through the route up just brought up
    started = {r.host for r in results if r.outcome == "up" and not plan}
    local_down = LOCAL_HOST not in started and router_running(views.get(LOCAL_HOST)) is False
    served = served_ids(
        await read_served(
            topology,
            views,
            routed=lambda p: (
                not local_down and (p.host in started or router_running(views[p.host]) is True)
            ),
            only={r.host for r in results if r.role == "provider"},
        )
    )
    result = operation_result(
        "up",
        target_query,
        results,
        actions_for.model_actions("up", topology, results, served, target.profile, target.endpoint),
        plan,
    )
    result.summary += endpoints_note(topology, results, "up", target.endpoint)
    return result


async def _up_podman(sites: SiteMap, run: SiteRun, view: Reading) -> None:
    match view:
        case Unread():
            skip_or_fail(run, view)
        case PodmanReading():
            problem = setup_problem(sites, view)
            if problem:
                run.fail(problem)
                return
            todo = podman_up_actions(view)
            if not todo:
                await run.note("up", "already running", seconds=view.seconds)
            await run.perform(todo)


async def _up_cluster(sites: SiteMap, run: SiteRun, view: Reading, live: set[str]) -> None:
    """After the podman sites: the cluster's links can only connect to peers that are up."""
    if isinstance(view, Unread):
        skip_or_fail(run, view)
        return
    if not isinstance(view, ClusterReading):
        return  # the cluster is never read as a podman site
    problem = setup_problem(sites, view)
    if problem:
        run.fail(problem)
        return
    # Only live peers' links are touched: a dead peer's certificate is not needed, and
    # reading it would wait out a silent host's connect timeout a second time.
    targets = {h: t for h, t in link_targets(sites.topology).items() if h in live}
    certs = await sites.client_certs(targets)
    todo = kube_up_actions(sites.topology, view.site, view.state, certs, live)
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
    runs: dict[str, SiteRun], views: dict[str, Reading], peers: list[SiteRef]
) -> set[str]:
    live = {h for h, run in runs.items() if run.ref.platform == "podman" and not run.failed}
    live |= {p.host for p in peers if router_running(views[p.host])}
    return live


async def _verify_up(sites: SiteMap, runs: dict[str, SiteRun], views: dict[str, Reading]) -> None:
    """Wait until every started router runs and each up provider's listener is bound."""
    deadline = time.monotonic() + ROUTER_DEADLINE
    checks = []
    for host, run in runs.items():
        view = views[host]
        if run.failed or not isinstance(view, PodmanReading):
            continue
        if stop_requested():  # a stopped up does not wait: the site says verify did not run
            await run.stop_short(["verify"])
            continue
        checks.append(wait_router(run, view, deadline))
    await asyncio.gather(*checks)
    local_run = runs.get(LOCAL_HOST)
    if local_run is None or local_run.failed:
        return
    providers = [
        e
        for e in sites.topology.model_endpoints()
        if e.host in runs and runs[e.host].ref.role == "provider" and not runs[e.host].failed
    ]
    started = time.monotonic()
    bound = await probe_listeners(
        sites.topology.local.listener_host, providers, started + LISTENER_DEADLINE
    )
    waited = time.monotonic() - started
    for p in providers:
        seconds = bound.get(p.label)
        ok = seconds is not None
        of = f" ({p.name})" if p.name else ""
        await runs[p.host].note(
            "verify listener",
            f":{p.local_port}{of} on the local site {'accepts' if ok else 'did not bind'}",
            ok=ok,
            seconds=waited if seconds is None else seconds,
        )
        if not ok:
            runs[p.host].fail(
                f"the local listener :{p.local_port} for {p.label} did not come up within "
                f"{LISTENER_DEADLINE:g}s of the routers running (is the local site's link "
                f"to {sites.topology.site_name_of(p.host)} connected?)"
            )
    await _verify_routes(
        sites, runs, views, [p for p in providers if bound.get(p.label) is not None]
    )


def _model_stopped(p: ModelEndpoint, view: Reading | None) -> bool:
    """Whether the site's reading shows the provider's model container not running (a
    route to it cannot serve: up does not wait for it, hosted-model-ctl starts it)."""
    if p.model_container is None or not isinstance(view, PodmanReading):
        return False
    found = view.state.container(p.model_container)
    return found is not None and not found.running


async def _verify_routes(
    sites: SiteMap,
    runs: dict[str, SiteRun],
    views: dict[str, Reading],
    providers: list[ModelEndpoint],
) -> None:
    """A bound listener is not yet a route that serves (after a quick down and up the
    route closed each request for seconds): wait, within ROUTE_DEADLINE, until a request
    through it gets an HTTP answer, or say it does not yet (the site is up all the same:
    its model may still be loading). A provider whose model container is stopped is not
    waited for."""
    for p in [p for p in providers if _model_stopped(p, views.get(p.host))]:
        await runs[p.host].note(
            "verify route",
            f"not waited for: the model container {p.model_container} is not running",
            ok=False,
        )
    providers = [p for p in providers if not _model_stopped(p, views.get(p.host))]
    if not providers:
        return
    started = time.monotonic()
    answered = await probe_routes(
        sites.topology.local.listener_host, providers, started + ROUTE_DEADLINE
    )
    for p in providers:
        seconds, seen = answered[p.label]
        if seconds is not None:
            detail = f":{p.local_port}{_of(p)} carries a request to the model API ({seen})"
        else:
            detail = (
                f":{p.local_port}{_of(p)} accepts but no request through it was answered within "
                f"{ROUTE_DEADLINE:g}s (last: {seen}): the route does not serve yet; the model "
                "may still be loading (models shows its readiness)"
            )
        await runs[p.host].note(
            "verify route",
            detail,
            ok=seconds is not None,
            seconds=time.monotonic() - started if seconds is None else seconds,
        )


def _of(p: ModelEndpoint) -> str:
    """`` (ENDPOINT)`` after a listener's port where its host has several endpoints."""
    return f" ({p.name})" if p.name else ""


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
    reads = {host: asyncio.ensure_future(sites.read(r)) for host, r in to_read.items()}
    runs = {ref.host: SiteRun(ref, plan, progress) for ref in refs}
    kept: set[str] = set()  # the local site, when another provider keeps it up
    stopping = {r.host for r in refs if r.role == "provider"}
    drains = DrainLog()

    # what the providers this down stops serve: their stop actions name it
    serving = _served_reads(topology, {p.host: reads[p.host] for p in providers if p.host in runs})

    async def local_decision() -> tuple[bool, str]:
        others = [p.host for p in providers if p.host != target.host]
        found = {host: await reads[host] for host in others}
        active = {h: router_running(v) for h, v in found.items()}
        return local_stops(topology, target, active)

    async def read_then_down(ref: SiteRef) -> None:
        view = await reads[ref.host]
        run = runs[ref.host]
        if isinstance(view, Unread):
            skip_or_fail(run, view)
            return
        if ref.host == LOCAL_HOST:
            stop_local, why = await local_decision()
            if not stop_local:
                run.outcome = "up" if router_running(view) else "down"
                kept.add(ref.host)
                await run.note("keep local site", why)
                return
        await _served_first(ref.host, serving)
        todo = await _down_actions(sites, view, reads, stopping, drains)
        if not todo:
            await nothing_to_do(run, view, "down", "already stopped")
        if not await run.perform(todo) and isinstance(view, PodmanReading):
            await _restore_withdrawn(run, view, drains)

    try:
        await asyncio.gather(*(read_then_down(ref) for ref in refs))
        views = {host: await read for host, read in reads.items()}
        served = {
            label: each.ids for found in serving.values() for label, each in (await found).items()
        }
    finally:
        for read in reads.values():  # a cancelled down leaves no reading running
            read.cancel()
        for found in serving.values():
            found.cancel()
    results = [runs[ref.host].result("down") for ref in refs]
    if not plan:
        sites.remember([r for r in results if r.host not in kept], "down")
    result = operation_result(
        "down",
        target_query,
        results,
        actions_for.model_actions("down", topology, results, served, planned=plan),
        plan,
    )
    result.summary += endpoints_note(topology, results, "down", target.endpoint)
    running = {p.host for p in providers if router_running(views[p.host])}
    _pools_after_down(result, topology, stopping, running, drains)
    if not plan:
        result.listeners = await _listeners_after_down(sites, results, views)
        lingering = [li for li in result.listeners if li.state == "closing"]
        if lingering:
            ports = ", ".join(f":{li.port} ({li.provider})" for li in lingering)
            longest = max(li.closes_within or 0.0 for li in lingering)
            result.summary += (
                f"; local listener {ports} still bound but closing: no route behind it until "
                f"the local router drops it (within {max(1.0, longest):.0f} s)"
            )
    return result


def endpoints_note(
    topology: Topology, results: list[SiteResult], verb: str, named: str | None
) -> str:
    """``; endpoints: gpu1/chat, gpu1/embed`` after the summary of up or down when a host it
    acted on serves several model endpoints: one site serves them all, so each comes up (or
    goes down) with it, the one the target named among them. Empty otherwise."""
    labels = [
        e.label
        for r in results
        if r.role == "provider" and r.outcome != "skipped"
        for p in [topology.provider(r.host)]
        if p is not None and p.multi_endpoint
        for e in p.endpoints
    ]
    if not labels:
        return ""
    also = f" (the site of {named} serves them all)" if named and len(labels) > 1 else ""
    return (
        f"; endpoints {'brought up' if verb == 'up' else 'taken down'}: {', '.join(labels)}{also}"
    )


async def _down_actions(
    sites: SiteMap,
    view: PodmanReading | ClusterReading,
    reads: Mapping[str, Awaitable[Reading]],
    stopping: set[str],
    drains: DrainLog,
) -> list[Action]:
    """What ``down`` does at one site it read: a pool member's drain before its stop."""
    ref = view.ref
    if isinstance(view, ClusterReading):
        return kube_down_actions(sites.topology, view.site, view.state)
    tmpfs = ref.role == "provider" and sites.provider(ref.host).tmpfs_workaround
    todo = podman_down_actions(view, tmpfs)
    if todo:
        todo = [*await _pool_drains(sites.topology, reads, stopping, drains, view), *todo]
    return todo


async def _pool_drains(
    topology: Topology,
    reads: Mapping[str, Awaitable[Reading]],
    stopping: set[str],
    drains: DrainLog,
    view: PodmanReading,
) -> list[Action]:
    """A pool member's drain, before its router stops (``engine.drain``): none for the local
    site, a router that is not running, or a pool with no other member left running."""
    host = view.ref.host
    if view.ref.role != "provider" or not podman_router_running(view):
        return []
    mates = {m for p in topology.pools if p.has(host) for m in p.member_names()}
    found = {h: await reads[h] for h in mates - {host} if h in reads}
    running = {h for h, v in found.items() if router_running(v) is True}
    local = await reads[LOCAL_HOST] if LOCAL_HOST in reads else None
    todo: list[Action] = []
    for t in drain_targets(topology, host, stopping, running):
        todo += drain_actions(topology, view.site, t, local, drains)
    return todo


async def _restore_withdrawn(run: SiteRun, view: PodmanReading, drains: DrainLog) -> None:
    """A down that stopped (failed, or was cancelled) after it withdrew a member's
    connector but before its router stopped: the router runs without it, and ``up`` would
    find nothing to start. Its unit is restarted, so the router reads its connectors again
    from its ``skrouterd.json``, which the drain left as it was."""
    host = view.ref.host
    withdrawn = drains.may_have_withdrawn(host)
    stopped = any(s.name == "stop router" and s.ok for s in run.steps)
    if run.plan or not withdrawn or stopped:
        return
    site = view.site
    script = site.systemctl("restart", [names.router_unit(site.namespace)])
    started = time.monotonic()
    try:
        await site.execute(script)
    except SkupperMcpError as exc:
        ok, said = False, f"{script.summary} failed: {exc}"
    else:
        ok, said = True, f"{script.summary}: its connectors are back from skrouterd.json"
    for d in withdrawn:
        d.drained, d.detail = False, f"the down stopped before {host}'s router: {said}"
    await run.note("restore withdrawn connector", said, ok=ok, seconds=time.monotonic() - started)


def _pools_after_down(
    result: OperationResult,
    topology: Topology,
    stopping: set[str],
    running: set[str],
    drains: DrainLog,
) -> None:
    """The pools the down touched, on its result: who keeps serving each, each drain."""
    lines = serving_after_down(topology, stopping, running)
    result.drains = drains.rows
    lines += [_drain_line(d) for d in drains.rows if d.drained is not None]
    if lines:
        result.summary += "; " + "; ".join(lines)


def _drain_line(drain: PoolDrain) -> str:
    if drain.drained:
        return (
            f"pool {drain.pool}: {drain.member} drained first "
            f"({', '.join(drain.carried_by)} carried it {drain.seconds:.1f} s after)"
            + _cut_line(drain)
        )
    return f"pool {drain.pool}: {drain.detail}"


def _cut_line(drain: PoolDrain) -> str:
    """The requests the withdrawal cut, when it cut any (or may have: not counted)."""
    count = drain.cut_connections
    if count == 0:
        return ""
    open_ = "its open connections (not counted)" if count is None else f"{count} connection"
    plural = "s" if count is not None and count > 1 else ""
    return (
        f", {open_}{plural} through {drain.member} cut at the withdrawal: "
        f"retry those requests, they go to {', '.join(drain.carried_by)}"
    )


def _served_reads(
    topology: Topology, reads: dict[str, asyncio.Future[Reading]]
) -> dict[str, asyncio.Future[dict[str, Served]]]:
    """What each provider's model endpoints serve (by label), read as soon as its reading
    is in: before it or the local site stops (a keyed server is asked through the route
    they hold)."""

    async def served_of(host: str) -> dict[str, Served]:
        return await read_served(topology, {host: await reads[host]}, only={host})

    return {host: asyncio.ensure_future(served_of(host)) for host in reads}


async def _served_first(host: str, serving: dict[str, asyncio.Future[dict[str, Served]]]) -> None:
    """Before a site stops: its own served models read, and the local site's stop (which
    closes every route) waits for them all."""
    if host == LOCAL_HOST:
        await asyncio.gather(*serving.values())
    elif host in serving:
        await serving[host]


async def _listeners_after_down(
    sites: SiteMap, results: list[SiteResult], views: dict[str, Reading]
) -> list[ListenerStatus]:
    """The local listeners of the providers now down, probed: one still bound is closing,
    since its provider's router is stopped (just now by this call, or since its container
    exited), and the local router keeps the route for a while after, by its release
    (``listeners.consumer_hold``)."""
    topo = sites.topology
    down = {r.host: r for r in results if r.role == "provider" and r.outcome == "down"}
    endpoints = [e for e in topo.model_endpoints() if e.host in down]
    host = topo.local.listener_host
    probes = await asyncio.gather(*(tcp_probe(host, p.local_port) for p in endpoints))
    rows = []
    for p, bound in zip(endpoints, probes, strict=True):
        site = topo.local.site_name
        if not bound:
            state = listener_state(False, p.host, None, site)
        else:
            view = views.get(p.host)
            stopped_for = 0.0 if down[p.host].changed else stopped_since(view)
            state = closing(p.host, site, stopped_for, consumer_hold(views.get(LOCAL_HOST)))
        row = listener_row(site, p.local_port, p.routing_key, bound, p.host, state)
        row.endpoint = p.label if p.name else None
        rows.append(row)
    return rows
