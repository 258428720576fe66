"""The names Skupper gives a podman site's containers and units, and where our script lives."""

from __future__ import annotations

WATCH_SCRIPT_PATH = ".local/share/skupper-mcp/start-watch.sh"  # relative to $HOME


def router_container(namespace: str) -> str:
    return f"{namespace}-skupper-router"


def controller_container(user: str) -> str:
    return f"{user}-skupper-controller"


def router_unit(namespace: str) -> str:
    return f"skupper-{namespace}.service"


def controller_unit(user: str) -> str:
    return f"{user}-skupper-controller.service"
