"""podman 5.1 and later's check of the boot id against its runtime alive file, on a host whose
podman release is one of them (quirk ``podman-release=RELEASE``; the emulation is otherwise
podman 4.9.4's, which has no such check).

Read in the real source: every command but ``version`` initialises the runtime, which locks
and looks for ``alive`` in the engine's tmp dir; absent, it refreshes the state and creates
it (``libpod/runtime.go@v5.1.0:531-631``). Then ``checkBootID``
(``libpod/runtime_linux.go@v5.1.0:47-67``) reads ``/proc/sys/kernel/random/boot_id``: an
empty alive file is given the boot id, one holding another boot id is refused with
``current system boot ID differs from cached boot ID; an unhandled reboot has occurred.
Please delete directories %q and %q and re-run Podman`` (the run root, then the tmp dir),
which the CLI prints as ``Error: ...``, exit 125.

Where those are for a rootless user: under the runtime dir
(``vendor/github.com/containers/storage/pkg/homedir/homedir_unix.go@v5.1.0:144-188``
``GetRuntimeDir``: ``$XDG_RUNTIME_DIR``, else ``/run/user/UID`` when it is the user's,
else ``$TMPDIR`` or ``/tmp``'s ``storage-run-UID``), the run root ``<dir>/containers`` and
the tmp dir ``<dir>/libpod/tmp``. ``/run/user/UID`` is a tmpfs logind makes while the user's
manager runs (it lingers, or a session holds it); without it podman falls back to ``/tmp``,
which on a host whose ``/tmp`` is no tmpfs (Debian 12's) outlives a reboot: the alive file
written there after one reboot refuses every command after the next. A root host's are under
``/run`` (a tmpfs): emptied at every boot, never refused.
"""

from __future__ import annotations

import re
from pathlib import Path

from skupper_sandbox import hostenv

from .errors import PodmanError

#: The first release that checks the boot id (libpod/runtime_linux.go@v5.1.0).
CHECKS_FROM = (5, 1)
_RELEASE = re.compile(r"(\d+)\.(\d+)(?:\.\d+)?")


def checks_boot_id(release: str | None) -> bool:
    """Whether podman ``release`` checks the boot id (None: the emulation's 4.9.4, no)."""
    match = _RELEASE.fullmatch(release or "")
    return match is not None and (int(match[1]), int(match[2])) >= CHECKS_FROM


def runtime_dir(info: hostenv.HostInfo) -> tuple[str, Path]:
    """The user's runtime dir as the host names it, and where it is here."""
    if info.is_root:
        return "/run", hostenv.system_path(info, "/run")
    if hostenv.manager_may_run(info):  # logind's /run/user/UID
        return f"/run/user/{info.uid}", info.run_dir
    fallback = f"/tmp/storage-run-{info.uid}"
    return fallback, hostenv.system_path(info, fallback)


def check_boot_id(info: hostenv.HostInfo) -> None:
    """Refuse as podman 5.1+ does after a reboot it did not see; else keep the alive file."""
    if not checks_boot_id(info.quirks.podman_release):
        return
    named, where = runtime_dir(info)
    run_root, tmp_dir = (
        ("/run/containers/storage", "/run/libpod")
        if info.is_root
        else (f"{named}/containers", f"{named}/libpod/tmp")
    )
    tmp = hostenv.system_path(info, tmp_dir) if info.is_root else where / "libpod" / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    alive = tmp / "alive"
    booted = hostenv.boot_id(info)
    cached = alive.read_text() if alive.exists() else ""
    if not cached:
        alive.write_text(booted)
        return
    if cached.strip() != booted.strip():
        raise PodmanError(
            "current system boot ID differs from cached boot ID; an unhandled reboot has "
            f'occurred. Please delete directories "{run_root}" and "{tmp_dir}" and re-run '
            "Podman"
        )
