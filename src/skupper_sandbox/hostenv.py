"""What a process running "on" a sandbox host knows about its host.

Every process started on a host (by its SSH login, its user manager or its podman) has
``SKMCP_SANDBOX_HOST`` pointing at the host's directory. The host's network namespace and
its ``/run/user/<uid>`` are emulated here by translation.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

HOST_VAR = "SKMCP_SANDBOX_HOST"
WORLD_ID_VAR = "SKMCP_SANDBOX_ID"
MOUNTS_VAR = "SKMCP_SANDBOX_MOUNTS"
TMPFS_VAR = "SKMCP_SANDBOX_TMPFS"

_LOCAL_NAMES = {"", "0.0.0.0", "::", "localhost", "127.0.0.1", "::1", "ip6-localhost"}


class NotOnSandboxHost(RuntimeError):
    """Raised when an emulated tool runs outside a sandbox host."""


@dataclass(frozen=True)
class HostInfo:
    name: str
    address: str
    user: str
    uid: int
    role: str  # provider | consumer | kubernetes
    skupper_version: str
    tmp_writable: bool
    world_id: str
    world_dir: str
    host_dir: str

    @property
    def home(self) -> Path:
        return Path(self.host_dir) / "home"

    @property
    def run_dir(self) -> Path:
        return Path(self.host_dir) / "run"


def write_host_info(info: HostInfo) -> None:
    path = Path(info.host_dir) / "host.json"
    path.write_text(json.dumps(asdict(info), indent=2) + "\n")


def load_host_info(host_dir: str | Path) -> HostInfo:
    data = json.loads((Path(host_dir) / "host.json").read_text())
    return HostInfo(**data)


def current_host(env: Mapping[str, str] | None = None) -> HostInfo:
    env = os.environ if env is None else env
    host_dir = env.get(HOST_VAR)
    if not host_dir:
        raise NotOnSandboxHost(
            f"{HOST_VAR} is not set: this emulated tool only runs on a sandbox host"
        )
    return load_host_info(host_dir)


def translate(address: str, host: HostInfo | None = None) -> str:
    """The address a host-local name means on this host (its own loopback address)."""
    if address.strip("[]") in _LOCAL_NAMES:
        return (host or current_host()).address
    return address


def runtime_dir(env: Mapping[str, str] | None = None, host: HostInfo | None = None) -> Path:
    """``$XDG_RUNTIME_DIR`` as the host sees it; ``/run/user/<uid>`` is the host's run dir.

    Raises ``FileNotFoundError`` when the variable is unset, as the real bus lookup fails.
    """
    env = os.environ if env is None else env
    value = env.get("XDG_RUNTIME_DIR")
    if not value:
        raise FileNotFoundError("XDG_RUNTIME_DIR is not set")
    host = host or current_host(env)
    if value.rstrip("/") == f"/run/user/{host.uid}":
        return host.run_dir
    return Path(value)


def container_path(path: str, env: Mapping[str, str] | None = None) -> Path:
    """Resolve a path as the current container sees it, through its mounts."""
    env = os.environ if env is None else env
    mounts: list[list[str]] = json.loads(env.get(MOUNTS_VAR, "[]"))
    best: tuple[str, str] | None = None
    for inside, outside in mounts:
        inside = inside.rstrip("/") or "/"
        if (path == inside or path.startswith(inside.rstrip("/") + "/")) and (
            best is None or len(inside) > len(best[0])
        ):
            best = (inside, outside)
    if best is None:
        return Path(path)
    rest = path[len(best[0]) :].lstrip("/")
    return Path(best[1]) / rest if rest else Path(best[1])


def host_env(host_dir: str | Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment every process on the host starts from (not XDG_RUNTIME_DIR)."""
    info = load_host_info(host_dir)
    base = os.environ if base is None else base
    keep = {k: v for k, v in base.items() if k in {"LANG", "LC_ALL", "TZ", "TERM"}}
    bin_dir = Path(info.world_dir) / "bin"
    return {
        **keep,
        HOST_VAR: str(Path(host_dir)),
        WORLD_ID_VAR: info.world_id,
        "HOME": str(info.home),
        "USER": info.user,
        "LOGNAME": info.user,
        "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
        "SHELL": "/bin/sh",
    }
