"""The auto-restart units that replace Skupper's fire-and-forget ones.

Skupper's own units are ``Type=simple`` + ``RemainAfterExit=yes``: they start the containers
and forget them, so a crashed router stays down. Ours run ``start-watch.sh``, which starts the
container and waits for it, so a crash ends the unit with the container's exit code and
``Restart=on-failure`` brings it back. ``SuccessExitStatus=143 SIGTERM`` makes a deliberate
stop a success, not a failure: systemd matches a signal name only against a death *by* that
signal, so ``SIGTERM`` alone never covers start-watch.sh *exiting* 143, which it does when
``podman stop`` ends a container that does not handle SIGTERM (``podman wait`` prints 128+15).
The router and the controller exit 0 on SIGTERM, so 143 is the fallback. ``[Install]
WantedBy=default.target``: setup and ``up`` enable them, so a site that was up comes back by
itself when its host boots (with a lingering user: issue 46), and ``down`` disables them, so a
site stopped as asked stays stopped across a reboot.
Ours take Skupper's own unit names (``skupper-<ns>.service``, ``skupper-controller.service``):
``system start`` and ``system install`` write and enable those with ``WantedBy=default.target``,
and setup writes over them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..connectors.shell import quote, shipped
from ..facts.names import (
    WATCH_SCRIPT_PATH,
    controller_container,
    controller_unit,
    router_container,
    router_unit,
)

RESTART_SEC = 2


def watch_script(podman: str) -> str:
    """start-watch.sh: start a container, wait for it, exit with its exit code. The script
    is ``scripts/start-watch.sh`` with the host's podman (quoted) for ``@podman@``."""
    return shipped("start-watch.sh").replace("@podman@", quote(podman))


@dataclass(frozen=True)
class WatchUnit:
    """One auto-restart unit: its file name and content."""

    name: str
    content: str


def watch_unit(unit: str, container: str, podman: str, description: str) -> WatchUnit:
    content = (
        "[Unit]\n"
        f"Description={description} (auto-restart, managed by skupper-mcp)\n"
        "Wants=network-online.target\n"
        "After=network-online.target\n"
        "\n"
        "[Service]\n"
        "Type=simple\n"
        f"ExecStart=/bin/bash %h/{WATCH_SCRIPT_PATH} {container}\n"
        f"ExecStop={podman} stop -t 10 {container}\n"
        "Restart=on-failure\n"
        f"RestartSec={RESTART_SEC}\n"
        "SuccessExitStatus=143 SIGTERM\n"
        "TimeoutStopSec=30\n"
        "\n"
        "[Install]\n"
        "WantedBy=default.target\n"
    )
    return WatchUnit(unit, content)


def site_units(namespace: str, user: str, podman: str) -> list[WatchUnit]:
    """The controller's and the router's units for a podman site, controller first."""
    return [
        watch_unit(
            controller_unit(),
            controller_container(user),
            podman,
            f"Skupper system controller of {user}",
        ),
        watch_unit(
            router_unit(namespace),
            router_container(namespace),
            podman,
            f"Skupper router of namespace {namespace}",
        ),
    ]
