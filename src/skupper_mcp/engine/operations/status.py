"""``status``: the live state of every site, link and listener, read concurrently.

Podman sites: one round trip each. ``stale`` flags a site whose rendered status still says
Ready while its router is not running (the controller that would update it is down too).
Links get a TCP probe to the remote inter-router port from here; listeners a connect.
"""

from __future__ import annotations

import asyncio

from ...facts import names
from ...models import LinkStatus, ListenerStatus, SiteCondition, SiteStatus, StatusResult
from ...sites.kube import ready, status_of
from ...topology import Topology
from .. import model_actions as actions_for
from ..desired.drift import site_drift
from ..listeners import listener_row, listener_state
from ..scope import sites as all_sites
from ..sitemap import SiteMap, SiteView, link_rows, served_models
from ..verify import tcp_probe


def _unit_text(view: SiteView, unit: str) -> str:
    assert view.state is not None
    u = view.state.unit(unit)
    if u.load_state == "not-found":
        return "not installed"
    return f"{u.active_state} ({u.sub_state})"


def _interim_state(set_up: bool, running: bool, stale: bool) -> SiteCondition:
    if not set_up:
        return "not-set-up"
    if stale:
        return "stale"
    return "up" if running else "stopped"


def unread_site_status(view: SiteView) -> SiteStatus:
    """The row of a site whose state could not be read."""
    ref = view.ref
    return SiteStatus(
        host=ref.host,
        site=ref.site,
        role=ref.role,
        platform=ref.platform,
        reachable=view.reachable,
        # interim until engine/condition.py decides it (issue 30)
        state="unknown" if view.reachable else "unreachable",
        detail=view.problem() if view.error else None,
    )


def podman_site_status(view: SiteView) -> SiteStatus:
    ref = view.ref
    if not view.ok or view.state is None or view.podman is None:
        return unread_site_status(view)
    state, ns = view.state, view.podman.namespace
    container = state.container(names.router_container(ns))
    running = bool(container and container.running)
    site_res = next((r for (k, _), r in state.runtime_resources.items() if k == "Site"), None)
    claims_ready = (
        (site_res or {}).get("status", {}).get("status") == "Ready" if site_res else False
    )
    stale = claims_ready and not running
    if not state.rendered:
        detail = "not set up"
    elif stale:
        detail = "STALE: the rendered status says Ready but the router is not running"
    else:
        detail = status_of(site_res) if site_res else "no status yet"
    return SiteStatus(
        host=ref.host,
        site=ref.site,
        role=ref.role,
        platform=ref.platform,
        reachable=True,
        # interim until engine/condition.py decides it (issue 30)
        state=_interim_state(bool(state.rendered), running, stale),
        controller=_unit_text(view, names.controller_unit()),
        router=_unit_text(view, names.router_unit(ns)),
        container=(container.state if container else "absent"),
        stale=stale,
        detail=detail,
    )


def kube_site_status(view: SiteView) -> SiteStatus:
    ref = view.ref
    state = view.kube_state
    if not view.ok or state is None:
        return unread_site_status(view)
    pods = ", ".join(
        f"{p['metadata']['name']} {(p.get('status') or {}).get('phase', '?')}"
        for p in state.router_pods
    )
    running = state.router_running()
    stale = ready(state.site) and not running
    return SiteStatus(
        host=ref.host,
        site=ref.site,
        role=ref.role,
        platform=ref.platform,
        reachable=True,
        # interim until engine/condition.py decides it (issue 30)
        state=_interim_state(state.site is not None, running, stale),
        controller="api " + state.version,
        router=pods or "no router pod",
        container="running" if running else "not running",
        stale=stale,
        detail=status_of(state.site) if state.site else "not set up",
    )


def summary(site_rows: list[SiteStatus], listeners: list[ListenerStatus]) -> str:
    """One line: which sites run, are stopped, unreachable or unknown; listeners bound."""
    up = [s.host for s in site_rows if s.container == "running"]
    # A site whose state was not read (a read that timed out) has no container state:
    # it is unknown, never "stopped" while its router may well run.
    down = [s.host for s in site_rows if s.container not in (None, "running")]
    unknown = [s.host for s in site_rows if s.reachable and s.container is None]
    gone = [s.host for s in site_rows if not s.reachable]
    bound = sum(bool(li.bound) for li in listeners)
    closing = [f":{li.port} ({li.provider})" for li in listeners if li.state == "closing"]
    parts = [f"running: {', '.join(up) or 'none'}"]
    if down:
        parts.append(f"stopped: {', '.join(down)}")
    if gone:
        parts.append(f"unreachable: {', '.join(gone)}")
    if unknown:
        parts.append(f"state unknown: {', '.join(unknown)}")
    parts.append(f"{bound}/{len(listeners)} listeners bound")
    if closing:
        parts.append(f"closing (bound, no route): {', '.join(closing)}")
    stale = [s.host for s in site_rows if s.stale]
    if stale:
        parts.append(f"stale status on {', '.join(stale)}")
    drifted = [s.host for s in site_rows if s.drift]
    if drifted:
        parts.append(f"setup needed on {', '.join(drifted)}")
    return "; ".join(parts)


async def run(sites: SiteMap) -> StatusResult:
    topo = sites.topology
    refs = all_sites(topo)
    views = await sites.views(refs)
    site_rows = [
        kube_site_status(views[r.host])
        if r.platform == "kubernetes"
        else podman_site_status(views[r.host])
        for r in refs
    ]
    for row in site_rows:
        row.drift = site_drift(topo, views[row.host])
    links, listeners = await asyncio.gather(_links(sites.topology, views), _listeners(sites, views))
    reachable = {r.host: views[r.host].ok for r in refs}
    served = served_models(views)
    actions = actions_for.status_actions(topo, reachable, served)
    return StatusResult(
        sites=site_rows,
        links=links,
        listeners=listeners,
        model_actions=actions,
        summary=summary(site_rows, listeners),
    )


async def _links(topology: Topology, views: dict[str, SiteView]) -> list[LinkStatus]:
    rows = link_rows(topology, views)
    probes = await asyncio.gather(*(tcp_probe(r.host, r.port) for r in rows))
    return [
        LinkStatus(
            from_site=r.from_site,
            to_site=r.to_site,
            endpoint=f"{r.host}:{r.port}",
            tcp_probe=probe,
            status=r.status,
        )
        for r, probe in zip(rows, probes, strict=True)
    ]


async def _listeners(sites: SiteMap, views: dict[str, SiteView]) -> list[ListenerStatus]:
    topo = sites.topology
    host = topo.local.listener_host
    probes = await asyncio.gather(*(tcp_probe(host, p.local_port) for p in topo.providers))
    rows = [
        _listener(topo.local.site_name, p.local_port, p.routing_key, ok, p.name, views)
        for p, ok in zip(topo.providers, probes, strict=True)
    ]
    kube = topo.kubernetes
    if kube is not None:
        state = views[kube.name].kube_state if kube.name in views else None
        for provider, port in kube.listeners.items():
            name = f"model-listener-{provider}"
            lis = state.listeners.get(name) if state else None
            key = sites.provider(provider).routing_key
            bound = ready(lis) if state else None
            row = _listener(kube.site_name, port, key, bound, provider, views)
            row.service = f"{name}.{kube.namespace}:{port}"
            rows.append(row)
    return rows


def _listener(
    site: str, port: int, key: str, bound: bool | None, provider: str, views: dict[str, SiteView]
) -> ListenerStatus:
    """A listener's row, its state from the probe and the provider's reading."""
    state = listener_state(bound, provider, views.get(provider), site)
    return listener_row(site, port, key, bound, provider, state)
