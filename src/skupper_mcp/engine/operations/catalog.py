"""``models``: one row per model the VAN brings to this machine, read through its listener.

Every provider's site is read (one round trip each, as for status), then its local
listener port gets a connect; where the route is up (``model_state.needs_probe``) one
``GET /v1/models`` goes through the listener with the provider's key, all probes at once
over one HTTP client, each bounded in time and bytes. The row's state is
``model_state.model_condition`` over the site's and the listener's typed conditions.
"""

from __future__ import annotations

import asyncio

from ...models import ModelRow, ModelsResult
from ...topology import ProviderHost, Topology
from ..condition import site_condition
from ..listeners import listener_state
from ..model_actions import active_or_default
from ..model_http import (
    ApiKey,
    ModelsProbe,
    api_key,
    base_url,
    cluster_base_url,
    key_env,
    local_base_url,
    probe_models,
)
from ..model_state import model_condition, needs_probe
from ..readings import Reading
from ..scope import site_ref
from ..sitemap import SiteMap
from ..verify import tcp_probe

#: How many probes share the HTTP client's connections at once.
MAX_CONNECTIONS = 16


async def run(sites: SiteMap) -> ModelsResult:
    """Every provider's model row, probed concurrently."""
    import httpx

    topo = sites.topology
    providers = list(topo.providers)
    host = topo.local.listener_host
    views = await sites.read_all(site_ref(topo, p.name) for p in providers)
    # after the reads, as status does: SSH handshakes on the loop would make a connect to
    # a bound port miss its second
    bound = await asyncio.gather(*(tcp_probe(host, p.local_port) for p in providers))
    keys = {p.name: api_key(p) for p in providers}
    limits = httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=0)
    async with httpx.AsyncClient(limits=limits, trust_env=False) as http:

        async def probe(p: ProviderHost, is_bound: bool) -> ModelsProbe | None:
            condition, _ = site_condition(views[p.name])
            listener, _, _ = listener_state(is_bound, p.name, views[p.name], topo.local.site_name)
            if not needs_probe(condition, listener):
                return None
            url = f"{local_base_url(topo, p)}/models"
            return await probe_models(http, keys[p.name], url)

        probes = await asyncio.gather(*(probe(p, b) for p, b in zip(providers, bound, strict=True)))
    rows = [
        _row(topo, p, views[p.name], b, found, keys[p.name])
        for p, b, found in zip(providers, bound, probes, strict=True)
    ]
    return ModelsResult(rows=rows, summary=summary(rows))


def _row(
    topo: Topology,
    p: ProviderHost,
    view: Reading,
    bound: bool,
    probe: ModelsProbe | None,
    key: ApiKey,
) -> ModelRow:
    condition, reason = site_condition(view)
    listener, detail, _ = listener_state(bound, p.name, view, topo.local.site_name)
    address = base_url(topo.local.listener_host, p.local_port)
    state, why = model_condition(condition, reason, listener, detail, address, probe, key.problem)
    ids = probe.ids if probe is not None and probe.ids else []
    profile, _ = active_or_default(topo, p.name, ids)
    return ModelRow(
        model_ids=ids,
        host=p.name,
        profile=profile,
        site=p.site_name,
        listener_port=p.local_port,
        local_base_url=local_base_url(topo, p),
        cluster_base_url=cluster_base_url(topo, p),
        routing_key=p.routing_key,
        state=state,
        reason=why,
        latency_ms=probe.latency_ms if probe is not None else None,
        api_key_env=key_env(p),
    )


def summary(rows: list[ModelRow]) -> str:
    """One line in our own words (no model id: those are the server's text): the hosts
    serving and their URLs, and every other row's host with its state."""
    serving = [f"{r.host} at {r.local_base_url}" for r in rows if r.state == "serving"]
    parts = [f"{len(serving)}/{len(rows)} serving" + (f": {', '.join(serving)}" if serving else "")]
    others = [f"{r.host} {r.state}" for r in rows if r.state != "serving"]
    if others:
        parts.append(", ".join(others))
    return "; ".join(parts)
