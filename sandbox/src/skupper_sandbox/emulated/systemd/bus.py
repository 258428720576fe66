"""The bus between `systemctl` and the emulated systemd manager: its socket and unit names.

Both sides import it: the manager (`manager.py`, `unit.py`) and the client (`systemctl.py`).
It imports no more than the standard library's sockets, and the systemd package's
`__init__` imports nothing, so the short-lived `systemctl` command does not import asyncio
(a third of a second on a busy machine).
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
from pathlib import Path

BUS_NAME = "bus"
BUILTIN_SOCKET = "podman.socket"
BUILTIN_SOCKET_PATH = "/usr/lib/systemd/user/podman.socket"


def normalize_unit(name: str) -> str:
    """`foo` means `foo.service`, as systemctl reads it."""
    if re.search(r"\.(service|socket|target|timer|mount|path|scope|slice)$", name):
        return name
    return name + ".service"


def _short_path(path: Path) -> tuple[str, int | None]:
    """A unix socket path within the kernel's 107-byte limit (via /proc/self/fd if long)."""
    text = str(path)
    if len(text.encode()) < 100:
        return text, None
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    return f"/proc/self/fd/{fd}/{path.name}", fd


def bind_unix(path: Path) -> socket.socket:
    """Listen on `path`; the name appears only once the socket accepts connections."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    address, fd = _short_path(temporary)
    try:
        sock.bind(address)
    finally:
        if fd is not None:
            os.close(fd)
    sock.listen(64)
    os.replace(temporary, path)
    return sock


def connect_unix(path: Path, timeout: float | None = None) -> socket.socket:
    """Connect to the unix socket at `path` (any length)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    address, fd = _short_path(path)
    try:
        sock.connect(address)
    except OSError:
        sock.close()
        raise
    finally:
        if fd is not None:
            os.close(fd)
    return sock
