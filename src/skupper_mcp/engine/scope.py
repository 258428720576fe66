"""Which sites an operation touches: targets, and the scoping rules. Pure.

``up HOST`` starts that host and the local site (the shared consumer every route crosses).
``down HOST`` stops that host, and the local site only when no other provider still has an
active router (cases T3b-T3e of ``tests/engine/test_planning.py``); the Kubernetes site is a
consumer and never keeps the local site up on its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import ConfigError
from ..topology import Topology
from ..vocabulary import LOCAL_HOST, Platform, Role


@dataclass(frozen=True)
class SiteRef:
    """One site of the network, as results name it."""

    host: str
    site: str
    role: Role
    platform: Platform


@dataclass(frozen=True)
class Target:
    """What the user asked for: everything, one host, or a profile on a host."""

    query: str
    host: str | None  # None means all
    profile: str | None = None
    #: the model endpoint named (HOST/ENDPOINT, or the one of the profile); None: the host
    endpoint: str | None = None

    @property
    def everything(self) -> bool:
        return self.host is None


def sites(topology: Topology) -> list[SiteRef]:
    """Every site, providers first, then the local site, then the Kubernetes site."""
    refs = [SiteRef(p.name, p.site_name, "provider", "podman") for p in topology.providers]
    refs.append(SiteRef(LOCAL_HOST, topology.local.site_name, "consumer", "podman"))
    if topology.kubernetes is not None:
        kube = topology.kubernetes
        refs.append(SiteRef(kube.name, kube.site_name, "consumer", "kubernetes"))
    return refs


def site_ref(topology: Topology, host: str) -> SiteRef:
    for ref in sites(topology):
        if ref.host == host:
            return ref
    raise ConfigError(f"unknown host {host!r}; valid: {', '.join(valid_targets(topology))}")


def valid_targets(topology: Topology) -> list[str]:
    """Every name a target may be: all, the hosts, the sites, the profiles (the topology's
    one list)."""
    return list(dict.fromkeys(topology.target_names()))


def resolve_target(topology: Topology, query: str) -> Target:
    """``all``, a host, a site name, or a profile (resolved to its host)."""
    name = query.strip()
    if not name:
        # Never read as "all": an agent's empty argument must not act on every site.
        raise ConfigError(f"the target is empty: use one of {', '.join(valid_targets(topology))}")
    if name == "all":
        return Target(query=query, host=None)
    for ref in sites(topology):
        if name in (ref.host, ref.site):
            return Target(query=query, host=ref.host)
    if name in ("localhost",):
        return Target(query=query, host=LOCAL_HOST)
    endpoint = topology.model_endpoint(name) if "/" in name else None
    if endpoint is not None:  # up and down act on its host: one site serves them all
        return Target(query=query, host=endpoint.host, endpoint=endpoint.label)
    for provider in topology.providers:
        found = provider.endpoint_of_profile(name)
        if found is not None:
            return Target(query=query, host=provider.name, profile=name, endpoint=found.label)
    raise ConfigError(f"unknown target {query!r}: use one of {', '.join(valid_targets(topology))}")


def scope(topology: Topology, target: Target) -> list[SiteRef]:
    """The sites ``up`` or ``down`` considers: everything, or the target with the local
    site (the shared consumer its routes cross). Whether ``down`` really stops the local
    site is ``local_stops``'s decision."""
    everything = sites(topology)
    if target.everything:
        return everything
    if target.host == LOCAL_HOST:
        return [r for r in everything if r.host == LOCAL_HOST]
    return [r for r in everything if r.host in (target.host, LOCAL_HOST)]


def local_stops(
    topology: Topology, target: Target, provider_active: Mapping[str, bool | None]
) -> tuple[bool, str]:
    """Whether ``down target`` stops the local site, and why (or why not).

    ``provider_active`` maps each provider to whether its router is active (None: unknown,
    e.g. unreachable, which keeps the local site up: stopping it might cut a live route).
    """
    if target.everything or target.host == LOCAL_HOST:
        return True, "stopping everything" if target.everything else "the local site was targeted"
    others = [p.name for p in topology.providers if p.name != target.host]
    active = [name for name in others if provider_active.get(name)]
    unknown = [name for name in others if provider_active.get(name) is None]
    if active:
        return False, f"kept: {', '.join(active)} still active"
    if unknown:
        return False, f"kept: the state of {', '.join(unknown)} is unknown"
    return True, "no other provider is active"
