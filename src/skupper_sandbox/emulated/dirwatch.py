"""Sleep until a directory changes (Linux inotify), instead of polling it.

Real ``podman wait`` blocks on conmon's exit and costs nothing while it waits; the emulation's
waiters (``podman wait``, ``podman start --attach``, ``podman stop``) watch the container's
directory, where every state change lands as an atomic rename and the log grows, and wake on
its events. A slow safety tick stays, so a missed event costs a second, never a hang.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import select
import time
from collections.abc import Callable
from pathlib import Path

_MASK = (
    0x002  # IN_MODIFY: the log grew
    | 0x008  # IN_CLOSE_WRITE
    | 0x080  # IN_MOVED_TO: a state file replaced
    | 0x100  # IN_CREATE
    | 0x200  # IN_DELETE
    | 0x400  # IN_DELETE_SELF: the container removed
    | 0x800  # IN_MOVE_SELF: the container renamed
)
_FLAGS = 0o4000 | 0o2000000  # IN_NONBLOCK | IN_CLOEXEC
SAFETY_TICK = 1.0

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


class DirectoryWatch:
    """Events of one directory; ``wait`` returns when any arrive (or at the timeout)."""

    def __init__(self, directory: Path) -> None:
        self.fd = _libc.inotify_init1(_FLAGS)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        # a directory already gone is fine: the waiter's check sees that at once
        _libc.inotify_add_watch(self.fd, os.fsencode(directory), _MASK)

    def wait(self, timeout: float) -> None:
        ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        if ready:
            try:
                while os.read(self.fd, 65536):
                    pass
            except BlockingIOError:
                pass

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> DirectoryWatch:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def wait_for_change(directory: Path, check: Callable[[], bool], seconds: float) -> bool:
    """Whether ``check()`` became true within ``seconds``, evaluated at each change of
    ``directory`` (and at least every ``SAFETY_TICK``)."""
    deadline = time.monotonic() + seconds
    with DirectoryWatch(directory) as watch:
        while True:
            if check():
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            watch.wait(min(remaining, SAFETY_TICK))
