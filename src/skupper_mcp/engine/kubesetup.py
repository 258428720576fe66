"""The Kubernetes consumer site's part of setup, up, down and teardown.

The cluster links directly to the providers in ``CRC_DIRECT_LINKS`` and to the local site
(through which it reaches the others); each link is a ``kubernetes.io/tls`` Secret made from
the peer's client certificate plus a Link. After a link or its Secret changes, the router
pod is deleted so that its replacement mounts the Secret (the seed's Known Issues).

The planning functions are pure: from the topology, the cluster's recorded state and the
peers' client certificates (read beforehand by ``fetch_certs``) to a list of actions.
"""

from __future__ import annotations

import asyncio
import time

from ..sites import resources as cr
from ..sites.kube import (
    RESTART_ROUTER,
    ClusterSite,
    KubeState,
    apply_calls,
    delete_calls,
    ready,
    status_of,
)
from ..sites.resources import ClientCert, LinkTarget, Resource
from ..sites.work import ApiCall
from ..topology import Topology
from ..vocabulary import LOCAL_HOST
from .runner import SITE_ERRORS, Action, on_cluster
from .scope import site_ref
from .sitemap import SiteMap

Certs = dict[str, ClientCert | None]

LINK_DEADLINE = 30.0


def link_targets(topology: Topology) -> dict[str, LinkTarget]:
    """host -> where the cluster's link to it goes."""
    assert topology.kubernetes is not None
    targets = {}
    providers = {p.name: p for p in topology.providers}
    for host in topology.kubernetes.direct_links:
        p = providers[host]
        targets[host] = LinkTarget(p.site_name, p.public_host, p.inter_router_port, p.edge_port)
    local = topology.local
    targets[LOCAL_HOST] = LinkTarget(
        local.site_name,
        local.public_host or local.listener_host,
        local.inter_router_port,
        local.edge_port,
    )
    return targets


def kube_secret_names(topology: Topology) -> tuple[str, ...]:
    return tuple(cr.link_name(t.site) for t in link_targets(topology).values())


def base_resources(topology: Topology) -> list[Resource]:
    """Site and Listeners: what the cluster needs regardless of links."""
    kube = topology.kubernetes
    assert kube is not None
    keys = {p.name: p.routing_key for p in topology.providers}
    found = [cr.site(kube.site_name)]
    for host, port in kube.listeners.items():
        name = f"model-listener-{host}"
        found.append(cr.listener(name, keys[host], name, port))
    return found


async def fetch_cert(sites: SiteMap, host: str, site_name: str) -> ClientCert | None:
    """A peer's link client certificate, or None when it cannot be read now."""
    try:
        podman = await sites.podman(site_ref(sites.topology, host))
        return await podman.client_cert(cr.client_cert_dir(site_name))
    except SITE_ERRORS:
        return None


async def fetch_certs(sites: SiteMap, targets: dict[str, LinkTarget]) -> Certs:
    """host -> its link client certificate (None when it cannot be read now), concurrently."""
    found = await asyncio.gather(*(fetch_cert(sites, h, t.site) for h, t in targets.items()))
    return dict(zip(targets, found, strict=True))


def link_resources(
    topology: Topology, state: KubeState, certs: Certs
) -> tuple[list[Resource], list[str]]:
    """Secrets and Links for every link target, and the hosts whose client certificate
    could not be read (and of which the cluster has no copy yet)."""
    wanted: list[Resource] = []
    problems: list[str] = []
    for host, target in link_targets(topology).items():
        cert = certs.get(host)
        if cert is not None:
            wanted.append(cr.link_secret(target, cert))
        elif state.secrets.get(cr.link_name(target.site)) is None:
            problems.append(host)
            continue
        wanted.append(cr.link(target))
    return wanted, problems


def _changed(state: KubeState, wanted: list[Resource]) -> list[Resource]:
    return [r for r in wanted if not cr.same(r, state.existing(r))]


async def wait_links(site: ClusterSite, names: list[str], deadline: float) -> str:
    last = "not read"
    while True:
        try:
            state = await site.read()
            pending = {
                n: status_of(state.links.get(n)) for n in names if not ready(state.links.get(n))
            }
            if not pending:
                return f"links ready: {', '.join(names)}"
            last = "; ".join(f"{n} {s}" for n, s in pending.items())
        except SITE_ERRORS as exc:
            last = str(exc)
        if time.monotonic() >= deadline:
            raise RuntimeError(f"links not ready within {LINK_DEADLINE:g}s: {last}")
        await asyncio.sleep(0.5)


def _wait_for_links(site: ClusterSite, names: list[str]) -> Action:
    return Action(
        "wait for links",
        tuple(ApiCall("wait", "Link", n) for n in names),
        lambda: wait_links(site, names, time.monotonic() + LINK_DEADLINE),
        changes=False,
    )


def kube_setup_actions(
    topology: Topology, site: ClusterSite, state: KubeState, certs: Certs
) -> tuple[list[Action], list[str]]:
    """Everything the cluster's site needs, only what differs; and the peers it cannot
    link to yet (no client certificate)."""
    links, problems = link_resources(topology, state, certs)
    base = _changed(state, base_resources(topology))
    link_changes = _changed(state, links)
    todo: list[Action] = []
    if base:
        todo.append(on_cluster("apply site and listeners", site, apply_calls(base)))
    if link_changes:
        todo.append(on_cluster("apply links", site, apply_calls(link_changes)))
        todo.append(on_cluster("restart router pod", site, (RESTART_ROUTER,)))
    names = [r["metadata"]["name"] for r in links if r["kind"] == "Link"]
    if names and (todo or not all(ready(state.links.get(n)) for n in names)):
        todo.append(_wait_for_links(site, names))
    return todo, problems


def kube_up_actions(
    topology: Topology, site: ClusterSite, state: KubeState, certs: Certs, live: set[str]
) -> list[Action]:
    """``up crc``: re-create the links to live peers that are not connected, restart the
    router pod so it mounts their Secrets, and wait for them. A link to a peer that is down
    is left alone: it could not connect, and re-creating it every time would never settle."""
    links, _ = link_resources(topology, state, certs)
    base = _changed(state, base_resources(topology))
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
        todo.append(_wait_for_links(site, names))
    return todo


def kube_down_actions(topology: Topology, site: ClusterSite, state: KubeState) -> list[Action]:
    """``down crc``: delete the cluster's links (the Secrets stay for the next ``up``)."""
    names = [cr.link_name(t.site) for t in link_targets(topology).values()]
    present = [("Link", n) for n in names if n in state.links]
    return [on_cluster("delete links", site, delete_calls(present))] if present else []


def kube_teardown_actions(topology: Topology, site: ClusterSite, state: KubeState) -> list[Action]:
    names = [cr.link_name(t.site) for t in link_targets(topology).values()]
    keys = [("Link", n) for n in names if n in state.links]
    keys += [("Secret", n) for n in names if n in state.secrets]
    keys += [cr.key(r) for r in base_resources(topology)[1:] if state.existing(r) is not None]
    if state.site is not None:
        keys.append(("Site", state.site["metadata"]["name"]))
    return [on_cluster("remove skupper resources", site, delete_calls(keys))] if keys else []
