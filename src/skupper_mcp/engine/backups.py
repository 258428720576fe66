"""Local copies of each site's inputs and CA, taken by teardown before a site is removed.

A later setup restores the CA, so links issued before (and copies of client certificates
held elsewhere) stay valid. Archives hold private keys: the folders made here are 0700, files
0600 (``STATE_DIR`` itself is left as the user made it). A backup is checked before it is
kept (every file the host listed is in it) and before its CA is restored (all three of
``ca.crt``, ``tls.crt``, ``tls.key``, as Skupper needs for a user CA): a partial CA must never
turn silently into a new one, which would invalidate every link issued before.
"""

from __future__ import annotations

import io
import os
import tarfile
import time
from pathlib import Path

from ..errors import BackupError

CA_DIR = "runtime/issuers/skupper-site-ca/"
CA_FILES = ("ca.crt", "tls.crt", "tls.key")


def archive_members(archive: bytes) -> set[str]:
    """The regular files in a tar.gz, by path (``./`` stripped); empty if it is unreadable."""
    try:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
            return {m.name.removeprefix("./") for m in tar.getmembers() if m.isfile()}
    except (tarfile.TarError, EOFError, OSError):
        return set()


def check_complete(host: str, archive: bytes, files: list[str]) -> None:
    """Raise ``BackupError`` unless ``archive`` holds every one of ``files``."""
    missing = sorted(set(files) - archive_members(archive))
    if missing:
        shown = ", ".join(missing[:5]) + (
            f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        )
        raise BackupError(
            host,
            f"the backup is incomplete ({shown} missing); nothing was removed",
            missing,
        )


class Backups:
    def __init__(self, root: Path) -> None:
        self.root = root

    def _dir(self, host: str, namespace: str) -> Path:
        return self.root / "backups" / host / namespace

    def save(self, host: str, namespace: str, archive: bytes) -> Path:
        folder = self._dir(host, namespace)
        if not self.root.exists():
            self.root.mkdir(mode=0o700, parents=True)
        for p in (self.root / "backups", folder.parent, folder):
            p.mkdir(mode=0o700, exist_ok=True)
            os.chmod(p, 0o700)
        path = folder / time.strftime("%Y%m%dT%H%M%SZ.tar.gz", time.gmtime())
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(archive)
        return path

    def latest(self, host: str, namespace: str) -> Path | None:
        folder = self._dir(host, namespace)
        found = sorted(folder.glob("*.tar.gz")) if folder.is_dir() else []
        return found[-1] if found else None

    def latest_ca(self, host: str, namespace: str) -> dict[str, bytes] | None:
        """The site CA's files from the newest backup, or None when there is none.

        Raises ``BackupError`` when the backup holds only part of the CA.
        """
        path = self.latest(host, namespace)
        if path is None:
            return None
        files: dict[str, bytes] = {}
        with tarfile.open(path, "r:gz") as tar:
            for member in tar.getmembers():
                name = member.name.removeprefix("./")
                if member.isfile() and name.startswith(CA_DIR) and "/" not in name[len(CA_DIR) :]:
                    data = tar.extractfile(member)
                    if data is not None:
                        files[name[len(CA_DIR) :]] = data.read()
        if not files:
            return None
        missing = [name for name in CA_FILES if name not in files]
        if missing:
            raise BackupError(
                host,
                f"the last backup ({path}) holds only part of the site CA "
                f"({', '.join(missing)} missing): restoring it would make a new CA and "
                "invalidate every link issued before. Put the missing files back into it, "
                "or move the backup away to start with a new CA",
                missing,
            )
        return files
