"""Drift: how a site differs from what ``topology.env`` says it should hold. Pure.

The resources compared are the ones setup writes, with setup's own equality (``cr.same``),
so a site that differs here is exactly a site where setup would change something; link
Secrets are left out (a hub re-issues its client certificate on every reload: what matters
is the Link, and setup compares the CA). Resources on a site that the topology no longer
names are not drift: setup does not remove them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...facts.site_state import SiteState
from ...sites import resources as cr
from ...sites.kube import KubeState
from ...sites.resources import LinkTarget, Resource
from ...topology import ProviderHost, Topology
from .cluster import base_resources, link_targets


def hub_resources(p: ProviderHost) -> list[Resource]:
    """What a provider's hub holds: its Site, RouterAccess (SANs, explicit ports) and the
    Connector to its model."""
    return [
        cr.site(p.site_name),
        cr.router_access(p.site_name, p.inter_router_port, p.edge_port, p.sans),
        cr.connector(p.routing_key, p.model_host, p.model_port),
    ]


def hub_target(p: ProviderHost) -> LinkTarget:
    """Where a link to a provider's hub goes."""
    return LinkTarget(p.site_name, p.public_host, p.inter_router_port, p.edge_port)


def local_base_resources(topology: Topology) -> list[Resource]:
    """The local site's Site, RouterAccess and a Listener per provider (its links aside)."""
    local = topology.local
    found: list[Resource] = [
        cr.site(local.site_name),
        cr.router_access(local.site_name, local.inter_router_port, local.edge_port, local.sans),
    ]
    return found + [
        cr.listener(p.routing_key, p.routing_key, "0.0.0.0", p.local_port)
        for p in topology.providers
    ]


def local_resources_without_secrets(topology: Topology) -> list[Resource]:
    """What the local site holds apart from the link Secrets."""
    return local_base_resources(topology) + [cr.link(hub_target(p)) for p in topology.providers]


def kube_resources_without_secrets(topology: Topology) -> list[Resource]:
    return base_resources(topology) + [cr.link(t) for t in link_targets(topology).values()]


def differences(wanted: list[Resource], held: Callable[[Resource], Resource | None]) -> list[str]:
    """One line per difference: a resource missing, or each spec field that differs."""
    lines: list[str] = []
    for resource in wanted:
        kind, name = cr.key(resource)
        actual = held(resource)
        if actual is None:
            lines.append(f"{kind}/{name}: missing on the site")
        elif not cr.same(resource, actual):
            changed = _field_differences(resource.get("spec"), actual.get("spec"), "spec")
            lines += [f"{kind}/{name} {line}" for line in changed] or [
                f"{kind}/{name}: differs from topology.env"
            ]
    return lines


def podman_drift(wanted: list[Resource], state: SiteState, *, tmpfs: bool = False) -> list[str]:
    """How a podman site differs from ``wanted`` (and, where the topology asks for the
    tmpfs workaround, a router container without it)."""
    lines = differences(wanted, lambda r: state.input_resources.get(cr.key(r)))
    if tmpfs and state.router is not None and not state.router.has_tmpfs:
        lines.append("router container: no tmpfs /tmp, though the topology asks for the workaround")
    return lines


def kube_drift(topology: Topology, state: KubeState) -> list[str]:
    return differences(kube_resources_without_secrets(topology), state.existing)


def _field_differences(want: Any, have: Any, path: str) -> list[str]:
    want, have = cr.normal(want), cr.normal(have)
    if isinstance(want, dict) and isinstance(have, dict):
        found: list[str] = []
        for key in sorted(set(want) | set(have)):
            found += _field_differences(want.get(key), have.get(key), f"{path}.{key}")
        return found
    if (
        isinstance(want, list)
        and isinstance(have, list)
        and len(want) == len(have)
        and all(isinstance(v, dict) for v in want + have)
    ):
        found = []
        for index, (w, h) in enumerate(zip(want, have, strict=True)):
            found += _field_differences(w, h, f"{path}[{index}]")
        return found
    if want == have:
        return []
    return [f"{path}: the site has {_show(have)}, topology.env says {_show(want)}"]


def _show(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)
