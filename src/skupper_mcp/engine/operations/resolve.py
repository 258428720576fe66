"""resolve_profile: a host, site or profile name -> what it refers to.

hosted-model-ctl takes profile names, never host names, so an agent stopping or starting a
provider needs the profile that host is (or would be) serving.
"""

from __future__ import annotations

import logging

from skupper_mcp.engine.model_actions import active_profile
from skupper_mcp.engine.scope import valid_targets
from skupper_mcp.engine.served import provider_served
from skupper_mcp.engine.sitemap import SiteMap
from skupper_mcp.errors import ConfigError, SkupperMcpError
from skupper_mcp.facts.model_endpoint import listed_ids
from skupper_mcp.results import ResolveResult
from skupper_mcp.topology import ModelEndpoint, ProviderHost, Topology

log = logging.getLogger(__name__)

MODELS_TIMEOUT = 10.0


def unknown_name(topology: Topology, name: str) -> ConfigError:
    """The error for a name that is no host, site or profile, listing the valid ones."""
    valid = [n for n in valid_targets(topology) if n != "all"]
    return ConfigError(f"unknown host, site or profile {name!r}; valid names: {', '.join(valid)}")


def resolve_static(topology: Topology, name: str) -> ResolveResult | ModelEndpoint:
    """Resolve without touching any host: a finished result for profiles and consumers,
    or the model endpoint whose active profile still has to be read (``HOST/ENDPOINT``, or
    a single-port host). A host with several endpoints by its name alone is an error that
    lists them: which one's profile is wanted is the caller's to say, never the first's."""
    provider = topology.provider_for_profile(name)
    if provider is not None:
        endpoint = provider.endpoint_of_profile(name)
        assert endpoint is not None  # the host's profiles are its endpoints'
        return _provider_result(topology, name, endpoint, name, "given", "the name is a profile")
    if "/" in name:
        found_endpoint = topology.model_endpoint(name)
        if found_endpoint is None:
            raise unknown_name(topology, name)
        return found_endpoint
    host = topology.host_of(name)
    if host is None:
        raise unknown_name(topology, name)
    found = topology.provider(host)
    if found is not None and found.multi_endpoint:
        raise several_endpoints(found, "resolve_profile")
    if found is not None:
        return found.endpoints[0]
    return ResolveResult(
        query=name,
        host=host,
        site=topology.site_name_of(host),
        role="consumer",
        detail="consumer sites run no model; hosted-model-ctl is not involved",
    )


def several_endpoints(provider: ProviderHost, verb: str) -> ConfigError:
    """The error for a host with several model endpoints named where one is needed."""
    each = ", ".join(f"{e.label} ({', '.join(e.profiles)})" for e in provider.endpoints)
    return ConfigError(
        f"{provider.name} serves several model endpoints: {verb} one of them, HOST/ENDPOINT "
        f"or one of its profiles: {each}"
    )


def _provider_result(
    topology: Topology, query: str, provider: ModelEndpoint, profile: str, source: str, detail: str
) -> ResolveResult:
    return ResolveResult.model_validate(
        {
            "query": query,
            "host": provider.host,
            "endpoint": provider.label if provider.name else None,
            "site": topology.site_name_of(provider.host),
            "role": "provider",
            "profile": profile,
            "profile_source": source,
            "listener_port": provider.local_port,
            "routing_key": provider.routing_key,
            "model_id": provider.profiles[profile],
            "detail": detail,
        }
    )


async def resolve(sites: SiteMap, name: str) -> ResolveResult:
    """Resolve ``name``; for a provider host, ask its endpoint which profile is active."""
    found = resolve_static(sites.topology, name)
    if isinstance(found, ResolveResult):
        return found
    provider = found
    topology = sites.topology
    try:
        ids = await provider_served(sites, provider, MODELS_TIMEOUT)
    except SkupperMcpError as error:
        log.info("cannot read the active profile of %s: %s", provider.label, error)
        return _provider_result(
            topology,
            name,
            provider,
            provider.default_profile,
            "default",
            f"the active profile could not be read ({error}); using the default",
        )
    profile = active_profile(provider, ids)
    if profile:
        return _provider_result(
            topology,
            name,
            provider,
            profile,
            "active",
            f"the model endpoint serves {provider.profiles[profile]}",
        )
    why = (
        f"the model endpoint serves {listed_ids(ids)}, which is no profile of {provider.label}"
        if ids
        else "no model is being served"
    )
    return _provider_result(
        topology, name, provider, provider.default_profile, "default", f"{why}; using the default"
    )
