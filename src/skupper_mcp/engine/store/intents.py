"""What the user last asked of each site: the write (setup, up, down, teardown) that last
touched it, kept in ``STATE_DIR`` so that a router the user stopped is told apart from one
that died behind their back (``engine/condition.py``).

One small JSON file per site, in a private folder per topology file (as the operation lock
is keyed), written whole under a new name and renamed over the old one, never through a link
(``statedir``). A record that cannot be read (cut short, edited, of another site) counts as
nothing asked, and says so in the log: the site is then judged on what it shows alone, as
before any write was recorded.

With what was asked, the host's boot id when it was (``/proc/sys/kernel/random/boot_id``,
read in the state read before the write): a site whose host has booted since the last
``up`` or ``setup`` and whose router runs came back by itself (``engine/condition.py``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

from ...errors import LocalStateError
from ..readings import ASKED_VALUES, Asked
from .statedir import existing_private_dir, open_private_file, private_dir

log = logging.getLogger(__name__)

#: A record is a few dozen bytes; anything larger is not ours.
MAX_RECORD = 4096


@dataclass(frozen=True)
class Intent:
    """What was last asked of a site, and the host's boot id then (None: not known)."""

    asked: Asked
    boot_id: str | None = None


class Intents:
    """The last write asked of each site of one topology."""

    def __init__(self, state_dir: Path, topology_path: Path) -> None:
        self.root = state_dir
        digest = hashlib.sha256(str(Path(topology_path).resolve()).encode()).hexdigest()[:16]
        self.parts = ("intents", digest)

    @property
    def folder(self) -> Path:
        return self.root.joinpath(*self.parts)

    def record(
        self, asked: dict[str, tuple[str, Asked]], boot_ids: dict[str, str] | None = None
    ) -> None:
        """Keep ``host -> (site, asked)`` for each host, replacing what each said before,
        with the host's boot id where ``boot_ids`` has it."""
        if not asked:
            return
        with private_dir(self.root, *self.parts) as fd:
            for host, (site, what) in asked.items():
                record: dict[str, object] = {"site": site, "asked": what, "at": int(time.time())}
                boot_id = (boot_ids or {}).get(host)
                if boot_id is not None:
                    record["boot_id"] = boot_id
                self._write(fd, host, json.dumps(record).encode())

    def _write(self, dir_fd: int, host: str, data: bytes) -> None:
        name, partial = f"{host}.json", f"{host}.json.new"
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        fd = open_private_file(dir_fd, self.folder, partial, flags)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        try:
            os.replace(partial, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except OSError as exc:
            raise LocalStateError(str(self.folder / name), f"cannot record: {exc}") from exc

    def read(self, host: str, site: str) -> Asked | None:
        """What was last asked of ``host`` (whose site is ``site``), None when nothing was."""
        found = self.last(host, site)
        return None if found is None else found.asked

    def last(self, host: str, site: str) -> Intent | None:
        """What was last asked of ``host`` (whose site is ``site``) and its boot id then,
        None when nothing was."""
        with existing_private_dir(self.root, *self.parts) as fd:
            if fd is None:
                return None
            try:
                raw = self._read(fd, f"{host}.json")
            except LocalStateError as exc:
                log.warning("the record of what was asked of %s is not usable: %s", host, exc)
                return None
        if raw is None:
            return None
        try:
            found = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            found = None
        asked = found.get("asked") if isinstance(found, dict) else None
        if not isinstance(found, dict) or found.get("site") != site or asked not in ASKED_VALUES:
            log.warning("the record of what was asked of %s is not one of ours: ignored", host)
            return None
        boot_id = found.get("boot_id")
        return Intent(asked, boot_id if isinstance(boot_id, str) and boot_id else None)

    def _read(self, dir_fd: int, name: str) -> bytes | None:
        try:
            os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        fd = open_private_file(dir_fd, self.folder, name, os.O_RDONLY)
        with os.fdopen(fd, "rb") as source:
            return source.read(MAX_RECORD + 1)[:MAX_RECORD]

    def forget(self) -> None:
        """Remove every record (tests start from nothing asked)."""
        with existing_private_dir(self.root, *self.parts) as fd:
            if fd is None:
                return
            for name in os.listdir(fd):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(name, dir_fd=fd)
