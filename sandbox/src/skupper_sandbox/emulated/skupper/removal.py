"""Go's ``os.RemoveAll`` (src/os/removeall_at.go), with which the real CLI removes a
namespace (``system stop``) and the directories a reload makes again."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from .failure import CliFailure


def remove_all(path: Path) -> None:
    """Remove ``path`` and all it holds, as Go does: what is already gone is no error; an
    entry that cannot be removed does not stop the removal of the others, and the first
    failure is what is reported, in Go's words with its full path. A file made in a
    directory while it is being emptied (the controller writes the site's status when its
    router stops) fails that directory's last unlink: ``unlinkat <dir>: directory not
    empty``, the rest gone."""
    failures: list[tuple[str, OSError]] = []

    def note(_function: object, failed: str, exc_info: tuple[Any, ...]) -> None:
        if not isinstance(exc_info[1], FileNotFoundError):
            failures.append((failed, exc_info[1]))

    shutil.rmtree(path, onerror=note)
    if failures:
        failed, exc = failures[0]
        reason = os.strerror(exc.errno).lower() if exc.errno else str(exc)
        raise CliFailure(f"unlinkat {failed}: {reason}")
