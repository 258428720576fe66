"""A model row's state, from the typed state of its provider's site and of the local
listener (``condition``), and from what ``/v1/models`` answered through that listener.
Pure: no I/O. No unit, container or port is judged here: the site's condition and the
listener's are ``condition``'s; this only says which of them stops the model, and reads
the probe only where the route is up.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..results import ListenerState, ModelState, PoolStatus, SiteCondition
from .model_http import ModelsProbe
from .predicates import STOPPED, UNREAD

ModelCondition = tuple[ModelState, str]

#: Site conditions whose router does not run (nothing can route to the model), and those
#: that could not be read or decided (the row is not probed): ``predicates``'.
STOPPED_SITES, UNREAD_SITES = STOPPED, UNREAD


def needs_probe(site: SiteCondition, listener: ListenerState) -> bool:
    """Whether the listener is worth a ``/v1/models`` probe: its route is up."""
    return site not in STOPPED_SITES + UNREAD_SITES and listener == "serving"


def model_condition(
    site: SiteCondition,
    site_reason: str,
    listener: ListenerState,
    listener_detail: str | None,
    address: str,
    probe: ModelsProbe | None,
    key_problem: str | None = None,
) -> ModelCondition:
    """The row's state and why. ``site`` and ``listener`` are the provider site's and the
    local listener's conditions; ``probe`` is None when it was not probed."""
    if site in UNREAD_SITES:
        return "provider-skipped", f"the provider could not be read ({site}): {site_reason}"
    if site in STOPPED_SITES:
        return "provider-stopped", f"the provider's router is not running ({site}): {site_reason}"
    if listener == "closed":
        return "route-down", f"nothing accepts on {address}: the local listener is not bound"
    if listener == "closing":
        return "provider-stopped", listener_detail or "the provider's router is stopped"
    if listener == "unknown" or probe is None:
        why = listener_detail or "the listener was not probed"
        return "provider-skipped", f"the route's state is not known: {why}"
    return _probed(address, probe, key_problem)


def pool_needs_probe(pool: PoolStatus) -> bool:
    """Whether a pool's port is worth a ``/v1/models`` probe: it accepts and at least
    one backend may be live (``pools.pool_rows`` decided which)."""
    return pool.bound is True and pool.state != "down"


def pool_model_condition(
    pool: PoolStatus,
    address: str,
    probe: ModelsProbe | None,
    key_problem: str | None = None,
    serving_members: Sequence[str] = (),
) -> ModelCondition:
    """A pool's row state and why, from its ``pools.pool_rows`` row (port and backends,
    never judged again here) and what ``/v1/models`` answered through its port.

    A connection through the pool's port that closed without an answer while a member
    still serves through its own route is not a pool without a model: a router that still
    holds a stopped member (a 3.4.x router, up to 63 s after the loss) sends some new
    connections there. The pool serves, and its reason says so (``serving_members``: the
    members whose own rows serve)."""
    if pool.bound is False:
        return "route-down", f"nothing accepts on {address}: the pool's listener is not bound"
    if pool.state == "down":
        return "provider-stopped", f"no backend of pool {pool.name} is live: {pool.detail}"
    if probe is None:
        return "provider-skipped", f"the pool's port could not be probed ({address})"
    if probe.status is None and probe.ids is None and serving_members:
        members = ", ".join(serving_members)
        return (
            "serving",
            f"{members} serve(s) the pool, but a request through {address} got no answer "
            f"({probe.error}): a router that still holds a stopped member sends some new "
            "connections to it (a 3.4.x router, up to 63 s after it stopped)",
        )
    return _probed(address, probe, key_problem)


def _probed(address: str, probe: ModelsProbe, key_problem: str | None) -> ModelCondition:
    if probe.ids:
        return "serving", f"{address}/v1/models lists {len(probe.ids)} model(s)"
    if probe.refused:
        key = f"; {key_problem}" if key_problem else ""
        return (
            "route-up-no-model",
            f"the route is up, but the model server refuses the request (HTTP {probe.status}): "
            f"it needs an API key, or another one{key}",
        )
    if probe.ids is not None:
        return "route-up-no-model", "the route is up, but the model server lists no model"
    return "route-up-no-model", f"the route is up, but the model server: {probe.error}"
