"""Rules about known Skupper bugs that only some releases have: each fires only on a site
whose release is one the bug affects (the site's ``skupper version``; on the cluster, the
kube-adaptor image's tag), and names the issue and the real source it was traced to.

- skupper #2331 (2.1.0-2.1.2): the system controller receives the router's ``mc/sfe.all``
  messages without accepting them (``internal/nonkube/controller/router_state_handler.go
  @2.1.2:205``; accepted from 2.1.3, ``@2.1.3:207-209``), so after a hub's router restarts,
  a cluster linked to it gets send timeouts in its kube-adaptor.
- skupper #2193 (2.1.0): the controller never sets the Site's Running condition from the
  router's network status (``internal/nonkube/controller/network_status_handler.go
  @2.1.1:83-85``, absent @2.1.0): the Site stays Ready with its router gone.
- skupper #2430 (2.1.x): ``system uninstall`` disables and stops ``podman.socket``
  (``internal/nonkube/bootstrap/uninstall.go@2.1.4:78``, ``internal/nonkube/common/
  systemd.go@2.1.2:338-351``; removed in 2.2.0 by #2434).
- skupper #2281 (every 2.x, open): ``system uninstall`` without the podman socket fails
  "failed to create container client" (``internal/nonkube/bootstrap/uninstall.go
  @2.1.2:45-48``, the same @2.2.1).
- skupper #2518 (2.2.x): the kube-adaptor takes only ``kubernetes.io/tls`` Secrets as TLS
  credentials (``internal/kube/secrets/sync.go@2.2.1:158-159``), a check that first shipped
  in 2.2.0 (#2395, 86b49471); 2.1.x's ``Sync.handle`` takes a Secret of any type
  (``sync.go@2.1.4:120-131``). main accepts Opaque ones with a ``ca.crt`` again (cf110f04,
  #2524), which no release tag holds yet and the ``2.2`` branch lacks, so a 2.2.2 would still
  have it and the next minor (from main) would not. The gate is ``secret_type_affects``
  (``kube.secret_type`` reads it).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...facts import names
from ...facts.skupper_version import Version
from ...results import Finding
from ...sites.kube import KubeState
from ..condition import unparsed_reason
from ..predicates import (
    claims_ready,
    podman_controller_running,
    podman_router_running,
    podman_site_resource,
    stopped_as_asked,
)
from ..readings import PodmanReading
from .context import Network, call, finding, on_host

#: The releases each bug affects, as (first, last) inclusive.
MULTICAST_UNACCEPTED = (Version(2, 1, 0), Version(2, 1, 2))  # skupper #2331
READY_WITHOUT_ROUTER = (Version(2, 1, 0), Version(2, 1, 0))  # skupper #2193
UNINSTALL_STOPS_SOCKET = (Version(2, 1, 0), Version(2, 1, 99))  # skupper #2430
#: skupper #2281 is open: every 2.x release from the first with ``system uninstall``.
UNINSTALL_NEEDS_SOCKET = (Version(2, 0, 0), None)
#: skupper #2518: from 2.2.0 (#2395), every 2.2.x (the 2.2 branch lacks #2524, on main only).
OPAQUE_SECRET_IGNORED = (Version(2, 2, 0), Version(2, 2, 99))

KUBE_ADAPTOR = "kube-adaptor"


def affected(version: Version | None, releases: tuple[Version, Version | None]) -> bool:
    """Whether ``version`` is one of ``releases`` (first, last; last None: still open)."""
    first, last = releases
    return version is not None and first <= version and (last is None or version <= last)


def _readable(network: Network) -> Iterator[tuple[PodmanReading, Version]]:
    """Each podman site read in full, with its Skupper version when it is known."""
    for view in network.podman_readings():
        version = view.state.skupper.cli
        if version is not None and unparsed_reason(view) is None:
            yield view, version


def multicast_unaccepted(network: Network) -> Iterator[Finding]:
    kube = network.topology.kubernetes
    if kube is None:
        return
    for view, version in _readable(network):
        ref = view.ref
        if ref.host not in kube.direct_links or not affected(version, MULTICAST_UNACCEPTED):
            continue
        yield finding(
            "controller-multicast-unaccepted",
            ref,
            "warning",
            symptom=f"after a router restart on {ref.host}, the cluster's link to "
            f"{ref.site} may time out sending (skupper #2331)",
            evidence=[
                f"skupper version on {ref.host}: {version} (#2331 affects 2.1.0-2.1.2)",
                f"the cluster {kube.site_name} links to {ref.site} directly (CRC_DIRECT_LINKS)",
            ],
            cause="Skupper 2.1.0-2.1.2's system controller receives the router's mc/sfe.all "
            "messages without accepting them, so after the router restarts the messages the "
            "cluster's kube-adaptor sends over the link go unsettled and time out "
            "(router_state_handler.go, fixed in 2.1.3)",
            fix=f"upgrade Skupper on {ref.host} to 2.1.3 or later, then run setup",
            next=[call("setup")],
        )


def ready_without_router(network: Network) -> Iterator[Finding]:
    for view, version in _readable(network):
        ref = view.ref
        if not affected(version, READY_WITHOUT_ROUTER) or not view.state.rendered:
            continue
        if stopped_as_asked(view.asked):
            continue
        if podman_router_running(view) or not podman_controller_running(view):
            continue  # a stopped controller's stale status is stale-status's
        if not claims_ready(podman_site_resource(view)):
            continue
        router = names.router_container(view.namespace)
        found = view.state.container(router)
        yield finding(
            "site-ready-without-router",
            ref,
            "warning",
            symptom=f"{ref.site}'s status says Ready while its router is not running, and "
            "its controller will not correct it (skupper #2193)",
            evidence=[
                f"skupper version on {ref.host}: {version} (#2193 affects 2.1.0 only)",
                "runtime/resources Site status: Ready",
                f"{router}: {found.state if found else 'absent'}",
                f"{names.controller_unit()}: running",
            ],
            cause="Skupper 2.1.0's system controller never sets the Site's Running condition "
            "from the router's network status (network_status_handler.go, fixed in 2.1.1): "
            "a Site stays Ready with its router stopped or removed",
            fix=f"run up on {ref.host} to start the router; upgrade Skupper there to 2.1.1 or "
            "later for a status that follows the router",
            next=[call("up", target=ref.host)],
        )


def _socket(view: PodmanReading) -> tuple[bool, str]:
    """Whether podman's API socket is active, and what its unit says."""
    unit = view.state.unit(names.PODMAN_SOCKET_UNIT)
    said = f"{unit.name}: {unit.active_state} ({unit.unit_file_state or unit.load_state})"
    return unit.active, said


def uninstall_stopped_socket(network: Network) -> Iterator[Finding]:
    for view, version in _readable(network):
        ref = view.ref
        if not affected(version, UNINSTALL_STOPS_SOCKET) or not view.state.units:
            continue
        active, said = _socket(view)
        installed = view.state.unit(names.controller_unit()).loaded
        # only after our teardown's uninstall: a host never set up has its socket off too
        if active or installed or view.asked != "teardown":
            continue
        command = f"systemctl --user enable --now {names.PODMAN_SOCKET_UNIT}"
        yield finding(
            "uninstall-stopped-podman-socket",
            ref,
            "info",  # torn down as asked: worth knowing, not a problem of the site
            symptom=f"podman's API socket on {ref.host} is off, as Skupper {version}'s "
            "system uninstall leaves it: every skupper system command needs it "
            "(skupper #2430)",
            evidence=[
                f"skupper version on {ref.host}: {version} (#2430 affects 2.1.x)",
                said,
                f"{names.controller_unit()}: not installed",
                f"last asked of {ref.host}: teardown",
            ],
            cause="Skupper 2.1.x's system uninstall disables and stops podman.socket "
            "(uninstall.go and systemd.go's Disable, removed in 2.2.0), also for the other "
            "users of podman's API on the host",
            fix=f"turn it on again if anything else on {ref.host} uses podman's API "
            f"({command}); setup turns it on before it installs Skupper",
            next=[on_host(ref.host, command)],
        )


def uninstall_needs_socket(network: Network) -> Iterator[Finding]:
    for view, version in _readable(network):
        ref = view.ref
        if not affected(version, UNINSTALL_NEEDS_SOCKET) or not view.state.units:
            continue
        active, said = _socket(view)
        installed = view.state.unit(names.controller_unit()).loaded
        if active or not installed:
            continue
        command = f"systemctl --user enable --now {names.PODMAN_SOCKET_UNIT}"
        yield finding(
            "uninstall-needs-podman-socket",
            ref,
            "warning",
            symptom=f"podman's API socket on {ref.host} is off: teardown's skupper system "
            'uninstall would fail there with "failed to create container client" '
            "(skupper #2281)",
            evidence=[
                f"skupper version on {ref.host}: {version} (#2281 affects every 2.x, open)",
                said,
                f"{names.controller_unit()}: installed",
            ],
            cause="skupper system uninstall connects to podman's API socket before anything "
            "else (uninstall.go) and gives up when it cannot",
            fix=f"turn the socket on ({command} on {ref.host}), or run setup, which does, "
            "before a teardown",
            next=[on_host(ref.host, command)],
        )


def kube_release(state: KubeState) -> Version | None:
    """The cluster site's Skupper release: the tag of its router pods' kube-adaptor image
    (``skupper-router-deployment.yaml@2.2.1:134-137``), when one pod names a release."""
    for pod in state.router_pods:
        spec: Any = pod.get("spec") or {}
        for container in spec.get("containers") or []:
            if not isinstance(container, dict) or container.get("name") != KUBE_ADAPTOR:
                continue
            image = container.get("image")
            if isinstance(image, str) and "@" not in image and ":" in image:
                found = Version.parse(image.rpartition(":")[2])
                if found is not None:
                    return found
    return None


def secret_type_affects(state: KubeState) -> tuple[bool | None, str]:
    """Whether the cluster's release ignores a link Secret that is not ``kubernetes.io/tls``
    (skupper #2518: 2.2.x), and the evidence line; None when the release is not known (no
    kube-adaptor image tag), which the rule may not take as affected without a reason of
    its own (a Link that uses the Secret and is not connected)."""
    release = kube_release(state)
    if release is None:
        return None, (
            "the cluster's Skupper release is not known (no kube-adaptor image tag): 2.2.x "
            "ignores a Secret that is not kubernetes.io/tls (#2518), 2.1.x takes any type"
        )
    if affected(release, OPAQUE_SECRET_IGNORED):
        return True, f"kube-adaptor {release} (#2518 affects 2.2.0 and later 2.2.x)"
    if release < OPAQUE_SECRET_IGNORED[0]:
        return False, f"kube-adaptor {release} takes a link Secret of any type (before #2395)"
    return False, f"kube-adaptor {release} accepts an Opaque Secret with ca.crt (#2524)"


RELEASE_RULES = (
    multicast_unaccepted,
    ready_without_router,
    uninstall_stopped_socket,
    uninstall_needs_socket,
)
