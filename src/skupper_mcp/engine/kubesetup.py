"""The Kubernetes consumer site's part of setup, up, down and teardown.

The cluster links directly to the providers in ``CRC_DIRECT_LINKS`` and to the local site
(through which it reaches the others); each link is a ``kubernetes.io/tls`` Secret made from
the peer's client certificate plus a Link. After a link or its Secret changes, the router
pod is deleted so that its replacement mounts the Secret (the seed's Known Issues).
"""

from __future__ import annotations

import asyncio
import time

from ..sites import resources as cr
from ..sites.kube import ClusterSite, KubeState, ready, status_of
from ..sites.resources import ClientCert, LinkTarget, Resource
from ..vocabulary import LOCAL_HOST
from .runner import SITE_ERRORS, Action
from .scope import site_ref
from .sitemap import SiteMap, SiteView

LINK_DEADLINE = 30.0


def link_targets(sites: SiteMap) -> dict[str, LinkTarget]:
    """host -> where the cluster's link to it goes."""
    topo = sites.topology
    assert topo.kubernetes is not None
    targets = {}
    for host in topo.kubernetes.direct_links:
        p = sites.provider(host)
        targets[host] = LinkTarget(p.site_name, p.public_host, p.inter_router_port, p.edge_port)
    local = topo.local
    targets[LOCAL_HOST] = LinkTarget(
        local.site_name,
        local.public_host or local.listener_host,
        local.inter_router_port,
        local.edge_port,
    )
    return targets


def kube_secret_names(sites: SiteMap) -> tuple[str, ...]:
    return tuple(cr.link_name(t.site) for t in link_targets(sites).values())


def base_resources(sites: SiteMap) -> list[Resource]:
    """Site and Listeners: what the cluster needs regardless of links."""
    kube = sites.topology.kubernetes
    assert kube is not None
    found = [cr.site(kube.site_name)]
    for host, port in kube.listeners.items():
        name = f"model-listener-{host}"
        found.append(cr.listener(name, sites.provider(host).routing_key, name, port))
    return found


async def fetch_cert(sites: SiteMap, host: str, site_name: str) -> ClientCert | None:
    """A peer's link client certificate, or None when it cannot be read now."""
    try:
        podman = await sites.podman(site_ref(sites.topology, host))
        return await podman.client_cert(cr.client_cert_dir(site_name))
    except SITE_ERRORS:
        return None


async def link_resources(sites: SiteMap, state: KubeState) -> tuple[list[Resource], list[str]]:
    """Secrets and Links for every link target, and the hosts whose client certificate
    could not be read (and of which the cluster has no copy yet)."""
    targets = link_targets(sites)
    certs = await asyncio.gather(*(fetch_cert(sites, h, t.site) for h, t in targets.items()))
    wanted: list[Resource] = []
    problems: list[str] = []
    for (host, target), cert in zip(targets.items(), certs, strict=True):
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


async def kube_setup_actions(
    sites: SiteMap, view: SiteView, plan: bool
) -> tuple[list[Action], list[str]]:
    """Everything the cluster's site needs, only what differs."""
    site, state = view.kube, view.kube_state
    assert site is not None and state is not None
    links, problems = await link_resources(sites, state)
    base = _changed(state, base_resources(sites))
    link_changes = _changed(state, links)
    todo: list[Action] = []
    if base:
        todo.append(Action("apply site and listeners", lambda: site.apply(base)))
    if link_changes:
        todo.append(Action("apply links", lambda: site.apply(link_changes)))
        todo.append(Action("restart router pod", site.restart_router))
    names = [r["metadata"]["name"] for r in links if r["kind"] == "Link"]
    if names and (todo or not all(ready(state.links.get(n)) for n in names)):
        todo.append(
            Action(
                "wait for links",
                lambda: wait_links(site, names, time.monotonic() + LINK_DEADLINE),
                changes=False,
            )
        )
    return todo, problems


async def kube_up_actions(sites: SiteMap, view: SiteView, live: set[str]) -> list[Action]:
    """``up crc``: re-create the links to live peers that are not connected, restart the
    router pod so it mounts their Secrets, and wait for them. A link to a peer that is down
    is left alone: it could not connect, and re-creating it every time would never settle."""
    site, state = view.kube, view.kube_state
    assert site is not None and state is not None
    links, _ = await link_resources(sites, state)
    base = _changed(state, base_resources(sites))
    hosts = {cr.link_name(t.site): h for h, t in link_targets(sites).items()}
    wanted = [r for r in links if hosts.get(r["metadata"]["name"]) in live]
    broken = [
        r
        for r in wanted
        if (r["kind"] == "Link" and not ready(state.links.get(r["metadata"]["name"])))
        or (r["kind"] == "Secret" and not cr.same(r, state.existing(r)))
    ]
    todo: list[Action] = []
    if base:
        todo.append(Action("apply site and listeners", lambda: site.apply(base)))
    if broken:
        stale = [
            cr.key(r)
            for r in broken
            if r["kind"] == "Link" and r["metadata"]["name"] in state.links
        ]
        if stale:
            todo.append(Action("delete stale links", lambda: site.delete(stale)))
        todo.append(Action("create links", lambda: site.apply(broken)))
        todo.append(Action("restart router pod", site.restart_router))
        names = [r["metadata"]["name"] for r in wanted if r["kind"] == "Link"]
        todo.append(
            Action(
                "wait for links",
                lambda: wait_links(site, names, time.monotonic() + LINK_DEADLINE),
                changes=False,
            )
        )
    return todo


async def kube_down_actions(sites: SiteMap, view: SiteView) -> list[Action]:
    """``down crc``: delete the cluster's links (the Secrets stay for the next ``up``)."""
    site, state = view.kube, view.kube_state
    assert site is not None and state is not None
    names = [cr.link_name(t.site) for t in link_targets(sites).values()]
    present = [("Link", n) for n in names if n in state.links]
    return [Action("delete links", lambda: site.delete(present))] if present else []


def kube_teardown_actions(sites: SiteMap, view: SiteView) -> list[Action]:
    site, state = view.kube, view.kube_state
    assert site is not None and state is not None
    names = [cr.link_name(t.site) for t in link_targets(sites).values()]
    keys = [("Link", n) for n in names if n in state.links]
    keys += [("Secret", n) for n in names if n in state.secrets]
    keys += [cr.key(r) for r in base_resources(sites)[1:] if state.existing(r) is not None]
    if state.site is not None:
        keys.append(("Site", state.site["metadata"]["name"]))
    return [Action("remove skupper resources", lambda: site.delete(keys))] if keys else []
