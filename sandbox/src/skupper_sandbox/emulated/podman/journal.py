"""podman's journald log driver on a host with the ``journald`` quirk: the container's output
goes to the journal, one entry per line, as conmon writes it (src/ctr_logging.c@v2.2.1 of
containers/conmon): ``MESSAGE``, ``PRIORITY`` (6: stdout), ``CONTAINER_ID`` (12
characters), ``CONTAINER_ID_FULL``, ``CONTAINER_NAME``, ``SYSLOG_IDENTIFIER`` (the name:
"tag, name, conmon" in that order of precedence; podman gives no tag unless asked), and
``CONTAINER_PARTIAL_MESSAGE=true`` on a last line without its newline. journald adds the
trusted fields (``_PID`` of conmon, ``_UID``, ``_COMM``, ``_HOSTNAME``) and the entry's
``__REALTIME_TIMESTAMP``.

The host's journal is ``HOST_DIR/journal/containers.jsonl`` (one JSON object per entry,
what ``journalctl -o json`` prints), appended to with one ``write`` per entry; the emulated
``journalctl`` reads it. **Adapted**: the container's output is also kept in its
``ctr.log``, which only ``podman run``'s attached output reads on such a host (a real one
attaches to the container's stream); ``podman logs`` reads neither (``verb_logs``).
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from skupper_sandbox.hostenv import HostInfo

JOURNAL_DIR = "journal"
CONTAINERS_JOURNAL = "containers.jsonl"
STDOUT_PRIORITY = "6"  # conmon's stdout priority (libpod/container_log_linux.go: journaldLogOut)


def journal_path(host_dir: str | Path) -> Path:
    return Path(host_dir) / JOURNAL_DIR / CONTAINERS_JOURNAL


def append_entry(host_dir: str | Path, fields: dict[str, str]) -> None:
    """Add one entry to the host's container journal (a single append: entries never mix)."""
    path = journal_path(host_dir)
    path.parent.mkdir(exist_ok=True)
    data = (json.dumps(fields, sort_keys=True) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


class JournalRelay:
    """The pipe a container's output goes into, and the thread that writes each of its lines
    to the journal (and to ``ctr.log``, see the module's note)."""

    def __init__(self, host: HostInfo, container_id: str, name: str, log_path: Path) -> None:
        self.host = host
        self.read_fd, self.write_fd = os.pipe()
        self._log = open(log_path, "ab", buffering=0)  # noqa: SIM115 - closed by the thread
        self._fields = {
            "CONTAINER_ID": container_id[:12],
            "CONTAINER_ID_FULL": container_id,
            "CONTAINER_NAME": name,
            "SYSLOG_IDENTIFIER": name,
            "PRIORITY": STDOUT_PRIORITY,
            "_PID": str(os.getpid()),
            "_UID": str(host.uid),
            "_COMM": "conmon",
            "_HOSTNAME": host.name,
            "_TRANSPORT": "journal",
        }
        self._thread = threading.Thread(target=self._run, name="journal-relay", daemon=True)

    def start(self) -> None:
        """Begin relaying; the container process holds the only write end from now on."""
        os.close(self.write_fd)
        self._thread.start()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def _entry(self, line: bytes, *, partial: bool = False) -> None:
        fields = dict(self._fields)
        fields["MESSAGE"] = line.decode(errors="replace")
        fields["__REALTIME_TIMESTAMP"] = str(time.time_ns() // 1000)
        if partial:
            fields["CONTAINER_PARTIAL_MESSAGE"] = "true"
        append_entry(self.host.host_dir, fields)

    def _run(self) -> None:
        pending = b""
        try:
            while chunk := os.read(self.read_fd, 65536):
                self._log.write(chunk)
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    self._entry(line)
            if pending:
                self._entry(pending, partial=True)
        finally:
            os.close(self.read_fd)
            self._log.close()
