"""Our folders and files under ``STATE_DIR``, which nobody else can redirect.

Backups hold the site CA's private key and the lock file is truncated on every operation,
so a link planted where we write would hand the key to its maker or empty the link's
target. Every folder of ours (``STATE_DIR`` included) is therefore a real directory owned by
us and writable by nobody else, made 0700; each is opened relative to the one checked
before it, without following a link, so nothing can be swapped between the check and the
use. Files are opened with ``O_NOFOLLOW``, new backups also with ``O_EXCL``, and modes are
set on the open descriptor.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from ...errors import LocalStateError

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC
_WRITABLE_BY_OTHERS = stat.S_IWGRP | stat.S_IWOTH


@contextmanager
def private_dir(root: Path, *parts: str) -> Iterator[int]:
    """A descriptor on the folder ``root/parts...``, each folder on the way made when missing
    and checked. Raises ``LocalStateError`` for one that is a link, not a directory, not
    ours or writable by others."""
    fd = _walk(root, parts, create=True)
    if fd is None:
        raise LocalStateError(str(root.joinpath(*parts)), "vanished while it was being made")
    try:
        yield fd
    finally:
        os.close(fd)


def check_state_dir(root: Path) -> None:
    """Refuse, before anything starts, a ``STATE_DIR`` that is there and is not a private
    directory of ours (``LocalStateError``, the message every transport and the CLI show).
    A missing one is fine: it is made on first use."""
    with existing_private_dir(root):
        pass


@contextmanager
def existing_private_dir(root: Path, *parts: str) -> Iterator[int | None]:
    """As ``private_dir``, but nothing is made: None when a folder on the way is missing."""
    fd = _walk(root, parts, create=False)
    try:
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def _walk(root: Path, parts: tuple[str, ...], create: bool) -> int | None:
    for part in parts:
        _check_name(root, part)
    fd = _open_root(root, create)
    where = root
    for part in parts:
        if fd is None:
            break
        where = where / part
        parent = fd
        try:
            fd = _open_child(parent, part, where, create)
        finally:
            os.close(parent)
    return fd


def open_private_file(dir_fd: int, folder: Path, name: str, flags: int) -> int:
    """Open ``name`` in the checked ``folder`` (``dir_fd``) without following a link; one
    that is a link, not a regular file or not ours is refused, one of ours made 0600."""
    _check_name(folder, name)
    try:
        fd = os.open(name, flags | _FILE_FLAGS, PRIVATE_FILE, dir_fd=dir_fd)
    except OSError as exc:
        raise LocalStateError(str(folder / name), _why_refused(exc, "file")) from exc
    return _made_private(fd, folder / name)


def create_private_file(dir_fd: int, folder: Path, name: str, data: bytes) -> bool:
    """Write ``data`` to a new 0600 file ``name`` in the checked ``folder``; False, with
    nothing written, when the name is taken by anything (a link included)."""
    _check_name(folder, name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _FILE_FLAGS
    try:
        fd = os.open(name, flags, PRIVATE_FILE, dir_fd=dir_fd)
    except FileExistsError:
        return False
    except OSError as exc:
        raise LocalStateError(str(folder / name), _why_refused(exc, "file")) from exc
    with os.fdopen(_made_private(fd, folder / name), "wb") as out:
        out.write(data)
    return True


def regular_files(dir_fd: int) -> list[str]:
    """The names of the regular files in a checked folder (links and folders left out)."""
    names = []
    for name in os.listdir(dir_fd):
        try:
            info = os.lstat(name, dir_fd=dir_fd)
        except FileNotFoundError:
            continue
        if stat.S_ISREG(info.st_mode):
            names.append(name)
    return names


def _open_root(root: Path, create: bool) -> int | None:
    if create:
        try:
            root.parent.mkdir(parents=True, exist_ok=True)
            os.mkdir(root, PRIVATE_DIR)
        except FileExistsError:
            pass
        except OSError as exc:
            raise LocalStateError(str(root), f"cannot make the state folder: {exc}") from exc
    try:
        found = os.lstat(root)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LocalStateError(str(root), f"cannot read the state folder: {exc}") from exc
    return _open_checked(found, lambda: os.open(root, _DIR_FLAGS), root)


def _open_child(parent_fd: int, name: str, where: Path, create: bool) -> int | None:
    try:
        if create:
            with suppress(FileExistsError):
                os.mkdir(name, PRIVATE_DIR, dir_fd=parent_fd)
        found = os.lstat(name, dir_fd=parent_fd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LocalStateError(str(where), f"cannot make or read the folder: {exc}") from exc
    return _open_checked(found, lambda: os.open(name, _DIR_FLAGS, dir_fd=parent_fd), where)


def _open_checked(found: os.stat_result, opener: Callable[[], int], where: Path) -> int:
    """Open the folder ``found`` (its lstat) names, refuse it unless it is ours and private,
    and make a 0755 one 0700 through the descriptor."""
    _check_folder(where, found)
    try:
        fd = opener()
    except OSError as exc:
        raise LocalStateError(str(where), _why_refused(exc, "folder")) from exc
    try:
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (found.st_dev, found.st_ino):
            raise LocalStateError(str(where), "changed while it was being opened; try again")
        _check_folder(where, opened)
        if stat.S_IMODE(opened.st_mode) != PRIVATE_DIR:
            os.fchmod(fd, PRIVATE_DIR)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_folder(where: Path, info: os.stat_result) -> None:
    if stat.S_ISLNK(info.st_mode):
        raise LocalStateError(
            str(where),
            "is a symbolic link; our state folders must be real directories, so nobody can "
            "redirect where backups (which hold the site CA key) and the lock are written. "
            "Remove the link, or set STATE_DIR to a private directory of your own",
        )
    if not stat.S_ISDIR(info.st_mode):
        raise LocalStateError(
            str(where), "is not a directory; move it away, or set STATE_DIR elsewhere"
        )
    _check_owned(where, info, "folder")
    if info.st_mode & _WRITABLE_BY_OTHERS:
        raise LocalStateError(
            str(where),
            f"is writable by other users (mode {stat.S_IMODE(info.st_mode):04o}), who could "
            "plant links in it. Make it private (chmod 700, after checking what is in it), "
            "or set STATE_DIR to a private directory of your own",
        )


def _made_private(fd: int, where: Path) -> int:
    try:
        info = os.fstat(fd)
        _check_owned(where, info, "file")
        if not stat.S_ISREG(info.st_mode):
            raise LocalStateError(
                str(where), "is not a regular file; move it away, or set STATE_DIR elsewhere"
            )
        os.fchmod(fd, PRIVATE_FILE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_owned(where: Path, info: os.stat_result, what: str) -> None:
    uid = os.geteuid()
    if info.st_uid != uid:
        raise LocalStateError(
            str(where),
            f"this {what} belongs to uid {info.st_uid}, not to you (uid {uid}); our state "
            "must be our own. Set STATE_DIR to a private directory of your own, or move it away",
        )


def _why_refused(exc: OSError, what: str) -> str:
    if exc.errno == errno.ELOOP:
        return (
            "is a symbolic link, which we never follow nor write through (it may have been "
            "planted to redirect our state). Remove it, or set STATE_DIR to a private "
            "directory of your own"
        )
    if exc.errno == errno.ENOTDIR:
        return f"is not a {what}; move it away, or set STATE_DIR elsewhere"
    return f"cannot open the {what}: {exc}"


def _check_name(where: Path, name: str) -> None:
    """A folder or file name of ours is one path component: nothing that climbs or nests."""
    if not name or name in (".", "..") or "/" in name or "\0" in name:
        raise LocalStateError(
            str(where / name),
            "is not a plain name: a host, namespace or file name of our "
            "state must be one folder name, without '/' or '..'",
        )
