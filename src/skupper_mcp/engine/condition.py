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

from ..errors import UserManagerDown
from ..facts import names
from ..results import AfterReboot, ListenerState, SiteCondition
from ..vocabulary import SITE_UP_CLUSTER, SITE_UP_PODMAN
from .predicates import (
    boot_blocker,
    claims_ready,
    cluster_router_running,
    podman_controller_running,
    podman_router_running,
    podman_site_resource,
    router_running,
    router_unit_active,
    stopped_as_asked,
)
from .readings import Asked, ClusterReading, PodmanReading, Reading, Unread

Condition = tuple[SiteCondition, str]


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
    if rebooted_since_asked(reading):
        return "unknown", (
            f"the host rebooted since the last {reading.asked} and the site did not come back "
            f"by itself: {reading.problem()}"
        )
    return "unknown", reading.problem()


def _stopped_why(asked: Asked | None) -> str:
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


def rebooted_since_asked(reading: Reading) -> bool:
    """Whether a podman site's host has booted since the last up or setup of it: the boot id
    read now is not the one recorded with that write (either unknown: not known, False). A
    host whose user manager does not answer is read that far (``UserManagerDown``)."""
    if reading.asked not in ("up", "setup"):
        return False
    match reading:
        case PodmanReading():
            now, then = reading.state.boot.boot_id, reading.asked_boot
        case Unread(error=UserManagerDown() as down):
            now, then = down.boot_id, reading.asked_boot
        case _:
            return False
    return now is not None and then is not None and now != then


def after_reboot(reading: Reading) -> AfterReboot | None:
    """A site whose host rebooted since the last up or setup: ``back-by-itself`` when its
    router runs (no write of ours started it since), else ``not-back``; None when the host
    did not reboot since (or it is not known)."""
    if not rebooted_since_asked(reading):
        return None
    if not isinstance(reading, PodmanReading):  # read no further than its manager
        return "not-back"
    if reading.state.boot.unhandled_reboot is None and podman_router_running(reading):
        return "back-by-itself"
    return "not-back"


def _back_by_itself(reading: PodmanReading) -> str:
    if after_reboot(reading) != "back-by-itself":
        return ""
    return (
        f"; it came back by itself after the host rebooted (no up since the last {reading.asked})"
    )


def podman_condition(reading: PodmanReading) -> Condition:
    state, asked = reading.state, reading.asked
    if not state.rendered:
        why = "removed by teardown" if asked == "teardown" else "setup has not been run here"
        return "not-set-up", why
    unparsed = unparsed_reason(reading)
    if unparsed is not None:
        return "unknown", unparsed
    if state.boot.unhandled_reboot is not None:  # podman answers nothing: nothing is known
        return "unknown", f"whether the router runs is not known: {boot_blocker(reading)}"
    if podman_router_running(reading):
        back = _back_by_itself(reading)
        if not router_unit_active(reading):
            return "degraded", (
                "the router container runs outside its unit: a crash would not be restarted" + back
            )
        if not podman_controller_running(reading):
            return "degraded", (
                "the system controller is not running: nothing applies changes or updates "
                "the site's status" + back
            )
        return "up", SITE_UP_PODMAN + back
    if stopped_as_asked(asked):
        return "stopped", _stopped_why(asked)
    if rebooted_since_asked(reading):
        blocker = boot_blocker(reading)
        return "stopped", (
            f"the host rebooted since the last {asked} and the router did not come back by "
            "itself"
            + (
                f": {blocker}"
                if blocker
                else " (yet: its units start it once the host's manager is up)"
            )
        )
    if podman_controller_running(reading):
        return (
            "stopped",
            "the router is not running (the system controller, which runs, keeps "
            "the site's status)",
        )
    blocker = boot_blocker(reading)
    by_itself = "" if blocker is None else f"; it does not start by itself: {blocker}"
    if claims_ready(podman_site_resource(reading)):
        return "stale", (
            "Skupper's rendered status says Ready, but the router is not running and no down "
            f"asked for that{by_itself}"
        )
    if asked in ("up", "setup"):
        return "stopped", (
            f"the router is not running, though the last {asked} started it{by_itself}"
        )
    return "stopped", f"the router is not running{by_itself}"


def cluster_condition(reading: ClusterReading, cluster_links: tuple[str, ...] = ()) -> Condition:
    state, asked = reading.state, reading.asked
    if state.site is None:
        why = "removed by teardown" if asked == "teardown" else "no Site resource in the namespace"
        return "not-set-up", why
    running = cluster_router_running(state)
    if running:
        held = [n for n in cluster_links if n in state.links]
        if stopped_as_asked(asked) and cluster_links and not held:
            return "stopped", "down removed its links, as asked (its router pod keeps running)"
        return "up", SITE_UP_CLUSTER
    if stopped_as_asked(asked):
        return "stopped", _stopped_why(asked)
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
