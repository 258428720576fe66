"""Read the tail of a podman container's log in one remote command, and cut any log text to
what a caller may be given. Parsers are pure.

``podman logs`` writes the container's stdout and stderr to its own stdout and stderr
(libpod ``LogLine.Write``); the script joins them (``framed(joined=True)``) so the lines
keep their order, and bounds what crosses the connection with ``tail -c``. Its exit status
comes after the log, as a marker of its own, so the bound never cuts it off.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..connectors.shell import program
from . import names
from .framing import split_frames

#: What a log read may return: the newest lines that fit.
MAX_LOG_BYTES = 64 * 1024


def podman_logs_script(lines: int, max_bytes: int, container: str | None = None) -> str:
    """The command that prints the last ``lines`` lines of ``container``'s log, at most about
    ``max_bytes`` of them, framed (``framing``: no log line can fake a marker).
    ``container`` None: the login user's system controller (``<user>-skupper-controller``).
    The script is ``scripts/logs.sh``."""
    return program(
        "logs.sh",
        int(lines),
        int(max_bytes) + 64,
        container or "",
        names.controller_container(""),
    )


@dataclass(frozen=True)
class PodmanLogRead:
    """What ``podman_logs_script`` found: the container, whether it exists (``exists``: the
    exit status of ``podman container exists``: 0 yes, 1 no, else podman failed), and when it
    does, ``podman logs``'s exit status and output (its newest bytes when ``cut``)."""

    container: str
    exists: int | None
    rc: int | None = None
    text: str = ""
    cut: bool = False


def parse_podman_logs(output: str, max_bytes: int) -> PodmanLogRead:
    container, exists, rc, text, logged = "", None, None, "", False
    for frame in split_frames(output):
        value = frame.argument
        if frame.tag == "container":
            container = value
        elif frame.tag == "exists" and value.isascii() and value.isdigit():
            exists = int(value)
        elif frame.tag == "logs":
            logged, text = True, frame.body
        elif frame.tag == "rc" and value.isascii() and value.isdigit():
            rc = int(value)
    if not logged:
        return PodmanLogRead(container, exists)
    return PodmanLogRead(
        container, exists, rc, text, cut=len(text.encode(errors="replace")) > max_bytes
    )


@dataclass(frozen=True)
class LogTail:
    lines: list[str]
    truncated: bool


def tail_lines(text: str, lines: int, max_bytes: int, *, cut: bool = False) -> LogTail:
    """The last ``lines`` lines of ``text`` within ``max_bytes`` (UTF-8, a newline each),
    oldest first; ``truncated`` when older lines were dropped for the byte bound, or ``cut``
    (the text was already cut at the front: its first line is partial and goes)."""
    parts = text.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    parts = [p.removesuffix("\r") for p in parts]
    if cut and parts:
        parts.pop(0)
    kept: list[str] = []
    size = 0
    truncated = cut
    for line in reversed(parts[-lines:] if lines > 0 else []):
        need = len(line.encode()) + 1
        if size + need > max_bytes:
            truncated = True
            if not kept:  # one line longer than the bound: keep its end
                tail = line.encode()[-(max_bytes - 1) :].decode(errors="ignore")
                kept.append(tail)
            break
        kept.append(line)
        size += need
    kept.reverse()
    return LogTail(kept, truncated)
