"""Skupper's on-disk layout for the system platform (``pkg/nonkube/api`` in the real CLI)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ... import hostenv

DEFAULT_NAMESPACE = "default"
ISSUER_NAMES = ("skupper-site-ca", "skupper-local-ca", "skupper-service-ca")


def root_host(env: Mapping[str, str]) -> hostenv.HostInfo | None:
    """The host, when its user is root (``getUid() == 0`` in ``pkg/nonkube/api``)."""
    try:
        info = hostenv.current_host(env)
    except (hostenv.NotOnSandboxHost, FileNotFoundError):
        return None
    return info if info.is_root else None


def data_home(env: Mapping[str, str] | None = None) -> Path:
    """``/var/lib/skupper`` for root, else ``${XDG_DATA_HOME:-~/.local/share}/skupper``
    (``GetDataHome``, ``pkg/nonkube/api/environment.go``)."""
    env = os.environ if env is None else env
    root = root_host(env)
    if root is not None:
        return hostenv.system_path(root, "/var/lib/skupper")
    xdg = env.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg else Path(env["HOME"]) / ".local" / "share"
    return base / "skupper"


def unit_dir(env: Mapping[str, str] | None = None) -> Path:
    """``/etc/systemd/system`` for root, else ``${XDG_CONFIG_HOME:-~/.config}/systemd/user``
    (``GetServiceFile``, ``internal/nonkube/common/systemd.go``)."""
    env = os.environ if env is None else env
    root = root_host(env)
    if root is not None:
        return hostenv.system_path(root, "/etc/systemd/system")
    xdg = env.get("XDG_CONFIG_HOME")
    base = Path(xdg) if xdg else Path(env["HOME"]) / ".config"
    return base / "systemd" / "user"


@dataclass(frozen=True)
class NamespacePaths:
    """Every path of one namespace home, ``<data home>/namespaces/<ns>``."""

    data_home: Path
    namespace: str

    @property
    def home(self) -> Path:
        return self.data_home / "namespaces" / self.namespace

    @property
    def input_resources(self) -> Path:
        return self.home / "input" / "resources"

    @property
    def input_certs(self) -> Path:
        return self.home / "input" / "certs"

    @property
    def runtime(self) -> Path:
        return self.home / "runtime"

    @property
    def issuers(self) -> Path:
        return self.runtime / "issuers"

    @property
    def certs(self) -> Path:
        return self.runtime / "certs"

    @property
    def router(self) -> Path:
        return self.runtime / "router"

    @property
    def runtime_resources(self) -> Path:
        return self.runtime / "resources"

    @property
    def links(self) -> Path:
        return self.runtime / "links"

    @property
    def internal(self) -> Path:
        return self.home / "internal"

    @property
    def scripts(self) -> Path:
        return self.internal / "scripts"

    @property
    def platform_file(self) -> Path:
        return self.internal / "platform.yaml"

    @property
    def router_container(self) -> str:
        return f"{self.namespace}-skupper-router"

    @property
    def unit_name(self) -> str:
        return f"skupper-{self.namespace}.service"

    def is_rendered(self) -> bool:
        """A site was started here: what makes ``system start`` refuse."""
        return self.runtime_resources.is_dir()


def namespaces(home: Path) -> list[str]:
    """The namespaces that exist under a data home, sorted."""
    root = home / "namespaces"
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir())
