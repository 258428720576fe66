"""What the Kubernetes consumer site (e.g. CRC) should have, whatever the operation: its
Site and Listeners, and a link to each direct peer and to the local site.

The cluster links directly to the providers in ``CRC_DIRECT_LINKS`` and to the local site
(through which it reaches the others); each link is a ``kubernetes.io/tls`` Secret made from
the peer's client certificate plus a Link. After a link or its Secret changes, the router
pod is deleted so that its replacement mounts the Secret (the seed's Known Issues).

The planning helpers are pure: from the topology, the cluster's recorded state and the
peers' client certificates (read beforehand by ``fetch_certs``) to resources.
"""

from __future__ import annotations

import asyncio
import time

from ...errors import NotReadyError
from ...sites import resources as cr
from ...sites.kube import (
    ClusterSite,
    KubeState,
    ready,
    status_of,
)
from ...sites.resources import ClientCert, LinkTarget, Resource
from ...sites.work import ApiCall
from ...topology import Topology
from ...vocabulary import LOCAL_HOST
from ..runner import SITE_ERRORS, Action
from ..scope import site_ref
from ..sitemap import SiteMap
from ..verify import Pacing

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


def differing(state: KubeState, wanted: list[Resource]) -> list[Resource]:
    """The resources the cluster does not have as wanted yet."""
    return [r for r in wanted if not cr.same(r, state.existing(r))]


async def wait_links(site: ClusterSite, names: list[str], deadline: float) -> str:
    last = "not read"
    pacing = Pacing()
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
            raise NotReadyError(
                site.host, f"links not ready within {LINK_DEADLINE:g}s: {last}", LINK_DEADLINE
            )
        await pacing.pause(deadline)


def wait_for_links(site: ClusterSite, names: list[str]) -> Action:
    return Action(
        "wait for links",
        tuple(ApiCall("wait", "Link", n) for n in names),
        lambda: wait_links(site, names, time.monotonic() + LINK_DEADLINE),
        changes=False,
    )
