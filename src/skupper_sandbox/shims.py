"""The PATH shims of a sandbox world: `DIR/bin/<tool>` runs the emulated tool.

Every command run on a sandbox host has `DIR/bin` first on its PATH, so `podman`,
`systemctl`, `loginctl`, `curl` and `skupper` there are the emulated ones.
"""

from __future__ import annotations

import shlex
from pathlib import Path

SHIMMED_TOOLS: dict[str, str] = {
    "skupper": "skupper_sandbox.emulated.skupper",
    "podman": "skupper_sandbox.emulated.podman",
    "systemctl": "skupper_sandbox.emulated.systemctl",
    "loginctl": "skupper_sandbox.emulated.loginctl",
    "curl": "skupper_sandbox.emulated.curl",
}


def write_shims(world_dir: Path, python: str) -> Path:
    """Write `world_dir/bin/<tool>` scripts that exec `python -m <module>`; return the dir."""
    bin_dir = Path(world_dir) / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for tool, module in SHIMMED_TOOLS.items():
        shim = bin_dir / tool
        shim.write_text(f'#!/bin/sh\nexec {shlex.quote(python)} -m {module} "$@"\n')
        shim.chmod(0o755)
    return bin_dir
