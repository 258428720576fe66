"""Local copies of each site's inputs and CA, taken by teardown before a site is removed.

A later setup restores the CA, so links issued before (and copies of client certificates
held elsewhere) stay valid. Archives hold private keys: every folder on the way, ``STATE_DIR``
included, is checked and made 0700 and a backup is a new 0600 file, never written through a
link (``statedir``); a name already taken gets the next number. A backup is checked before it is
kept (every file the host listed is in it) and before its CA is restored (all three of
``ca.crt``, ``tls.crt``, ``tls.key``, as Skupper needs for a user CA): a partial CA must never
turn silently into a new one, which would invalidate every link issued before.
"""

from __future__ import annotations

import functools
import gzip
import io
import os
import tarfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import anyio

from ...errors import BackupError, LocalStateError
from .statedir import (
    create_private_file,
    existing_private_dir,
    open_private_file,
    private_dir,
    regular_files,
)

CA_DIR = "runtime/issuers/skupper-site-ca/"
CA_FILES = ("ca.crt", "tls.crt", "tls.key")


#: What a backup may unpack to, and how many members it may hold: a site's inputs and CA
#: are a few KiB in some tens of files; a gzip bomb within the 16 MiB a read may hold
#: unpacks to gigabytes (about 13 s of inflating, before these bounds).
MAX_UNPACKED_BYTES = 64 * 1024 * 1024
MAX_MEMBERS = 10_000


def _refusal(why: str) -> str:
    return f"the backup is refused ({why}): nothing is removed or restored"


class _Bounded(io.RawIOBase):
    """A read-only stream over ``inner`` that stops past ``limit`` bytes."""

    def __init__(self, inner: gzip.GzipFile, limit: int, host: str) -> None:
        self._inner = inner
        self._left = limit
        self._host = host

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = self._inner.read(min(len(buffer), self._left + 1))
        self._left -= len(data)
        if self._left < 0:
            raise BackupError(
                self._host, _refusal(f"it unpacks to more than {MAX_UNPACKED_BYTES} bytes"), []
            )
        buffer[: len(data)] = data
        return len(data)


@contextmanager
def _members(
    stream: BinaryIO, host: str
) -> Iterator[Iterator[tuple[tarfile.TarInfo, tarfile.TarFile]]]:
    """The members of the tar.gz in ``stream``, read as a stream within the bounds (past
    them, a ``BackupError``)."""
    with gzip.GzipFile(fileobj=stream, mode="rb") as unzipped:
        bounded = io.BufferedReader(_Bounded(unzipped, MAX_UNPACKED_BYTES, host))
        with tarfile.open(fileobj=bounded, mode="r|") as tar:

            def each() -> Iterator[tuple[tarfile.TarInfo, tarfile.TarFile]]:
                for count, member in enumerate(tar, start=1):
                    if count > MAX_MEMBERS:
                        raise BackupError(
                            host, _refusal(f"it holds more than {MAX_MEMBERS} members"), []
                        )
                    yield member, tar

            yield each()


def archive_members(host: str, archive: bytes) -> set[str]:
    """The regular files in a tar.gz, by path (``./`` stripped); empty if it is unreadable,
    ``BackupError`` past the bounds."""
    try:
        with _members(io.BytesIO(archive), host) as members:
            return {m.name.removeprefix("./") for m, _ in members if m.isfile()}
    except (tarfile.TarError, EOFError, OSError):
        return set()


def check_complete(host: str, archive: bytes, files: list[str]) -> None:
    """Raise ``BackupError`` unless ``archive`` holds every one of ``files`` (and stays
    within the bounds: an archive past them is no backup)."""
    missing = sorted(set(files) - archive_members(host, archive))
    if missing:
        shown = ", ".join(missing[:5]) + (
            f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        )
        raise BackupError(
            host,
            f"the backup is incomplete ({shown} missing); nothing was removed",
            missing,
        )


async def checked(host: str, archive: bytes, files: list[str]) -> None:
    """``check_complete`` in a worker thread: inflating an archive is CPU work (bounded, but
    up to a fraction of a second), and the event loop serves every other host meanwhile."""
    await anyio.to_thread.run_sync(functools.partial(check_complete, host, archive, files))


class Backups:
    def __init__(self, root: Path) -> None:
        self.root = root

    def _parts(self, host: str, namespace: str) -> tuple[str, ...]:
        return ("backups", host, namespace)

    def save(self, host: str, namespace: str, archive: bytes) -> Path:
        parts = self._parts(host, namespace)
        folder = self.root.joinpath(*parts)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        try:
            with private_dir(self.root, *parts) as fd:
                for name in _names(stamp):
                    if create_private_file(fd, folder, name, archive):
                        return folder / name
        except OSError as exc:
            raise LocalStateError(str(folder), f"cannot save the backup: {exc}") from exc
        raise LocalStateError(
            str(folder),
            f"every backup name for {stamp} is taken; move old backups away and run again",
        )

    def latest(self, host: str, namespace: str) -> Path | None:
        parts = self._parts(host, namespace)
        with existing_private_dir(self.root, *parts) as fd:
            names = regular_files(fd) if fd is not None else []
        found = [(order, name) for name in names if (order := _order(name))]
        return self.root.joinpath(*parts, max(found)[1]) if found else None

    @contextmanager
    def _open(self, path: Path) -> Iterator[BinaryIO]:
        """Read a backup ``latest`` named, through checked folders and no link."""
        parts = path.relative_to(self.root).parts
        with existing_private_dir(self.root, *parts[:-1]) as fd:
            if fd is None:
                raise LocalStateError(str(path.parent), "the backup folder is gone")
            file_fd = open_private_file(fd, path.parent, parts[-1], os.O_RDONLY)
        with os.fdopen(file_fd, "rb") as stream:
            yield stream

    def latest_ca(self, host: str, namespace: str) -> dict[str, bytes] | None:
        """The site CA's files from the newest backup, or None when there is none.

        Raises ``BackupError`` when the backup holds only part of the CA.
        """
        path = self.latest(host, namespace)
        if path is None:
            return None
        files: dict[str, bytes] = {}
        try:
            with self._open(path) as stream, _members(stream, host) as members:
                for member, tar in members:
                    name = member.name.removeprefix("./")
                    if (
                        member.isfile()
                        and name.startswith(CA_DIR)
                        and "/" not in name[len(CA_DIR) :]
                    ):
                        data = tar.extractfile(member)
                        if data is not None:
                            files[name[len(CA_DIR) :]] = data.read()
        except (OSError, EOFError, tarfile.TarError) as exc:
            raise LocalStateError(str(path), f"cannot read the backup: {exc}") from exc
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


_SAME_SECOND = 100


def _names(stamp: str) -> Iterator[str]:
    """Backup names for one second: ``<stamp>.tar.gz``, then ``<stamp>-2.tar.gz``..."""
    yield f"{stamp}.tar.gz"
    for n in range(2, _SAME_SECOND + 1):
        yield f"{stamp}-{n}.tar.gz"


def _order(name: str) -> tuple[str, int] | None:
    """Where a backup named by ``_names`` falls in time; None for a name it never makes."""
    stem = name.removesuffix(".tar.gz")
    if stem == name:
        return None
    stamp, _, n = stem.partition("-")
    if n and not n.isdigit():
        return None
    return stamp, int(n or 1)
