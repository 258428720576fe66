"""Read the tail of a podman container's log in one remote command, and cut any log text to
what a caller may be given. Parsers are pure.

``podman logs`` writes the container's stdout and stderr to its own stdout and stderr
(libpod ``LogLine.Write``), and its own messages to stderr too: logrus's, as libpod's
cgroups-v1 deprecation warning before every command on many hosts. The script keeps stderr a
frame of its own; the parser takes podman's messages out of it by logrus's shape
(``podman_message``) and keeps the rest as the container's lines, after its stdout lines
(the two streams' interleaving is not recoverable from two streams). A log of nothing but
podman's warning is an empty log, which on the journald log driver sends the reader to the
journal. What crosses the connection is bounded with ``tail -c``, each stream; the exit
status comes after the log, as a marker of its own, so the bound never cuts it off.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..connectors.shell import program
from . import names
from .framing import STDERR, split_frames
from .unparsed import first_line

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


#: podman's own message on its standard error, as logrus's text formatter writes it: with
#: its fields (``time="<RFC 3339>" level=warning msg="..."``) where stderr is no terminal
#: (an SSH exec request's), or ``WARN[0000] ...`` where it is (podman's ``--log-level``
#: levels; sirupsen/logrus ``text_formatter.go``). A container's own lines are
#: skrouterd's (``2025-01-02 03:04:05.678901 +0000 ROUTER (info) ...``), the controller's
#: slog (``time=2025-...`` unquoted, level in capitals) or whatever its program prints.
_PODMAN_MESSAGE = re.compile(
    r'time="\d{4}-\d\d-\d\dT[^"]{1,40}" level=(?:trace|debug|info|warning|error|fatal|panic) '
    r"msg=|(?:TRAC|DEBU|INFO|WARN|ERRO|FATA|PANI)\[\d{4,}\] "
)


def podman_message(line: str) -> bool:
    """Whether a line of ``podman logs``'s standard error is podman's own (a logrus message),
    not one of the container's."""
    return _PODMAN_MESSAGE.match(line) is not None


@dataclass(frozen=True)
class PodmanLogRead:
    """What ``podman_logs_script`` found: the container, whether it exists (``exists``: the
    exit status of ``podman container exists``: 0 yes, 1 no, else podman failed), and when it
    does, ``podman logs``'s exit status, the container's lines (``text``: its stdout's, then
    its stderr's; the newest bytes of each, the first line partial when ``cut``; ``dropped``:
    older lines of stderr went for the bound) and podman's own messages (``podman_said``)."""

    container: str
    exists: int | None
    rc: int | None = None
    text: str = ""
    cut: bool = False
    podman_said: tuple[str, ...] = ()
    dropped: bool = False


def parse_podman_logs(output: str, max_bytes: int) -> PodmanLogRead:
    container, exists, rc, text, logged = "", None, None, "", False
    errors: list[str] | None = None
    for frame in split_frames(output):
        value = frame.argument
        if frame.tag == "container":
            container = value
        elif frame.tag == "exists" and value.isascii() and value.isdigit():
            exists = int(value)
        elif frame.tag == "logs":
            logged, text = True, frame.body
        elif frame.tag == STDERR and logged:
            errors = frame.lines
        elif frame.tag == "rc" and value.isascii() and value.isdigit():
            rc = int(value)
    if not logged:
        return PodmanLogRead(container, exists)
    cut = len(text.encode(errors="replace")) > max_bytes
    dropped = False
    said: list[str] = []
    container_lines: list[str] = []
    if errors is not None:
        if len("\n".join(errors).encode(errors="replace")) > max_bytes and errors:
            dropped = True
            errors = errors[1:]  # cut at the front: its first line is partial
        for line in errors:
            (said if podman_message(line) else container_lines).append(line)
    if container_lines:
        text = "\n".join([*([text] if text.strip() else []), *container_lines])
    return PodmanLogRead(container, exists, rc, text, cut, tuple(said), dropped)


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


#: The log drivers whose lines ``podman logs`` reads from a file of its own: an empty answer
#: from one of them is a log with no lines, not a log that could not be read.
FILE_LOG_DRIVERS = ("k8s-file", "json-file")
_CONTAINER_ID = re.compile(r"[0-9a-f]{64}")
_DRIVER = re.compile(r"[a-z0-9-]{1,32}")


def journal_logs_script(lines: int, max_bytes: int, container: str) -> str:
    """The command that prints the last ``lines`` journal entries of ``container`` (podman's
    journald log driver writes each line as one, ``CONTAINER_NAME``/``CONTAINER_ID_FULL``),
    at most about ``max_bytes`` of them, with its log driver: for a container whose ``podman
    logs`` printed nothing. The script is ``scripts/journal.sh``."""
    return program("journal.sh", int(lines), int(max_bytes) + 64, container)


@dataclass(frozen=True)
class JournalLogRead:
    """What ``journal_logs_script`` found: the container's full id and log driver as
    ``podman container inspect`` gave them (None: not read), and journalctl's exit status,
    output (its newest bytes when ``cut``) and standard error."""

    container_id: str | None
    driver: str | None
    rc: int | None
    text: str = ""
    cut: bool = False
    stderr: str = ""

    @property
    def has_lines(self) -> bool:
        return self.rc == 0 and bool(self.text.strip())


def parse_journal_logs(output: str, max_bytes: int) -> JournalLogRead:
    container_id = driver = None
    rc: int | None = None
    text = stderr = ""
    section = ""
    for frame in split_frames(output):
        value = frame.argument
        if frame.tag == "inspect":
            words = frame.body.split()
            if len(words) == 2 and _CONTAINER_ID.fullmatch(words[0]):
                container_id = words[0]
                driver = words[1] if _DRIVER.fullmatch(words[1]) else None
        elif frame.tag == "journal":
            section, text = "journal", frame.body
        elif frame.tag == STDERR and section == "journal":
            stderr = frame.body
        elif frame.tag == "rc" and section == "journal" and value.isascii() and value.isdigit():
            rc = int(value)
    cut = len(text.encode(errors="replace")) > max_bytes
    return JournalLogRead(container_id, driver, rc, text, cut, stderr)


def log_unavailable(container: str, journal: JournalLogRead) -> str | None:
    """Why a container whose ``podman logs`` printed nothing (exit 0) has no log to show,
    when neither podman nor the journal gave a line; None when its log is simply empty (a
    file log driver: the container has printed nothing yet)."""
    if journal.has_lines or journal.driver in FILE_LOG_DRIVERS:
        return None
    if journal.driver == "none":
        return f"container {container} has log driver none: podman keeps no log of it"
    driver = (
        f"container {container} logs to the journal (podman's journald log driver)"
        if journal.driver == "journald"
        else f"the log driver of container {container} could not be read"
        if journal.driver is None
        else f"container {container} has log driver {journal.driver}"
    )
    said = first_line(journal.stderr)
    if journal.rc is None:
        journal_said = "journalctl was not run to the end"
    elif journal.rc != 0:
        journal_said = f"journalctl failed (exit {journal.rc}{': ' + said if said else ''})"
    else:
        journal_said = f"journalctl shows no line of it{' (' + said + ')' if said else ''}"
    return (
        f"{driver}; podman logs printed nothing (exit 0) and {journal_said}: the login user "
        "may not be able to read the journal podman writes to (podman issues #26910, #24088), "
        "or the container has printed nothing yet"
    )


def log_search_script(container: str, needle: str, lines: int, max_bytes: int) -> str:
    """The command that prints the last ``lines`` lines of ``container``'s whole log (podman
    logs and the journal) that hold ``needle``, at most about ``max_bytes`` of them. The
    script is ``scripts/log-search.sh``."""
    return program("log-search.sh", container, needle, int(lines), int(max_bytes) + 64)


def parse_log_search(output: str, max_bytes: int) -> list[str] | None:
    """The matching lines, oldest first; None when the search did not run to its end."""
    text, rc, searched = "", None, False
    for frame in split_frames(output):
        if frame.tag == "matches":
            searched, text = True, frame.body
        elif frame.tag == "rc" and searched and frame.argument.isascii():
            rc = int(frame.argument) if frame.argument.isdigit() else None
    if rc != 0:
        return None
    tail = tail_lines(text, len(text.split("\n")), max_bytes, cut=len(text.encode()) > max_bytes)
    return [line for line in tail.lines if line.strip()]


def merged_pod_logs(container: str, logs: list[tuple[str, str, bool]]) -> str:
    """The logs of several pods (an HA site's two routers) as one: each line prefixed as
    ``kubectl logs --prefix`` does (``[pod/<pod>/<container>] ``), and in the order of the
    lines' own text, which skrouterd starts with its timestamp. ``logs`` are (pod, text,
    cut); a cut text's first line is partial and goes."""
    tagged: list[tuple[str, str]] = []
    for pod, text, cut in logs:
        lines = [line for line in text.split("\n") if line.strip()]
        for line in lines[1:] if cut else lines:
            tagged.append((line, f"[pod/{pod}/{container}] {line}"))
    tagged.sort(key=lambda pair: pair[0])
    return "\n".join(shown for _, shown in tagged)


#: What skrouterd logs (at error level) for an incoming connection closed before any TLS
#: handshake, such as a TCP probe of its inter-router port: proton's transport error for a
#: listener's connection (src/adaptors/amqp/qd_connection.c@3.4.2 PN_TRANSPORT_ERROR),
#: ``[C4] Connection from A:P (to B:Q) failed: amqp:connection:framing-error SSL Failure:
#: error:0A000126:SSL routines::unexpected eof while reading``.
PROBE_EOF = "SSL routines::unexpected eof while reading"


def probe_eof_line(line: str) -> bool:
    """Whether a router log line is an incoming connection that closed before its TLS
    handshake (``PROBE_EOF``): what a TCP probe of the link port leaves, no link's fault."""
    return "Connection from " in line and " failed: " in line and PROBE_EOF in line
