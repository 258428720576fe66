"""The SSH side of the sandbox: keys, known_hosts, and one SSH server per host.

By default each host's server is asyncssh's, in the world daemon's process; with
``--sshd openssh`` each host gets its own ``sshd -D`` whose ``ForceCommand`` is the login
shim (``sandbox/login.py``). Either way a command runs as sshd runs it, through the login
shell of the host's user (``$SHELL -c COMMAND``: ``/bin/sh`` unless the host has a
``shell=NAME`` quirk) with the host's
environment (``hostenv.host_env``) in its home directory, after any ``slow`` fault delay,
with the host's system paths translated (``hostenv.map_system_paths``). A host whose user is
real (``host.json`` ``real_user``) runs the command as that user, as sshd does
(``session.c`` ``do_setusercontext``: ``initgroups``, ``setgid``, ``setuid``); OpenSSH's own
sshd does that itself, the world's client key being in the shared ``AuthorizedKeysFile``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

import asyncssh

from skupper_sandbox import hostenv, real_users
from skupper_sandbox.faults import slow_delay
from skupper_sandbox.layout import WorldInfo, WorldLayout

SSHD = Path("/usr/sbin/sshd")
SSHD_PRIVSEP_DIR = Path("/run/sshd")


def _write_private(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def write_keys(info: WorldInfo) -> None:
    """Create the client key, authorized_keys, one host key per SSH host, and known_hosts."""
    layout = WorldLayout(Path(info.dir))
    client = asyncssh.generate_private_key("ssh-ed25519", comment="skupper-mcp-sandbox")
    _write_private(layout.client_key, client.export_private_key())
    public = client.export_public_key()
    layout.client_key.with_suffix(".pub").write_bytes(public)
    layout.authorized_keys.write_bytes(public)
    known: list[str] = []
    for host in info.ssh_hosts:
        key = asyncssh.generate_private_key("ssh-ed25519")
        _write_private(layout.host_key(host.name), key.export_private_key())
        layout.host_key(host.name).with_suffix(".pub").write_bytes(key.export_public_key())
        host_public = key.export_public_key().decode().split()[:2]
        known.append(f"[{host.address}]:{host.ssh_port} {' '.join(host_public)}")
    layout.known_hosts.write_text("\n".join(known) + "\n")


def _exit_status(returncode: int) -> int:
    # A command killed by a signal reports 128+N, as a shell would.
    return 128 - returncode if returncode < 0 else returncode


async def _pump(source: asyncio.StreamReader, sink: asyncssh.SSHWriter[bytes]) -> None:
    while chunk := await source.read(65536):
        sink.write(chunk)
        await sink.drain()


async def _feed(source: asyncssh.SSHReader[bytes], sink: asyncio.StreamWriter) -> None:
    try:
        while chunk := await source.read(65536):
            sink.write(chunk)
            await sink.drain()
    except (OSError, asyncssh.Error):
        # The command exited without reading all its input: nothing more to give it.
        return
    with contextlib.suppress(OSError):
        sink.close()


class _OutputPipe:
    """One of a command's output pipes, read on the server's side. Closing it is how sshd
    hangs up: when a session's channel is gone, OpenSSH closes its ends of the command's
    pipes (channels.c, ``channel_free``), so a command that still writes gets SIGPIPE and
    ends; a command that floods output ends with its channel, not never."""

    def __init__(self) -> None:
        self._read_fd, self.write_fd = os.pipe()
        self.reader = asyncio.StreamReader()
        self._transport: asyncio.ReadTransport | None = None

    async def open(self) -> None:
        loop = asyncio.get_running_loop()
        protocol = asyncio.StreamReaderProtocol(self.reader)
        self._transport, _ = await loop.connect_read_pipe(
            lambda: protocol, os.fdopen(self._read_fd, "rb", 0)
        )
        os.close(self.write_fd)  # the command holds the only write end now

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
        else:
            with contextlib.suppress(OSError):
                os.close(self._read_fd)
                os.close(self.write_fd)


def _login_user(info: hostenv.HostInfo) -> real_users.LoginOptions:
    """What makes a session's command run as the host's real user (nothing for a user this
    machine does not have: the command runs as the server's)."""
    if not info.real_user:
        return real_users.LoginOptions()
    account = real_users.lookup(info.user)
    if account is None:
        raise OSError(f"user {info.user} does not exist")
    return account.subprocess_options()


class _HostSession:
    """Runs one SSH session's command on a host, the way its login would."""

    def __init__(self, host_dir: Path) -> None:
        self.host_dir = host_dir

    async def __call__(self, process: asyncssh.SSHServerProcess[bytes]) -> None:
        stdout, stderr = _OutputPipe(), _OutputPipe()
        try:
            delay = slow_delay(self.host_dir)
            if delay > 0:
                await asyncio.sleep(delay)
            env = hostenv.host_env(self.host_dir)
            info = hostenv.load_host_info(self.host_dir)
            command = process.command and hostenv.map_system_paths(process.command, info)
            child = await asyncio.create_subprocess_exec(
                *hostenv.login_argv(env["SHELL"], command),
                executable=env["SHELL"],
                stdin=asyncio.subprocess.PIPE,
                stdout=stdout.write_fd,
                stderr=stderr.write_fd,
                env=env,
                cwd=env["HOME"],
                start_new_session=True,
                **_login_user(info),
            )
            await stdout.open()
            await stderr.open()
            assert child.stdin
            feed = asyncio.create_task(_feed(process.stdin, child.stdin))
            await asyncio.gather(
                _pump(stdout.reader, process.stdout), _pump(stderr.reader, process.stderr)
            )
            returncode = await child.wait()
            feed.cancel()
            process.exit(_exit_status(returncode))
        except (OSError, asyncssh.Error) as exc:
            with contextlib.suppress(OSError, asyncssh.Error):
                process.stderr.write(f"sandbox login failed: {exc}\n".encode())
                process.exit(255)
        finally:
            stdout.close()
            stderr.close()


async def start_asyncssh_server(
    layout: WorldLayout,
    name: str,
    address: str,
    port: int,
    server_factory: Callable[[], asyncssh.SSHServer] | None = None,
) -> asyncssh.SSHAcceptor:
    """An asyncssh server for host ``name`` on ``address:port`` (the world's client key only).
    ``server_factory`` makes each connection's ``asyncssh.SSHServer`` (tests watch the
    connections through it)."""
    return await asyncssh.create_server(
        server_factory,
        address,
        port,
        server_host_keys=[str(layout.host_key(name))],
        authorized_client_keys=str(layout.authorized_keys),
        process_factory=_HostSession(layout.host_dir(name)),
        encoding=None,
        reuse_address=True,
        keepalive_interval=15,
    )


def write_sshd_config(layout: WorldLayout, name: str, address: str, port: int) -> Path:
    """An sshd_config for one host whose ForceCommand is the sandbox login shim."""
    login = shlex.join([sys.executable, "-m", "skupper_sandbox.login", str(layout.host_dir(name))])
    lines = [
        f"ListenAddress {address}:{port}",
        f"HostKey {layout.host_key(name)}",
        "PidFile none",
        f"AuthorizedKeysFile {layout.authorized_keys}",
        "StrictModes no",
        "PermitRootLogin prohibit-password",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "UsePAM no",
        "UseDNS no",
        "PrintMotd no",
        "MaxStartups 100:30:200",
        "MaxSessions 50",
        f"ForceCommand {login}",
    ]
    path = layout.sshd_config(name)
    path.write_text("\n".join(lines) + "\n")
    return path


def ensure_privsep_dir() -> None:
    """sshd refuses to start without its privilege-separation directory."""
    SSHD_PRIVSEP_DIR.mkdir(mode=0o755, parents=True, exist_ok=True)
