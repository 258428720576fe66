"""What the Kubernetes consumer site (e.g. CRC) should have, whatever the operation: its
Site and Listeners, and a link to each direct peer and to the local site.

The cluster links directly to the providers in ``CRC_DIRECT_LINKS`` and to the local site
(through which it reaches the others); each link is a ``kubernetes.io/tls`` Secret made from
the peer's client certificate plus a Link. After a link or its Secret changes, the router
pod is deleted so that its replacement mounts the Secret (the kube-adaptor mounts only the
TLS Secrets that existed when the pod started).

Pure: from the topology, the cluster's recorded state and the peers' client certificates
(read beforehand by ``SiteMap.client_certs``) to resources.
"""

from __future__ import annotations

from ...sites import resources as cr
from ...sites.kube import KubeState
from ...sites.resources import ClientCert, LinkTarget, Resource
from ...topology import Topology, cluster_listener_name
from ...vocabulary import LOCAL_HOST
from .leftovers import cluster_pool_name
from .podman import hub_target, pool_listener

Certs = dict[str, ClientCert | None]


def link_targets(topology: Topology) -> dict[str, LinkTarget]:
    """host -> where the cluster's link to it goes."""
    assert topology.kubernetes is not None
    targets = {}
    providers = {p.name: p for p in topology.providers}
    for host in topology.kubernetes.direct_links:
        targets[host] = hub_target(providers[host])
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
    keys = {e.label: e.routing_key for e in topology.model_endpoints()}
    found = [cr.site(kube.site_name)]
    for label, port in kube.listeners.items():
        name = cluster_listener_name(label)
        found.append(cr.listener(name, keys[label], name, port))
    for pool in topology.pools:
        if pool.kube_port is not None:
            # its host names the Service the controller makes for it
            found.append(pool_listener(topology, pool, cluster_pool_name(pool), pool.kube_port))
    return found


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


def cluster_link_names(topology: Topology) -> tuple[str, ...]:
    """The Links the topology gives the cluster (none without a cluster)."""
    if topology.kubernetes is None:
        return ()
    return tuple(cr.link_name(t.site) for t in link_targets(topology).values())


def kube_resources_without_secrets(topology: Topology) -> list[Resource]:
    return base_resources(topology) + [cr.link(t) for t in link_targets(topology).values()]
