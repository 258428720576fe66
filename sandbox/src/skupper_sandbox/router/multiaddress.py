"""Which routing key a new connection on a tcpListener goes to. Pure.

A plain tcpListener has one address. A multi-address one (a MultiKeyListener rendered by
Skupper 2.2, router 3.5) picks among its ``listenerAddress`` entities that are reachable:
``priority``, the reachable address of the highest value; ``weighted``, a reachable address
at random, each as likely as its weight over the reachable ones' sum
(src/adaptors/adaptor_listener.c@3.5.1:160-230, ``_best_reachable_address_LH``).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from skupper_sandbox.router.config import TcpEndpoint


def choose_address(
    endpoint: TcpEndpoint,
    reachable: Callable[[str], bool],
    draw: Callable[[int], int] = lambda total: random.randrange(total),
) -> str | None:
    """The address a new connection on ``endpoint`` is for, or None when none is reachable
    (the router then refuses the connection)."""
    if endpoint.strategy == "none":
        return endpoint.address
    live = [(address, value) for address, value in endpoint.addresses if reachable(address)]
    if not live:
        return None
    if endpoint.strategy == "priority":
        return max(live, key=lambda item: item[1])[0]
    live.sort(key=lambda item: -item[1])  # "addresses are in decreasing order by weight"
    total = sum(value for _, value in live)
    if total <= 0:
        return None
    pick = draw(total)
    for address, value in live:
        if pick < value:
            return address
        pick -= value
    return live[-1][0]
