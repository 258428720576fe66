"""Which models the providers serve: one read per call, the one source that status, up,
down, teardown, resolve_profile, models, test_model and diagnose decide active profiles
from.

A provider's endpoint is read where it answers what is asked:

- without an API key, on the host: the site-state read's own ``GET /v1/models``
  (``SiteState.served_models``), in the round trip the reading already made;
- with a key (``<PREFIX>_MODEL_API_KEY_FILE``), or when the host's read answered no list,
  through this machine's listener for it, with the key as the bearer: the host's read has
  no key (a keyed server answers it 401), and the key never goes to the host, where it
  would be in a command line (``model_http``).

A listener is only asked where a route can be behind it (the caller says which providers:
by default those whose router runs in the reading); the others' ids are not known
(``ids`` None), and their active profile falls back to the default, saying so.

Everything is keyed by model endpoint (``ModelEndpoint.label``: the host's name for a host
of the single-port form, ``HOST/ENDPOINT`` for one with several); a host's endpoints are
all read in its one site-state round trip.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from ..errors import CheckFailed
from ..topology import ModelEndpoint, Topology
from .model_http import PROBE_TIMEOUT, ApiKey, ModelsProbe, api_key, base_url, probe_models
from .predicates import router_running
from .readings import PodmanReading, Reading
from .scope import site_ref
from .sitemap import SiteMap

#: How many listener probes share the HTTP client's connections at once.
MAX_CONNECTIONS = 16


@dataclass(frozen=True)
class Served:
    """What one provider's endpoint serves, as this call read it: ``ids`` (None: not
    known), the answer through the listener when one was asked (``probe``), and, when the
    ids are not known, why."""

    ids: list[str] | None
    probe: ModelsProbe | None = None
    problem: str | None = None


#: endpoint label -> what it serves (every model endpoint of the topology has a row).
ServedMap = Mapping[str, Served]


def keyed(p: ModelEndpoint) -> bool:
    """Whether the endpoint's server takes a key: its host's own read cannot list it."""
    return p.model_api_key_file is not None


def host_ids(p: ModelEndpoint, reading: Reading | None) -> list[str] | None:
    """The ids the site-state read's host-side ``GET /v1/models`` listed (None: none, or
    the endpoint has a key, so that read without it says nothing)."""
    if keyed(p) or not isinstance(reading, PodmanReading):
        return None
    return reading.state.models_answer(p.index).served_models


def wants_listener(p: ModelEndpoint, reading: Reading | None) -> bool:
    """Whether the provider's served models are to be asked through the listener: it has a
    key, or its host's read answered no list."""
    return keyed(p) or (isinstance(reading, PodmanReading) and host_ids(p, reading) is None)


def route_up(readings: Mapping[str, Reading]) -> Callable[[ModelEndpoint], bool]:
    """By default a listener is asked when the provider's router runs in its reading."""
    return lambda p: router_running(readings.get(p.host)) is True


async def read_served(
    topology: Topology,
    readings: Mapping[str, Reading],
    *,
    routed: Callable[[ModelEndpoint], bool] | None = None,
    listener: Collection[str] = (),
    only: Collection[str] | None = None,
    timeout: float = PROBE_TIMEOUT,
    keys: Mapping[str, ApiKey] | None = None,
    answered: Mapping[str, ModelsProbe] | None = None,
) -> dict[str, Served]:
    """What every model endpoint serves (``only``: these providers' hosts), by label, see
    the module's docstring. ``routed`` says which endpoints have a route behind their
    listener now (default ``route_up``); ``listener`` names endpoints (labels) to ask
    through it whatever their host's read said (``models``: a row proves its route).

    ``keys``: each endpoint's key as the caller already read it (by label; the others' are
    read here, once each); ``answered``: the listener's ``/v1/models`` the caller already
    has (status --readiness asks every listener beside the sites' read), used instead of
    asking it again."""
    routed = routed or route_up(readings)
    providers = [e for e in topology.model_endpoints() if only is None or e.host in only]
    ask = [
        p
        for p in providers
        if routed(p) and (p.label in listener or wants_listener(p, readings.get(p.host)))
    ]
    keys = {**{p.label: api_key(p) for p in ask if p.label not in (keys or {})}, **(keys or {})}
    probes = {p.label: answered[p.label] for p in ask if answered and p.label in answered}
    ask = [p for p in ask if p.label not in probes]
    if ask:
        import httpx

        host = topology.local.listener_host
        limits = httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=0)
        async with httpx.AsyncClient(limits=limits, trust_env=False) as http:
            found = await asyncio.gather(
                *(
                    probe_models(
                        http, keys[p.label], f"{base_url(host, p.local_port)}/v1/models", timeout
                    )
                    for p in ask
                )
            )
        probes.update({p.label: probe for p, probe in zip(ask, found, strict=True)})
    return {
        p.label: _served(p, readings.get(p.host), probes.get(p.label), keys.get(p.label))
        for p in providers
    }


def _served(
    p: ModelEndpoint, reading: Reading | None, probe: ModelsProbe | None, key: ApiKey | None
) -> Served:
    if probe is not None:
        if probe.ids is not None:
            return Served(probe.ids, probe)
        key_problem = key.problem if key is not None else None
        why = f"{probe.error}; {key_problem}" if key_problem else probe.error
        return Served(host_ids(p, reading), probe, f"through the local listener: {why}")
    ids = host_ids(p, reading)
    if ids is not None:
        return Served(ids)
    if not isinstance(reading, PodmanReading):
        return Served(None, problem=f"{p.host} was not read")
    if keyed(p):
        return Served(None, problem="its server takes a key and no route to it is up")
    return Served(None, problem="its endpoint answered no model list on the host")


async def provider_served(sites: SiteMap, p: ModelEndpoint, timeout: float) -> list[str]:
    """What one model endpoint serves, by the same rule, without a site's whole reading
    (``resolve_profile``): without a key, asked on the host (the site-state read's own
    command, over SSH; [] when it answers no list: no model is served); with one, through
    the listener with the key. Raises what stopped it (``SkupperMcpError``)."""
    if not keyed(p):
        site = await sites.podman(site_ref(sites.topology, p.host))
        return await site.served_model_ids(timeout, p.index) or []
    import httpx

    key = api_key(p)
    url = f"{base_url(sites.topology.local.listener_host, p.local_port)}/v1/models"
    async with httpx.AsyncClient(trust_env=False) as http:
        probe = await probe_models(http, key, url, timeout)
    if probe.ids is None:
        why = f"{probe.error}; {key.problem}" if key.problem else probe.error
        raise CheckFailed(f"{url}: {why}")
    return probe.ids


def served_ids(served: ServedMap) -> dict[str, list[str] | None]:
    """endpoint label -> the model ids it serves (None: not known): what
    ``model_actions`` reads."""
    return {host: s.ids for host, s in served.items()}
