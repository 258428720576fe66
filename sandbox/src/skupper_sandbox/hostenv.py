"""What a process running "on" a sandbox host knows about its host.

Every process started on a host (by its SSH login, its user manager or its podman) has
``SKMCP_SANDBOX_HOST`` pointing at the host's directory. The host's network namespace, its
``/run/user/<uid>`` and the system paths of a root host (``/var/lib/skupper``,
``/etc/systemd/system``, ``/run/podman``, ``/run/systemd``: ``SYSTEM_PATHS``, kept under the
host's ``sysroot/``) are emulated here by translation.

On a host with a real user (``host.json`` ``real_user``: a world whose podman is real,
``skupper_sandbox.real_users``) every process runs as that user, and ``id``, ``$HOME`` and
``$SHELL`` are the machine's own answers from ``/etc/passwd``. Elsewhere every process really
runs as this machine's user and what a host *reports* is its own user (``host.json``:
``user``, ``uid``, ``gid``), through ``$USER``/``$LOGNAME`` and the ``id`` and ``whoami`` shims,
which read the host's ``ident`` file.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import pwd
import re
import uuid
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from skupper_sandbox.quirks import HostQuirks

HOST_VAR = "SKMCP_SANDBOX_HOST"
WORLD_ID_VAR = "SKMCP_SANDBOX_ID"
MOUNTS_VAR = "SKMCP_SANDBOX_MOUNTS"
TMPFS_VAR = "SKMCP_SANDBOX_TMPFS"

IDENT_FILE = "ident"
ROOT_UID = 0
# The paths a root host's Skupper, systemd and podman use, kept under the host's sysroot/.
SYSTEM_PATHS = (
    "/var/lib/skupper",
    "/etc/systemd/system",
    "/run/podman",
    "/run/systemd",
    "/var/lib/systemd/linger",
    "/proc/sys/kernel/random/boot_id",
)
_SYSTEM_PATH_RE = re.compile(
    r"(?<![\w./-])(" + "|".join(re.escape(p) for p in SYSTEM_PATHS) + r")(?![\w.-])"
)

#: A command that carries its script as base64, the way the product sends every script so
#: that any login shell passes it to sh (``sh -c '...' NAME PAYLOAD``): a mount namespace
#: would show the host's paths to whatever the script opens, so the translation reads the
#: script inside.
_CARRIED_SCRIPT_RE = re.compile(r"^(exec sh -c '[^']*' [\w.-]+ )([A-Za-z0-9+/]+={0,2})$")

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
    gid: int = -1  # -1: the same as uid
    quirk_names: tuple[str, ...] = ()  # skupper_sandbox.quirks: how this host is noisy
    real_user: bool = False  # the user is a real Unix user (skupper_sandbox.real_users)

    @property
    def quirks(self) -> HostQuirks:
        return HostQuirks(tuple(self.quirk_names))

    @property
    def group_id(self) -> int:
        return self.uid if self.gid < 0 else self.gid

    @property
    def is_root(self) -> bool:
        """A root host uses Skupper's rootful layout and the system manager."""
        return self.uid == ROOT_UID

    @property
    def sysroot(self) -> Path:
        """Where the host's system paths (``SYSTEM_PATHS``) live."""
        return Path(self.host_dir) / "sysroot"

    @property
    def home(self) -> Path:
        return Path(self.host_dir) / "home"

    @property
    def run_dir(self) -> Path:
        return Path(self.host_dir) / "run"


def write_host_info(info: HostInfo) -> None:
    """Write host.json and, for a user this machine does not have, the ``ident`` file the
    ``id``/``whoami`` shims read (a real user's ``id`` is the machine's own)."""
    path = Path(info.host_dir) / "host.json"
    path.write_text(json.dumps(asdict(info), indent=2) + "\n")
    group = info.user  # each user has a group of its own name, as useradd makes it
    ident = f"{info.uid} {info.group_id} {info.user} {group}\n"
    if not info.real_user:
        (Path(info.host_dir) / IDENT_FILE).write_text(ident)
    if info.is_root:  # what every root filesystem has before Skupper runs
        for directory in ("etc/systemd/system", "var/lib", "run/systemd"):
            (info.sysroot / directory).mkdir(parents=True, exist_ok=True)
    set_linger(info, info.quirks.lingers)
    if info.quirks.user_session:  # whoever set the host up is logged in (see SESSION_FILE)
        (Path(info.host_dir) / SESSION_FILE).write_text("")
    new_boot_id(info)


#: Present while a login session of the host's user holds its user manager up: the one that
#: set the host up, until a reboot ends it (a ``no-user-session`` host never had one).
SESSION_FILE = "session"
#: The host's boot id, new at each boot: the kernel's file, under the host's sysroot (a
#: login reading the real path reads it there, ``SYSTEM_PATHS``).
BOOT_ID_PATH = "/proc/sys/kernel/random/boot_id"


def linger_file(info: HostInfo) -> Path:
    """logind's mark that a user lingers: ``/var/lib/systemd/linger/<user>`` (its file's
    existence is the setting, as Skupper's ``IsLingeringEnabled`` reads it)."""
    return system_path(info, f"/var/lib/systemd/linger/{info.user}")


def lingering(info: HostInfo) -> bool:
    return linger_file(info).exists()


def set_linger(info: HostInfo, on: bool) -> None:
    path = linger_file(info)
    if on:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    else:
        path.unlink(missing_ok=True)


#: Present while the host reboots (``skupper_sandbox.reboot``): nothing of it may run.
HALTED_FILE = "halted"


def manager_may_run(info: HostInfo) -> bool:
    """Whether the host's manager runs now: not while it reboots; then the system manager
    always, a user's while it lingers or a session of it is open."""
    host_dir = Path(info.host_dir)
    if (host_dir / HALTED_FILE).exists():
        return False
    return info.is_root or lingering(info) or (host_dir / SESSION_FILE).exists()


def boot_id(info: HostInfo) -> str:
    try:
        return system_path(info, BOOT_ID_PATH).read_text().strip()
    except FileNotFoundError:
        return ""


def new_boot_id(info: HostInfo) -> str:
    value = str(uuid.uuid4())
    path = system_path(info, BOOT_ID_PATH)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value + "\n")
    return value


def system_path(info: HostInfo, path: str) -> Path:
    """Where a system path of the host (one of ``SYSTEM_PATHS`` or below) really is."""
    return info.sysroot / path.lstrip("/")


def map_system_paths(text: str, info: HostInfo) -> str:
    """A command line with the host's system paths turned into their place in sysroot/.

    A login runs its command through this, as a mount namespace would show the host's own
    ``/var/lib/skupper`` and ``/etc/systemd/system``: only paths written out in the command
    are translated (the emulated tools translate the paths they use themselves).
    """
    carried = _CARRIED_SCRIPT_RE.match(text)
    if carried:
        try:
            script = base64.b64decode(carried[2], validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            return text
        mapped = map_system_paths(script, info).encode()
        return carried[1] + base64.b64encode(mapped).decode("ascii")
    return _SYSTEM_PATH_RE.sub(lambda m: str(system_path(info, m.group(1))), text)


def manager_bus(info: HostInfo) -> Path:
    """The socket ``systemctl`` talks to: the system manager's on a root host
    (``/run/systemd/private``), else the user manager's ``/run/user/<uid>/bus``."""
    if info.is_root:
        return system_path(info, "/run/systemd/private")
    return info.run_dir / "bus"


def load_host_info(host_dir: str | Path) -> HostInfo:
    data = json.loads((Path(host_dir) / "host.json").read_text())
    data["quirk_names"] = tuple(data.get("quirk_names", ()))
    return HostInfo(**data)


def current_host(env: Mapping[str, str] | None = None) -> HostInfo:
    env = os.environ if env is None else env
    host_dir = env.get(HOST_VAR)
    if not host_dir:
        raise NotOnSandboxHost(
            f"{HOST_VAR} is not set: this emulated tool only runs on a sandbox host"
        )
    return load_host_info(host_dir)


#: The tools the router image ships beside skrouterd (skmanage), under a world's dir: first
#: on its containers' PATH, as the image's /usr/local/bin, and on no host's.
ROUTER_IMAGE_TOOLS = "image-bin/skupper-router"


def router_image_path(world_dir: str) -> str:
    """The PATH a router container's processes (and ``podman exec`` in it) see."""
    tools = Path(world_dir) / ROUTER_IMAGE_TOOLS
    return f"{tools}:{Path(world_dir) / 'bin'}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"


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
    home, shell = str(info.home), info.quirks.shell
    if info.real_user:  # as sshd's do_setup_env: from the user's passwd entry
        entry = pwd.getpwnam(info.user)
        home, shell = entry.pw_dir, entry.pw_shell
    return {
        **keep,
        HOST_VAR: str(Path(host_dir)),
        WORLD_ID_VAR: info.world_id,
        "HOME": home,
        "USER": info.user,
        "LOGNAME": info.user,
        "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
        "SHELL": shell,  # the user's login shell, as sshd sets it
    }


def login_argv(shell: str, command: str | None) -> list[str]:
    """What sshd executes for a session (session.c@V_9_9_P1 ``do_child``:1661-1701): the
    user's login shell, named by its last path component, with ``-c COMMAND`` for an exec
    request; without a command, the shell alone named ``-NAME`` (a login shell)."""
    name = shell.rsplit("/", 1)[-1]
    return [name, "-c", command] if command else ["-" + name]
