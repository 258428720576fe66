"""What a consumer's listener for a provider is doing: serving, closing, closed or unknown.

A bound port alone does not mean a route. When a provider's router stops, the consumer's
router keeps the provider's addresses for a while, by its release (``facts.router_release``):
skupper-router 3.4.x (Skupper 2.1.x) until its link state ages out, 60 s after the last
router advertisement it heard, so 30-63 s after the loss; 3.5.x (Skupper 2.2.x) 1 s after it
lost the router (``unreachableHoldoffSeconds``). Until then the local
listener stays bound with nothing behind it. The state is derived from facts the caller has
read, never guessed: whether the port accepts, whether the provider's router runs (and
since when it is stopped, when the host says), and the consumer's router release.
"""

from __future__ import annotations

from ..facts.router_release import REMOTE_LS_HOLD, RouteHold, image_release, route_hold
from ..results import ListenerState, ListenerStatus
from .condition import listener_condition, stopped_for
from .readings import PodmanReading, Reading

#: The longest a router keeps the addresses of a router it no longer hears from (3.4.x's
#: ``remoteLsMaxAgeSeconds`` after the last advertisement, and the sweep); a consumer of an
#: unknown release is taken to keep them that long.
ROUTE_MAX_AGE = REMOTE_LS_HOLD


def consumer_hold(consumer: Reading | None) -> RouteHold:
    """How long the consumer site's router keeps a stopped provider's routes: by its router
    image's release, else by its Skupper version (``router_release.route_hold``)."""
    if isinstance(consumer, PodmanReading):
        state = consumer.state
        image = image_release(state.router.inspect if state.router is not None else None)
        return route_hold(image, state.skupper.cli)
    return route_hold(None, None)


State = tuple[ListenerState, str | None, float | None]


def listener_row(
    site: str, port: int, routing_key: str, bound: bool | None, provider: str, state: State
) -> ListenerStatus:
    """The row of ``site``'s listener for ``provider`` with its (state, detail, closes_within)."""
    name, detail, left = state
    return ListenerStatus(
        site=site,
        port=port,
        routing_key=routing_key,
        bound=bound,
        provider=provider,
        state=name,
        detail=detail,
        closes_within=left,
    )


def listener_state(
    bound: bool | None,
    provider: str,
    reading: Reading | None,
    site: str,
    consumer: Reading | None = None,
) -> State:
    """(state, detail, closes_within) of ``site``'s listener for ``provider``, from whether
    its port accepts (``bound``), the provider's reading (None if not read) and the consumer
    site's (its router's release: how long it keeps the route); the state is
    ``condition.listener_condition``'s."""
    match listener_condition(bound, reading):
        case "unknown" if bound is None:
            return "unknown", "not probed", None
        case "unknown":
            return (
                "unknown",
                f"bound, but {provider}'s state could not be read: whether its router still "
                "serves is unknown",
                None,
            )
        case "closed":
            return "closed", "nothing accepts on the port: no route to the model here", None
        case "serving":
            return "serving", None, None
        case _:
            return closing(provider, site, stopped_for(reading), consumer_hold(consumer))


def closing(provider: str, site: str, stopped_for: float | None, hold: RouteHold) -> State:
    """A listener still bound while ``provider``'s router is stopped (for ``stopped_for``
    seconds, when known), on a consumer whose router keeps a lost route for ``hold``."""
    if stopped_for is None:
        left = hold.seconds
        when = f"up to {hold.seconds:g} s after the provider stopped ({hold.why})"
    else:
        # a bound: the last advertisement's time, which decides, is not seen from here
        left = max(0.0, hold.seconds - stopped_for)
        ago = "just now" if stopped_for < 1 else f"{stopped_for:.0f} s ago"
        when = (
            f"within {left:.0f} s (it stopped {ago}; {hold.why})"
            if left >= 1
            else f"any moment now (it stopped {ago}; {hold.why})"
        )
    detail = (
        f"bound, but {provider}'s router is stopped: no route behind it, connections fail; "
        f"{site}'s router drops the listener {when}"
    )
    return "closing", detail, left


def stopped_since(reading: Reading | None) -> float | None:
    """Seconds since the provider's router container exited, when its reading says."""
    return stopped_for(reading)
