"""What a podman site's state read says about the host's boot: whether the login's user
lingers, whether its systemd manager answers at all, and whether podman refuses to run after
an unhandled reboot. Pure: the sections ``scripts/state.sh`` prints (``linger``, and the
``units`` and ``containers`` sections' exit status and standard error), read once here;
``facts/site_state.py``'s ``parse_site_state`` hands them over in one line.

The host's words, each from the real source (docs/sandbox.md, the fidelity table):

- ``loginctl show-user USER --property=Linger`` prints ``Linger=yes`` or ``Linger=no``
  (logind keeps it as the file ``/var/lib/systemd/linger/USER``, which Skupper's own
  ``IsLingeringEnabled`` reads to warn "It is recommended to enable lingering for USER,
  otherwise Skupper may not start on boot.").
- ``systemctl --user`` without a running user manager: "Failed to connect to bus: <errno
  text>" (systemd ``src/shared/bus-util.c`` ``bus_log_connect_error``; later releases word
  it "Failed to connect to user scope bus via local transport: ...").
- ``/proc/sys/kernel/random/boot_id``: the kernel's boot id, a random UUID new at each boot
  (``Documentation/admin-guide/sysctl/kernel.rst``, ``random``); read as it is, without a
  process (the shell's ``read``), so a site rebooted since the product last started it is
  told apart from one that did not (``engine/condition.py``'s ``after_reboot``).
- podman 5.1 and later, when the boot id differs from the one its alive file holds: "current
  system boot ID differs from cached boot ID; an unhandled reboot has occurred. Please
  delete directories "<run root>" and "<tmp dir>" and re-run Podman" (``libpod/
  runtime_linux.go`` ``checkBootID``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

#: systemctl's words when it finds no manager to talk to (either wording)
_NO_BUS = re.compile(r"Failed to connect to (?:user scope )?bus\b[^\n]*")
#: podman's words when it refuses to run after a reboot it did not see
_UNHANDLED_REBOOT = re.compile(r"[^\n]*an unhandled reboot has occurred[^\n]*")
#: the kernel's boot id: a UUID in its canonical text
_BOOT_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_LINGER = re.compile(r"^(?:Linger=)?(yes|no)$")
#: the most of a host's line kept as evidence
MAX_SAID = 300


@dataclass(frozen=True)
class BootFacts:
    """The host's boot, as one state read found it."""

    #: Whether the login's user lingers (None: not asked, as for root, or not said).
    linger: bool | None = None
    #: systemctl's line when it could not reach the manager (None: it answered).
    no_bus: str | None = None
    #: podman's refusal after an unhandled reboot (None: podman answered, or failed
    #: otherwise).
    unhandled_reboot: str | None = None
    #: The kernel's boot id when the site was read (None: not read, or not one).
    boot_id: str | None = None


def parse_boot_id(text: str) -> str | None:
    """The host's ``/proc/sys/kernel/random/boot_id`` as read, None when it is not a UUID."""
    value = text.strip().lower()
    return value if _BOOT_ID.fullmatch(value) else None


def parse_linger(text: str) -> bool | None:
    """``Linger=yes``/``Linger=no`` (or the bare value) -> True/False; anything else None."""
    match = _LINGER.match(text.strip())
    return None if match is None else match.group(1) == "yes"


def _found(pattern: re.Pattern[str], *texts: str | None) -> str | None:
    for text in texts:
        match = pattern.search(text or "")
        if match is not None:
            return match.group(0).strip()[:MAX_SAID]
    return None


def parse_boot(
    bodies: Mapping[str, str], stderr: Mapping[str, str], boot_id: str | None = None
) -> BootFacts:
    """The boot facts from the state read's sections (``bodies``: each section's output and
    ``<section>:rc``; ``stderr``: what each section's command wrote there) and its boot id
    (``parse_boot_id``'s)."""
    linger = parse_linger(bodies["linger"]) if bodies.get("linger:rc") == "0" else None
    no_bus = None
    if bodies.get("units:rc", "0") != "0":
        no_bus = _found(_NO_BUS, stderr.get("units"), bodies.get("units"))
    refused = None
    if bodies.get("containers:rc", "0") != "0":
        refused = _found(_UNHANDLED_REBOOT, stderr.get("containers"), bodies.get("containers"))
    return BootFacts(linger=linger, no_bus=no_bus, unhandled_reboot=refused, boot_id=boot_id)
