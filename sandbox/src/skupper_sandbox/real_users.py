"""Real Unix users for a world's hosts: made by ``sandbox up``, removed by ``sandbox down``.

In a world whose podman is real, each non-root SSH host logs in as a Unix user made for
that world (``useradd``), so a host's processes run under their own uid: its home
(``hosts/<name>/home``, owned by the user, 0750), its login shell in ``/etc/passwd`` (the
``shell=NAME`` quirk), ``/etc/subuid`` and ``/etc/subgid`` ranges (useradd gives them, from
``/etc/login.defs``) for rootless podman, and a runtime directory ``/run/user/<uid>``.

Names are ``sk<6 hex of the world id>-<host>``: two worlds never share one, and every user of
a world is found again by that prefix, whatever became of its ``world.json``. Removal kills
every process of the user first (rootless podman leaves a ``catatonit -P`` pause process, and
``userdel`` refuses a user with processes), gives what the user owns under the world back to
root, and runs ``userdel``, which also drops the user's group and subordinate ranges.

A world's users must pass through every directory above their homes and the sandbox's
Python, so ``sandbox up`` gives others the search bit where one lacks it (``/root``, where
pyenv puts Python). Those directories are written to a ledger of this machine
(``/run/skupper-sandbox/opened-for-search``), each with the world that needs it: a world
that finds a directory opened by another holds it too. ``sandbox down`` takes the bit back
from its own world's directories only, and not from one that another live world still
holds.
"""

from __future__ import annotations

import contextlib
import fcntl
import grp
import hashlib
import os
import pwd
import re
import shutil
import signal
import stat
import subprocess
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

USERADD = "/usr/sbin/useradd"
USERDEL = "/usr/sbin/userdel"
RUN_USER = Path("/run/user")
SEARCH_LEDGER = Path("/run/skupper-sandbox/opened-for-search")
#: Where rootless podman keeps its runtime state when ``XDG_RUNTIME_DIR`` is unset and PID 1
#: is not systemd (c/storage ``getRootlessRuntimeDir``, podman ``util.GetRuntimeDir``).
_TMP_RUNTIME_DIRS = ("podman-run-{uid}", "containers-user-{uid}")
NAME_MAX = 32  # useradd's limit on this machine (shadow's LOGIN_NAME_MAX is 256; keep short)
_NAME_RE = re.compile(r"^[a-z_][a-z0-9_-]*$")
KILL_TIMEOUT = 10.0
COMMAND_TIMEOUT = 30.0


class LoginOptions(TypedDict, total=False):
    """``subprocess``/``asyncio`` options that make a child run as a user (none: as this
    process's)."""

    user: int
    group: int
    extra_groups: list[int]


class RealUserError(RuntimeError):
    """A user could not be made or removed; the message carries the tool's own words."""


@dataclass(frozen=True)
class Account:
    """A world's user as ``/etc/passwd`` has it."""

    name: str
    uid: int
    gid: int
    home: Path
    shell: str

    @property
    def groups(self) -> list[int]:
        """The groups a login gives the user (``initgroups``): its own and any it is in."""
        return os.getgrouplist(self.name, self.gid)

    @property
    def runtime_dir(self) -> Path:
        """``/run/user/<uid>``: what a PAM login's ``XDG_RUNTIME_DIR`` names."""
        return RUN_USER / str(self.uid)

    def subprocess_options(self) -> LoginOptions:
        """What makes a child of ``subprocess``/``asyncio`` run as this user, as sshd's
        ``do_setusercontext`` does: supplementary groups, then gid, then uid."""
        return LoginOptions(user=self.uid, group=self.gid, extra_groups=self.groups)


_PREFIX_HEX = 6
#: The start of the names of every world's users, whichever world (``world_prefix``)
_ANY_WORLD_USER_RE = re.compile(rf"^sk[0-9a-f]{{{_PREFIX_HEX}}}-")


def world_prefix(world_id: str) -> str:
    """The start of every user name of a world."""
    return "sk" + hashlib.sha256(world_id.encode()).hexdigest()[:_PREFIX_HEX] + "-"


def user_name(world_id: str, host: str) -> str:
    """The user host ``host`` of world ``world_id`` logs in as."""
    name = (world_prefix(world_id) + host.lower())[:NAME_MAX]
    if not _NAME_RE.match(name):
        raise RealUserError(f"no valid user name for host {host!r}: {name!r}")
    return name


def lookup(name: str) -> Account | None:
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return None
    return Account(entry.pw_name, entry.pw_uid, entry.pw_gid, Path(entry.pw_dir), entry.pw_shell)


def by_uid(uid: int) -> Account | None:
    try:
        return lookup(pwd.getpwuid(uid).pw_name)
    except KeyError:
        return None


def world_accounts(world_id: str) -> list[Account]:
    """Every user of the world that ``/etc/passwd`` still has."""
    prefix = world_prefix(world_id)
    found = (lookup(e.pw_name) for e in pwd.getpwall() if e.pw_name.startswith(prefix))
    return [a for a in found if a is not None]


def _run(argv: list[str]) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT)
    if done.returncode != 0:
        raise RealUserError(
            f"{' '.join(argv[:1] + argv[-1:])} exited {done.returncode}: "
            f"{(done.stderr or done.stdout).strip()[-300:]}"
        )


def create(name: str, home: Path, shell: str) -> Account:
    """Make the user: its own group (``-U``), ``home`` (made by the caller), ``shell``, and a
    password field of ``*`` (no password, and not locked: OpenSSH refuses a locked account,
    ``auth.c`` ``allowed_user``, even for a key)."""
    if lookup(name) is not None:
        raise RealUserError(f"user {name} exists already")
    _run([USERADD, "-M", "-U", "-d", str(home), "-s", shell, "-p", "*", name])
    made = lookup(name)
    if made is None:
        raise RealUserError(f"useradd made no user {name}")
    return made


def give(path: Path, account: Account) -> None:
    """Make ``account`` the owner of ``path`` and everything under it (symlinks themselves)."""
    _chown_tree(path, account.uid, account.gid)


def _chown_tree(path: Path, uid: int, gid: int, only_uid: int | None = None) -> None:
    def chown(target: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            if only_uid is None or os.lstat(target).st_uid == only_uid:
                os.lchown(target, uid, gid)

    if not path.exists():
        return
    chown(str(path))
    for top, dirs, files in os.walk(path):
        for entry in dirs + files:
            chown(os.path.join(top, entry))


def make_runtime_dir(account: Account) -> Path:
    """A real ``/run/user/<uid>``, the user's own, 0700, as pam_systemd makes it; one left
    by an earlier user of that uid is replaced."""
    path = account.runtime_dir
    RUN_USER.mkdir(mode=0o755, parents=True, exist_ok=True)
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(mode=0o700)
    os.chown(path, account.uid, account.gid)
    return path


def processes_of(uid: int) -> list[int]:
    """Every live process whose real or effective uid is ``uid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("State:") and line.split()[1] == "Z":
                break
            if line.startswith("Uid:"):
                real, effective = line.split()[1:3]
                if uid in (int(real), int(effective)):
                    found.append(int(entry.name))
                break
    return found


def kill_all(uid: int, timeout: float = KILL_TIMEOUT) -> list[int]:
    """SIGKILL every process of ``uid`` until none is left; the pids still there after
    ``timeout`` (none, normally)."""
    deadline = time.monotonic() + timeout
    left = processes_of(uid)
    while left and time.monotonic() < deadline:
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)
        left = processes_of(uid)
    return left


def remove(account: Account, world_dir: Path | None = None) -> None:
    """Kill the user's processes, give back to root what it owns under ``world_dir``, remove
    its runtime directories and the user (its group and subordinate ranges go with it)."""
    left = kill_all(account.uid)
    if left:
        raise RealUserError(f"user {account.name}: processes {left} outlived SIGKILL")
    if world_dir is not None:
        _chown_tree(world_dir, 0, 0, only_uid=account.uid)
    shutil.rmtree(account.runtime_dir, ignore_errors=True)
    for pattern in _TMP_RUNTIME_DIRS:
        shutil.rmtree(Path("/tmp") / pattern.format(uid=account.uid), ignore_errors=True)
    _run([USERDEL, account.name])
    with contextlib.suppress(KeyError):  # a group useradd -U made but userdel kept
        grp.getgrnam(account.name)
        subprocess.run(["/usr/sbin/groupdel", account.name], capture_output=True, check=False)


def remove_world(world_id: str, world_dir: Path | None = None) -> list[str]:
    """Remove every user of the world; the names removed."""
    removed = []
    for account in world_accounts(world_id):
        remove(account, world_dir)
        removed.append(account.name)
    return removed


def subordinate_ranges(name: str) -> dict[str, list[str]]:
    """The user's lines of ``/etc/subuid`` and ``/etc/subgid``."""
    found: dict[str, list[str]] = {}
    for table in ("/etc/subuid", "/etc/subgid"):
        try:
            lines = Path(table).read_text().splitlines()
        except FileNotFoundError:
            lines = []
        found[table] = [line for line in lines if line.split(":", 1)[0] == name]
    return found


def _ancestors(path: Path) -> Iterator[Path]:
    path = path.resolve()
    yield from reversed(path.parents)
    yield path


#: One line of the ledger: the world that needs the directory open, a tab, the directory.
#: A line without a tab (written before worlds were recorded) belongs to no live world.
_LEDGER_SEPARATOR = "\t"


@contextlib.contextmanager
def _ledger(path: Path) -> Iterator[list[tuple[str, Path]]]:
    """The (world, directory) entries of the ledger at ``path``, locked while the caller
    changes them; what the caller leaves in the list is written back."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with path.open("a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        held: list[tuple[str, Path]] = []
        for line in handle.read().splitlines():
            world, _, directory = line.rpartition(_LEDGER_SEPARATOR)
            if directory:
                held.append((world, Path(directory)))
        yield held
        handle.seek(0)
        handle.truncate()
        handle.write("".join(f"{w}{_LEDGER_SEPARATOR}{d}\n" for w, d in dict.fromkeys(held)))


def world_is_live(world_id: str) -> bool:
    """Whether a user of the world is still on this machine (its users are made before it
    opens directories and removed before it closes them)."""
    prefix = world_prefix(world_id)
    return any(e.pw_name.startswith(prefix) for e in pwd.getpwall())


def open_for_search(world_id: str, paths: list[Path], ledger: Path = SEARCH_LEDGER) -> list[Path]:
    """Give others the search bit (``o+x``: pass through, not list) on every directory from
    ``/`` down to each of ``paths`` that lacks it, so the world's users reach their homes
    and the sandbox's Python; the directories changed. Each is written to ``ledger`` as the
    world's, and so is each that another world opened before (this world needs it open
    too); a directory open on its own is not the sandbox's and is not written."""
    changed: list[Path] = []
    with _ledger(ledger) as held:
        opened = {directory for _, directory in held}
        for path in paths:
            for directory in _ancestors(path):
                try:
                    mode = directory.stat().st_mode
                except OSError:
                    # missing, or a file system that refuses root (read-only, NFS
                    # root_squash): ``unreachable`` finds it and says why
                    break
                if not stat.S_ISDIR(mode):
                    continue
                if not mode & stat.S_IXOTH:
                    try:
                        directory.chmod(stat.S_IMODE(mode) | stat.S_IXOTH)
                    except OSError:
                        break
                    changed.append(directory)
                elif directory not in opened:
                    continue
                held.append((world_id, directory))
    return changed


def unreachable(account: Account, paths: Iterable[Path]) -> list[str]:
    """Why ``account`` cannot reach each of ``paths`` that it cannot (enter a directory,
    read a file), one sentence each; asked of the kernel as the user (``test -x``/``-r``
    in a shell of its ids, in ``/``), so ACLs and mounts count as they will."""
    wanted = [str(p) for p in dict.fromkeys(paths)]
    script = (
        'for p; do if [ -d "$p" ]; then [ -x "$p" ] || echo "$p"; '
        'else [ -r "$p" ] || echo "$p"; fi; done'
    )
    done = subprocess.run(
        ["/bin/sh", "-c", script, "sh", *wanted],
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
        cwd="/",
        **account.subprocess_options(),
    )
    if done.returncode != 0:
        raise RealUserError(f"user {account.name} could not check its paths: {done.stderr}")
    return [f"{line}: {why_unreachable(Path(line))}" for line in done.stdout.splitlines()]


def _mode(path: Path) -> str:
    found = path.stat()
    try:
        owner = pwd.getpwuid(found.st_uid).pw_name
    except KeyError:
        owner = f"uid {found.st_uid}"
    return f"mode {stat.S_IMODE(found.st_mode):04o}, owner {owner}"


def why_unreachable(path: Path) -> str:
    """What keeps others from ``path``, as its modes say (on its way, then on the way to
    what it links to)."""
    ways = [*reversed(path.parents), *reversed(path.resolve().parents)]
    for directory in dict.fromkeys(ways):
        try:
            mode = directory.stat().st_mode
        except OSError as exc:
            return f"{directory}: {exc.strerror}"
        if not mode & stat.S_IXOTH:
            return (
                f"others cannot pass {directory} ({_mode(directory)}) and it could not be "
                "given the search bit"
            )
    if not path.exists():
        return "it does not exist"
    if path.is_dir():
        return f"others cannot enter it ({_mode(path)})"
    return f"others cannot read it ({_mode(path)}): chmod o+r, or give a copy others can read"


def close_for_search(world_id: str, ledger: Path = SEARCH_LEDGER) -> list[Path]:
    """Take back the search bit from the directories the ledger holds as the world's, but
    not from one that another live world (``world_is_live``) holds too: its users still
    pass through it; the directories closed. Another world's directories are never closed
    here, live or not."""
    closed: list[Path] = []
    if not ledger.exists():
        return closed
    # under the lock: a world that makes its users first and then opens finds the bit
    # either still set (and holds it) or taken back and sets it again
    with _ledger(ledger) as held:
        own = [directory for world, directory in held if world == world_id]
        held[:] = [(world, directory) for world, directory in held if world != world_id]
        live = {world for world, _ in held if world and world_is_live(world)}
        for directory in dict.fromkeys(own):
            if any(d == directory and world in live for world, d in held):
                continue
            # whoever else held it is gone: the entries of the dead go with the bit
            held[:] = [(world, d) for world, d in held if d != directory]
            with contextlib.suppress(FileNotFoundError):
                mode = directory.stat().st_mode
                if stat.S_ISDIR(mode) and mode & stat.S_IXOTH:
                    directory.chmod(stat.S_IMODE(mode) & ~stat.S_IXOTH)
                    closed.append(directory)
    return closed


def drop_privileges(uid: int, gid: int) -> None:
    """In a forked child: become ``uid`` as a login does (``initgroups``, ``setgid``,
    ``setuid``), the groups from ``/etc/group`` when the uid has a name."""
    account = by_uid(uid)
    os.setgroups(account.groups if account else [gid])
    os.setgid(gid)
    os.setuid(uid)
