"""The VAN drawn as text from the topology's own values: its sites, links, listeners,
providers and pools as a tree. Pure. Part of the topology (what it describes), so that the
engine's precheck gives it without importing a renderer; ``render`` shows it."""

from __future__ import annotations

from collections.abc import Sequence

from .model import KubeSite, ModelPool, ProviderHost, Topology, cluster_listener_name


def _link_block(
    last: bool,
    target_site: str,
    host: str,
    extra_hosts: Sequence[str],
    port: int,
    listeners: Sequence[str],
) -> list[str]:
    branch, rail = ("└──", " ") if last else ("├──", "│")
    shown = host + (f" ({', '.join(extra_hosts)})" if extra_hosts else "")
    lines = [
        f"  {branch} link → {target_site}",
        f"  {rail}     host:  {shown}",
        f"  {rail}     port:  {port} (AMQPS)",
    ]
    lines += [f"  {rail}     {item}" for item in listeners]
    if not last:
        lines.append(f"  {rail}")
    return lines


def _others(sans: Sequence[str], host: str) -> list[str]:
    return [s for s in sans if s != host]


def _provider_line(p: ProviderHost) -> list[str]:
    tmpfs = "; tmpfs workaround" if p.tmpfs_workaround else ""
    lines = [f"  {p.site_name} ({p.name}: {p.ssh}, podman, namespace {p.namespace})"]
    for e in p.endpoints:
        profiles = ", ".join(
            f"{name} (default)" if name == e.default_profile else name for name in e.profiles
        )
        which = f"endpoint {e.name}: " if e.name else ""
        lines += [
            f"        {which}connector {e.model_host}:{e.model_port} ← {e.routing_key}{tmpfs}",
            f"        {' ' * len(which)}profiles: {profiles}; "
            f"container {e.model_container or '(none)'}",
        ]
    return lines


def _kube_links(
    topology: Topology, kube: KubeSite
) -> list[tuple[str, str, list[str], int, list[str]]]:
    """(site, host, other names, port, listener lines) per link of the Kubernetes site."""
    by_name = {p.name: p for p in topology.providers}

    def listener_lines(provider: ProviderHost) -> list[str]:
        lines = []
        for e in provider.endpoints:
            port = kube.listeners.get(e.label)
            if port is not None:
                lines += [
                    f"Listener :{port} ← {e.routing_key}",
                    f"Service: {cluster_listener_name(e.label)}.{kube.namespace}:{port}",
                ]
        return lines

    links = []
    for name in kube.direct_links:
        p = by_name[name]
        links.append(
            (
                p.site_name,
                p.public_host,
                _others(p.sans, p.public_host),
                p.inter_router_port,
                listener_lines(p),
            )
        )
    through_local = [p for p in topology.providers if p.name not in kube.direct_links]
    if through_local:
        local = topology.local
        host = local.public_host or "(LOCAL_PUBLIC_HOST not set)"
        items = [line for p in through_local for line in listener_lines(p)]
        links.append(
            (local.site_name, host, _others(local.sans, host), local.inter_router_port, items)
        )
    return links


def topology_diagram(topology: Topology) -> str:
    """The VAN as a tree of sites and links, with the topology's real values."""
    local = topology.local
    where = f"over SSH {local.ssh}" if local.ssh else "localhost"
    lines = [f"LOCAL: {local.site_name} ({where}, podman)"]
    for i, p in enumerate(topology.providers):
        lines += _link_block(
            i == len(topology.providers) - 1,
            p.site_name,
            p.public_host,
            _others(p.sans, p.public_host),
            p.inter_router_port,
            [f"Listener :{e.local_port} ← {e.routing_key}" for e in p.endpoints],
        )
    kube = topology.kubernetes
    if kube:
        context = f", context {kube.context}" if kube.context else ""
        lines += ["", f"CRC: {kube.site_name} (kubernetes, {kube.namespace}{context})"]
        links = _kube_links(topology, kube)
        for i, (site, host, others, port, items) in enumerate(links):
            lines += _link_block(i == len(links) - 1, site, host, others, port, items)
    lines += ["", "PROVIDERS:"]
    for p in topology.providers:
        lines += _provider_line(p)
    if topology.pools:
        lines += ["", "POOLS:"]
        lines += [_pool_line(pool) for pool in topology.pools]
    return "\n".join(lines)


def _pool_line(pool: ModelPool) -> str:
    """``granite :9100 (any, key pool-granite) over rhel-ai/g8b, ...`` (weights when weighted)."""
    if pool.strategy == "any":
        how = f"any, key {pool.routing_key}"
    else:
        how = f"{pool.strategy}, MultiKeyListener {pool.routing_key}"
    members = ", ".join(
        f"{m.provider}/{m.profile}" + (f" weight {m.weight}" if pool.strategy == "weighted" else "")
        for m in pool.members
    )
    return f"  {pool.name} :{pool.local_port} ({how}) over {members}"
