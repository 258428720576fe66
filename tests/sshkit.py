"""Real SSH servers on loopback addresses, for tests.

- ``asyncssh_server``: asyncssh's built-in server; every command runs locally with
  ``sh -c`` (as the test process's user), stdin/stdout/stderr piped, exit status passed
  through. Closing the channel (or losing the connection) kills the command's process
  group, as a session ending does to a remote command.
- ``openssh_server``: OpenSSH ``sshd -D`` with a minimal config (skipped by the caller when
  sshd is not installed: see ``openssh_available``).
- ``blackhole_server``: accepts TCP and never says a word (an SSH connect must time out).

Each yields an ``SSHServer`` whose ``target`` and ``options`` (known_hosts written, client key)
connect to it with ``SSHConnector``. Everything started is stopped when the context exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import os
import signal
import socket
import subprocess
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import asyncssh

from skupper_mcp.connectors.base import SSHOptions, SSHTarget
from skupper_sandbox.netprobe import port_open_async

SSHD = Path("/usr/sbin/sshd")


@dataclass
class SSHKeys:
    """A host key and an authorized client key, on disk."""

    host_key: Path
    client_key: Path
    authorized_keys: Path


def make_keys(directory: Path) -> SSHKeys:
    """Generate an ed25519 host key and client key under ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name in ("host_key", "client_key"):
        key = asyncssh.generate_private_key("ssh-ed25519")
        path = directory / name
        key.write_private_key(str(path))
        key.write_public_key(str(path) + ".pub")
        path.chmod(0o600)
        paths[name] = path
    authorized = directory / "authorized_keys"
    authorized.write_text(Path(str(paths["client_key"]) + ".pub").read_text())
    return SSHKeys(paths["host_key"], paths["client_key"], authorized)


def known_hosts_line(host_key: Path, address: str, port: int) -> str:
    """The known_hosts line that trusts ``host_key`` for ``address:port``."""
    public = asyncssh.read_private_key(str(host_key)).export_public_key("openssh").decode()
    algorithm, blob = public.split()[:2]
    name = address if port == 22 else f"[{address}]:{port}"
    return f"{name} {algorithm} {blob}\n"


@dataclass
class SSHServer:
    """A running SSH server and how to reach it."""

    address: str
    port: int
    keys: SSHKeys
    known_hosts: Path
    user: str
    connect_timeout: float = 5.0
    _connections: list[asyncssh.SSHServerConnection] = field(default_factory=list)
    _accepted: int = 0
    _log: Path | None = None

    @property
    def target(self) -> SSHTarget:
        """Where to connect."""
        return SSHTarget(host=self.address, port=self.port, user=self.user)

    @property
    def options(self) -> SSHOptions:
        """Options that trust this server's host key and use the authorized client key."""
        return SSHOptions(
            identity_files=(self.keys.client_key,),
            known_hosts=self.known_hosts,
            connect_timeout=self.connect_timeout,
        )

    @property
    def connections_accepted(self) -> int:
        """How many SSH logins the server has accepted so far."""
        if self._log is not None:
            return self._log.read_text().count("Accepted publickey")
        return self._accepted


async def _run_command(process: asyncssh.SSHServerProcess[bytes]) -> None:
    """Run the requested command with ``sh -c``; kill it when the channel goes away."""
    command = process.command or "exec /bin/sh"
    child = await asyncio.create_subprocess_exec(
        "sh",
        "-c",
        command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    await process.redirect(stdin=child.stdin)
    assert child.stdout is not None and child.stderr is not None
    finished = asyncio.gather(
        _pump(child.stdout, process.stdout),
        _pump(child.stderr, process.stderr),
        child.wait(),
    )
    closed = asyncio.ensure_future(process.channel.wait_closed())
    try:
        await asyncio.wait({finished, closed}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        closed.cancel()
        if child.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            # a pump that died on the closed channel leaves its pipe paused at a full
            # buffer, and asyncio's wait also waits for the pipes: read what is left
            await asyncio.gather(_drain(child.stdout), _drain(child.stderr))
            await child.wait()
        with contextlib.suppress(Exception):
            await finished
    if child.returncode is not None and not process.channel.is_closing():
        process.exit(child.returncode if child.returncode >= 0 else 128 - child.returncode)
    # Awaiting the close also runs asyncssh's cleanup tasks (else they are never awaited).
    with contextlib.suppress(Exception):
        async with asyncio.timeout(2):
            await process.wait_closed()


async def _drain(source: asyncio.StreamReader) -> None:
    while await source.read(65536):
        pass


async def _pump(source: asyncio.StreamReader, sink: asyncssh.SSHWriter[bytes]) -> None:
    while chunk := await source.read(65536):
        sink.write(chunk)


@asynccontextmanager
async def asyncssh_server(
    directory: Path, address: str, port: int = 0, *, known: bool = True
) -> AsyncIterator[AsyncSSHServer]:
    """Run asyncssh's server on ``address:port`` (0: any free port).

    ``known`` writes the host key into the known_hosts file (else the file is empty).
    """
    keys = make_keys(directory / "keys")
    server = AsyncSSHServer(
        address=address,
        port=port,
        keys=keys,
        known_hosts=directory / "known_hosts",
        user="tester",
    )
    await server.start()
    server.known_hosts.write_text(
        known_hosts_line(keys.host_key, address, server.port) if known else ""
    )
    try:
        yield server
    finally:
        await server.kill()


@dataclass
class AsyncSSHServer(SSHServer):
    """asyncssh's built-in server; ``kill`` and ``start`` simulate a host going down."""

    _acceptor: asyncssh.SSHAcceptor | None = None

    async def start(self) -> None:
        """Listen (again, on the same port once one was chosen)."""
        kit = self

        class _Server(asyncssh.SSHServer):
            def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
                kit._accepted += 1
                kit._connections.append(conn)

        self._acceptor = await asyncssh.create_server(
            _Server,
            self.address,
            self.port,
            server_host_keys=[str(self.keys.host_key)],
            authorized_client_keys=str(self.keys.authorized_keys),
            process_factory=_run_command,
            encoding=None,
            reuse_address=True,
        )
        self.port = self._acceptor.sockets[0].getsockname()[1]

    async def kill(self) -> None:
        """Stop listening and drop every open connection, as a crashed host would."""
        if self._acceptor is not None:
            self._acceptor.close()
            await self._acceptor.wait_closed()
            self._acceptor = None
        for conn in self._connections:
            conn.abort()
        self._connections.clear()


def openssh_available() -> bool:
    """Whether OpenSSH's sshd is installed (tests that need it skip otherwise)."""
    return SSHD.is_file() and os.access(SSHD, os.X_OK)


def free_port(address: str) -> int:
    """A TCP port free on ``address`` right now."""
    with socket.socket() as probe:
        probe.bind((address, 0))
        return int(probe.getsockname()[1])


@asynccontextmanager
async def openssh_server(
    directory: Path, address: str, port: int = 0, *, known: bool = True, shell: str | None = None
) -> AsyncIterator[SSHServer]:
    """Run OpenSSH ``sshd -D -e`` on ``address:port`` as the current user (root in CI).

    ``shell`` runs every command under that shell instead of the user's login shell (as
    a host whose user's shell is dash would).
    """
    keys = make_keys(directory / "keys")
    port = port or free_port(address)
    config = _write_sshd_config(directory, address, port, keys, shell)
    known_hosts = directory / "known_hosts"
    known_hosts.write_text(known_hosts_line(keys.host_key, address, port) if known else "")
    log = directory / "sshd.log"
    with log.open("w") as log_file:
        proc = await asyncio.create_subprocess_exec(
            str(SSHD),
            "-D",
            "-e",
            "-f",
            str(config),
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        await _wait_listening(address, port, proc, log)
        yield SSHServer(
            address=address,
            port=port,
            keys=keys,
            known_hosts=known_hosts,
            user=getpass.getuser(),
            _log=log,
        )
    finally:
        _kill_tree(proc.pid)
        await proc.wait()


def _write_sshd_config(
    directory: Path, address: str, port: int, keys: SSHKeys, shell: str | None
) -> Path:
    config = directory / "sshd_config"
    force = f'ForceCommand exec {shell} -c "$SSH_ORIGINAL_COMMAND"\n' if shell else ""
    config.write_text(
        force + f"ListenAddress {address}:{port}\n"
        f"HostKey {keys.host_key}\n"
        "PidFile none\n"
        f"AuthorizedKeysFile {keys.authorized_keys}\n"
        "StrictModes no\n"
        "PasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\n"
    )
    # sshd refuses to start without its privilege-separation directory.
    Path("/run/sshd").mkdir(mode=0o755, parents=True, exist_ok=True)
    return config


async def _wait_listening(
    address: str, port: int, proc: asyncio.subprocess.Process, log: Path
) -> None:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if proc.returncode is not None:
            raise RuntimeError(f"sshd exited with {proc.returncode}; see {log}")
        if await port_open_async(address, port):
            return
        await asyncio.sleep(0.01)
    raise TimeoutError(f"sshd did not listen on {address}:{port} within 5s")


def _kill_tree(pid: int) -> None:
    """SIGKILL ``pid`` and its descendants (sshd puts each session in its own session)."""
    for child in _children(pid):
        _kill_tree(child)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # The command name may contain spaces; fields after the last ")" are fixed.
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


@asynccontextmanager
async def blackhole_server(address: str, port: int = 0) -> AsyncIterator[tuple[str, int]]:
    """Accept TCP connections on ``address:port`` and never answer; yields (address, port)."""
    held: list[asyncio.StreamWriter] = []

    async def hold(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    server = await asyncio.start_server(hold, address, port)
    try:
        yield address, server.sockets[0].getsockname()[1]
    finally:
        server.close()
        for writer in held:
            writer.close()
        await server.wait_closed()


class SilenceableLink:
    """A TCP relay in front of a server that can go silent: while ``silent``, bytes in
    either direction are held, never delivered, and nothing is closed, which is what a
    client sees of a host that was powered off or lost its network mid-connection."""

    def __init__(self, address: str, upstream: tuple[str, int]) -> None:
        self.address = address
        self.port = 0
        self._upstream = upstream
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def go_silent(self) -> None:
        self._flowing.clear()

    def resume(self) -> None:
        self._flowing.set()

    async def _relay(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, asyncio.CancelledError):
            while chunk := await source.read(65536):
                await self._flowing.wait()
                sink.write(chunk)
                await sink.drain()
        sink.close()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self._upstream)
        for source, sink in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.create_task(self._relay(source, sink))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def __aenter__(self) -> SilenceableLink:
        self._server = await asyncio.start_server(self._accept, self.address, 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()
