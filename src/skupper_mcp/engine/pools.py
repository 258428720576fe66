"""What a model pool is doing: which of its providers a site reaches now and which one
new connections go to, on the local site and, for a pool with ``_CRC_PORT``, on the cluster.
Pure: from the topology, the sites' rows, the links and the sites' readings.

A backend is live when its site runs (``up`` or ``degraded``) and the pool's site has a
connected route to it: the router forwards a pool's connection only to a destination it has
a link to (``qdr_forward_balanced_CT``, ``src/router_core/forwarder.c@3.5.1:998-1008``: a
router without a data link is skipped), and a MultiKeyListener picks among its keys that
are reachable (``src/adaptors/adaptor_listener.c@3.5.1:150-230``). The local site links to
every hub; the cluster to its direct peers and to the local site, through which it reaches
the others. What the site's controller wrote on the pool's listener (its status, and a
MultiKeyListener's reachable keys) is carried beside that, read by ``resource_status``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..facts.model_endpoint import quoted_ids
from ..results import (
    LinkStatus,
    ModelReading,
    ModelRow,
    PoolBackend,
    PoolMemberReading,
    PoolState,
    PoolStatus,
    SiteStatus,
)
from ..sites.resources import ResourceStatus, resource_status
from ..topology import ModelPool, Topology
from .desired.leftovers import cluster_pool_name
from .model_reading import load_rank, route_state
from .predicates import condition_runs
from .readings import ClusterReading, PodmanReading, Reading


@dataclass(frozen=True)
class Route:
    """How one site reaches a provider's hub: its link there, else a link to a site that
    links there (the cluster through the local site)."""

    direct: LinkStatus | None
    via: tuple[LinkStatus | None, LinkStatus | None] | None = None

    @property
    def connected(self) -> bool | None:
        """Up, down, or None when a link on the way could not be read."""
        paths: list[tuple[LinkStatus | None, ...]] = [(self.direct,)] if self.direct else []
        if self.via is not None:
            paths.append(self.via)
        states = [_all_up(path) for path in paths]
        if any(s is True for s in states):
            return True
        if not states or any(s is None for s in states):
            return None
        return False


def _all_up(path: tuple[LinkStatus | None, ...]) -> bool | None:
    found = [li.connected if li is not None else None for li in path]
    if any(c is False for c in found):
        return False
    return None if any(c is None for c in found) else True


def pool_resources(topology: Topology, readings: Mapping[str, Reading]) -> dict[str, Reading]:
    """The readings a pool's rows read its listener from: the local site's and the
    cluster's, by site name."""
    found: dict[str, Reading] = {}
    for reading in readings.values():
        if reading.ref.site in (topology.local.site_name, _cluster_site(topology)):
            found[reading.ref.site] = reading
    return found


def _cluster_site(topology: Topology) -> str | None:
    return topology.kubernetes.site_name if topology.kubernetes is not None else None


def listener_status(pool: ModelPool, reading: Reading | None) -> ResourceStatus | None:
    """The pool's Listener or MultiKeyListener on the reading's site, as its controller
    wrote it (a podman site's rendered copy, else its input; the cluster's object); None
    when the site was not read."""
    kind = "Listener" if pool.strategy == "any" else "MultiKeyListener"
    match reading:
        case PodmanReading(state=state):
            key = (kind, pool.routing_key)
            found = state.runtime_resources.get(key) or state.input_resources.get(key)
            return resource_status(found)
        case ClusterReading(state=state):
            held = state.listeners if kind == "Listener" else state.multi_key_listeners
            return resource_status(held.get(pool.routing_key))
        case _:
            return None


def pool_rows(
    topology: Topology,
    sites: list[SiteStatus],
    links: list[LinkStatus],
    bound: Mapping[str, bool | None],
    readings: Mapping[str, Reading] | None = None,
) -> list[PoolStatus]:
    """One row per pool, its local port probed (``bound``, by pool name), with its row on
    the cluster for a pool with ``_CRC_PORT``; ``readings`` (``pool_resources``, by site
    name) give what the sites' controllers say of the pools' listeners."""
    readings = readings or {}
    by_host = {s.host: s for s in sites}
    local = topology.local.site_name
    link_from: dict[str, dict[str, LinkStatus]] = {}
    for li in links:
        link_from.setdefault(li.from_site, {})[li.to_site] = li
    to_hubs = link_from.get(local, {})
    local_routes = {p.site_name: Route(to_hubs.get(p.site_name)) for p in topology.providers}
    rows = []
    for pool in topology.pools:
        row = _row(topology, pool, local, pool.local_port, by_host, local_routes)
        row.bound = bound.get(pool.name)
        _report(row, pool, listener_status(pool, readings.get(local)))
        kube = topology.kubernetes
        if kube is not None and pool.kube_port is not None:
            row.cluster = _cluster_row(topology, pool, by_host, link_from, readings)
        rows.append(row)
    return rows


def _cluster_row(
    topology: Topology,
    pool: ModelPool,
    sites: Mapping[str, SiteStatus],
    link_from: Mapping[str, Mapping[str, LinkStatus]],
    readings: Mapping[str, Reading],
) -> PoolStatus:
    kube = topology.kubernetes
    assert kube is not None and pool.kube_port is not None
    local = topology.local.site_name
    mine, to_hubs = link_from.get(kube.site_name, {}), link_from.get(local, {})
    routes = {
        p.site_name: Route(mine.get(p.site_name), (mine.get(local), to_hubs.get(p.site_name)))
        for p in topology.providers
    }
    row = _row(topology, pool, kube.site_name, pool.kube_port, sites, routes)
    row.service = f"{cluster_pool_name(pool)}.{kube.namespace}:{pool.kube_port}"
    said = listener_status(pool, readings.get(kube.site_name))
    # the cluster's port answers inside the cluster only: its controller's word is the probe
    row.bound = None if said is None else said.ready
    _report(row, pool, said)
    return row


def _report(row: PoolStatus, pool: ModelPool, said: ResourceStatus | None) -> None:
    """What the site's controller wrote on the pool's listener, on the row: its words as
    they are, its destination as what they mean (the pool's state takes neither)."""
    if said is None:
        return
    row.resource = said.text
    if said.reachable_keys is not None:
        row.reachable_keys = list(said.reachable_keys)
    if pool.strategy != "any":
        row.destination = said.destination


def _backend(
    topology: Topology,
    pool: ModelPool,
    provider: str,
    site: SiteStatus | None,
    route: Route,
    from_site: str,
) -> PoolBackend:
    p = topology.provider(provider)
    assert p is not None  # the topology's parse checked every member
    member = next(m for m in pool.members if m.provider == provider)
    own = topology.member_endpoint(member).routing_key
    key = pool.routing_key if pool.strategy == "any" else own
    row = PoolBackend(
        provider=provider, profile=member.profile, routing_key=key, weight=member.weight
    )
    if site is None or site.state == "unknown" or not site.reachable:
        row.why = f"{provider}'s state could not be read"
        return row
    if not condition_runs(site.state):
        row.live, row.why = False, f"{provider} is {site.state}"
        return row
    connected = route.connected
    if connected is None:
        row.why = f"{from_site}'s route to {p.site_name} could not be read"
        return row
    row.live = connected
    if not connected:
        row.why = f"{from_site} has no link up to {p.site_name}"
    return row


def _row(
    topology: Topology,
    pool: ModelPool,
    site: str,
    port: int,
    sites: Mapping[str, SiteStatus],
    routes: Mapping[str, Route],
) -> PoolStatus:
    backends = []
    for member in pool.members:
        p = topology.provider(member.provider)
        assert p is not None
        found = sites.get(p.name)
        backends.append(_backend(topology, pool, member.provider, found, routes[p.site_name], site))
    live = [b for b in backends if b.live]
    state: PoolState
    if any(b.live is None for b in backends):
        state = "unknown"
    elif len(live) == len(backends):
        state = "serving"
    else:
        state = "degraded" if live else "down"
    preferred, detail = _preference(pool, live)
    return PoolStatus(
        name=pool.name,
        strategy=pool.strategy,
        site=site,
        port=port,
        routing_key=pool.routing_key,
        state=state,
        backends=backends,
        preferred=preferred,
        detail=detail,
    )


#: Why a weighted pool's weights are not changed in place (``models --rebalance``): the
#: router could (a changed weight is a ``listenerAddress`` deleted and added, its open
#: connections kept: ``src/adaptors/adaptor_listener.c@3.5.1:799-820``), but a podman site
#: applies a changed MultiKeyListener only at ``skupper system reload``, which makes its
#: router container again (``internal/nonkube/compat/site_state_renderer.go@2.2.1:188-197``).
NO_REBALANCE = (
    "its weights change only with setup (not rebalanced in place: a podman site applies a "
    "changed MultiKeyListener at skupper system reload, which makes its router container "
    "again and drops the pool's open connections; "
    "internal/nonkube/compat/site_state_renderer.go@2.2.1:188-197)"
)


def _preference(pool: ModelPool, live: list[PoolBackend]) -> tuple[str | None, str]:
    if not live:
        return None, "no provider is live: nothing answers on the pool's port"
    names = ", ".join(b.provider for b in live)
    if pool.strategy == "priority":
        return live[0].provider, f"new connections go to {live[0].provider} (first live in order)"
    if pool.strategy == "weighted":
        total = sum(b.weight for b in live)
        shares = ", ".join(f"{b.provider} {100 * b.weight // total}%" for b in live)
        best = max(live, key=lambda b: b.weight)
        return best.provider, f"new connections are shared by weight: {shares}; {NO_REBALANCE}"
    return None, f"the router balances new connections over {names}"


def serving_after_down(topology: Topology, stopping: set[str], running: set[str]) -> list[str]:
    """One line per pool that a ``down`` of ``stopping`` touches: which members keep
    serving it (those in ``running`` that are not stopped) or that it stops serving."""
    lines = []
    for pool in topology.pools:
        touched = [m for m in pool.member_names() if m in stopping]
        if not touched:
            continue
        left = [m for m in pool.member_names() if m in running and m not in stopping]
        if left:
            lines.append(
                f"pool {pool.name} (:{pool.local_port}) keeps serving from {', '.join(left)}"
            )
        else:
            lines.append(
                f"pool {pool.name} (:{pool.local_port}) stops serving: none of its providers "
                f"({', '.join(pool.member_names())}) is left running"
            )
    return lines


def mixed_ids(served: Sequence[tuple[str, list[str]]]) -> list[tuple[str, list[str]]] | None:
    """The pool's members with the model ids each serves, when those that listed ids did
    not all list the same ones (in any order): a client of the pool then gets one model or
    another. None: one model, or fewer than two members known. The one judgement of mixed
    ids: the pool's models row says it, diagnose's ``pool-mixed-model-ids`` reports it."""
    known = [(member, ids) for member, ids in served if ids]
    return known if len({frozenset(ids) for _, ids in known}) > 1 else None


def mixed_words(found: Sequence[tuple[str, list[str]]]) -> str:
    """Each member and its ids, in words (the ids quoted: they are the server's text)."""
    return "; ".join(f"{member}: {quoted_ids(ids)}" for member, ids in found)


#: A member a client may be sent to now, best first: ready, then saturated.
_USABLE = ("ready", "saturated")


def pool_readings(row: ModelRow, members: Mapping[str, ModelRow]) -> ModelRow:
    """A pool's models row with each member's readiness (its own row's reading, read
    through the member's listener), the member a client should prefer now (ready and least
    loaded, else a saturated one; none while every member is loading or asleep), and the
    pool's own reading: the preferred member's, or the state that keeps every member from
    serving. Members that serve different model ids are said in the reason."""
    if row.pool is None:
        return row
    found = [members[b.provider] for b in row.pool.backends if b.provider in members]
    listed = [
        PoolMemberReading(host=m.host, model_ids=m.model_ids, readiness=m.readiness)
        for m in found
        if m.readiness is not None
    ]
    prefer = _prefer(listed)
    reading = _pool_reading(row, listed, prefer)
    return row.model_copy(update={"members": listed, "prefer": prefer, "readiness": reading})


def _prefer(members: list[PoolMemberReading]) -> str | None:
    for state in _USABLE:
        usable = [m for m in members if m.readiness.state == state]
        if usable:
            return min(usable, key=lambda m: load_rank(m.readiness)).host
    return None


def _pool_reading(
    row: ModelRow, members: list[PoolMemberReading], prefer: str | None
) -> ModelReading:
    found = mixed_ids([(m.host, m.model_ids) for m in members])
    mixed = (
        f"; its members serve different model ids ({mixed_words(found)}): a client of the "
        "pool gets either"
        if found
        else ""
    )
    others = ", ".join(f"{m.host} {m.readiness.state}" for m in members if m.host != prefer)
    if prefer is not None:
        best = next(m for m in members if m.host == prefer).readiness
        also = f"; {others}" if others else ""
        return best.model_copy(
            update={"reason": f"prefer {prefer} ({best.state}: {best.reason}){also}{mixed}"}
        )
    route = route_state(row.state)
    if route is not None:
        return ModelReading(state=route, reason=(row.reason or route) + mixed)
    states = [m.readiness.state for m in members]
    for state in ("loading", "sleeping"):
        if state in states:
            return ModelReading(
                state=state, reason=f"no member is ready: {others or 'no member read'}{mixed}"
            )
    return ModelReading(
        state="not-serving", reason=f"no member is ready: {others or 'no member read'}{mixed}"
    )
