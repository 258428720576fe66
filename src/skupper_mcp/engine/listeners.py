"""What a consumer's listener for a provider is doing: serving, closing, closed or unknown.

A bound port alone does not mean a route. When a provider's router stops, the consumer's
router keeps the provider's addresses until its link state ages out (skrouterd's
``remoteLsMaxAgeSeconds``, 60 s by default, which Skupper does not set:
``python/skupper_router/management/skrouter.json`` in skupper-router), so the local
listener stays bound for up to a minute with nothing behind it. The state is derived from
facts the caller has read, never guessed: whether the port accepts, and whether the
provider's router runs (and since when it is stopped, when the host says).
"""

from __future__ import annotations

from ..models import ListenerState, ListenerStatus
from .condition import listener_condition, stopped_for
from .readings import Reading

#: skrouterd's default ``remoteLsMaxAgeSeconds``: how long a router keeps the addresses of a
#: router it no longer hears from.
ROUTE_MAX_AGE = 60.0


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


def listener_state(bound: bool | None, provider: str, reading: Reading | None, site: str) -> State:
    """(state, detail, closes_within) of ``site``'s listener for ``provider``, from whether
    its port accepts (``bound``) and the provider's reading (None if not read); the state
    is ``condition.listener_condition``'s."""
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
            return closing(provider, site, stopped_for(reading))


def closing(provider: str, site: str, stopped_for: float | None) -> State:
    """A listener still bound while ``provider``'s router is stopped (for ``stopped_for``
    seconds, when known)."""
    if stopped_for is None:
        left = ROUTE_MAX_AGE
        when = f"up to {ROUTE_MAX_AGE:g} s after the provider stopped"
    else:
        left = max(0.0, ROUTE_MAX_AGE - stopped_for)
        ago = "just now" if stopped_for < 1 else f"{stopped_for:.0f} s ago"
        when = (
            f"within ~{left:.0f} s (it stopped {ago}; a router forgets a stopped router "
            f"{ROUTE_MAX_AGE:g} s after it last heard from it)"
            if left > 0
            else f"any moment now (it stopped {ago})"
        )
    detail = (
        f"bound, but {provider}'s router is stopped: no route behind it, connections fail; "
        f"{site}'s router drops the listener {when}"
    )
    return "closing", detail, left


def stopped_since(reading: Reading | None) -> float | None:
    """Seconds since the provider's router container exited, when its reading says."""
    return stopped_for(reading)
