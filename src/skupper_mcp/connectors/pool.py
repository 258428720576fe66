"""One connector per host for the life of the process, so SSH connections are reused
across tool calls. Concurrent callers share one connect attempt, failure included: the SSH
connector shares its own (``SharedAttempt``), so whoever holds it gets that too."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from skupper_mcp.connectors.base import Connector, SSHOptions, SSHTarget
from skupper_mcp.connectors.local import LocalConnector
from skupper_mcp.connectors.ssh import SSHConnector

__all__ = ["ConnectorFactory", "ConnectorPool", "default_factory"]

#: (host name, SSH target or None for local commands, SSH options) -> a connector.
ConnectorFactory = Callable[[str, SSHTarget | None, SSHOptions], Connector]


def default_factory(name: str, target: SSHTarget | None, options: SSHOptions) -> Connector:
    """Local commands when there is no SSH target, else SSH (not yet connected)."""
    if target is None:
        return LocalConnector(name)
    return SSHConnector(name, target, options)


class ConnectorPool:
    """Hands out connectors, keyed by (host name, SSH target). ``options`` apply to every
    SSH host; ``factory`` makes the connectors (tests pass one that makes fakes). The MCP
    server keeps one pool; the CLI one per invocation."""

    def __init__(
        self, options: SSHOptions | None = None, factory: ConnectorFactory | None = None
    ) -> None:
        self._options = options or SSHOptions()
        self._factory = factory or default_factory
        self._connectors: dict[tuple[str, SSHTarget | None], Connector] = {}

    @property
    def options(self) -> SSHOptions:
        """The SSH options every connector of this pool uses."""
        return self._options

    async def get(self, name: str, target: SSHTarget | None) -> Connector:
        """The connector for host ``name``: local commands when ``target`` is None, else SSH
        to ``target`` with its connection open.

        Raises ``ConnectError`` (or ``HostKeyError``) when the host cannot be reached.
        Concurrent gets of one host share one connect attempt and all get its error; a get
        after that attempt has finished tries again.
        """
        key = (name, target)
        connector = self._connectors.get(key)
        if connector is None:
            connector = self._factory(name, target, self._options)
            self._connectors[key] = connector
        await connector.connect()
        return connector

    async def close(self) -> None:
        """Close every connection the pool holds. The pool can be used again afterwards."""
        connectors = list(self._connectors.values())
        self._connectors.clear()
        results = await asyncio.gather(
            *(connector.close() for connector in connectors), return_exceptions=True
        )
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, Exception):
                raise result

    async def __aenter__(self) -> ConnectorPool:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        with contextlib.suppress(Exception):
            await self.close()
