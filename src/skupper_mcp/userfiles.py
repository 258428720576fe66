"""Reading and writing a user's file (another program's configuration, a skill, an export)
where other local users or a cloned repository may have put something in the way.

Every file we write is created with ``O_CREAT | O_EXCL | O_NOFOLLOW`` and its final mode
from the start, in a directory opened once: a backup beside the file, the temporary file that
replaces it, a new file. So no other user reads a private file's copy in the moment between
its creation and a chmod, and no link planted at a name we are about to use (a backup's
next timestamp, a temporary name) is written through: that name is skipped, or the write is
refused. A file is replaced atomically (its temporary file fsynced, then renamed over it)
keeping its mode, and only when it is still the file we read.

Links: the file, or its directory, may be a link. A link whose target is inside ``folder``
(the current folder of a workspace client: a cloned repository's ``.vscode/mcp.json ->
../../../.claude.json`` is not, but one to another file of the repository is) is refused, and
so is a link to nothing; any other link is followed to its target, which is the file read
and written, and ``Snapshot.link`` names the link for the message. A link is never silently
replaced by a plain file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from skupper_mcp.errors import ConfigError

_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
#: How many backup names of one second we try before giving up (each taken, or a link)
_BACKUP_TRIES = 100


@dataclass(frozen=True)
class Snapshot:
    """A file as read before a write: where it is, the link that led there, its text (None:
    there is no file, or it was not read), and its identity and mode (None: there is no
    file; a write replaces only the file that was read)."""

    path: Path
    link: Path | None
    text: str | None
    identity: tuple[int, int, int, int] | None = None
    mode: int | None = None


def _identity(status: os.stat_result) -> tuple[int, int, int, int]:
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def target(path: Path, folder: Path | None = None) -> tuple[Path, Path | None]:
    """The file that writing ``path`` changes, and the link (``path`` or its directory) that
    led there, if one did; a ConfigError for a link into ``folder`` or to nothing."""
    path = Path(os.path.abspath(path))
    links = [p for p in (path.parent, path) if p.is_symlink()]
    if not links:
        return path, None
    link = links[-1]
    real = Path(os.path.realpath(path))
    shown = os.readlink(link)
    if folder is not None and _inside(real, Path(os.path.realpath(folder))):
        raise ConfigError(
            f"{link} is a link to {shown} ({real}), inside the current folder {folder}: "
            "not written through (a folder's link could point at any file of it); remove "
            "the link, or write the file it points to yourself",
            path=str(link),
        )
    if not real.parent.is_dir() or (path.is_symlink() and not os.path.lexists(real)):
        raise ConfigError(
            f"{link} is a link to {shown}, which does not exist: no file is created through a "
            "link; remove it, or create its target first",
            path=str(link),
        )
    if real.is_symlink() or (real.exists() and not real.is_file()):
        raise ConfigError(f"{link} leads to {real}, which is not a regular file", path=str(link))
    return real, link


@contextlib.contextmanager
def _directory(path: Path) -> Iterator[int]:
    fd = os.open(path, _DIRECTORY)
    try:
        yield fd
    finally:
        os.close(fd)


def read(path: Path, *, limit: int | None, folder: Path | None = None) -> Snapshot:
    """The file at ``path`` (through a link, as ``target`` allows), bounded by ``limit``
    bytes (None: its text is not read, only what it is); a ConfigError when it cannot be
    read, is not a regular file, or is not UTF-8."""
    real, link = target(path, folder)
    try:
        with _directory(real.parent) as directory:
            fd = os.open(real.name, _READ, dir_fd=directory)
    except FileNotFoundError:
        return Snapshot(real, link, None)
    except OSError as error:
        raise os_refusal("cannot read", real, error) from error
    with os.fdopen(fd, "rb") as handle:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise ConfigError("not a regular file; not touched", path=str(real))
        if limit is None:
            return Snapshot(real, link, None, _identity(status), stat.S_IMODE(status.st_mode))
        raw = handle.read(limit + 1)
    if len(raw) > limit:
        raise ConfigError(f"larger than {limit} bytes; not touched", path=str(real))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ConfigError("not UTF-8 text; not touched", path=str(real)) from error
    return Snapshot(real, link, text, _identity(status), stat.S_IMODE(status.st_mode))


def os_refusal(what: str, path: Path, error: OSError) -> ConfigError:
    """The ConfigError for ``error`` met doing ``what`` to ``path``."""
    reason = error.strerror or str(error)
    if error.errno == errno.ELOOP:  # O_NOFOLLOW met a link where a file was read
        reason = "it is a symbolic link now (it was not when its link was checked)"
    return ConfigError(f"{what}: {reason}", path=str(path))


def create(directory: int, name: str, data: bytes, mode: int) -> None:
    """``name`` made new in ``directory`` with ``mode`` from the start (whatever the
    umask), holding ``data``, on disk before this returns."""
    fd = os.open(name, _NEW, mode & 0o777, dir_fd=directory)
    try:
        os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(name, dir_fd=directory)
        raise
    os.close(fd)


def backup_name(name: str, now: float | None = None, counter: int = 0) -> str:
    """The name of the copy of ``name`` kept before it is replaced: timestamped."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime(now))
    return f"{name}.{stamp}.bak" if not counter else f"{name}.{stamp}-{counter}.bak"


def _backup(directory: int, name: str, data: bytes, mode: int) -> str:
    """A copy of ``data`` beside ``name``, under the first free backup name (a name that is
    taken, by a file or a link, is skipped; never written through)."""
    now = time.time()
    for counter in range(_BACKUP_TRIES):
        candidate = backup_name(name, now, counter)
        try:
            create(directory, candidate, data, mode)
        except FileExistsError:
            continue
        return candidate
    raise ConfigError(
        f"no free name for a backup: {_BACKUP_TRIES} names of this second are taken (by files "
        "or links someone put there); nothing was replaced",
        path=name,
    )


def keep_copy(before: Snapshot) -> Path:
    """A copy of the file ``before`` was read from, beside it, before another program
    (Claude Code's CLI) replaces it; its path."""
    assert before.text is not None and before.mode is not None
    try:
        with _directory(before.path.parent) as directory:
            name = _backup(directory, before.path.name, before.text.encode("utf-8"), before.mode)
            os.fsync(directory)
    except OSError as error:
        raise os_refusal("cannot back up", before.path, error) from error
    return before.path.with_name(name)


def replace(path: Path, text: str, *, new_mode: int, mode: int | None = None) -> Path:
    """``text`` into ``path`` (a file the user named: an export, a page), as ``write`` does,
    without a backup; the file written (a link's target)."""
    before = read(path, limit=None)
    write(before, text, new_mode=new_mode, mode=mode, keep_backup=False, make_parents=False)
    return before.path


def write(
    before: Snapshot,
    text: str,
    *,
    new_mode: int,
    mode: int | None = None,
    keep_backup: bool = True,
    make_parents: bool = True,
) -> Path | None:
    """``text`` into the file ``before`` was read from, as the module says: a new file with
    ``new_mode``; an existing one replaced keeping its mode (``mode``, when given, instead),
    a copy of it kept beside it first (``keep_backup``) and only if it is still the file
    read; the directories above a new file are made (``make_parents``, not through a
    link). The backup's path, if one was made."""
    path = before.path
    data = text.encode("utf-8")
    try:
        if before.link is None and make_parents:
            path.parent.mkdir(parents=True, exist_ok=True)
        with _directory(path.parent) as directory:
            if before.identity is None:
                create(directory, path.name, data, new_mode if mode is None else mode)
                os.fsync(directory)
                return None
            assert before.mode is not None
            kept = before.mode if mode is None else mode
            backup = None
            if keep_backup:
                assert before.text is not None
                old = before.text.encode("utf-8")
                backup = path.with_name(_backup(directory, path.name, old, before.mode))
            temporary = f".{path.name}.{secrets.token_hex(6)}.tmp"
            create(directory, temporary, data, kept)
            try:
                now = os.stat(path.name, dir_fd=directory, follow_symlinks=False)
                if _identity(now) != before.identity or not stat.S_ISREG(now.st_mode):
                    raise ConfigError(
                        "it changed while we wrote it (another program saved it); nothing "
                        "was replaced, run the command again",
                        path=str(path),
                    )
                os.replace(temporary, path.name, src_dir_fd=directory, dst_dir_fd=directory)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary, dir_fd=directory)
                raise
            os.fsync(directory)
            return backup
    except FileExistsError as error:
        raise ConfigError(
            "appeared (or a link was put there) while we wrote it; nothing was replaced, "
            f"run the command again ({error.filename or error})",
            path=str(path),
        ) from error
    except OSError as error:
        raise os_refusal("cannot write", path, error) from error
