"""``skupper-mcp init``: a commented ``topology.env`` to start from, written from the
template the package ships (``skupper_mcp/data/starter-topology.env``). The template parses
as it is; its placeholders (``*.example.com``, documentation addresses) are what the
precheck asks to replace."""

from __future__ import annotations

import os
from pathlib import Path

from skupper_mcp import data
from skupper_mcp.errors import ConfigError

from .discovery import ENV_VARIABLE


def starter_text() -> str:
    """The template ``init`` writes."""
    return data.starter_topology()


def default_init_path() -> Path:
    """Where ``init`` writes without a PATH: $SKUPPER_MCP_TOPOLOGY, else the per-user file
    the server finds from any working directory."""
    if os.environ.get(ENV_VARIABLE):
        return Path(os.environ[ENV_VARIABLE]).expanduser()
    return Path.home() / ".config" / "skupper-mcp" / "topology.env"


def write_starter(path: Path, *, force: bool = False) -> Path:
    """Write the template to ``path`` (parent directories created); an existing file is
    kept unless ``force``. Raises ``ConfigError`` when the file exists or cannot be written."""
    path = path.expanduser()
    if path.is_dir():
        path = path / "topology.env"
    if path.exists() and not force:
        raise ConfigError(
            "already exists; edit it, or pass --force to replace it with the template",
            path=str(path),
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(starter_text(), encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"cannot write the topology: {error}", path=str(path)) from error
    return path
