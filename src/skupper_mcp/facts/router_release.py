"""Which skupper-router release a podman site runs, and how long that router keeps the
routes of a router it lost. Pure.

The release is the router image's tag (``quay.io/skupper/skupper-router:3.5.1``, as
``podman inspect`` names the image); where the image names none, the site's Skupper version
says it: skupper's ``Makefile`` ``ROUTER_IMAGE_TAG`` is 3.4.x for every 2.1.x (2.1.0-2.1.1
-> 3.4.0, 2.1.2 -> 3.4.1, 2.1.3-2.1.4 -> 3.4.2) and 3.5.x for 2.2.x (2.2.0 -> 3.5.0, 2.2.1 ->
3.5.1).

skupper-router 3.5.0 added the router entity's ``unreachableHoldoffSeconds`` (default 1:
``python/skupper_router/management/skrouter.json@3.5.1``, absent @3.4.2; Skupper 2.2.1 sets
none): a router unmaps a lost router's addresses that many seconds after it is declared
unreachable. Before it they stay until its link state ages out: ``remoteLsMaxAgeSeconds``
(default 60, skrouter.json@3.4.2, which Skupper does not set either) counted from the last
router advertisement heard from it (``raIntervalSeconds``, 30, in a stable network: the
``last_seen`` of ``python/skupper_router_internal/router/node.py@3.4.2:288``), then a
sweep of about three one-second ticks before the node goes (``node.py@3.4.2:88,111-113``).
So the routes go 30-63 s after the loss, which the last advertisement's time, unseen from
here, decides: a countdown is a bound, never a time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .skupper_version import Version

ROUTER_IMAGE = "skupper-router"
#: Skupper's router release by its own (major, minor): skupper Makefile ROUTER_IMAGE_TAG.
ROUTER_OF_SKUPPER = {(2, 1): (3, 4), (2, 2): (3, 5)}
HOLDOFF_SINCE = (3, 5)
REMOTE_LS_MAX_AGE = 60.0
#: A stable network's router advertisement interval (``raIntervalSeconds``, skrouter.json
#: @3.4.2), and the ticks a node with no link state lives on (``keep_alive_count > 2``).
RA_INTERVAL = 30.0
SWEEP = 3.0
#: The longest a 3.4.x router keeps a lost router's routes: its link state's age limit
#: after an advertisement heard just before the loss, plus the sweep.
REMOTE_LS_HOLD = REMOTE_LS_MAX_AGE + SWEEP
UNREACHABLE_HOLDOFF = 1.0


@dataclass(frozen=True)
class RouteHold:
    """How long a consumer's router keeps a stopped provider's routes: at most ``seconds``
    and at least ``shortest`` after the loss, and what says so, in our own words (``why``)."""

    seconds: float
    why: str
    shortest: float = 0.0


def image_release(inspect: dict[str, Any] | None) -> Version | None:
    """The release of a router container's image, from ``podman inspect``'s ``ImageName``
    (else ``Config.Image``): the tag of a ``.../skupper-router:TAG`` image, or None."""
    if not isinstance(inspect, dict):
        return None
    config = inspect.get("Config")
    for image in (
        inspect.get("ImageName"),
        config.get("Image") if isinstance(config, dict) else None,
    ):
        if not isinstance(image, str) or "@" in image:
            continue
        name, _, tag = image.rpartition(":")
        if name.rsplit("/", 1)[-1] == ROUTER_IMAGE and tag:
            return Version.parse(tag)
    return None


def route_hold(router: Version | None, skupper: Version | None) -> RouteHold:
    """The route hold of a router of release ``router`` (from its image), else of the router
    a Skupper ``skupper`` ships; 3.4.x's 30-63 s when neither is known (the longer: a
    listener is never called closed before it is)."""
    if router is not None:
        release, said = (router.major, router.minor), f"skupper-router {router}"
    elif skupper is not None and (skupper.major, skupper.minor) in ROUTER_OF_SKUPPER:
        release = ROUTER_OF_SKUPPER[(skupper.major, skupper.minor)]
        said = f"Skupper {skupper}'s skupper-router {release[0]}.{release[1]}"
    else:
        return RouteHold(
            REMOTE_LS_HOLD,
            f"the router's release is not known: up to {REMOTE_LS_HOLD:g} s, its link state's "
            "age limit after its last advertisement",
            RA_INTERVAL,
        )
    if release >= HOLDOFF_SINCE:
        return RouteHold(
            UNREACHABLE_HOLDOFF,
            f"{said} drops a lost router's routes {UNREACHABLE_HOLDOFF:g} s after it loses it "
            "(unreachableHoldoffSeconds)",
        )
    return RouteHold(
        REMOTE_LS_HOLD,
        f"{said} forgets a stopped router {REMOTE_LS_MAX_AGE:g} s after its last advertisement "
        f"(remoteLsMaxAgeSeconds; one every {RA_INTERVAL:g} s), so "
        f"{RA_INTERVAL:g}-{REMOTE_LS_HOLD:g} s after the loss",
        RA_INTERVAL,
    )
