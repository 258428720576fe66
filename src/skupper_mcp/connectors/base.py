"""The connector interface: run a shell command on a host and get its result.

One small protocol with two implementations, ``LocalConnector`` (subprocess) and
``SSHConnector`` (asyncssh); the tests add a scripted fake (``tests/fake_connector.py``).
Connectors hold no policy: callers build commands with ``shell.quote`` and decide what a
failure means.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

DEFAULT_COMMAND_TIMEOUT = 60.0
DEFAULT_CONNECT_TIMEOUT = 5.0


@dataclass(frozen=True)
class SSHTarget:
    """Where a host's SSH server is."""

    host: str
    port: int = 22
    user: str | None = None

    def __str__(self) -> str:
        user = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port != 22 else ""
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
