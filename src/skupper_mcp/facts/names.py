"""The names Skupper gives a podman site's containers and units, and where our script lives."""

from __future__ import annotations

WATCH_SCRIPT_PATH = ".local/share/skupper-mcp/start-watch.sh"  # relative to $HOME

#: Skupper's controller unit: one per user, whatever the namespace
#: (internal/nonkube/bootstrap/controller/systemd.go@2.1.0..2.2.1: Name "skupper-controller").
CONTROLLER_UNIT = "skupper-controller.service"

#: The podman API socket every skupper ``system`` command talks to.
PODMAN_SOCKET_UNIT = "podman.socket"

#: How the Skupper version is read. ``skupper version`` on podman fails on 2.0.1-2.1.4 until
#: ``namespaces/<ns>`` exists (exit 2, "there is no definition for namespace"), so on a fresh
#: host it cannot answer. Its kubernetes variant has no namespace check on any version
#: (version/kube/version.go@2.1.2: only the output flag is validated), and with an empty
#: kubeconfig it never contacts a cluster (NewClient's error is ignored). ``-p`` on the
#: command line (not SKUPPER_PLATFORM) is what also registers the kube-only flags the
#: variant reads (root.go, config/platform.go@2.1.2 scan os.Args). 2.2.x ignores the
#: platform and prints the bare version.
VERSION_COMMAND = "KUBECONFIG=/dev/null skupper version -p kubernetes"


def router_container(namespace: str) -> str:
    return f"{namespace}-skupper-router"


def controller_container(user: str) -> str:
    return f"{user}-skupper-controller"


def router_unit(namespace: str) -> str:
    return f"skupper-{namespace}.service"


def controller_unit() -> str:
    return CONTROLLER_UNIT


def legacy_controller_unit(user: str) -> str:
    """The name skupper-mcp gave its controller unit before it used Skupper's own name."""
    return f"{user}-skupper-controller.service"
