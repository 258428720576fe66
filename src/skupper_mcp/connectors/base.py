"""The connector interface: run a shell command on a host and get its result.

One small protocol with two implementations, ``LocalConnector`` (subprocess) and
``SSHConnector`` (asyncssh); the tests add a scripted fake (``tests/fake_connector.py``).
Connectors hold no policy: callers build commands with ``shell.quote`` and decide what a
failure means.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from skupper_mcp.connectors.shell import summary
from skupper_mcp.errors import CommandError, OutputLimitError

DEFAULT_COMMAND_TIMEOUT = 60.0
DEFAULT_CONNECT_TIMEOUT = 5.0
#: What the client reads of a command's output, past which the command is ended
#: (``OutputLimitError``): a site's state read is tens of KiB, a backup a few hundred.
MAX_STDOUT = 16 * 1024 * 1024
MAX_STDERR = 1024 * 1024
_CHUNK = 64 * 1024

Text = TypeVar("Text", str, bytes)


async def read_bounded(
    read: Callable[[int], Awaitable[Text]], limit: int, empty: Text
) -> Text | None:
    """Everything ``read`` gives until its end (``empty`` says whether text or bytes), or
    None as soon as it passes ``limit`` characters or bytes."""
    chunks: list[Text] = []
    size = 0
    while chunk := await read(_CHUNK):
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return empty.join(chunks)


async def read_output(
    stdout: Callable[[int], Awaitable[Text]],
    stderr: Callable[[int], Awaitable[Text]],
    empty: Text,
    host: str,
    command: str,
    alongside: Awaitable[None] | None = None,
) -> tuple[Text, Text]:
    """A command's stdout and stderr read to their ends, each within its bound (while
    ``alongside`` runs, e.g. feeding its input). Past a bound, the other reads stop and
    ``OutputLimitError`` is raised at once: the caller ends the command."""
    streams: dict[asyncio.Future[Any], tuple[str, int]] = {
        asyncio.ensure_future(read_bounded(stdout, MAX_STDOUT, empty)): ("stdout", MAX_STDOUT),
        asyncio.ensure_future(read_bounded(stderr, MAX_STDERR, empty)): ("stderr", MAX_STDERR),
    }
    pending: set[asyncio.Future[Any]] = set(streams)
    if alongside is not None:
        pending.add(asyncio.ensure_future(alongside))
    try:
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task in streams and task.result() is None:
                    raise OutputLimitError(host, summary(command), *streams[task])
    finally:
        for task in pending:
            task.cancel()
    out, err = (task.result() for task in streams)
    assert out is not None and err is not None
    return out, err


@dataclass(frozen=True)
class SSHTarget:
    """Where a host's SSH server is."""

    host: str
    port: int | None = None
    """None: not set in the topology (the SSH config's Port, else 22)."""
    user: str | None = None

    def __str__(self) -> str:
        user = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port not in (None, 22) else ""
        return f"{user}{self.host}{port}"


@dataclass(frozen=True)
class SSHOptions:
    """How to connect: keys, host-key policy, timeouts. Shared by every SSH host."""

    identity_files: tuple[Path, ...] = ()
    known_hosts: Path | None = None
    accept_new_host_keys: bool = False
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    keepalive_interval: float = 5.0
    keepalive_count_max: int = 3
    ssh_config: Path | None = None
    """The OpenSSH client config to read; None: ``~/.ssh/config`` when it exists."""
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CommandResult:
    """What a finished command produced."""

    host: str
    command: str
    exit_status: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.exit_status == 0

    def raise_for_status(self) -> None:
        """Raise ``CommandError`` if the command failed (a non-zero exit)."""
        if not self.ok:
            raise CommandError(
                self.host,
                self.command,
                self.exit_status,
                self.stderr,
                self.stdout,
                summary=summary(self.command),
            )


class Connector(Protocol):
    """Runs commands on one host. Implementations translate their own errors into
    ``ConnectError`` / ``HostKeyError`` / ``CommandTimeout``; a non-zero exit is returned,
    not raised, unless ``check=True`` (then ``CommandError``)."""

    @property
    def host(self) -> str:
        """The host name used in results and errors (the topology's name, e.g. rhel-ai)."""
        ...

    async def connect(self) -> None:
        """Open the connection if it is not open (nothing to do for local commands).
        Raises ``ConnectError`` (or ``HostKeyError``) when the host cannot be reached."""
        ...

    async def run(
        self,
        command: str,
        *,
        timeout: float = DEFAULT_COMMAND_TIMEOUT,
        check: bool = False,
        stdin: str | None = None,
    ) -> CommandResult:
        """Run ``command`` through the host's shell (``sh -c`` semantics)."""
        ...

    async def close(self) -> None:
        """Release the connection. Safe to call twice."""
        ...
