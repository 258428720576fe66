"""Sleep until a directory changes (Linux inotify), instead of polling it.

Real ``podman wait`` blocks on conmon's exit and costs nothing while it waits; the emulation's
waiters (``podman wait``, ``podman start --attach``, ``podman stop``) watch the container's
directory, where every state change lands as an atomic rename and the log grows, and wake on
its events. A slow safety tick stays, so a missed event costs seconds, never a hang.
Waiters on a state change only leave out the log's growth (``log=False``): a router's
lines then wake nobody who waits for its end.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import select
import time
from collections.abc import Callable
from pathlib import Path

_MODIFY = 0x002  # IN_MODIFY: the log grew
_MASK = (
    _MODIFY
    | 0x008  # IN_CLOSE_WRITE
    | 0x080  # IN_MOVED_TO: a state file replaced
    | 0x100  # IN_CREATE
    | 0x200  # IN_DELETE
    | 0x400  # IN_DELETE_SELF: the container removed
    | 0x800  # IN_MOVE_SELF: the container renamed
)
_FLAGS = 0o4000 | 0o2000000  # IN_NONBLOCK | IN_CLOEXEC
#: A log follower reads at least this often; a state waiter checks at least every
#: STATE_TICK (every state change is a rename it is told of: the tick is only a backstop).
SAFETY_TICK = 1.0
STATE_TICK = 10.0

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


class DirectoryWatch:
    """Events of some directories; ``wait`` returns when any arrive (or at the timeout)."""

    def __init__(self, *directories: Path, log: bool = True) -> None:
        self.mask = _MASK if log else _MASK & ~_MODIFY
        self.fd = _libc.inotify_init1(_FLAGS)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        for directory in directories:
            self.add(directory)

    def add(self, directory: Path) -> None:
        """Watch one more directory (again: a no-op). One that does not exist is fine: the
        waiter's check, or a watch on its parent, sees it appear."""
        _libc.inotify_add_watch(self.fd, os.fsencode(directory), self.mask)

    def wait(self, timeout: float) -> bool:
        """Whether events arrived before the timeout (they are consumed)."""
        ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        if ready:
            self.drain()
        return bool(ready)

    def drain(self) -> None:
        """Forget the events so far."""
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
    ``directory`` (and at least every ``STATE_TICK``)."""
    deadline = time.monotonic() + seconds
    with DirectoryWatch(directory, log=False) as watch:
        while True:
            if check():
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            watch.wait(min(remaining, STATE_TICK))
