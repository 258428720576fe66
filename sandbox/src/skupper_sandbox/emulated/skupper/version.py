"""Versions: what each emulated CLI release pins, and the ``skupper version`` table."""

from __future__ import annotations

from ...router.release import router_version
from .table import tab_table

_THIRD_PARTY = {"prometheus": "v2.42.0", "origin-oauth-proxy": "4.14.0"}
KUBE_COMPONENTS = (
    "router",
    "controller",
    "network-observer",
    "cli",
    "prometheus",
    "origin-oauth-proxy",
)
NONKUBE_COMPONENTS = (
    "router",
    "network-observer",
    "cli",
    "system-controller",
    "prometheus",
    "origin-oauth-proxy",
)


def is_v20(cli_version: str) -> bool:
    """2.0.x: ``system setup``/``teardown``, no system-controller."""
    return cli_version.startswith("2.0.")


def is_v22(cli_version: str) -> bool:
    """2.2.x: bare ``skupper version``, ``install --reload-type``, no socket disabling."""
    return not is_v20(cli_version) and not cli_version.startswith("2.1.")


DOCKER_WARNING = "Warning: Docker is not installed. Skipping image digests search."


def docker_warning() -> str | None:
    """What 2.0.x/2.1.x ``skupper version`` writes on stderr when ``docker`` is not on the
    PATH (internal/utils/configs/manifest.go@2.1.2:50-55). A sandbox host is a podman host
    without docker, whatever the machine running the sandbox has installed."""
    return DOCKER_WARNING


def router_image(cli_version: str) -> str:
    return f"quay.io/skupper/skupper-router:{router_version(cli_version)}"


def controller_image(cli_version: str) -> str:
    return f"quay.io/skupper/system-controller:{cli_version}"


def component_versions(cli_version: str, kube: bool) -> list[tuple[str, str]]:
    names = KUBE_COMPONENTS if kube else NONKUBE_COMPONENTS
    rows = []
    for name in names:
        if name == "router":
            rows.append((name, router_version(cli_version)))
        elif name in _THIRD_PARTY:
            rows.append((name, _THIRD_PARTY[name]))
        else:
            rows.append((name, cli_version))
    return rows


def version_table(cli_version: str, kube: bool) -> str:
    """``skupper version`` as the real CLI prints it (a tab-padded tabwriter table)."""
    return tab_table([("COMPONENT", "VERSION"), *component_versions(cli_version, kube)])
