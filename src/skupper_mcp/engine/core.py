"""The Engine: the topology, a connector pool and a lock, with one async method per tool.

Front ends (MCP server, CLI) only call Engine methods, so both behave the same. Heavy
libraries (asyncssh, kubernetes) are imported only when a connection is first needed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from skupper_mcp.connectors.base import Connector, SSHTarget
from skupper_mcp.engine import precheck, resolve
from skupper_mcp.models import CheckResult, OperationResult, ResolveResult
from skupper_mcp.render import topology_diagram
from skupper_mcp.topology import Topology

if TYPE_CHECKING:
    from skupper_mcp.connectors.pool import ConnectorPool

Progress = Callable[[str], Awaitable[None]]


class Engine:
    """Runs operations on one topology. Use as an async context manager, or call
    ``close`` when done: it closes every connection the engine opened."""

    def __init__(
        self,
        topology: Topology,
        pool: ConnectorPool | None = None,
        *,
        kube_access: precheck.KubeAccess = precheck.default_kube_access,
    ) -> None:
        self.topology = topology
        self._pool = pool
        self.kube_access = kube_access
        # write operations hold it so two changes never interleave on the same VAN
        self.lock = asyncio.Lock()

    @property
    def pool(self) -> ConnectorPool:
        """The connector pool, created on first use."""
        if self._pool is None:
            from skupper_mcp.connectors.pool import ConnectorPool

            self._pool = ConnectorPool(self.topology.ssh.options())
        return self._pool

    async def connector(self, host: str, target: SSHTarget | None) -> Connector:
        """An open connector to ``host`` (local commands when ``target`` is None)."""
        return await self.pool.get(host, target)

    async def resolve(self, name: str) -> ResolveResult:
        """resolve_profile: host, site or profile name -> host, site, role and profile."""
        return await resolve.resolve(self.topology, name, self.connector)

    async def check(self, progress: Progress | None = None) -> CheckResult:
        """The precheck of every site, with the topology diagram."""
        checks = await precheck.run_precheck(
            self.topology, self.connector, kube_access=self.kube_access, progress=progress
        )
        failed = [c for c in checks if c.status == "fail"]
        warned = [c for c in checks if c.status == "warn"]
        summary = f"{len(checks)} checks: {len(checks) - len(failed) - len(warned)} passed"
        summary += f", {len(warned)} warnings, {len(failed)} failed"
        if failed:
            sites = sorted({c.site for c in failed})
            summary += f" (on {', '.join(sites)})"
        return CheckResult(
            topology=topology_diagram(self.topology),
            checks=checks,
            ok=not failed,
            summary=summary,
        )

    async def setup(
        self, *, check: bool = False, plan: bool = False, progress: Progress | None = None
    ) -> CheckResult | OperationResult:
        """setup: with ``check`` only the precheck; else the one-time build (or its plan)."""
        if check:
            return await self.check(progress)
        raise NotImplementedError("setup is not available in this version")

    async def close(self) -> None:
        """Close every connection."""
        if self._pool is not None:
            await self._pool.close()

    async def __aenter__(self) -> Engine:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
