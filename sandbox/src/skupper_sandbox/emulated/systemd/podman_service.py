"""``podman.socket`` on a real-podman host: the socket served by this machine's podman.

systemd's ``podman.socket`` listens on the API socket and hands it to ``podman.service``
(``podman system service``), which takes it from ``LISTEN_FDS`` (socket activation). The
manager does the same when the unit starts: it binds the socket (so it exists the moment
the unit is active; ``SocketMode=0660``) and starts ``podman system service --time=0`` on
it, with the host's podman configuration (``CONTAINERS_CONF``, ``CONTAINERS_STORAGE_CONF``:
the host's own store) and the host's identity in its environment (``sandbox down`` finds
it by the world's id). Adapted: the service runs for as long as the socket unit is active
(started again when it ends), rather than being activated by a connection and exiting when
idle. An emulated host's ``podman.socket`` stays the manager's answer only, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from skupper_sandbox import hostenv, real_podman
from skupper_sandbox.emulated import podman_api
from skupper_sandbox.emulated.systemd.bus import bind_unix

#: The PATH podman's own helpers (runc, conmon, iptables) are found on: not the world's,
#: whose ``podman`` and ``conmon`` are the emulation's.
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
STOP_SECONDS = 10.0
LISTEN_FD = 3
#: podman.socket's ``SocketMode=0660``.
SOCKET_MODE = 0o660
#: How soon a service that ended is started again (a crash loop must not spin).
RESTART_SECONDS = 1.0


@dataclass
class Service:
    """A running ``podman system service``, the socket it serves, and the task that starts
    it again when it ends while the socket listens."""

    info: hostenv.HostInfo
    path: Path
    listener: socket.socket
    journal: Callable[[], IO[bytes]]
    process: asyncio.subprocess.Process | None = None
    watcher: asyncio.Task[None] | None = None
    stopping: bool = False


def serves_real_podman(info: hostenv.HostInfo) -> bool:
    return real_podman.is_real(Path(info.host_dir))


def service_env(info: hostenv.HostInfo) -> dict[str, str]:
    env = hostenv.host_env(info.host_dir)
    env["PATH"] = SYSTEM_PATH
    env.update(real_podman.host_store(Path(info.host_dir)).env_vars())
    return env


async def _spawn(service: Service) -> asyncio.subprocess.Process:
    fd = service.listener.fileno()
    # the shell gives podman the socket as fd 3 and its own pid as LISTEN_PID, as systemd
    # does; bash, since dash takes no descriptor above 9 ("Bad fd number")
    program = (
        f"exec {LISTEN_FD}<&{fd} {fd}<&-; LISTEN_PID=$$ LISTEN_FDS=1 exec "
        f"{real_podman.PODMAN} system service --time=0"
    )
    journal = service.journal()
    try:
        return await asyncio.create_subprocess_exec(
            "/bin/bash",
            "-c",
            program,
            env=service_env(service.info),
            cwd="/",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=journal,
            stderr=asyncio.subprocess.STDOUT,
            pass_fds=(fd,),
            start_new_session=True,
        )
    finally:
        journal.close()


async def _serve(service: Service) -> None:
    """Start podman's service again whenever it ends while the socket listens, as systemd
    activates ``podman.service`` on the next connection (its unit has no start limit)."""
    while not service.stopping:
        if service.process is not None:
            code = await service.process.wait()
            if service.stopping:
                return
            with service.journal() as journal:
                journal.write(f"podman system service exited {code}; started again\n".encode())
            await asyncio.sleep(RESTART_SECONDS)
        service.process = await _spawn(service)


async def start(info: hostenv.HostInfo, journal: Callable[[], IO[bytes]]) -> Service:
    """Bind the host's API socket and start podman's service on it (OSError when it cannot)."""
    path = podman_api.socket_path(info)
    path.parent.mkdir(parents=True, exist_ok=True)
    listener = bind_unix(path)
    path.chmod(SOCKET_MODE)
    service = Service(info, path, listener, journal)
    try:
        service.process = await _spawn(service)
    except OSError:
        listener.close()
        path.unlink(missing_ok=True)
        raise
    service.watcher = asyncio.get_running_loop().create_task(_serve(service))
    return service


async def stop(service: Service) -> None:
    """SIGTERM the service, SIGKILL it after STOP_SECONDS; the socket goes with the unit."""
    service.stopping = True
    if service.watcher is not None:
        service.watcher.cancel()
    process = service.process
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if process is None:
            break
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        try:
            await asyncio.wait_for(process.wait(), STOP_SECONDS)
            break
        except TimeoutError:
            continue
    service.listener.close()
    service.path.unlink(missing_ok=True)
