"""Local copies of each site's inputs and CA, taken by teardown before a site is removed.

A later setup restores the CA, so links issued before (and copies of client certificates
held elsewhere) stay valid. Archives hold private keys: the folder is 0700, files 0600.
"""

from __future__ import annotations

import os
import tarfile
import time
from pathlib import Path

from ..errors import LocalStateError

CA_DIR = "runtime/issuers/skupper-site-ca/"


class Backups:
    def __init__(self, root: Path) -> None:
        self.root = root

    def _dir(self, host: str, namespace: str) -> Path:
        return self.root / "backups" / host / namespace

    def save(self, host: str, namespace: str, archive: bytes) -> Path:
        folder = self._dir(host, namespace)
        path = folder / time.strftime("%Y%m%dT%H%M%SZ.tar.gz", time.gmtime())
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for p in (self.root, self.root / "backups", folder.parent, folder):
                os.chmod(p, 0o700)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(archive)
        except OSError as exc:
            raise LocalStateError(str(path), f"cannot save the backup: {exc}") from exc
        return path

    def latest(self, host: str, namespace: str) -> Path | None:
        folder = self._dir(host, namespace)
        found = sorted(folder.glob("*.tar.gz")) if folder.is_dir() else []
        return found[-1] if found else None

    def latest_ca(self, host: str, namespace: str) -> dict[str, bytes] | None:
        """The site CA's files from the newest backup, or None."""
        path = self.latest(host, namespace)
        if path is None:
            return None
        files: dict[str, bytes] = {}
        try:
            with tarfile.open(path, "r:gz") as tar:
                for member in tar.getmembers():
                    name = member.name.removeprefix("./")
                    if (
                        member.isfile()
                        and name.startswith(CA_DIR)
                        and "/" not in name[len(CA_DIR) :]
                    ):
                        data = tar.extractfile(member)
                        if data is not None:
                            files[name[len(CA_DIR) :]] = data.read()
        except (OSError, tarfile.TarError) as exc:
            raise LocalStateError(str(path), f"cannot read the backup: {exc}") from exc
        return files or None
