"""The world's command server: runs the emulated tools for the hosts' command clients.

A real ``skupper`` or ``podman`` is a Go binary that starts in a few milliseconds; a fresh
Python process that imports the emulation costs 40-140 ms of CPU. So each world runs one
server that has the emulation imported, and each host's ``bin/<tool>`` is a small C client
(``client.c``). For every command the server forks a child that takes the client's standard
streams, environment, working directory and arguments and runs the tool's ``main``; the
client then stands for the command (exit status, signal, death), so the product, its
timeouts and its kill-on-cancel path cannot tell it from a real process.

The child runs as the client's user: the kernel's record of who connected (``SO_PEERCRED``,
the uid and gid of the client when it called ``connect``) names it, and the child takes its
groups, gid and uid (``real_users.drop_privileges``) before it runs anything, so a tool on a
host with a real user writes what that user would and can read only what it may.

Single-threaded on purpose: forking a process that runs other threads is unsafe.
"""

from __future__ import annotations

import array
import contextlib
import gc
import importlib
import os
import selectors
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from skupper_sandbox.become import become
from skupper_sandbox.real_users import drop_privileges

#: The tools a host runs through the server (its ``bin/<tool>``, ``shims.py``), and the
#: module whose ``main`` each one is.
TOOLS: dict[str, str] = {
    "skupper": "skupper_sandbox.emulated.skupper.__main__",
    "podman": "skupper_sandbox.emulated.podman.cli",
    "systemctl": "skupper_sandbox.emulated.systemctl",
    "loginctl": "skupper_sandbox.emulated.loginctl",
    "curl": "skupper_sandbox.emulated.curl",
    "journalctl": "skupper_sandbox.emulated.journalctl",
    # podman's container monitor, which real hosts have as /usr/bin/conmon (a C binary)
    "conmon": "skupper_sandbox.emulated.podman.conmon",
}
MAX_REQUEST = 4 << 20
_HEADER = struct.Struct("<I")
_STATUS = struct.Struct("<ii")
_PEERCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid


def socket_name(world_id: str) -> str:
    """The abstract socket of a world's server (no file, so no path-length limit)."""
    return f"skmcp-commands-{world_id}"


@dataclass
class Running:
    """A command being run for one client."""

    pid: int
    client: socket.socket
    pidfd: int
    tool: str
    started: float


class CommandServer:
    def __init__(self, name: str, stats: Path | None = None) -> None:
        modules = {tool: importlib.import_module(module) for tool, module in TOOLS.items()}
        self.mains: dict[str, Callable[[], int | None]] = {
            tool: module.main for tool, module in modules.items()
        }
        for module in modules.values():  # what every command would otherwise make anew
            getattr(module, "prewarm", lambda: None)()
        # and the image programs a container's monitor (conmon: a child of this server)
        # starts, which a new Python would import at each container start
        images = importlib.import_module("skupper_sandbox.emulated.images")
        for program in images.PROGRAMS:
            importlib.import_module(images.program_module(program))
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind("\0" + name)
        self.listener.listen(128)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ, self._accept)
        self.running: dict[int, Running] = {}
        self.stats = stats

    def serve(self) -> None:
        # Objects made so far stay out of the collector's reach: a child that only reads them
        # then shares the server's pages instead of copying them (fork's copy-on-write).
        gc.freeze()
        while True:
            self.serve_once()

    def serve_once(self, timeout: float | None = None) -> None:
        for key, _ in self.selector.select(timeout):
            # An earlier event of the same batch may have unregistered this one: a command
            # that ended closes its client, whose end of stream is then ready too.
            if self.selector.get_map().get(key.fd) is not key:
                continue
            key.data(key.fileobj)

    def _accept(self, listener: socket.socket) -> None:
        client, _ = listener.accept()
        try:
            client.settimeout(5.0)
            _, uid, gid = _PEERCRED.unpack(
                client.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size)
            )
            fds, request = _receive(client)
        except (OSError, ValueError) as exc:
            print(f"command server: bad request: {exc}", file=sys.stderr, flush=True)
            client.close()
            return
        try:
            tool, cwd, args, env = _parse(request)
            pid = os.fork()
        except (ValueError, OSError) as exc:
            for fd in fds:
                os.close(fd)
            print(f"command server: {exc}", file=sys.stderr, flush=True)
            client.close()
            return
        if pid == 0:
            self._child(tool, cwd, args, env, fds, (uid, gid))
        # as the child does, so that a signal sent right away finds its group (the child may
        # have got there first, or be gone already)
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)
        for fd in fds:
            os.close(fd)
        self.track(pid, client, tool)

    def track(self, pid: int, client: socket.socket, tool: str) -> None:
        """Watch a command's end and its client's signals (or end)."""
        client.setblocking(False)
        pidfd = os.pidfd_open(pid)
        command = Running(pid, client, pidfd, tool, time.monotonic())
        self.running[pid] = command
        self.selector.register(pidfd, selectors.EVENT_READ, lambda _: self._ended(command))
        self.selector.register(client, selectors.EVENT_READ, lambda _: self._from_client(command))

    def _from_client(self, command: Running) -> None:
        """A signal to forward, or the client's end (the command dies with it)."""
        try:
            data = command.client.recv(64)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.selector.unregister(command.client)
            _signal_group(command.pid, signal.SIGKILL)
            return
        for (number,) in struct.iter_unpack("<i", data[: len(data) - len(data) % 4]):
            _signal_group(command.pid, number)

    def _ended(self, command: Running) -> None:
        _, status, usage = os.wait4(command.pid, 0)
        self.selector.unregister(command.pidfd)
        os.close(command.pidfd)
        del self.running[command.pid]
        if os.WIFSIGNALED(status):
            reply = _STATUS.pack(1, os.WTERMSIG(status))
        else:
            reply = _STATUS.pack(0, os.waitstatus_to_exitcode(status))
        try:
            command.client.setblocking(True)
            command.client.sendall(reply)
        except OSError:
            pass  # the client is gone: nobody waits for the status
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(command.client)
        command.client.close()
        if self.stats is not None:
            cpu_ms = (usage.ru_utime + usage.ru_stime) * 1000
            wall_ms = (time.monotonic() - command.started) * 1000
            with self.stats.open("a") as out:
                out.write(f"{command.tool} {cpu_ms:.2f} {wall_ms:.1f}\n")

    def _child(
        self,
        tool: str,
        cwd: str,
        args: list[str],
        env: dict[str, str],
        fds: list[int],
        caller: tuple[int, int],
    ) -> None:
        # its own group: the server ends it, and what it started, at once (the parent may
        # have made it so already)
        with contextlib.suppress(OSError):
            os.setpgid(0, 0)
        try:
            if caller != (os.getuid(), os.getgid()):
                drop_privileges(*caller)
        except BaseException as exc:  # never run a command as anyone but its caller
            with contextlib.suppress(OSError):
                os.write(fds[2], f"command server: cannot become uid {caller[0]}: {exc}\n".encode())
            os._exit(126)
        become(self.mains[tool], [tool, *args], env, cwd, fds, name=tool)


def _receive(client: socket.socket) -> tuple[list[int], bytes]:
    fds = array.array("i")
    data, ancillary, _, _ = client.recvmsg(_HEADER.size, socket.CMSG_SPACE(3 * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    if len(data) != _HEADER.size or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        raise ValueError("no header or not three streams")
    (length,) = _HEADER.unpack(data)
    if length > MAX_REQUEST:
        raise ValueError(f"request of {length} bytes")
    chunks = bytearray()
    while len(chunks) < length:
        chunk = client.recv(length - len(chunks))
        if not chunk:
            raise ValueError("request cut short")
        chunks += chunk
    return list(fds), bytes(chunks)


def _parse(request: bytes) -> tuple[str, str, list[str], dict[str, str]]:
    fields = [f.decode(errors="surrogateescape") for f in request.split(b"\0")[:-1]]
    if len(fields) < 3 or fields[0] not in TOOLS or not fields[2].isdigit():
        raise ValueError(f"not a command request: {fields[:3]!r}")
    tool, cwd, count = fields[0], fields[1], int(fields[2])
    args = fields[3 : 3 + count]
    env = dict(item.partition("=")[::2] for item in fields[3 + count :] if "=" in item)
    return tool, cwd, args, env


def _signal_group(pid: int, number: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, number)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or len(args) > 2:
        print("usage: python -m skupper_sandbox.commands.server NAME [STATS_FILE]", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    server = CommandServer(args[0], Path(args[1]) if len(args) > 1 else None)
    print(f"command server {args[0]} ready", flush=True)
    server.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
