"""What the podman sites should hold: a provider's hub (its Site, RouterAccess and the
Connector to its model) and the local site (its Site, RouterAccess, a Listener per provider
and a Link to each hub). Pure.
"""

from __future__ import annotations

from ...facts.site_state import SiteState
from ...sites import resources as cr
from ...sites.resources import ClientCert, LinkTarget, Resource
from ...topology import ModelPool, ProviderHost, Topology


def hub_resources(p: ProviderHost, pools: list[ModelPool]) -> list[Resource]:
    """What a provider's hub holds: its Site, RouterAccess (SANs, explicit ports), a
    Connector to each of its model endpoints, and one more on the member's endpoint for
    each ``any`` pool it serves (the pool's shared key: the router sends each connection to
    a reachable connector of it). Priority and weighted pools reach it by its own key."""
    found = [
        cr.site(p.site_name),
        cr.router_access(p.site_name, p.inter_router_port, p.edge_port, p.sans),
    ] + [cr.connector(e.routing_key, e.model_host, e.model_port) for e in p.endpoints]
    for pool in pools:
        if pool.strategy != "any":
            continue
        for member in pool.members:
            e = p.endpoint_of_profile(member.profile) if member.provider == p.name else None
            if e is not None:
                found.append(cr.connector(pool.routing_key, e.model_host, e.model_port))
    return found


def pool_listener(topology: Topology, pool: ModelPool, host: str, port: int) -> Resource:
    """The one listener of a pool, named after its key: a Listener on its shared key (any),
    else a MultiKeyListener over its members' own keys, in preference order."""
    name = pool.routing_key
    if pool.strategy == "any":
        return cr.listener(name, pool.routing_key, host, port)
    keys = []
    for member in pool.members:
        provider = topology.provider(member.provider)
        endpoint = provider.endpoint_of_profile(member.profile) if provider else None
        assert endpoint is not None  # the topology's parse checked every member
        keys.append((endpoint.routing_key, member.weight))
    return cr.multi_key_listener(name, host, port, pool.strategy, keys)


def hub_target(p: ProviderHost) -> LinkTarget:
    """Where a link to a provider's hub goes."""
    return LinkTarget(p.site_name, p.public_host, p.inter_router_port, p.edge_port)


def local_base_resources(topology: Topology) -> list[Resource]:
    """The local site's Site, RouterAccess and a Listener per model endpoint (its links
    aside)."""
    local = topology.local
    found: list[Resource] = [
        cr.site(local.site_name),
        cr.router_access(local.site_name, local.inter_router_port, local.edge_port, local.sans),
    ]
    return (
        found
        + [
            cr.listener(e.routing_key, e.routing_key, "0.0.0.0", e.local_port)
            for e in topology.model_endpoints()
        ]
        + [pool_listener(topology, pool, "0.0.0.0", pool.local_port) for pool in topology.pools]
    )


def local_resources_without_secrets(topology: Topology) -> list[Resource]:
    """What the local site holds apart from the link Secrets."""
    return local_base_resources(topology) + [cr.link(hub_target(p)) for p in topology.providers]


def local_resources(
    topology: Topology, state: SiteState, certs: dict[str, ClientCert | None]
) -> tuple[list[Resource], list[str]]:
    """What the local site should hold: Site, RouterAccess, a Listener per provider and a
    Link (with its Secret, from the hub's client certificate) to each; and the providers it
    cannot link to yet (no certificate now, and no Secret from an earlier setup)."""
    desired = local_base_resources(topology)
    missing = []
    for p in topology.providers:
        target = hub_target(p)
        cert = certs.get(p.name)
        if cert is not None:
            desired.append(cr.link_secret(target, cert))
        elif state.input_resources.get(("Secret", cr.link_name(p.site_name))) is None:
            missing.append(p.name)
            continue
        desired.append(cr.link(target))
    return desired, missing
