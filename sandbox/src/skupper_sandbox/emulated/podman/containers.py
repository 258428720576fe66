"""The emulated podman's container state, as every sandbox part reads it.

A container is a directory `~/.local/share/containers/sandbox/<name>/` holding
`config.json` (what was asked for at create time), `state.json` (what its monitor saw)
and `ctr.log` (the process's stdout and stderr). Writes are atomic (write + rename),
so readers never see half a file.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

CONFIG_FILE = "config.json"
STATE_FILE = "state.json"
LOG_FILE = "ctr.log"
# podman stop/kill leave this marker (libpod `state.StoppedByUser`); a start removes it.
STOPPED_BY_USER_FILE = "stopped-by-user"

_CONFIG_KEYS = (
    "name",
    "id",
    "image",
    "command",
    "env",
    "labels",
    "mounts",
    "tmpfs",
    "restart_policy",
)
_STATE_KEYS = ("status", "pid", "exit_code", "started_at", "finished_at")


@dataclass
class Container:
    """One container: its configuration and its last recorded state."""

    name: str
    id: str
    image: str
    command: list[str]
    env: dict[str, str]
    labels: dict[str, str]
    mounts: list[list[str]]  # [container_path, host_path]
    tmpfs: list[str]
    restart_policy: str
    status: str  # created | running | exited
    pid: int | None
    exit_code: int | None
    started_at: str | None
    finished_at: str | None
    dir: Path
    created_at: str = ""
    tmpfs_options: dict[str, str] = field(default_factory=dict)
    #: a ``-v`` mount's options as given (``ro,Z``), by its container path
    mount_options: dict[str, str] = field(default_factory=dict)
    network: str = "host"
    hostname: str = ""
    user: str = ""
    userns: str = ""
    conmon_pid: int | None = None
    auto_remove: bool = False
    start_token: str = ""
    start_error: str | None = None
    restart_count: int = 0
    last_exit_code: int | None = None  # kept across a restart by the restart policy

    @property
    def stopped_by_user(self) -> bool:
        """Stopped by `podman stop`/`podman kill`: its restart policy no longer applies."""
        return (self.dir / STOPPED_BY_USER_FILE).exists()

    def mark_stopped_by_user(self, stopped: bool = True) -> None:
        marker = self.dir / STOPPED_BY_USER_FILE
        if stopped:
            with contextlib.suppress(FileNotFoundError):  # removed meanwhile
                marker.touch()
        else:
            marker.unlink(missing_ok=True)

    @property
    def log_path(self) -> Path:
        return self.dir / LOG_FILE

    @property
    def private_tmp(self) -> Path:
        return self.dir / "tmp"


def now() -> str:
    """A timestamp as podman prints it in JSON (RFC 3339, UTC)."""
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def store_root(home: Path) -> Path:
    """Where the host's containers live."""
    return Path(home) / ".local" / "share" / "containers" / "sandbox"


def discard(directory: Path) -> None:
    """Remove a container: its name is free the moment this returns.

    libpod frees the name when it removes the container from its database, before the
    storage goes (removeContainer, libpod/runtime_ctr.go@v5). Here the directory is the
    name, so it is first renamed out of the store, atomically: a command still writing into
    it (its monitor recording the end, a `.lock` opened by a concurrent command) can no
    longer keep the name taken, as deleting it in place could (rmtree fails on a file made
    meanwhile). What cannot be deleted at once is left in the trash, beside the store on
    the same file system (so the move is a rename), where no listing looks."""
    directory = Path(directory).absolute()
    # First it stops being a container: a monitor whose process just ended (its working
    # directory follows the move) finds nothing to restart, a reader nothing to list.
    with contextlib.suppress(FileNotFoundError):
        (directory / CONFIG_FILE).unlink()
    trash = directory.parent.parent / "sandbox-removed"
    trash.mkdir(exist_ok=True)
    target = trash / f"{directory.name}-{secrets.token_hex(4)}"
    try:
        os.rename(directory, target)
    except FileNotFoundError:
        return  # removed meanwhile
    shutil.rmtree(target, ignore_errors=True)


class Removed(Exception):
    """The container's directory is gone: it was removed."""


@contextlib.contextmanager
def lock(directory: Path) -> Iterator[None]:
    """Hold one container's lock, as libpod's per-container lock serialises podman commands
    and conmon's cleanup. Raises ``Removed`` when the container's directory is gone: the
    lock file is never made again in a directory a removal moved away (it would leave a
    file under the removed container's name)."""
    try:
        handle = open(Path(directory) / ".lock", "a")  # noqa: SIM115 - held across the yield
    except FileNotFoundError:
        raise Removed(str(directory)) from None
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file is closed
        yield


def pid_alive(pid: int | None) -> bool:
    """True when the process exists and is not a zombie."""
    if not pid or pid <= 0:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def running(c: Container) -> bool:
    """True when the container is running and its process is alive."""
    return c.status == "running" and pid_alive(c.pid)


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON so that a concurrent reader sees the old or the new file, never half."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)


def load(directory: Path) -> Container | None:
    """Read one container directory; None when it is not (or no longer) a container."""
    try:
        config = json.loads((directory / CONFIG_FILE).read_text())
    except (FileNotFoundError, NotADirectoryError, json.JSONDecodeError):
        return None
    try:
        state = json.loads((directory / STATE_FILE).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        state = {}
    c = Container(
        name=config["name"],
        id=config["id"],
        image=config["image"],
        command=list(config.get("command", [])),
        env=dict(config.get("env", {})),
        labels=dict(config.get("labels", {})),
        mounts=[list(m) for m in config.get("mounts", [])],
        tmpfs=list(config.get("tmpfs", [])),
        restart_policy=config.get("restart_policy", ""),
        status=state.get("status", "created"),
        pid=state.get("pid"),
        exit_code=state.get("exit_code"),
        started_at=state.get("started_at"),
        finished_at=state.get("finished_at"),
        dir=directory,
        created_at=config.get("created_at", ""),
        tmpfs_options=dict(config.get("tmpfs_options", {})),
        mount_options=dict(config.get("mount_options", {})),
        network=config.get("network", "host"),
        hostname=config.get("hostname", ""),
        user=config.get("user", ""),
        userns=config.get("userns", ""),
        conmon_pid=state.get("conmon_pid"),
        auto_remove=bool(config.get("auto_remove", False)),
        start_token=state.get("start_token", ""),
        start_error=state.get("start_error"),
        restart_count=int(state.get("restart_count", 0)),
        last_exit_code=state.get("last_exit_code"),
    )
    if c.status == "running" and not pid_alive(c.pid) and not pid_alive(c.conmon_pid):
        # The monitor died with its container (killed from outside): nobody recorded
        # the end, so report it as podman does after a lost conmon.
        c.status = "exited"
        c.pid = None
        if c.exit_code is None:
            c.exit_code = 137
    return c


def save_config(c: Container) -> None:
    """Write the container's configuration (at create and rename)."""
    data: dict[str, Any] = {key: getattr(c, key) for key in _CONFIG_KEYS}
    data.update(
        created_at=c.created_at,
        tmpfs_options=c.tmpfs_options,
        mount_options=c.mount_options,
        network=c.network,
        hostname=c.hostname,
        user=c.user,
        userns=c.userns,
        auto_remove=c.auto_remove,
    )
    write_json_atomic(c.dir / CONFIG_FILE, data)


def save_state(c: Container) -> None:
    """Write the container's runtime state."""
    data: dict[str, Any] = {key: getattr(c, key) for key in _STATE_KEYS}
    data.update(
        conmon_pid=c.conmon_pid,
        start_token=c.start_token,
        start_error=c.start_error,
        restart_count=c.restart_count,
        last_exit_code=c.last_exit_code,
    )
    write_json_atomic(c.dir / STATE_FILE, data)


def list_all(home: Path) -> list[Container]:
    """Every container on the host, oldest first."""
    root = store_root(home)
    if not root.is_dir():
        return []
    found = [c for d in root.iterdir() if d.is_dir() and (c := load(d)) is not None]
    return sorted(found, key=lambda c: (c.created_at, c.name))


def get(home: Path, name_or_id: str) -> Container | None:
    """The container with this name, full id or unique id prefix (as podman resolves it)."""
    if name_or_id and "/" not in name_or_id and name_or_id not in (".", ".."):
        direct = load(store_root(home) / name_or_id)
        if direct is not None:
            return direct
    if len(name_or_id) < 3:
        return None
    matches = [c for c in list_all(home) if c.id.startswith(name_or_id)]
    return matches[0] if len(matches) == 1 else None
