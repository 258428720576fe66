"""The operations journal: one JSON line per write, in ``STATE_DIR/journal.jsonl``.

Every ``setup``, ``up``, ``down`` and ``teardown`` that is not a plan appends what it did
(``results.JournalEntry``): when, which client asked (its MCP initialize, or ``cli``), the
arguments, each site's outcome and the steps that changed it, the model actions and how long
it took. So after an agent has worked, the user can ask what was changed, where, by whom.

The file is private (0600, in our checked STATE_DIR, never through a link), appended to,
and bounded: past ``MAX_BYTES`` it becomes ``journal.jsonl.1`` (the one before is dropped,
its entries counted in ``journal.dropped``) and a new one starts. A call that failed as the
last entry did, changing nothing, is not written again: the last entry counts it
(``repeated``, ``last_time``), so a client that retries a refused ``up`` thousands of times
cannot rotate a real ``down`` out of the journal. Appends happen under the operation lock,
so two processes never rotate at once. Text a host wrote (a reason, an error) is redacted
as results are.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from contextvars import ContextVar
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pydantic import ValidationError

from ...errors import ConfigError
from ...redaction import redact
from ...results import HistoryResult, JournalEntry, JournalSite, OperationResult
from .statedir import existing_private_dir, open_private_file, private_dir

JOURNAL = "journal.jsonl"
ROTATED = "journal.jsonl.1"
#: How many entries rotation has dropped, as decimal text.
DROPPED = "journal.dropped"
#: What of an entry is not the call's own outcome: a repeat may differ in these.
_WHEN = {"time", "seconds", "repeated", "last_time"}
#: Past this size the journal is rotated; a read takes at most the two files.
MAX_BYTES = 1 << 20

#: Who is calling, as (name, version): the MCP front sets it for each tool call from the
#: client's initialize; anything else (the CLI) is ``cli``. A context variable, since one
#: server's engine runs the calls of several clients at once.
CALLER: ContextVar[tuple[str, str | None]] = ContextVar("skupper_mcp_caller", default=("cli", None))


def now() -> datetime:
    return datetime.now(UTC)


def _redacted(text: str | None) -> str | None:
    return None if text is None else redact(text)[0]


def entry(
    tool: str,
    arguments: dict[str, object],
    started: datetime,
    seconds: float,
    result: OperationResult | None = None,
    error: str | None = None,
) -> JournalEntry:
    """The journal's line for one write: its result, or the error that ended it."""
    client, version = CALLER.get()
    sites = [
        JournalSite(
            host=s.host,
            outcome=s.outcome,
            changed=s.changed,
            changed_steps=[step.name for step in s.steps if step.changes and step.ok],
            reason=_redacted(s.reason),
        )
        for s in (result.sites if result else [])
    ]
    return JournalEntry(
        time=started.isoformat(timespec="seconds"),
        client=client,
        client_version=version,
        tool=tool,
        arguments=arguments,
        ok=result.ok if result else False,
        summary=result.summary if result else "",
        sites=sites,
        model_actions=result.model_actions if result else [],
        error=_redacted(error),
        seconds=round(seconds, 3),
    )


class Journal:
    """The journal of one STATE_DIR."""

    def __init__(self, state_dir: Path) -> None:
        self.root = state_dir

    @property
    def path(self) -> Path:
        return self.root / JOURNAL

    def append(self, line: JournalEntry) -> None:
        data = (line.model_dump_json() + "\n").encode()
        with private_dir(self.root) as folder:
            if self._counted_as_repeat(folder, line):
                return
            if _size(folder, JOURNAL) + len(data) > MAX_BYTES:
                self._count_dropped(folder)
                os.replace(JOURNAL, ROTATED, src_dir_fd=folder, dst_dir_fd=folder)
            fd = open_private_file(
                folder, self.root, JOURNAL, os.O_WRONLY | os.O_APPEND | os.O_CREAT
            )
            with os.fdopen(fd, "ab") as out:
                out.write(data)

    def _counted_as_repeat(self, folder: int, line: JournalEntry) -> bool:
        """Count ``line`` in the last entry, rewritten in place, when it failed as that one
        did and neither changed anything; whether it was."""
        if line.ok or any(s.changed for s in line.sites) or not _size(folder, JOURNAL):
            return False
        fd = open_private_file(folder, self.root, JOURNAL, os.O_RDWR)
        with os.fdopen(fd, "r+b") as journal:
            data = journal.read(MAX_BYTES * 2)
            start = data.rstrip(b"\n").rfind(b"\n") + 1
            try:
                last = JournalEntry.model_validate_json(data[start:])
            except ValidationError:
                return False
            if last.ok or not _same_outcome(last, line):
                return False
            counted = last.model_copy(
                update={"repeated": last.repeated + 1, "last_time": line.time}
            )
            rewritten = (counted.model_dump_json() + "\n").encode()
            journal.seek(start)
            journal.write(rewritten)
            if start + len(rewritten) < len(data):  # shorter than the line it replaces
                journal.truncate()
        return True

    def _count_dropped(self, folder: int) -> None:
        """Add the entries of the rotated file about to be dropped to ``DROPPED``."""
        dropped = sum(e.repeated for e in self._entries(folder, ROTATED))
        if not dropped:
            return
        total = self._dropped(folder) + dropped
        fd = open_private_file(folder, self.root, DROPPED, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        with os.fdopen(fd, "wb") as out:
            out.write(f"{total}\n".encode())

    def _dropped(self, folder: int) -> int:
        if not _size(folder, DROPPED):
            return 0
        fd = open_private_file(folder, self.root, DROPPED, os.O_RDONLY)
        with os.fdopen(fd, "rb") as source:
            text = source.read(64).strip()
        return int(text) if text.isdigit() else 0

    def _entries(self, folder: int, name: str) -> Iterator[JournalEntry]:
        for raw in self._file_lines(folder, name):
            with contextlib.suppress(ValidationError, ValueError):
                yield JournalEntry.model_validate_json(raw)

    def history(self, since: datetime | None = None) -> HistoryResult:
        """The entries from ``since`` on (all without it), oldest first; a line that is not
        an entry is counted in ``unreadable``, never taken for one."""
        entries: list[JournalEntry] = []
        unreadable = 0
        for raw in self._lines():
            try:
                found = JournalEntry.model_validate_json(raw)
                when = datetime.fromisoformat(found.time)
            except (ValidationError, ValueError):
                unreadable += 1
                continue
            if since is None or when >= since:
                entries.append(found)
        return HistoryResult(
            entries=entries, unreadable=unreadable, dropped=self.dropped(), path=str(self.path)
        )

    def dropped(self) -> int:
        """How many entries rotation has dropped so far."""
        with existing_private_dir(self.root) as folder:
            return 0 if folder is None else self._dropped(folder)

    def _lines(self) -> Iterator[bytes]:
        with existing_private_dir(self.root) as folder:
            if folder is None:
                return
            for name in (ROTATED, JOURNAL):
                yield from self._file_lines(folder, name)

    def _file_lines(self, folder: int, name: str) -> Iterator[bytes]:
        if not _size(folder, name):
            return
        fd = open_private_file(folder, self.root, name, os.O_RDONLY)
        with os.fdopen(fd, "rb") as source:
            data = source.read(MAX_BYTES * 2)  # bounded: a rotated file is at most it
        yield from (line for line in data.splitlines() if line.strip())


def _same_outcome(last: JournalEntry, line: JournalEntry) -> bool:
    """Whether two entries are the same call ending the same way, whenever each ran."""
    return last.model_dump(exclude=_WHEN) == line.model_dump(exclude=_WHEN)


def _size(folder: int, name: str) -> int:
    with contextlib.suppress(FileNotFoundError):
        return os.stat(name, dir_fd=folder, follow_symlinks=False).st_size
    return 0


_DURATION = re.compile(r"^(\d+)\s*([smhdw])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(text: str, *, at: datetime | None = None) -> datetime | None:
    """``--since``: a duration back from now (``90m``, ``12h``, ``7d``) or an ISO 8601
    time (UTC when it names no zone); None for an empty one. ``ConfigError`` otherwise."""
    text = text.strip()
    if not text:
        return None
    duration = _DURATION.match(text.lower())
    if duration:
        amount, unit = duration.groups()
        return (at or now()) - timedelta(**{_UNITS[unit]: int(amount)})
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(
            f"--since {text!r} is neither a duration (30m, 12h, 7d, 2w) nor an ISO time "
            "(2026-12-03 or 2026-12-03T18:00:00Z)"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)
