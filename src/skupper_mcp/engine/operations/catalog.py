"""``models``: one row per model the VAN brings to this machine, read through its listener.

Every provider's site is read (one round trip each, as for status), then its local
listener port gets a connect; where the route is up (``model_state.needs_probe``) one
``GET /v1/models`` goes through the listener with the provider's key, all probes at once
over one HTTP client, each bounded in time and bytes. The row's state is
``model_state.model_condition`` over the site's and the listener's typed conditions.

A pool is one row more: its port and backends are status's ``pools.pool_rows`` row
(which backends are live, which one is preferred), carried as ``ModelRow.pool``; its
``/v1/models`` goes through the pool's own port, so the row proves the one URL that
fails over.
"""

from __future__ import annotations

import asyncio

from ...facts.model_endpoint import kept_ids
from ...facts.model_kind import kind_of
from ...placeholders import placeholder_ids
from ...results import ModelRow, ModelsResult, PoolStatus
from ...topology import ModelEndpoint, Topology
from ..model_actions import active_or_default
from ..model_http import (
    ApiKey,
    ModelsProbe,
    api_key,
    base_url,
    cluster_base_url,
    key_env,
    local_base_url,
    pool_cluster_base_url,
    probe_models,
)
from ..model_reading import NOT_READY_TO_CALL, EnginePages, read_pages
from ..model_state import pool_model_condition, pool_needs_probe
from ..pools import pool_readings
from ..readiness import endpoint_reading, key_words, route_condition
from ..readiness import routed as route_is_up
from ..readings import Reading
from ..scope import site_ref
from ..scope import sites as all_sites
from ..served import MAX_CONNECTIONS, Served, read_served
from ..sitemap import SiteMap
from ..verify import tcp_probe
from .status import pool_status


async def run(sites: SiteMap) -> ModelsResult:
    """Every provider's model row, probed concurrently."""
    import httpx

    topo = sites.topology
    providers = topo.model_endpoints()  # a row per model endpoint, its host read once
    host = topo.local.listener_host
    # a pool's backends are judged from the local site's links too: every site is read
    refs = all_sites(topo) if topo.pools else [site_ref(topo, p.name) for p in topo.providers]
    views = await sites.read_all(refs)
    pools = await pool_status(sites, views) if topo.pools else []
    # after the reads, as status does: SSH handshakes on the loop would make a connect to
    # a bound port miss its second
    bound = await asyncio.gather(*(tcp_probe(host, p.local_port) for p in providers))
    keys = {p.label: api_key(p) for p in providers}
    # a row proves its route: every endpoint whose route is up is asked through its listener
    routed = {
        p.label
        for p, is_bound in zip(providers, bound, strict=True)
        if route_is_up(topo, p, views[p.host], is_bound)
    }
    limits = httpx.Limits(max_connections=MAX_CONNECTIONS, max_keepalive_connections=0)
    async with httpx.AsyncClient(limits=limits, trust_env=False) as http:

        async def probe_pool(pool: PoolStatus) -> ModelsProbe | None:
            if not pool_needs_probe(pool):
                return None
            url = f"{base_url(host, pool.port)}/v1/models"
            key = keys[_key_provider(topo, pool).label]
            # each try a new connection, balanced anew: one closed without an answer (sent
            # to a member a router still holds) is asked again, POOL_TRIES times in all
            for _ in range(POOL_TRIES):
                probe = await probe_models(http, key, url)
                if probe.status is not None:
                    break
            return probe

        served, pool_probes = await asyncio.gather(
            read_served(
                topo,
                views,
                routed=lambda p: p.label in routed,
                listener=routed,
                only={p.name for p in topo.providers},
                keys=keys,
            ),
            asyncio.gather(*(probe_pool(pool) for pool in pools)),
        )
        pages = await asyncio.gather(
            *(_engine_pages(http, topo, p, served[p.label], keys[p.label]) for p in providers)
        )
    rows = [
        _with_reading(
            topo,
            _row(topo, p, views[p.host], b, served[p.label], keys[p.label]),
            p,
            views[p.host],
            served[p.label],
            page,
        )
        for p, b, page in zip(providers, bound, pages, strict=True)
    ]
    by_label = {r.host: r for r in rows}
    for pool, found in zip(pools, pool_probes, strict=True):
        members = _members(topo, pool, by_label)
        key = keys[_key_provider(topo, pool).label]
        rows.append(pool_readings(_pool_row(topo, pool, found, key, members), members))
    return ModelsResult(rows=rows, summary=summary(rows))


#: How many times ``models`` asks the pool's port when a connection closes unanswered.
POOL_TRIES = 3


def _members(
    topo: Topology, pool: PoolStatus, by_label: dict[str, ModelRow]
) -> dict[str, ModelRow]:
    """Each member's own row, by its provider's name: a member serves through the endpoint
    its profile names, whose row is labelled ``HOST/ENDPOINT`` on a host with several."""
    found = {}
    for b in pool.backends:
        p = topo.provider(b.provider)
        e = p.endpoint_of_profile(b.profile) if p else None
        row = by_label.get(e.label if e else b.provider)
        if row is not None:
            found[b.provider] = row
    return found


async def _engine_pages(
    http: object, topo: Topology, p: ModelEndpoint, served: Served, key: ApiKey
) -> EnginePages | None:
    """The engine's own pages, asked only where its route listed a model."""
    if served.probe is None or not served.probe.ids:
        return None
    return await read_pages(
        http, base_url(topo.local.listener_host, p.local_port), key, served.probe
    )


def _with_reading(
    topo: Topology,
    row: ModelRow,
    p: ModelEndpoint,
    view: Reading,
    served: Served,
    pages: EnginePages | None,
) -> ModelRow:
    reading = endpoint_reading(topo, p, view, row.state, row.reason, served.probe, pages)
    return row.model_copy(update={"readiness": reading})


def _key_provider(topo: Topology, pool: PoolStatus) -> ModelEndpoint:
    """The backend whose key a client of the pool sends: the preferred one, else the first
    (the members of one pool serve one model, behind one key file: the topology refuses a
    pool whose members name different ones); the member's endpoint, by its profile."""
    name = pool.preferred or pool.backends[0].provider
    backend = next(b for b in pool.backends if b.provider == name)
    p = topo.provider(name)
    e = p.endpoint_of_profile(backend.profile) if p else None
    assert e is not None  # the topology's parse checked every member
    return e


def _pool_row(
    topo: Topology,
    pool: PoolStatus,
    probe: ModelsProbe | None,
    key: ApiKey,
    members: dict[str, ModelRow],
) -> ModelRow:
    address = base_url(topo.local.listener_host, pool.port)
    chosen = _key_provider(topo, pool)
    serving = [h for h, r in members.items() if r.state == "serving" and r.model_ids]
    state, why = pool_model_condition(pool, address, probe, key_words(chosen, key), serving)
    profile = next(b.profile for b in pool.backends if b.provider == chosen.host)
    ids = probe.ids if probe is not None and probe.ids else []
    if not ids and state == "serving" and serving:
        # the pool serves what its serving members serve (the preferred one's, else the
        # first's): an export written now keeps the pool
        ids = members[chosen.host if chosen.host in serving else serving[0]].model_ids
    kept, cut = kept_ids(ids)
    kind = kind_of(chosen.kind, kept or [chosen.profiles[profile]])
    return ModelRow(
        model_ids=kept,
        model_ids_cut=cut,
        placeholder_ids=placeholder_ids(kept),
        kind=kind.kind,
        kind_from=kind.source,
        host=pool.name,
        profile=profile,
        site=pool.site,
        listener_port=pool.port,
        local_base_url=f"{address}/v1",
        cluster_base_url=_pool_cluster_url(topo, pool.name),
        routing_key=pool.routing_key,
        state=state,
        reason=why,
        latency_ms=probe.latency_ms if probe is not None else None,
        api_key_env=_client_key_env(chosen, probe),
        pool=pool,
    )


def _pool_cluster_url(topo: Topology, name: str) -> str | None:
    found = topo.pool(name)
    assert found is not None  # the row was made from the topology's pool
    return pool_cluster_base_url(topo, found)


def _row(
    topo: Topology,
    p: ModelEndpoint,
    view: Reading,
    bound: bool,
    served: Served,
    key: ApiKey,
) -> ModelRow:
    probe = served.probe
    state, why = route_condition(topo, p, view, bound, probe, key)
    # the row's ids are what its route answered; its profile what the provider serves
    ids = probe.ids if probe is not None and probe.ids else []
    profile, _ = active_or_default(topo, p.label, served.ids)
    kept, cut = kept_ids(ids)
    # what it serves: declared, else read in what it lists (or its profile's id, stopped)
    known = ids or ([p.profiles[profile]] if profile in p.profiles else [])
    kind = kind_of(p.kind, known)
    return ModelRow(
        model_ids=kept,
        model_ids_cut=cut,
        placeholder_ids=placeholder_ids(kept),
        kind=kind.kind,
        kind_from=kind.source,
        host=p.label,
        endpoint=p.label if p.name else None,
        profile=profile,
        site=topo.site_name_of(p.host),
        listener_port=p.local_port,
        local_base_url=local_base_url(topo, p),
        cluster_base_url=cluster_base_url(topo, p),
        routing_key=p.routing_key,
        state=state,
        reason=why,
        latency_ms=probe.latency_ms if probe is not None else None,
        api_key_env=_client_key_env(p, probe),
    )


def _client_key_env(p: ModelEndpoint, probe: ModelsProbe | None) -> str | None:
    """The variable a client reads the key from: the provider's when it declares a key
    file, or when its server refused the probe for want of one (it needs a key)."""
    if probe is not None and probe.refused:
        return f"{p.prefix}_MODEL_API_KEY"
    return key_env(p)


def summary(rows: list[ModelRow]) -> str:
    """One line in our own words (no model id: those are the server's text): the hosts
    serving and their URLs, and every other row's host with its state."""
    serving = [f"{r.host} at {r.local_base_url}" for r in rows if r.state == "serving"]
    parts = [f"{len(serving)}/{len(rows)} serving" + (f": {', '.join(serving)}" if serving else "")]
    others = [f"{r.host} {r.state}" for r in rows if r.state != "serving"]
    if others:
        parts.append(", ".join(others))
    busy = [
        f"{r.host} {r.readiness.state}"
        for r in rows
        if r.readiness is not None and r.readiness.state in NOT_READY_TO_CALL
    ]
    if busy:
        parts.append("not ready to call: " + ", ".join(busy))
    return "; ".join(parts)
