"""Every predicate the engine judges a site by, defined once and typed: whether the user
asked a site to stop, whether its router runs (from its reading, or from its decided
condition), whether a link is connected, whether Skupper claims a resource Ready. Pure: no
I/O, and no status word read here: the parsers of ``facts`` (``ResourceStatus.ready``,
``ContainerState.running``, ``UnitState.active``, ``pod_running``) are the only code that
reads one. ``condition`` decides a site's state from these; everything else asks them.
"""

from __future__ import annotations

from typing import Any

from ..facts import names
from ..facts.resource_status import resource_status
from ..facts.site_state import pod_running
from ..results import SiteCondition
from ..sites.kube import KubeState
from .readings import Asked, ClusterReading, PodmanReading, Reading

#: What the user asked that means a router is meant to be stopped.
STOPS: tuple[Asked, ...] = ("down", "teardown")


def stopped_as_asked(asked: Asked | None) -> bool:
    """Whether the last thing the user asked of a site stops it (``down``, ``teardown``)."""
    return asked in STOPS


#: Site conditions whose router runs (``degraded`` runs, with something it needs off).
RUNNING: tuple[SiteCondition, ...] = ("up", "degraded")
#: Site conditions whose router does not run: nothing can route through the site.
STOPPED: tuple[SiteCondition, ...] = ("stopped", "not-set-up", "stale")
#: Site conditions that could not be read or decided.
UNREAD: tuple[SiteCondition, ...] = ("unreachable", "unknown")


def condition_runs(condition: SiteCondition) -> bool:
    """Whether a site in this condition has its router running."""
    return condition in RUNNING


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


def starts_at_boot(reading: PodmanReading, unit: str) -> bool:
    """Whether ``default.target`` wants the unit: it starts when its host boots."""
    return unit in reading.state.enabled_at_boot


def boot_blocker(reading: PodmanReading) -> str | None:
    """Why the site's router does not start by itself when its host boots, or None: podman
    refusing to run after a reboot it did not handle (podman 5.1+), a login user that does
    not linger (its manager, and so every unit of it, starts only with a session), or the
    router's and controller's units not enabled (``default.target`` does not want them)."""
    state = reading.state
    boot = state.boot
    if boot.unhandled_reboot is not None:
        return (
            f"podman refuses to run after a reboot it did not handle ({boot.unhandled_reboot}): "
            "delete the two directories it names, as the user, then run up"
        )
    user = state.user or "the SSH user"
    if boot.linger is False:
        return (
            f"{user} does not linger (Linger=no): after a reboot nothing of it starts until "
            f"`loginctl enable-linger {user}` is run on the host as root (or where polkit "
            "allows it)"
        )
    wanted = (names.controller_unit(), names.router_unit(reading.namespace))
    not_enabled = [u for u in wanted if u not in state.enabled_at_boot]
    if not_enabled:
        return (
            f"{' and '.join(not_enabled)} not enabled, so a reboot leaves the router down "
            "until up, which enables them as it starts them"
        )
    return None


def podman_site_resource(reading: PodmanReading) -> dict[str, Any] | None:
    """The rendered Site resource (runtime/resources), if any."""
    return next((r for (k, _), r in reading.state.runtime_resources.items() if k == "Site"), None)


def claims_ready(resource: Any) -> bool:
    """Whether Skupper's status of a resource says Ready (what it claims, not what runs)."""
    return resource_status(resource).ready


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
