"""A forked child that becomes a program run by its ``main``, as a new process would run it.

The command server's children become the hosts' tools this way, and a container's monitor
(conmon) the sandbox's image programs (the system-controller, the router's launcher, the
model server): the modules are imported once, in the server, instead of once per process.
What the program sees is what ``exec`` would have given it: its standard streams, the
environment (``os.environ`` and the C environment), the working directory, ``sys.argv``,
no other descriptor, and, for a Python program, the signal dispositions a new interpreter
sets. Its end is a new interpreter's end: non-daemon threads are joined, the streams
flushed, and the exit status is ``main``'s (or ``sys.exit``'s, or 1 after a traceback).

A leaf: it imports nothing of the sandbox, so the command server and the container monitor
both use it without one of them importing the other's package.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import NoReturn

_PR_SET_NAME = 15
_LIBC = ctypes.CDLL(None, use_errno=True)  # this process's own symbols: libc's prctl


def become(
    main: Callable[[], int | None],
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: str,
    fds: Sequence[int],
    *,
    python_signals: bool = False,
    name: str | None = None,
) -> NoReturn:
    """Never returns. ``fds`` become descriptors 0, 1 and 2.

    ``python_signals``: what the parent ignores stays ignored, as across exec, then SIGINT
    raises KeyboardInterrupt and SIGPIPE is ignored, as in a new ``python``; otherwise the
    signals the parent handles are back at their defaults (a tool's caller, not the
    server, would have set them). ``name``: the process's name (``comm``, what ``ps``
    shows), the program's rather than the parent's."""
    code = 1
    try:
        handled = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD, signal.SIGPIPE)
        for number in handled:
            # exec keeps what the parent ignores (conmon ignores SIGHUP) and resets handlers
            if not (python_signals and signal.getsignal(number) is signal.SIG_IGN):
                signal.signal(number, signal.SIG_DFL)
        if python_signals:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        for target, fd in enumerate(fds):
            if fd != target:
                os.dup2(fd, target)
        os.closerange(3, _max_fd())
        sys.stdin = _stream(0, "r")
        sys.stdout = _stream(1, "w")
        sys.stderr = _stream(2, "w", errors="backslashreplace", line_buffering=True)
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        sys.argv = list(argv)
        if name:
            set_name(name)
        code = exit_code(main)
        _join_threads()
    except KeyboardInterrupt:
        _flush()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)  # as Python ends on an uncaught interrupt
    except BaseException:  # never back into the parent's code
        traceback.print_exc()
    finally:
        _flush()
        os._exit(code)


def exit_code(main: Callable[[], int | None]) -> int:
    """What ``sys.exit(main())`` would make the process's exit status."""
    try:
        result = main()
    except SystemExit as exc:
        result = exc.code if isinstance(exc.code, int) or exc.code is None else 1
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
    return 0 if result is None else int(result)


def _stream(fd: int, mode: str, **options: object) -> io.TextIOWrapper:
    """A standard stream on ``fd`` as Python makes one at start-up (buffered, UTF-8)."""
    raw = io.FileIO(fd, mode, closefd=False)
    buffered = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
    return io.TextIOWrapper(buffered, encoding="utf-8", **options)  # type: ignore[arg-type]


def _join_threads() -> None:
    main = threading.main_thread()
    for thread in threading.enumerate():
        if thread is not main and not thread.daemon:
            thread.join()


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


def set_name(name: str) -> None:
    """This process's name (``comm``, at most 15 bytes), as exec of the program gives it."""
    with contextlib.suppress(AttributeError):
        _LIBC.prctl(_PR_SET_NAME, name.encode()[:15], 0, 0, 0)


def _max_fd() -> int:
    try:
        return os.sysconf("SC_OPEN_MAX")
    except (ValueError, OSError):
        return 1024
