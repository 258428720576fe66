"""``status``: the live state of every site, link and listener, read concurrently.

Podman sites: one round trip each. Each site's ``state`` is ``condition``'s, from its reading
and what the user last asked of it; ``drift`` is what setup would change there
(``desired.needs``).
Links get a TCP probe to the remote inter-router port from here; listeners a connect.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from ...facts import names
from ...facts.model_endpoint import kept_ids
from ...results import LinkStatus, ListenerStatus, PoolStatus, SiteStatus, StatusResult
from ...sites.kube import status_of
from ...topology import Topology, cluster_listener_name
from .. import model_actions as actions_for
from ..certificates import site_certificate
from ..condition import after_reboot, site_condition
from ..desired.cluster import cluster_link_names
from ..desired.needs import setup_needed
from ..listeners import listener_row, listener_state
from ..model_http import ApiKey, api_key, cluster_base_url, local_base_url
from ..model_reading import NOT_READY_TO_CALL
from ..pools import pool_resources, pool_rows
from ..predicates import RUNNING, claims_ready, podman_site_resource
from ..readiness import RouteAnswer, ask_routes
from ..readiness import readiness as endpoint_readiness
from ..readings import ClusterReading, PodmanReading, Reading, Unread
from ..scope import sites as all_sites
from ..served import read_served, served_ids
from ..sitemap import SiteMap, link_rows
from ..verify import tcp_probe


def _unit_text(reading: PodmanReading, unit: str) -> str:
    u = reading.state.unit(unit)
    if not u.installed:
        return "not installed"
    return f"{u.active_state} ({u.sub_state})"


def site_status(reading: Reading, cluster_links: tuple[str, ...] = ()) -> SiteStatus:
    """A site's row: its condition (``condition``) and what was read to decide it."""
    state, reason = site_condition(reading, cluster_links)
    ref = reading.ref
    row = SiteStatus(
        host=ref.host,
        site=ref.site,
        role=ref.role,
        platform=ref.platform,
        reachable=not isinstance(reading, Unread) or reading.reachable,
        state=state,
        state_reason=reason,
        stale=state == "stale",
        after_reboot=after_reboot(reading),
    )
    cert = site_certificate(reading)
    row.certificate = cert.row() if cert else None
    # ``detail`` is what the site's own status says; where the site says nothing (not read,
    # not set up, stale), ``state_reason`` already says why, and detail stays empty rather
    # than say it twice (one column of the table, one note of the view)
    match reading:
        case PodmanReading():
            ns = reading.namespace
            container = reading.state.container(names.router_container(ns))
            site_res = podman_site_resource(reading)
            row.controller = _unit_text(reading, names.controller_unit())
            row.router = _unit_text(reading, names.router_unit(ns))
            row.container = container.state if container else "absent"
            if state not in ("not-set-up", "stale"):
                row.detail = status_of(site_res) if site_res else "no status yet"
        case ClusterReading():
            kube = reading.state
            pods = ", ".join(
                f"{(p.get('metadata') or {}).get('name', '?')} {_phase(p)}"
                for p in kube.router_pods
            )
            row.controller = "api " + kube.version
            row.router = pods or "no router pod"
            # the pods' phases as the API gives them: state says what they mean
            row.container = ", ".join(sorted({_phase(p) for p in kube.router_pods})) or "absent"
            row.detail = status_of(kube.site) if kube.site else None
    return row


def _phase(pod: dict[str, Any]) -> str:
    status = pod.get("status")
    return str(status.get("phase", "?")) if isinstance(status, dict) else "?"


def summary(
    site_rows: list[SiteStatus], listeners: list[ListenerStatus], pools: Sequence[PoolStatus] = ()
) -> str:
    """One line: which sites run, are stopped, not set up, unreachable or unknown; the
    listeners bound; the stale and degraded sites and where setup is needed."""

    def hosts(*states: str) -> list[str]:
        return [s.host for s in site_rows if s.state in states]

    bound = sum(bool(li.bound) for li in listeners)
    closing = [f":{li.port} ({li.provider})" for li in listeners if li.state == "closing"]
    parts = [f"running: {', '.join(hosts(*RUNNING)) or 'none'}"]
    for label, states in (
        ("stopped", ("stopped",)),
        ("not set up", ("not-set-up",)),
        ("unreachable", ("unreachable",)),
        ("state unknown", ("unknown",)),
    ):
        if hosts(*states):
            parts.append(f"{label}: {', '.join(hosts(*states))}")
    parts.append(f"{bound}/{len(listeners)} listeners bound")
    if closing:
        parts.append(f"closing (bound, no route): {', '.join(closing)}")
    for pool in pools:
        for row in (pool, pool.cluster) if pool.cluster else (pool,):
            live = [b.provider for b in row.backends if b.live]
            where = "" if row is pool else f" on {row.site}"
            parts.append(
                f"pool {row.name}{where} :{row.port} {row.state} "
                f"({len(live)}/{len(row.backends)} live: {', '.join(live) or 'none'})"
            )
    busy = [
        f"{li.endpoint or li.provider} {li.readiness.state}"
        for li in listeners
        if li.readiness is not None and li.readiness.state in NOT_READY_TO_CALL
    ]
    if busy:
        parts.append("not ready to call: " + ", ".join(busy))
    if hosts("stale"):
        parts.append(f"stale status on {', '.join(hosts('stale'))}")
    degraded = [f"{s.host} ({s.state_reason})" for s in site_rows if s.state == "degraded"]
    if degraded:
        parts.append(f"degraded: {', '.join(degraded)}")
    drifted = [s.host for s in site_rows if s.drift]
    if drifted:
        parts.append(f"setup needed on {', '.join(drifted)}")
    return "; ".join(parts)


async def run(sites: SiteMap, readiness: bool = False) -> StatusResult:
    """Every site, link, listener and pool; with ``readiness``, each model's readiness on
    its local listener row, its listener asked beside the sites' read (``readiness``)."""
    topo = sites.topology
    refs = all_sites(topo)
    endpoints = topo.model_endpoints() if readiness else []
    # each key file read once, each listener asked once: the answers serve both what the
    # endpoint serves (read_served) and its readiness
    keys = {p.label: api_key(p) for p in endpoints}
    views, answers = await asyncio.gather(sites.read_all(refs), ask_routes(topo, endpoints, keys))
    links_of_cluster = cluster_link_names(topo)
    site_rows = [site_status(views[r.host], links_of_cluster) for r in refs]
    for row in site_rows:
        row.drift = setup_needed(topo, views[row.host])
    links, listeners, pool_bound = await asyncio.gather(
        _links(sites.topology, views), _listeners(sites, views), _pool_probes(topo)
    )
    # after the connects, never beside them (a connect has its second)
    probes = {label: answer.probe for label, answer in answers.items()}
    served = served_ids(await read_served(topo, views, keys=keys, answered=probes))
    for listener in listeners:
        ids = served.get(listener.endpoint or listener.provider or "")
        # a closed listener has no model behind it to name: what the host still serves is
        # not what this port gives (after down or teardown, nothing)
        if ids and listener.state != "closed":
            listener.model_ids, listener.model_ids_cut = kept_ids(list(ids))
    if readiness:
        _add_readiness(topo, listeners, views, answers, keys)
    pools = pool_rows(topo, site_rows, links, pool_bound, pool_resources(topo, views))
    reachable = {r.host: not isinstance(views[r.host], Unread) for r in refs}
    actions = actions_for.status_actions(topo, reachable, served)
    return StatusResult(
        sites=site_rows,
        links=links,
        listeners=listeners,
        pools=pools,
        model_actions=actions,
        summary=summary(site_rows, listeners, pools),
    )


def _add_readiness(
    topo: Topology,
    listeners: list[ListenerStatus],
    views: dict[str, Reading],
    answers: dict[str, RouteAnswer],
    keys: dict[str, ApiKey],
) -> None:
    """Each local listener row's reading, judged as the models row of its endpoint."""
    for row in listeners:
        e = topo.model_endpoint(row.endpoint or row.provider or "")
        if e is None or row.site != topo.local.site_name or row.service is not None:
            continue
        answer = answers.get(e.label)
        row.readiness = endpoint_readiness(topo, e, views[e.host], row.bound, answer, keys[e.label])


async def pool_status(sites: SiteMap, views: dict[str, Reading]) -> list[PoolStatus]:
    """The pools' rows from every site's reading (``views``), as ``run`` decides them:
    for ``models``, which reads the sites itself."""
    topo = sites.topology
    links_of_cluster = cluster_link_names(topo)
    site_rows = [site_status(views[r.host], links_of_cluster) for r in all_sites(topo)]
    links, bound = await asyncio.gather(_links(topo, views), _pool_probes(topo))
    return pool_rows(topo, site_rows, links, bound, pool_resources(topo, views))


async def _pool_probes(topology: Topology) -> dict[str, bool | None]:
    host = topology.local.listener_host
    probes = await asyncio.gather(*(tcp_probe(host, p.local_port) for p in topology.pools))
    return {p.name: ok for p, ok in zip(topology.pools, probes, strict=True)}


async def _links(topology: Topology, views: dict[str, Reading]) -> list[LinkStatus]:
    rows = link_rows(topology, views)
    probes = await asyncio.gather(*(tcp_probe(r.host, r.port) for r in rows))
    return [
        LinkStatus(
            from_site=r.from_site,
            to_site=r.to_site,
            endpoint=f"{r.host}:{r.port}",
            tcp_probe=probe,
            status=r.status,
            connected=r.connected,
        )
        for r, probe in zip(rows, probes, strict=True)
    ]


async def _listeners(sites: SiteMap, views: dict[str, Reading]) -> list[ListenerStatus]:
    topo = sites.topology
    host = topo.local.listener_host
    endpoints = topo.model_endpoints()
    probes = await asyncio.gather(*(tcp_probe(host, p.local_port) for p in endpoints))
    rows = [
        _listener(topo.local.site_name, p.local_port, p.routing_key, ok, p.host, views)
        for p, ok in zip(endpoints, probes, strict=True)
    ]
    for row, p in zip(rows, endpoints, strict=True):
        row.base_url = local_base_url(topo, p)
        row.endpoint = p.label if p.name else None
    kube = topo.kubernetes
    if kube is not None:
        cluster = views.get(kube.name)
        for label, port in kube.listeners.items():
            e = topo.model_endpoint(label)
            assert e is not None  # the topology's parse named each one's endpoint
            name = cluster_listener_name(label)
            bound = (
                claims_ready(cluster.state.listeners.get(name))
                if isinstance(cluster, ClusterReading)
                else None
            )
            row = _listener(kube.site_name, port, e.routing_key, bound, e.host, views)
            row.service = f"{name}.{kube.namespace}:{port}"
            row.base_url = cluster_base_url(topo, e)
            row.endpoint = e.label if e.name else None
            rows.append(row)
    return rows


def _listener(
    site: str, port: int, key: str, bound: bool | None, provider: str, views: dict[str, Reading]
) -> ListenerStatus:
    """A listener's row, its state from the probe and the provider's reading."""
    consumer = next((v for v in views.values() if v.ref.site == site), None)
    view = views.get(provider)
    state = listener_state(bound, provider, view, site, consumer)
    return listener_row(site, port, key, bound, provider, state)
