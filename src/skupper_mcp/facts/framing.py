"""How a remote script's output keeps our markers apart from the host's text.

A script prints two kinds of line. A line that starts with ``@@`` is a *marker*, written by
the script itself (``@@section units``, ``@@rc 0``). Every line of text that comes from the
host (a command's output, a file, an HTTP body, a log) is printed with ``|`` in front of it
(``sed 's/^/|/'`` on the host), so no byte sequence inside that text can open, close or
fake a marker: whatever it holds, each of its lines starts with ``|``. The reader splits on
``\\n`` only (``str.splitlines`` would also split on a carriage return, a form feed or
U+2028 inside a body, and make a marker of what follows), and drops any line that is
neither a marker nor stuffed.

Marker arguments are the script's own values (a tag, a fixed file name, a number); a value
the host chooses (a user name, a path) is made one line on the host (``skmcp_mark``,
``ONE_LINE``) and still checked by the parser against what it must look like before anything
uses it (``safe_user``, ``safe_path``). A name the host lists (``find``, a glob) is host
text too: a file name may hold a newline and anything after it, so names travel
NUL-terminated from the tool and each one is printed on one stuffed line (``listed``), never
as ``find -printf`` or ``ls`` print them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..connectors.shell import quote

__all__ = [
    "BODY",
    "MARK",
    "MAX_STDERR_FRAME",
    "ONE_LINE",
    "STDERR",
    "Frame",
    "framed",
    "listed",
    "safe_label",
    "safe_path",
    "safe_user",
    "split_frames",
    "stuff",
]

MARK = "@@"
BODY = "|"
#: The tag of the frame that holds a framed command's standard error.
STDERR = "stderr"
#: What the host sends of a framed command's standard error: its last so many bytes
#: (``SKMCP_MAX_STDERR`` in ``scripts/framing.sh``).
MAX_STDERR_FRAME = 16 * 1024

#: The shell filter that stuffs every line of its input.
STUFF = "sed 's/^/|/'"

#: The shell filter that makes its input one line, for a marker's argument: lines joined
#: with ``?`` (which no checked value holds, so a value that had a newline is refused, never
#: cut to a plausible first line) and no newline at the end.
ONE_LINE = 'awk \'NR > 1 { printf "?" } { printf "%s", $0 }\''

#: The shell filter for NUL-terminated names: one stuffed line per name, a newline in a name
#: or any byte outside the plain set shown as ``?`` (bytewise: ``LC_ALL=C``).
_NAMES = "tr '\\n\\000' '?\\n' | LC_ALL=C sed 's,[^A-Za-z0-9._/ +-],?,g; s/^/|/{quit}'"

_USER = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
_PATH = re.compile(r"/[A-Za-z0-9_.+/-]{1,4095}")
_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def stuff(command: str) -> str:
    """``command`` with every line of its standard output stuffed."""
    return f"{command} | {STUFF}"


def listed(command: str, *, most: int = 0) -> str:
    """Shell: ``command``, which prints NUL-terminated names (``find -print0``, ``-printf
    '...\\0'``), with each name printed as one stuffed line (with ``most``, only the first so
    many, cut by the same sed). A name can hold any byte but NUL and ``/``: split on newlines
    it could print a line that starts with ``@@``."""
    return f"{command} | {_NAMES.format(quit=f'; {int(most)}q' if most else '')}"


def framed(command: str, *, first_bytes: int = 0, last_bytes: int = 0, joined: bool = False) -> str:
    """Shell: run ``command`` framed by ``skmcp_framed`` (``scripts/framing.sh``, defined
    before every script): its standard output stuffed, then ``@@stderr`` and its standard
    error stuffed (when it wrote any: its last ``MAX_STDERR_FRAME`` bytes), then ``@@rc N``,
    its own exit status. The two streams stay apart so that a tool's warnings (libpod's on
    many real hosts) never become part of the text a parser reads; the standard error is kept
    as evidence. ``joined`` keeps them as one, in the order written, for a command whose
    standard error is its data (``podman logs`` writes a container's standard error to its
    own). ``first_bytes``/``last_bytes`` bound what the host sends of the standard output to
    its first or last so many bytes (an HTTP body or a log line can be any size)."""
    options = ["-j"] if joined else []
    if first_bytes:
        options += ["-f", str(int(first_bytes))]
    elif last_bytes:
        options += ["-l", str(int(last_bytes))]
    return " ".join(("skmcp_framed", *options, quote(command)))


@dataclass
class Frame:
    """A marker (``@@tag argument``) and the host text stuffed after it, unstuffed."""

    tag: str
    argument: str
    lines: list[str]

    @property
    def body(self) -> str:
        return "\n".join(self.lines)


def split_frames(output: str) -> list[Frame]:
    """The markers of ``output`` in order, each with the stuffed lines after it."""
    frames: list[Frame] = []
    for line in output.split("\n"):
        if line.startswith(BODY):
            if frames:
                frames[-1].lines.append(line[1:])
        elif line.startswith(MARK):
            tag, _, argument = line[len(MARK) :].partition(" ")
            frames.append(Frame(tag, argument.strip(), []))
    return frames


def safe_user(value: str) -> str | None:
    """``value`` if it looks like a POSIX login name (what ``id -un`` prints), else None."""
    return value if _USER.fullmatch(value) else None


def safe_path(value: str) -> str | None:
    """``value`` if it is an absolute path of plain characters (no space, quote, ``$``,
    ``%`` or newline: it goes into scripts and unit files), else None."""
    return value if _PATH.fullmatch(value) and "/../" not in f"{value}/" else None


def safe_label(value: str) -> str | None:
    """``value`` if it is a DNS label (what a Skupper namespace name is), else None."""
    return value if _LABEL.fullmatch(value) else None
