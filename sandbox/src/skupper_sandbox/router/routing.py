"""Distance-vector routing: which routing keys (or sites) are reachable, how far, and via whom.

Pure bookkeeping, no I/O. Each peer is a live link, named by the router; its advertised
costs already include nothing of the link itself, so ``learn`` adds the link's cost.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

MAX_COST = 16


@dataclass(frozen=True)
class Route:
    """The best way to a key: ``via`` is the peer (link) name, None for a local destination."""

    via: str | None
    cost: int


class RouteTable:
    """Local destinations plus what each peer advertises, and the best route to each key."""

    def __init__(self) -> None:
        self._local: set[str] = set()
        self._learned: dict[str, dict[str, int]] = {}

    def set_local(self, keys: set[str]) -> bool:
        """Replace the locally served keys; True when that changed anything."""
        if keys == self._local:
            return False
        self._local = set(keys)
        return True

    def learn(self, peer: str, advertised: dict[str, int], link_cost: int) -> bool:
        """Record a peer's full advertisement; True when its routes changed."""
        routes = {
            key: cost + link_cost
            for key, cost in advertised.items()
            if isinstance(cost, int) and cost + link_cost <= MAX_COST
        }
        if self._learned.get(peer) == routes:
            return False
        self._learned[peer] = routes
        return True

    def forget(self, peer: str) -> bool:
        """Drop every route through a peer whose link closed; True when it had any."""
        return bool(self._learned.pop(peer, None))

    def best(
        self, key: str, *, excluding: str | None = None, alive: Collection[str] | None = None
    ) -> Route | None:
        """The cheapest route to ``key`` (ties broken by peer name), optionally not via a peer;
        with ``alive``, a route via a live peer wins over one learned from a lost peer."""
        if key in self._local:
            return Route(None, 0)
        if alive is not None:
            peers = [p for p in self._learned if p in alive and p != excluding]
            via_live_peer = min(
                (
                    Route(p, c)
                    for p in sorted(peers)
                    if (c := self._learned[p].get(key)) is not None
                ),
                key=lambda r: r.cost,
                default=None,
            )
            return via_live_peer or self.best(key, excluding=excluding)
        found: Route | None = None
        for peer in sorted(self._learned):
            if peer == excluding:
                continue
            cost = self._learned[peer].get(key)
            if cost is not None and (found is None or cost < found.cost):
                found = Route(peer, cost)
        return found

    def routes(self, key: str, *, alive: Collection[str]) -> list[Route]:
        """Every route to ``key`` through a live peer (none for a local key)."""
        return [
            Route(peer, cost)
            for peer in sorted(self._learned)
            if peer in alive and (cost := self._learned[peer].get(key)) is not None
        ]

    def keys(self) -> set[str]:
        known = set(self._local)
        for routes in self._learned.values():
            known.update(routes)
        return known

    def reachable(self) -> dict[str, int]:
        """Every reachable key with its cost (0 for a local one)."""
        result: dict[str, int] = {}
        for key in sorted(self.keys()):
            route = self.best(key)
            if route is not None:
                result[key] = route.cost
        return result

    def advertisement_for(
        self, peer: str, *, alive: Collection[str] | None = None
    ) -> dict[str, int]:
        """What to tell ``peer``: the best routes that do not go through it (split horizon);
        with ``alive``, only those through a live peer (or local). A route held from a lost
        peer is this router's own to keep, not to pass on: a real router advertises its own
        link state and addresses, and its neighbours compute their paths from every router's
        link state (skupper-router ``router/path.py``), so a router one of them lost is
        unreachable to them once their own and this router's links to it are gone, however
        long this router holds its addresses."""
        result: dict[str, int] = {}
        for key in sorted(self.keys()):
            if alive is None:
                route = self.best(key, excluding=peer)
            elif key in self._local:
                route = Route(None, 0)
            else:
                live = [r for r in self.routes(key, alive=alive) if r.via != peer]
                route = min(live, key=lambda r: r.cost, default=None)
            if route is not None and route.cost < MAX_COST:
                result[key] = route.cost
        return result
