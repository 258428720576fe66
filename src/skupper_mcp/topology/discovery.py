"""Where the topology file is, and loading it: ``--topology``, ``$SKUPPER_MCP_TOPOLOGY``,
``./topology.env``, then ``~/.config/skupper-mcp/topology.env``. The only I/O of the
package is reading that file."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path

from skupper_mcp.errors import ConfigError

from .model import Topology
from .validation import parse_topology

ENV_VARIABLE = "SKUPPER_MCP_TOPOLOGY"


def find_topology_path(
    explicit: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    home: Path | None = None,
) -> Path:
    """Where the topology is: --topology, $SKUPPER_MCP_TOPOLOGY, ./topology.env, then
    ~/.config/skupper-mcp/topology.env. Raises ConfigError when none exists."""
    if explicit:
        return Path(explicit)
    env = os.environ if environ is None else environ
    if env.get(ENV_VARIABLE):
        return Path(env[ENV_VARIABLE])
    candidates = [(cwd or Path.cwd()) / "topology.env"]
    # without a home directory only the working directory is searched
    with contextlib.suppress(RuntimeError):
        candidates.append((home or Path.home()) / ".config" / "skupper-mcp" / "topology.env")
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    tried = ", ".join(str(c) for c in candidates)
    raise ConfigError(
        f"no topology file: pass --topology PATH, set {ENV_VARIABLE}, or create one of {tried} "
        "(`skupper-mcp init` writes one to start from)"
    )


def load_topology(path: str | os.PathLike[str] | None = None) -> Topology:
    """Find, read and parse the topology."""
    found = find_topology_path(path)
    try:
        text = found.read_text(encoding="utf-8")
    except FileNotFoundError as error:
        raise ConfigError(
            f"cannot read the topology: {error.strerror}; `skupper-mcp init {found}` writes "
            "one to start from",
            path=str(found),
        ) from error
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read the topology: {error}", path=str(found)) from error
    return parse_topology(text, found)
