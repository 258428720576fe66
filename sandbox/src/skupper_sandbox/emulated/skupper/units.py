"""systemd units the CLI writes: the site unit and the controller unit."""

from __future__ import annotations

from pathlib import Path

from .host_commands import quietly, systemctl, systemctl_argv

SITE_UNIT = """[Unit]
Description=skupper-{namespace}.service
Wants=network-online.target
After=network-online.target
RequiresMountsFor={runtime_dir}/containers

[Service]
TimeoutStopSec=70
RemainAfterExit=yes
ExecStart=/bin/bash {scripts}/start.sh
ExecStop=/bin/bash {scripts}/stop.sh
Type=simple

[Install]
WantedBy=default.target
"""

CONTROLLER_UNIT = """[Unit]
Description={name}
After=network-online.target
Wants=network-online.target
RequiresMountsFor={runtime_dir}/containers
{mounts}
[Service]
TimeoutStopSec=70
RemainAfterExit=yes
{environment}ExecStart=/bin/bash {scripts}/start.sh
ExecStop=/bin/bash {scripts}/stop.sh
Type=simple

[Install]
WantedBy=default.target
"""


def install_and_start(unit_dir: Path, name: str, text: str) -> None:
    """Write the unit, then ``enable``, ``daemon-reload`` and ``start`` it (as the CLI does)."""
    unit_dir.mkdir(parents=True, exist_ok=True)
    (unit_dir / name).write_text(text)
    systemctl("enable", name)
    systemctl("daemon-reload")
    systemctl("start", name)


def remove(unit_dir: Path, name: str) -> None:
    """Stop, disable and delete a unit; every step is best effort, as in the real CLI."""
    quietly(systemctl_argv("stop", name))
    quietly(systemctl_argv("disable", name))
    (unit_dir / name).unlink(missing_ok=True)
    quietly(systemctl_argv("daemon-reload"))
    quietly(systemctl_argv("reset-failed", name))
