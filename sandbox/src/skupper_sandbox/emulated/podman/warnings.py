"""What libpod warns on stderr while it sets up its runtime, before any verb runs, on a
host with the ``podman-warns`` quirk: a cgroup-v1 host (RHEL 8, older bootc images).

``checkCgroups2UnifiedMode`` (libpod/runtime_linux.go@v5.8.2:18-27, called by every
runtime's init, libpod/runtime.go@v5.8.2:419) warns unless
``$PODMAN_IGNORE_CGROUPSV1_WARNING`` is set. The line is logrus's: podman's default
``--log-level`` is ``warn``, and logrus's TextFormatter writes ``time=... level=warning
msg="..."`` when stderr is not a terminal (an SSH exec request has none), ``WARN[0000]
msg`` when it is (vendor/github.com/sirupsen/logrus/text_formatter.go@v5.8.2).
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Mapping

from skupper_sandbox.hostenv import HostInfo

CGROUPS_V1 = (
    "Using cgroups-v1 which is deprecated in favor of cgroups-v2 with Podman v5 and will be "
    "removed in a future version. Set environment variable `PODMAN_IGNORE_CGROUPSV1_WARNING` "
    "to hide this warning."
)
IGNORE_VAR = "PODMAN_IGNORE_CGROUPSV1_WARNING"
# logrus levels at or above warning: only these print a warning
_WARNING_LEVELS = {"trace", "debug", "info", "warn", "warning"}


def runtime_warnings(host: HostInfo, log_level: str, env: Mapping[str, str]) -> list[str]:
    """The lines this podman command prints on stderr before its verb runs."""
    if not host.quirks.podman_warns or log_level not in _WARNING_LEVELS or IGNORE_VAR in env:
        return []
    return [_logrus_line(CGROUPS_V1, terminal=os.isatty(2))]


def _logrus_line(message: str, *, terminal: bool) -> str:
    if terminal:
        return f"WARN[0000] {message}"
    now = datetime.datetime.now().astimezone().replace(microsecond=0)
    stamp = now.isoformat()
    if now.utcoffset() == datetime.timedelta(0):
        stamp = stamp[: -len("+00:00")] + "Z"  # Go's RFC3339 writes UTC as Z
    return f'time="{stamp}" level=warning msg="{go_quote(message)}"'


def go_quote(text: str) -> str:
    """The inside of Go's ``%q`` for printable text: backslash and quote escaped."""
    return text.replace("\\", "\\\\").replace('"', '\\"')
