"""One operation at a time per topology, across processes: an flock on a lock file.

Two ``up``/``down``/``setup``/``teardown`` calls on the same topology would interleave
systemctl and skupper commands on the same hosts; the second waits for the first, and gives
up with a clear message after a bound. The lock file lives in a checked private folder of
``STATE_DIR`` and is opened without following a link: it is truncated on every operation, so
a planted link must never reach its target.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from ...errors import BusyError
from .statedir import open_private_file, private_dir

DEFAULT_WAIT = 120.0


def lock_path(state_dir: Path, topology_path: Path) -> Path:
    digest = hashlib.sha256(str(topology_path.resolve()).encode()).hexdigest()[:16]
    return state_dir / "locks" / f"operation-{digest}.lock"


@asynccontextmanager
async def operation_lock(
    state_dir: Path,
    topology_path: Path,
    operation: str,
    wait: float = DEFAULT_WAIT,
    on_wait: Callable[[str], Awaitable[None]] | None = None,
) -> AsyncIterator[None]:
    """Hold the topology's operation lock; wait up to ``wait`` seconds for it, saying
    through ``on_wait`` (once) what it waits for, so a caller is never left in silence."""
    path = lock_path(state_dir, topology_path)
    with private_dir(state_dir, path.parent.name) as folder:
        fd = open_private_file(folder, path.parent, path.name, os.O_RDWR | os.O_CREAT)
    try:
        deadline = time.monotonic() + wait
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _holder(fd)
                    raise BusyError(
                        f"another operation on this topology is still running{holder}; "
                        f"waited {wait:g}s. Try again when it has finished."
                    ) from None
                if on_wait is not None and not told:
                    told = True
                    await on_wait(
                        f"waiting for another operation on this topology{_holder(fd)} "
                        f"to finish (up to {wait:g}s)"
                    )
                await asyncio.sleep(0.1)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {operation}\n".encode())
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _holder(fd: int) -> str:
    """Who holds the lock, as its holder wrote it into the file we have open."""
    try:
        pid, _, op = os.pread(fd, 256, 0).decode(errors="replace").strip().partition(" ")
    except OSError:
        return ""
    return f" ({op}, pid {pid})" if pid else ""
