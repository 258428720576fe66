"""What a pool's earlier setup left at a site that the topology no longer asks for. Pure.

A pool's resources carry names of its own: its routing key on the local site (a Listener
for strategy ``any``, a MultiKeyListener for ``priority`` and ``weighted``) and on each
member's hub (the ``any`` pool's second Connector) and on the cluster (its host,
``model-pool-<name>``, names the Service the controller makes).
Whichever of those a site holds and the topology does not want is a leftover: the other
strategy's listener after the strategy changed (on a podman site the two would map the same
port, which the 2.2 validator refuses at reload, ``site_state_validator.go@2.2.0:197-199``),
a Connector of a member that left the pool, the cluster's listener of a pool that no longer
has ``_CRC_PORT``. Setup removes them; status's setup-needed list names them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ...sites import resources as cr
from ...sites.resources import Resource
from ...topology import ModelPool, Topology

Key = tuple[str, str]
#: The kinds a pool's listener may be, whichever its strategy.
LISTENER_KINDS = ("Listener", "MultiKeyListener")


def cluster_pool_name(pool: ModelPool) -> str:
    """The host of a pool's listener on the cluster: the Service its controller makes."""
    return f"model-pool-{pool.name}"


def listener_pool_keys(topology: Topology) -> dict[Key, str]:
    """(kind, name) -> pool: what the pools may have built on the local site or the
    cluster (their listeners are named after their keys on both)."""
    return {(kind, p.routing_key): p.name for p in topology.pools for kind in LISTENER_KINDS}


def hub_pool_keys(topology: Topology) -> dict[Key, str]:
    """(kind, name) -> pool: what the pools may have built on a provider's hub."""
    return {("Connector", p.routing_key): p.name for p in topology.pools}


def leftovers(owned: Mapping[Key, str], desired: list[Resource], held: Iterable[Key]) -> list[Key]:
    """The pools' resources the site holds (``held``) that ``desired`` does not have."""
    wanted = {cr.key(r) for r in desired}
    return sorted({k for k in held if k in owned and k not in wanted})


def leftover_lines(owned: Mapping[Key, str], keys: list[Key]) -> list[str]:
    """One line per leftover, naming its pool."""
    return [
        f"{kind}/{name}: left by an earlier setup of pool {owned[(kind, name)]}, which "
        "topology.env no longer asks for here (setup removes it)"
        for kind, name in keys
    ]
