"""``skupper-mcp init``: a commented ``topology.env`` to start from, written from the
template the package ships (``skupper_mcp/data/starter-topology.env``). The template parses
as it is; its placeholders (``*.example.com``, documentation addresses) are what the
precheck asks to replace."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from skupper_mcp import data, userfiles
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
    """Write the template to ``path`` (parent directories created, 0700), as a file of mode
    0600 only the user reads; an existing file is kept unless ``force``. Raises
    ``ConfigError`` when the file exists or cannot be written.

    Nothing is written through a symbolic link: a link planted at the target, or as its
    directory, would send the write (and ``--force``'s overwrite) to the file it points
    to. The directory is opened without following a link, the file is created there with
    ``O_EXCL | O_NOFOLLOW``, and ``--force`` writes a new file beside the old one and
    renames it over it (a rename replaces a link, never what it points to)."""
    path = path.expanduser()
    if path.is_dir() and not path.is_symlink():
        path = path / "topology.env"
    if path.is_symlink():
        raise ConfigError(
            "is a symbolic link; init writes only a file of its own, not through a link. "
            "Remove the link, or name the file itself",
            path=str(path),
        )
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        directory = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as error:
        if path.parent.is_symlink():
            raise ConfigError(
                f"its directory {path.parent} is a symbolic link; init writes only into a "
                "directory itself, not through a link. Name the directory the link points to",
                path=str(path),
            ) from error
        raise ConfigError(f"cannot write the topology: {error}", path=str(path)) from error
    try:
        _write_in(directory, path.name, starter_text(), force=force)
    except FileExistsError as error:
        raise ConfigError(
            "already exists; edit it, or pass --force to replace it with the template",
            path=str(path),
        ) from error
    except OSError as error:
        raise ConfigError(f"cannot write the topology: {error}", path=str(path)) from error
    finally:
        os.close(directory)
    return path


def _write_in(directory: int, name: str, text: str, *, force: bool) -> None:
    """Create ``name`` in the open ``directory``; with ``force``, replace one that is there
    (a regular file: ``write_starter`` refused a link before)."""
    if not force:
        _create(directory, name, text)
        return
    staged = f".{name}.{secrets.token_hex(6)}.new"
    _create(directory, staged, text)
    try:
        os.replace(staged, name, src_dir_fd=directory, dst_dir_fd=directory)
    except OSError:
        os.unlink(staged, dir_fd=directory)
        raise


def _create(directory: int, name: str, text: str) -> None:
    userfiles.create(directory, name, text.encode("utf-8"), 0o600)
