"""The Engine: the topology and a connector pool, with one async method per tool.

Front ends (MCP server, CLI) only call Engine methods, so both behave the same. Heavy
libraries (asyncssh, kubernetes) are imported only when a connection is first needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skupper_mcp.connectors.base import Connector, SSHTarget
from skupper_mcp.engine.operations import precheck, resolve
from skupper_mcp.models import (
    CheckResult,
    DiagnoseResult,
    LogsResult,
    OperationResult,
    ResolveResult,
    StatusResult,
    TestModelResult,
)
from skupper_mcp.render import topology_diagram
from skupper_mcp.topology import Topology
from skupper_mcp.vocabulary import Progress

if TYPE_CHECKING:
    from skupper_mcp.connectors.pool import ConnectorPool
    from skupper_mcp.engine.lifecycle import Lifecycle


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
        self._lifecycle: Lifecycle | None = None

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

    @property
    def lifecycle(self) -> Lifecycle:
        """The lifecycle operations, created on first use."""
        if self._lifecycle is None:
            from skupper_mcp.engine.lifecycle import Lifecycle

            self._lifecycle = Lifecycle(self.topology, self.pool, self.topology.state_dir)
        return self._lifecycle

    async def setup(
        self, *, check: bool = False, plan: bool = False, progress: Progress | None = None
    ) -> CheckResult | OperationResult:
        """setup: with ``check`` only the precheck; else the one-time build (or its plan)."""
        if check:
            return await self.check(progress)
        return await self.lifecycle.setup(lambda: self.check(progress), plan, progress)

    async def up(
        self, target: str = "all", *, plan: bool = False, progress: Progress | None = None
    ) -> OperationResult:
        """up: start controllers and routers on the targeted sites."""
        return await self.lifecycle.up(target, plan, progress)

    async def down(
        self, target: str = "all", *, plan: bool = False, progress: Progress | None = None
    ) -> OperationResult:
        """down: stop the targeted sites (the local site only with the last provider)."""
        return await self.lifecycle.down(target, plan, progress)

    async def teardown(
        self, *, plan: bool = False, progress: Progress | None = None
    ) -> OperationResult:
        """teardown: back up, then remove the Skupper infrastructure on every site."""
        return await self.lifecycle.teardown(plan, progress)

    async def status(self) -> StatusResult:
        """status: the live state of every site, link and listener."""
        return await self.lifecycle.status()

    async def test_model(self, target: str) -> TestModelResult:
        """test_model: the six end-to-end checks of one provider's model route."""
        return await self.lifecycle.test_model(target)

    async def diagnose(self, target: str = "all") -> DiagnoseResult:
        """diagnose: what is wrong on each targeted site, why, and the next step."""
        return await self.lifecycle.diagnose(target)

    async def logs(self, target: str, component: str = "router", lines: int = 50) -> LogsResult:
        """logs: the newest lines of one site's router or controller log, redacted."""
        return await self.lifecycle.logs(target, component, lines)

    async def close(self) -> None:
        """Close every connection."""
        if self._lifecycle is not None:
            await self._lifecycle.close()
        if self._pool is not None:
            await self._pool.close()

    async def __aenter__(self) -> Engine:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
