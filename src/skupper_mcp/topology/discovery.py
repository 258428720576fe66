"""Where the topology file is, and loading it: ``--topology``, ``$SKUPPER_MCP_TOPOLOGY``,
then ``~/.config/skupper-mcp/topology.env``. The only I/O of the package is reading that
file.

A ``topology.env`` in the current folder is never read unless named (``--topology
./topology.env`` or ``SKUPPER_MCP_TOPOLOGY=./topology.env``): the file decides which hosts
SSH reaches, whether new host keys are accepted and which kubeconfig runs, so a folder the
user merely stands in (a cloned repository, a download) must not choose them."""

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
    """Where the topology is: --topology, $SKUPPER_MCP_TOPOLOGY, then
    ~/.config/skupper-mcp/topology.env. ./topology.env only when named by one of the first
    two. Raises ConfigError when none exists, naming a ./topology.env it left alone."""
    if explicit:
        return Path(explicit)
    env = os.environ if environ is None else environ
    if env.get(ENV_VARIABLE):
        return Path(env[ENV_VARIABLE])
    user_file = None
    with contextlib.suppress(RuntimeError):  # no home directory: no per-user file
        user_file = (home or Path.home()) / ".config" / "skupper-mcp" / "topology.env"
        if user_file.is_file():
            return user_file
    here = (cwd or Path.cwd()) / "topology.env"
    if here.is_file():
        raise ConfigError(
            f"no topology file: {here} is in the current folder, which is read only when "
            f"named: pass --topology ./topology.env or set {ENV_VARIABLE}=./topology.env "
            "(a folder's topology.env chooses the hosts SSH reaches and the kubeconfig "
            "that runs)"
        )
    where = f"create {user_file}" if user_file else "create a per-user topology"
    raise ConfigError(
        f"no topology file: pass --topology PATH, set {ENV_VARIABLE}, or {where} "
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
