"""One model endpoint's row state and readiness from what its route answered: the one
judgement ``models`` (``operations/catalog.py``) and ``status`` (``operations/status.py``)
both make, so a model reads the same in both.

``route_condition`` is the row's state (``model_state.model_condition`` over the provider
site's condition and the local listener's); ``endpoint_reading`` is ``model_reading.decide``
over that state, the probe, the engine's pages and whether the model container runs.
``ask_routes`` asks every endpoint's listener once (``GET /v1/models`` with the key, then
the engine's own pages where it listed a model), each exchange bounded in time and bytes:
status starts it beside the sites' read (the listeners are on this machine, so it overlaps
the SSH round trip) and reads an answer only where the route is up (``needs_probe``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..results import ModelReading, ModelState
from ..topology import ModelEndpoint, Topology
from .condition import site_condition
from .listeners import listener_state
from .model_http import ApiKey, ModelsProbe, base_url, key_variable, probe_models
from .model_reading import EnginePages, decide, read_pages
from .model_state import model_condition, needs_probe
from .readings import PodmanReading, Reading
from .served import MAX_CONNECTIONS


@dataclass(frozen=True)
class RouteAnswer:
    """What one endpoint's listener answered: its ``/v1/models`` and, where that listed a
    model, its engine's own pages (None: not asked)."""

    probe: ModelsProbe
    pages: EnginePages | None


async def ask_route(http: object, topo: Topology, p: ModelEndpoint, key: ApiKey) -> RouteAnswer:
    """One endpoint's ``/v1/models`` through its listener, then its engine's pages."""
    address = base_url(topo.local.listener_host, p.local_port)
    probe = await probe_models(http, key, f"{address}/v1/models")
    pages = await read_pages(http, address, key, probe) if probe.ids else None
    return RouteAnswer(probe, pages)


async def ask_routes(
    topo: Topology, endpoints: Sequence[ModelEndpoint], keys: Mapping[str, ApiKey]
) -> dict[str, RouteAnswer]:
    """Every endpoint's answer at once over one HTTP client, by label, each with its key
    as the caller read it (``keys``, by label)."""
    if not endpoints:
        return {}
    import httpx

    limits = httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=0)
    async with httpx.AsyncClient(limits=limits, trust_env=False) as http:
        found = await asyncio.gather(*(ask_route(http, topo, p, keys[p.label]) for p in endpoints))
    return {p.label: answer for p, answer in zip(endpoints, found, strict=True)}


def routed(topo: Topology, p: ModelEndpoint, view: Reading, bound: bool | None) -> bool:
    """Whether the endpoint's route is up, so that what its listener answers is its model's
    (``model_state.needs_probe``)."""
    listener = listener_state(bound, p.host, view, topo.local.site_name)[0]
    return needs_probe(site_condition(view)[0], listener)


def key_words(p: ModelEndpoint, key: ApiKey) -> str:
    """What to say of the key when the server refuses a request: the variable that names
    its file and the variable a client reads it from, as test_model says them."""
    client = f"{p.prefix}_MODEL_API_KEY"
    if key.problem:
        return key.problem
    if p.model_api_key_file is None:
        return (
            f"name the file that holds it in {key_variable(p)}; an exported client reads "
            f"it from ${client}"
        )
    return (
        f"the key in {key_variable(p)} ({p.model_api_key_file}) is not this server's; an "
        f"exported client reads it from ${client}"
    )


def route_condition(
    topo: Topology,
    p: ModelEndpoint,
    view: Reading,
    bound: bool | None,
    probe: ModelsProbe | None,
    key: ApiKey,
) -> tuple[ModelState, str]:
    """The endpoint's row state and why (``model_state.model_condition``)."""
    condition, reason = site_condition(view)
    listener, detail, _ = listener_state(bound, p.host, view, topo.local.site_name)
    address = base_url(topo.local.listener_host, p.local_port)
    return model_condition(condition, reason, listener, detail, address, probe, key_words(p, key))


def endpoint_reading(
    topo: Topology,
    p: ModelEndpoint,
    view: Reading,
    state: ModelState,
    reason: str | None,
    probe: ModelsProbe | None,
    pages: EnginePages | None,
) -> ModelReading:
    """The endpoint's readiness (``model_reading.decide``), from its row's state."""
    running = None
    if isinstance(view, PodmanReading) and p.model_container:
        running = view.state.container_running(p.model_container)
    return decide(state, reason, probe, pages, running, topo.saturated_waiting)


def readiness(
    topo: Topology,
    p: ModelEndpoint,
    view: Reading,
    bound: bool | None,
    answer: RouteAnswer | None,
    key: ApiKey,
) -> ModelReading:
    """status's reading of one endpoint: its listener's answer counts only where the
    route is up, as in ``models``; ``key`` is the one its listener was asked with."""
    if answer is None or not routed(topo, p, view, bound):
        probe, pages = None, None
    else:
        probe, pages = answer.probe, answer.pages
    state, reason = route_condition(topo, p, view, bound, probe, key)
    return endpoint_reading(topo, p, view, state, reason, probe, pages)
