"""Real SSH servers on loopback addresses, for tests: the sandbox's own, on one host.

- ``asyncssh_server``: the sandbox's asyncssh server (``skupper_sandbox.ssh``) for a
  one-host world made in the test's directory; a command runs as a login on a sandbox
  host runs it (``sh -c`` in the host's environment and home, as the test process's
  user). ``kill`` and ``start`` take the host down and bring it back.
- ``asyncssh_server_apart``: the same server on an event loop of its own, in a thread: it
  answers while the test's loop is held, as a host's sshd answers whatever its client does.
- ``openssh_server``: OpenSSH ``sshd -D`` with the sandbox's sshd_config and launcher, the
  command run by the user's login shell or a shell the test names (skipped by the caller
  when sshd is not installed: see ``openssh_available``).
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
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import asyncssh

from hostkit import write_host
from polling import eventually
from skupper_mcp.connectors.base import SSHOptions, SSHTarget
from skupper_sandbox import ssh as sandbox_ssh
from skupper_sandbox.layout import WorldLayout
from skupper_sandbox.netprobe import port_open_async

SSHD = sandbox_ssh.SSHD
#: The one host of a test server's world.
HOST = "ssh-host"


@dataclass
class SSHKeys:
    """A host key and an authorized client key, on disk."""

    host_key: Path
    client_key: Path
    authorized_keys: Path


def make_keys(directory: Path) -> SSHKeys:
    """Generate an ed25519 host key and client key under ``directory``."""
    return _write_keys(directory / "host_key", directory / "client_key")


def _write_keys(host_key: Path, client_key: Path, authorized: Path | None = None) -> SSHKeys:
    """A new host key and client key at these paths; the client key is authorized in
    ``authorized`` (else ``authorized_keys`` beside it)."""
    for path in (host_key, client_key):
        key = asyncssh.generate_private_key("ssh-ed25519")
        path.parent.mkdir(parents=True, exist_ok=True)
        key.write_private_key(str(path))
        key.write_public_key(f"{path}.pub")
        path.chmod(0o600)
    authorized = authorized or client_key.parent / "authorized_keys"
    authorized.write_text(Path(f"{client_key}.pub").read_text())
    return SSHKeys(host_key, client_key, authorized)


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


def _one_host_world(directory: Path, address: str, tools: Path | None = None) -> WorldLayout:
    """A world of one host, ``HOST`` on ``address``, in ``directory``: its host.json and
    home, its host key and the authorized client key where the sandbox's servers read
    them, and an empty known_hosts. ``tools``: the directory the host's commands find
    first on their PATH (the world's ``bin``), for fake tools."""
    layout = WorldLayout(directory)
    if tools is not None:
        layout.root.mkdir(parents=True, exist_ok=True)
        layout.bin_dir.symlink_to(tools.resolve(), target_is_directory=True)
    write_host(layout.root, HOST, address, user=getpass.getuser(), uid=os.getuid())
    _write_keys(layout.host_key(HOST), layout.client_key, layout.authorized_keys)
    layout.known_hosts.write_text("")
    return layout


def _keys(layout: WorldLayout) -> SSHKeys:
    return SSHKeys(layout.host_key(HOST), layout.client_key, layout.authorized_keys)


@asynccontextmanager
async def asyncssh_server(
    directory: Path,
    address: str,
    port: int = 0,
    *,
    known: bool = True,
    tools: Path | None = None,
    forwarding: bool = False,
) -> AsyncIterator[AsyncSSHServer]:
    """Run the sandbox's asyncssh server on ``address:port`` (0: any free port).

    ``known`` writes the host key into the known_hosts file (else the file is empty).
    ``tools``: a directory of (fake) commands the host's commands find first on their PATH.
    ``forwarding``: the server opens the TCP connections clients ask for (a ProxyJump host).
    """
    layout = _one_host_world(directory, address, tools)
    server = AsyncSSHServer(
        address=address,
        port=port,
        keys=_keys(layout),
        known_hosts=layout.known_hosts,
        user="tester",
        layout=layout,
        forwarding=forwarding,
    )
    await server.start()
    if known:
        layout.known_hosts.write_text(known_hosts_line(server.keys.host_key, address, server.port))
    try:
        yield server
    finally:
        await server.kill()


@asynccontextmanager
async def asyncssh_server_apart(directory: Path, address: str) -> AsyncIterator[AsyncSSHServer]:
    """``asyncssh_server`` on an event loop of its own, in a thread, stopped with it: a test
    may hold its own loop (a long parse) while this host still answers at once."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="ssh-host", daemon=True)
    thread.start()
    serving = asyncssh_server(directory, address)
    try:
        server = await asyncio.wrap_future(
            asyncio.run_coroutine_threadsafe(serving.__aenter__(), loop)
        )
        try:
            yield server
        finally:
            await asyncio.wrap_future(
                asyncio.run_coroutine_threadsafe(serving.__aexit__(None, None, None), loop)
            )
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()


@dataclass
class AsyncSSHServer(SSHServer):
    """The sandbox's asyncssh server; ``kill`` and ``start`` simulate a host going down."""

    layout: WorldLayout | None = None
    forwarding: bool = False
    forwarded: int = 0
    """How many TCP connections the server opened for clients (as a jump host)."""
    _acceptor: asyncssh.SSHAcceptor | None = None

    async def start(self) -> None:
        """Listen (again, on the same port once one was chosen)."""
        kit = self

        class _Watched(asyncssh.SSHServer):
            def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
                kit._accepted += 1
                kit._connections.append(conn)

            def connection_requested(
                self, dest_host: str, dest_port: int, orig_host: str, orig_port: int
            ) -> bool:
                if kit.forwarding:
                    kit.forwarded += 1
                return kit.forwarding

        assert self.layout is not None
        self._acceptor = await sandbox_ssh.start_asyncssh_server(
            self.layout, HOST, self.address, self.port, server_factory=_Watched
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
    """Run OpenSSH ``sshd -D -e`` on ``address:port`` as the current user (root in CI), with
    the sandbox's sshd_config and launcher.

    Its command runs under the user's login shell, not the sandbox's login shim, or under
    ``shell`` when given (as a host whose user's shell is dash would).
    """
    layout = _one_host_world(directory, address)
    port = port or free_port(address)
    config = sandbox_ssh.write_sshd_config(layout, HOST, address, port)
    kept = [line for line in config.read_text().splitlines() if not line.startswith("Force")]
    if shell:
        kept.append(f'ForceCommand exec {shell} -c "$SSH_ORIGINAL_COMMAND"')
    config.write_text("\n".join(kept) + "\n")
    if known:
        layout.known_hosts.write_text(known_hosts_line(layout.host_key(HOST), address, port))
    log = directory / "sshd.log"
    sandbox_ssh.ensure_privsep_dir()
    with log.open("ab") as out:
        proc = await asyncio.create_subprocess_exec(
            str(SSHD),
            "-D",
            "-e",
            "-f",
            str(config),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    async def listening() -> bool:
        if proc.returncode is not None:
            raise RuntimeError(f"sshd exited with {proc.returncode}; see {log}")
        return await port_open_async(address, port)

    try:
        what = f"sshd to listen on {address}:{port}"
        await eventually(listening, timeout=30, every=0.01, what=what)
        yield SSHServer(
            address=address,
            port=port,
            keys=_keys(layout),
            known_hosts=layout.known_hosts,
            user=getpass.getuser(),
            _log=log,
        )
    finally:
        _kill_tree(proc.pid)
        await proc.wait()


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
async def blackhole_server(
    address: str, port: int = 0, *, accepted: list[str] | None = None
) -> AsyncIterator[tuple[str, int]]:
    """Accept TCP connections on ``address:port`` and never answer; yields (address, port).
    ``accepted``: a list that gets ``accept ADDRESS`` for each connection, as it comes."""
    held: list[asyncio.StreamWriter] = []

    async def hold(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if accepted is not None:
            accepted.append(f"accept {address}")
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
