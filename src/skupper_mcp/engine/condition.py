"""Every fact about a site's condition, decided once from its reading. Pure: no I/O.

Nothing outside this module compares unit, container or pod strings: status, the CLI's exit
code and tables, diagnose's rules, the model actions and the planning of up, down and setup
read these functions (or the fields ``status`` fills from them).

A site's condition (``SiteStatus.state``):

- ``up``: the router runs (podman: its router container is running, under its active unit,
  with the system controller running; the cluster: a router pod of the router Deployment is
  Running and the site holds its links).
- ``degraded``: the router runs but something it needs is off. On podman exactly two
  things: the router container runs while its unit is not active (started by hand: a crash
  would not be restarted), or the system controller is not running (nothing applies changes
  nor updates the rendered status). The cluster has no degraded state of its own.
- ``stopped``: the router is not running, and either the last write the user asked for on
  the site was a stop (``down``, ``teardown``), or nothing claims it runs (Skupper's rendered
  Site status is not Ready). On the cluster, also a running router pod whose links ``down``
  removed, as it asked.
- ``stale``: Skupper's Site status says Ready, the router is not running, and nothing the
  user asked explains it (no recorded ``down`` or ``teardown``). On podman also the system
  controller is not running (a running one keeps the status itself): it died with the
  router, or was stopped behind our back.
- ``not-set-up``: setup has not been done there (podman: no rendered namespace; the
  cluster: no Site resource).
- ``unreachable``: the host could not be reached, or the cluster refused our credentials.
- ``unknown``: the site was reached but what was read cannot decide (a state read cut
  short, a reply that is not one, a topology value that names nothing); the reason says why.
"""

from __future__ import annotations

from typing import Any

from ..facts import names
from ..facts.site_state import pod_running
from ..models import ListenerState, SiteCondition
from ..sites import resources as cr
from ..sites.kube import KubeState
from .readings import Asked, ClusterReading, PodmanReading, Reading, Unread

Condition = tuple[SiteCondition, str]

#: What the user asked that means a router is meant to be stopped.
STOPS: tuple[Asked, ...] = ("down", "teardown")


def podman_router_running(reading: PodmanReading) -> bool:
    """Whether the router serves: its container is running (whatever its unit says)."""
    return reading.state.container_running(names.router_container(reading.namespace))


def podman_router_supervised(reading: PodmanReading) -> bool:
    """Whether the router runs under its unit (so a crash is restarted)."""
    return podman_router_running(reading) and router_unit_active(reading)


def router_unit_active(reading: PodmanReading) -> bool:
    """Whether the router's unit is active (what ``down`` stops and ``up`` need not start)."""
    return reading.state.unit(names.router_unit(reading.namespace)).active


def controller_unit_active(reading: PodmanReading) -> bool:
    """Whether the system controller's unit is active."""
    return reading.state.unit(names.controller_unit()).active


def podman_controller_running(reading: PodmanReading) -> bool:
    """Whether the system controller runs: its unit is active or its container runs."""
    state = reading.state
    return controller_unit_active(reading) or state.container_running(
        names.controller_container(state.user)
    )


def podman_site_resource(reading: PodmanReading) -> dict[str, Any] | None:
    """The rendered Site resource (runtime/resources), if any."""
    return next((r for (k, _), r in reading.state.runtime_resources.items() if k == "Site"), None)


def claims_ready(resource: Any) -> bool:
    """Whether Skupper's status of a resource says Ready (what it claims, not what runs)."""
    return cr.resource_status(resource).ready


def cluster_router_running(state: KubeState) -> bool:
    """Whether a router pod of the router Deployment is Running."""
    return any(pod_running(p) for p in state.router_pods)


def router_running(reading: Reading | None) -> bool | None:
    """Whether the site's router runs (None: the site was not read)."""
    match reading:
        case PodmanReading():
            return podman_router_running(reading)
        case ClusterReading():
            return cluster_router_running(reading.state)
        case _:
            return None


def link_connected(resource: Any) -> bool:
    """Whether the dialling site reports the Link Ready (what a write waits for, with the
    routers it just started running)."""
    return claims_ready(resource)


def link_up(resource: Any, dialling: Reading | None, dialled: Reading | None) -> bool | None:
    """Whether a link carries traffic now: both its routers run and its dialling site
    reports it Ready (None: the dialling site was not read). A stopped router's rendered
    status keeps saying Ready, so a Ready with either router stopped is no link."""
    runs = router_running(dialling)
    if runs is None:
        return None
    if not runs or router_running(dialled) is False:
        return False
    return link_connected(resource)


def site_condition(reading: Reading, cluster_links: tuple[str, ...] = ()) -> Condition:
    """The site's condition and why (see the module's docstring); ``cluster_links`` names
    the Links the topology gives the cluster (whose absence after a ``down`` is asked)."""
    match reading:
        case PodmanReading():
            return podman_condition(reading)
        case ClusterReading():
            return cluster_condition(reading, cluster_links)
        case Unread():
            return unread_condition(reading)


def unread_condition(reading: Unread) -> Condition:
    if not reading.reachable:
        return "unreachable", reading.problem()
    return "unknown", reading.problem()


def _stopped_as_asked(asked: Asked | None) -> str:
    return "stopped by teardown" if asked == "teardown" else "stopped by down, as asked"


#: The facts a podman site's condition is decided from: when one of them could not be
#: parsed (a podman that printed something else than its JSON, say), nothing is decided.
DECIDING_FACTS = ("containers", "units")


def unparsed_reason(reading: PodmanReading) -> str | None:
    """Why the site's condition cannot be decided from its reading, in our own words (the
    command and the parser's reason; the host's line stays in the reading), or None."""
    for fact in DECIDING_FACTS:
        failed = reading.state.unparsed(fact)
        if failed is not None:
            return (
                f"the output of `{failed.command}` could not be read ({failed.reason}): "
                f"whether the router runs is not known"
            )
    return None


def podman_condition(reading: PodmanReading) -> Condition:
    state, asked = reading.state, reading.asked
    if not state.rendered:
        why = "removed by teardown" if asked == "teardown" else "setup has not been run here"
        return "not-set-up", why
    unparsed = unparsed_reason(reading)
    if unparsed is not None:
        return "unknown", unparsed
    if podman_router_running(reading):
        if not router_unit_active(reading):
            return "degraded", (
                "the router container runs outside its unit: a crash would not be restarted"
            )
        if not podman_controller_running(reading):
            return "degraded", (
                "the system controller is not running: nothing applies changes or updates "
                "the site's status"
            )
        return "up", "the router runs under its unit, with the system controller"
    if asked in STOPS:
        return "stopped", _stopped_as_asked(asked)
    if podman_controller_running(reading):
        return (
            "stopped",
            "the router is not running (the system controller, which runs, keeps "
            "the site's status)",
        )
    if claims_ready(podman_site_resource(reading)):
        return "stale", (
            "Skupper's rendered status says Ready, but the router is not running and no down "
            "asked for that"
        )
    if asked in ("up", "setup"):
        return "stopped", f"the router is not running, though the last {asked} started it"
    return "stopped", "the router is not running"


def cluster_condition(reading: ClusterReading, cluster_links: tuple[str, ...] = ()) -> Condition:
    state, asked = reading.state, reading.asked
    if state.site is None:
        why = "removed by teardown" if asked == "teardown" else "no Site resource in the namespace"
        return "not-set-up", why
    running = cluster_router_running(state)
    if running:
        held = [n for n in cluster_links if n in state.links]
        if asked in STOPS and cluster_links and not held:
            return "stopped", "down removed its links, as asked (its router pod keeps running)"
        return "up", "a router pod is Running"
    if asked in STOPS:
        return "stopped", _stopped_as_asked(asked)
    if claims_ready(state.site):
        return "stale", "the Site says Ready, but no router pod is Running"
    return "stopped", "no router pod is Running"


def listener_condition(bound: bool | None, provider: Reading | None) -> ListenerState:
    """A consumer's listener for a provider: serving (bound, the provider's router runs),
    closing (bound, the provider's router is stopped: no route behind it), closed (nothing
    accepts on the port), unknown (not probed, or the provider was not read)."""
    if bound is None:
        return "unknown"
    if not bound:
        return "closed"
    running = router_running(provider)
    if running is None:
        return "unknown"
    return "serving" if running else "closing"


def stopped_for(reading: Reading | None) -> float | None:
    """Seconds since a podman site's router container exited, when its reading says."""
    if not isinstance(reading, PodmanReading):
        return None
    return reading.state.stopped_for(names.router_container(reading.namespace))
