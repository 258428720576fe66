"""Host quirks: the ways a real host is noisier than a clean one, chosen per host with
``skupper-sandbox up --host-quirk HOST=QUIRK`` (docs/sandbox.md, the fidelity table).

Pure: the names, what each imitates, and the parse of ``HOST=QUIRK`` items. The emulated
tools read a host's quirks from its host.json (``hostenv.HostInfo.quirks``).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

PODMAN_WARNS = "podman-warns"
JOURNALD = "journald"
SHELL_PREFIX = "shell="
SLOW_PULL_PREFIX = "slow-pull="
PULL_FAILS_PREFIX = "pull-fails="
LINGER_NO = "linger=no"
NO_USER_SESSION = "no-user-session"
PODMAN_RELEASE_PREFIX = "podman-release="
_RELEASE = re.compile(r"\d+\.\d+(?:\.\d+)?")

#: The login shells a host's user can have (Debian's packages), by name.
SHELLS = {"bash": "/bin/bash", "dash": "/bin/dash", "zsh": "/bin/zsh", "fish": "/usr/bin/fish"}
DEFAULT_SHELL = "/bin/sh"

#: Each quirk's name and what it imitates (``--help`` lists them).
DESCRIPTIONS = {
    PODMAN_WARNS: "every podman command first prints libpod's cgroups-v1 deprecation warning "
    "on stderr, as podman 5 does on a cgroup-v1 host (stdout unchanged)",
    JOURNALD: "containers log to the journal (podman's journald log driver): podman logs "
    "prints nothing and exits 0, journalctl --user has the lines",
    "slow-pull=SECONDS": "Skupper's images are not on the host yet and pulling each takes "
    "SECONDS (podman pull prints its lines as it goes; skupper's own pull says nothing)",
    "pull-fails=REASON": "Skupper's images are not on the host yet and pulling them fails "
    "with REASON as the registry's answer (e.g. unauthorized: not logged in)",
    LINGER_NO: "the user does not linger (Linger=no, no /var/lib/systemd/linger/USER): "
    "its user manager runs only for the session that set the host up; after a reboot "
    "nothing of the user starts until the user lingers (loginctl enable-linger)",
    NO_USER_SESSION: "no login starts a user manager (sshd without pam_systemd) and the "
    "user does not linger: systemctl --user fails 'Failed to connect to bus: No such file "
    "or directory' until the user lingers",
    "podman-release=RELEASE": "the emulated podman behaves as that release where the "
    "emulation knows a difference: from 5.1, after a reboot it did not see (its alive file, "
    "in /tmp when the user's /run/user/UID is absent, outlived the reboot) every command "
    "fails 'current system boot ID differs from cached boot ID; an unhandled reboot has "
    "occurred...' (emulated podman only)",
    "shell=NAME": "the login shell of the host's user, one of " + ", ".join(SHELLS) + " (sshd "
    "runs every command as $SHELL -c COMMAND)",
}


class QuirkError(ValueError):
    """A ``--host-quirk`` item that names no known quirk."""


@dataclass(frozen=True)
class HostQuirks:
    """One host's quirks, as host.json keeps them (a tuple of names)."""

    names: tuple[str, ...] = ()

    @property
    def podman_warns(self) -> bool:
        return PODMAN_WARNS in self.names

    @property
    def journald(self) -> bool:
        return JOURNALD in self.names

    @property
    def slow_pull(self) -> float | None:
        """Seconds each pull of a Skupper image takes (``slow-pull=SECONDS``)."""
        for name in self.names:
            if name.startswith(SLOW_PULL_PREFIX):
                return float(name[len(SLOW_PULL_PREFIX) :])
        return None

    @property
    def pull_fails(self) -> str | None:
        """What the registry answers a pull of a Skupper image (``pull-fails=REASON``)."""
        for name in self.names:
            if name.startswith(PULL_FAILS_PREFIX):
                return name[len(PULL_FAILS_PREFIX) :]
        return None

    @property
    def images_pulled(self) -> bool:
        """Whether Skupper's images are on the host from the start (no pull quirk)."""
        return self.slow_pull is None and self.pull_fails is None

    @property
    def lingers(self) -> bool:
        """Whether the user lingers from the start (``linger=no``, ``no-user-session``:
        not)."""
        return LINGER_NO not in self.names and NO_USER_SESSION not in self.names

    @property
    def user_session(self) -> bool:
        """Whether a login session holds the user manager up at the start."""
        return NO_USER_SESSION not in self.names

    @property
    def podman_release(self) -> str | None:
        """The podman release the host's emulated podman behaves as (None: its own)."""
        for name in self.names:
            if name.startswith(PODMAN_RELEASE_PREFIX):
                return name[len(PODMAN_RELEASE_PREFIX) :]
        return None

    @property
    def shell(self) -> str:
        """The path of the user's login shell (``/bin/sh`` unless ``shell=NAME``)."""
        for name in self.names:
            if name.startswith(SHELL_PREFIX):
                return SHELLS[name[len(SHELL_PREFIX) :]]
        return DEFAULT_SHELL


def check(quirk: str) -> str:
    """``quirk`` when it is a known name; ``QuirkError`` names the known ones."""
    if quirk in (PODMAN_WARNS, JOURNALD, LINGER_NO, NO_USER_SESSION):
        return quirk
    if quirk.startswith(SLOW_PULL_PREFIX):
        try:
            seconds = float(quirk[len(SLOW_PULL_PREFIX) :])
        except ValueError:
            seconds = -1
        if not 0 <= seconds <= 3600:
            raise QuirkError(f"{quirk!r}: SECONDS is a number from 0 to 3600")
        return quirk
    if quirk.startswith(PULL_FAILS_PREFIX):
        if not quirk[len(PULL_FAILS_PREFIX) :].strip():
            raise QuirkError(f"{quirk!r}: REASON is the registry's answer, not empty")
        return quirk
    if quirk.startswith(PODMAN_RELEASE_PREFIX):
        if not _RELEASE.fullmatch(quirk[len(PODMAN_RELEASE_PREFIX) :]):
            raise QuirkError(f"{quirk!r}: RELEASE is podman's, e.g. 5.1.0")
        return quirk
    if quirk.startswith(SHELL_PREFIX):
        shell = quirk[len(SHELL_PREFIX) :]
        if shell not in SHELLS:
            raise QuirkError(f"unknown shell {shell!r} (known: {', '.join(SHELLS)})")
        if shutil.which(SHELLS[shell]) is None:
            raise QuirkError(
                f"{SHELLS[shell]} is not installed on this machine (scripts/host-deps.sh "
                "installs it)"
            )
        return quirk
    raise QuirkError(f"unknown quirk {quirk!r} (known: {', '.join(DESCRIPTIONS)})")


def parse(items: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """``HOST=QUIRK`` items -> {host: quirks}, in the order given; a second ``shell=`` for
    one host replaces the first."""
    chosen: dict[str, list[str]] = {}
    for item in items:
        host, sep, quirk = item.partition("=")
        if not sep or not host or not quirk:
            raise QuirkError(f"--host-quirk {item!r}: expected HOST=QUIRK")
        try:
            check(quirk)
        except QuirkError as exc:
            raise QuirkError(f"--host-quirk {item!r}: {exc}") from None
        names = chosen.setdefault(host, [])
        if quirk.startswith(SHELL_PREFIX):
            names[:] = [n for n in names if not n.startswith(SHELL_PREFIX)]
        if quirk not in names:
            names.append(quirk)
    return {host: tuple(names) for host, names in chosen.items()}


def options(host_quirks: Mapping[str, tuple[str, ...]]) -> list[str]:
    """The ``--host-quirk`` options that ask for ``host_quirks`` (``parse`` reads them)."""
    return [
        arg
        for host, names in host_quirks.items()
        for name in names
        for arg in ("--host-quirk", f"{host}={name}")
    ]


def help_text() -> str:
    lines = [f"{name}: {what}" for name, what in DESCRIPTIONS.items()]
    return "; ".join(lines)
