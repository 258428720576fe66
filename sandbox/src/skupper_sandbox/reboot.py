"""``skupper-sandbox reboot HOST`` (and ``fault HOST reboot``): what a host's reboot does to
what runs on it (docs/sandbox.md, section 8 and the Hosts rows of the fidelity table).

Every process of the host ends (SIGKILL: its units, containers, conmon monitors, its user
manager and podman's own processes), the runtime directories that are tmpfs on a real host are
emptied (``/run/user/<uid>``, podman's run root and libpod's tmp dir: the alive file podman
reads to know it must refresh its state), the boot id changes, and the login session that
held a non-lingering user's manager up is gone. Then the host boots: the world daemon starts
the user manager again (it supervises it), which comes up only when the user lingers (or on
a root host: the system manager), and then starts what ``default.target`` wants: the units
that were enabled, never one that was only started. The world's model server, a service of
the host's own, is started again.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from skupper_sandbox import hostenv, real_hosts, real_podman, real_users

#: How long the processes of the host get to be gone after SIGKILL.
KILL_WAIT = 10.0
MODEL_START_TIMEOUT = 60.0


class RebootError(RuntimeError):
    """The host's processes did not end, or its model server did not start again."""


def _environ_host(pid: int) -> str | None:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None
    prefix = hostenv.HOST_VAR.encode() + b"="
    for item in raw.split(b"\0"):
        if item.startswith(prefix):
            return item[len(prefix) :].decode(errors="replace")
    return None


def host_processes(info: hostenv.HostInfo) -> list[int]:
    """Every live process of the host: those that carry its ``SKMCP_SANDBOX_HOST`` (units,
    containers, monitors, the user manager, a login's commands) and, on a host with a real
    user, every process of that user (rootless podman's pause process among them). The SSH
    server is no process of the host's user: a real host's sshd comes back at boot."""
    mine = {os.getpid(), os.getppid()}
    found = set()
    host_dir = str(Path(info.host_dir))
    for entry in Path("/proc").iterdir():
        pid = int(entry.name) if entry.name.isdigit() else None
        if pid is not None and pid not in mine and _environ_host(pid) == host_dir:
            found.add(pid)
    if info.real_user:
        account = real_users.lookup(info.user)
        if account is not None:
            found.update(real_users.processes_of(account.uid))
    return sorted(found - mine)


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")


def _kill_containers(info: hostenv.HostInfo) -> None:
    """The emulated containers' processes are forked by the world's command server, whose
    environment they show: each is found through the store, its monitor killed first (or it
    would record the death and apply the restart policy), then its process group. Their
    state is what podman's refresh after a reboot finds: not running."""
    from skupper_sandbox.emulated.podman import containers

    found = containers.list_all(info.home)
    for container in found:
        if container.conmon_pid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(container.conmon_pid, signal.SIGKILL)
    for container in found:
        if container.pid and container.status == "running":
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(container.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(container.pid, signal.SIGKILL)
            container.status, container.pid, container.exit_code = "exited", None, 137
            container.finished_at = containers.now()
        container.conmon_pid = None
        containers.save_state(container)
        _empty(container.private_tmp)


def _kill_all(info: hostenv.HostInfo) -> None:
    if not real_podman.is_real(Path(info.host_dir)):
        _kill_containers(info)
    deadline = time.monotonic() + KILL_WAIT
    while True:
        pids = [p for p in host_processes(info) if _alive(p)]
        if not pids:
            return
        if time.monotonic() > deadline:
            raise RebootError(f"{info.name}: processes {pids[:10]} outlived the reboot")
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def _empty(directory: Path) -> None:
    """Remove what a directory holds, keeping it (a tmpfs mount point comes back empty)."""
    if directory.is_symlink():
        directory = directory.resolve()
    if not directory.is_dir():
        return
    for entry in directory.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                entry.unlink()


def _tmpfs_dirs(info: hostenv.HostInfo) -> list[Path]:
    """What is tmpfs on a real host: the user's runtime dir, the root host's ``/run``, the
    emulated containers' private ``/tmp``s, and a real store's run root and tmp dir."""
    host_dir = Path(info.host_dir)
    dirs = [info.run_dir, info.sysroot / "run"]
    if real_podman.is_real(host_dir):
        store = real_podman.host_store(host_dir)
        dirs += [store.runroot, store.root / "tmp"]
    return dirs


def _start_model(info: hostenv.HostInfo) -> None:
    """The model server is the host's own service (a GPU host starts it at boot)."""
    from skupper_sandbox.layout import MODEL_CONTAINER

    host_dir = Path(info.host_dir)
    env = hostenv.host_env(host_dir)
    if real_podman.is_real(host_dir):
        as_user = real_hosts.run_as(host_dir)
        with contextlib.suppress(real_podman.RealPodmanError):
            real_podman.podman(
                real_podman.host_env(host_dir, env),
                "start",
                MODEL_CONTAINER,
                timeout=MODEL_START_TIMEOUT,
                as_user=as_user,
            )
        return
    bin_dir = Path(info.world_dir) / "bin"
    subprocess.run(
        [str(bin_dir / "podman"), "start", MODEL_CONTAINER],
        env=env,
        cwd=str(info.home),
        capture_output=True,
        timeout=MODEL_START_TIMEOUT,
        check=False,
    )


def reboot(host_dir: Path) -> str:
    """Reboot the host whose directory is ``host_dir``; what came up, in a sentence."""
    info = hostenv.load_host_info(host_dir)
    halted = Path(info.host_dir) / hostenv.HALTED_FILE
    halted.write_text("")
    try:
        (Path(info.host_dir) / hostenv.SESSION_FILE).unlink(missing_ok=True)
        _kill_all(info)
        for directory in _tmpfs_dirs(info):
            _empty(directory)
        hostenv.new_boot_id(info)
    finally:
        halted.unlink(missing_ok=True)
    if info.role == "provider":
        _start_model(info)
    lingers = info.is_root or hostenv.lingering(info)
    manager = "its manager starts its enabled units" if lingers else "no user manager (Linger=no)"
    return f"{info.name}: rebooted (boot id {hostenv.boot_id(info)}); {manager}"
