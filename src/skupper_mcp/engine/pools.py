"""What a model pool is doing: which of its providers the local site reaches now and which
one new connections go to. Pure: from the topology, the sites' rows and the links.

A backend is live when its site runs (``up`` or ``degraded``) and the local site's link to
it is connected: the router forwards a pool's connection only to a destination it has a
link to (``qdr_forward_balanced_CT``, ``src/router_core/forwarder.c@3.5.1:998-1008``: a
router without a data link is skipped), and a MultiKeyListener picks among its keys that
are reachable (``src/adaptors/adaptor_listener.c@3.5.1:150-230``).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..models import LinkStatus, PoolBackend, PoolState, PoolStatus, SiteStatus
from ..topology import ModelPool, Topology

_RUNNING = ("up", "degraded")


def pool_rows(
    topology: Topology,
    sites: list[SiteStatus],
    links: list[LinkStatus],
    bound: Mapping[str, bool | None],
) -> list[PoolStatus]:
    """One row per pool, its port probed (``bound``, by pool name)."""
    by_host = {s.host: s for s in sites}
    link_to = {li.to_site: li for li in links if li.from_site == topology.local.site_name}
    return [_row(topology, pool, by_host, link_to, bound.get(pool.name)) for pool in topology.pools]


def _backend(
    topology: Topology,
    pool: ModelPool,
    provider: str,
    site: SiteStatus | None,
    link: LinkStatus | None,
) -> PoolBackend:
    p = topology.provider(provider)
    assert p is not None  # the topology's parse checked every member
    member = next(m for m in pool.members if m.provider == provider)
    key = pool.routing_key if pool.strategy == "any" else p.routing_key
    row = PoolBackend(
        provider=provider, profile=member.profile, routing_key=key, weight=member.weight
    )
    if site is None or site.state == "unknown" or not site.reachable:
        row.why = f"{provider}'s state could not be read"
        return row
    if site.state not in _RUNNING:
        row.live, row.why = False, f"{provider} is {site.state}"
        return row
    if link is None or link.connected is None:
        row.why = f"the local site's link to {p.site_name} could not be read"
        return row
    row.live = link.connected
    if not link.connected:
        row.why = f"the local site's link to {p.site_name} is not up"
    return row


def _row(
    topology: Topology,
    pool: ModelPool,
    sites: Mapping[str, SiteStatus],
    links: Mapping[str, LinkStatus],
    bound: bool | None,
) -> PoolStatus:
    backends = []
    for member in pool.members:
        p = topology.provider(member.provider)
        assert p is not None
        backends.append(
            _backend(topology, pool, member.provider, sites.get(p.name), links.get(p.site_name))
        )
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
        site=topology.local.site_name,
        port=pool.local_port,
        routing_key=pool.routing_key,
        bound=bound,
        state=state,
        backends=backends,
        preferred=preferred,
        detail=detail,
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
        return best.provider, f"new connections are shared by weight: {shares}"
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
