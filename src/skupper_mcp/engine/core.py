"""The Engine: the topology and a connector pool, with one async method per tool.

Front ends (MCP server, CLI) only call Engine methods, so both behave the same. The engine
owns what the operations share: the site map over the connector pool, the one Kubernetes
site (with its API connector), the backup folder and the cross-process operation lock. Each
method is one call into the operation's module. Heavy libraries (asyncssh, kubernetes) are
imported only when a connection is first needed.

Only writes take the operation lock: ``setup``, ``up``, ``down`` and ``teardown`` when they
change things. Reads (``status``, ``diagnose``, ``test_model``, ``logs``, the precheck) and
every ``plan=True`` run side by side with each other and with a write: a plan only reads the
sites and lists steps, so it need not wait behind an operation that may take minutes; what
it reads is what the sites were at that moment, as for ``status``, and a write that runs
meanwhile may make it stale (run the plan again after it).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, nullcontext
from datetime import datetime
from typing import TYPE_CHECKING

from skupper_mcp.engine import operations as op
from skupper_mcp.engine.desired.cluster import kube_secret_names
from skupper_mcp.engine.sitemap import SiteMap
from skupper_mcp.engine.store import journal
from skupper_mcp.engine.store.backups import Backups
from skupper_mcp.engine.store.lock import operation_lock
from skupper_mcp.errors import SkupperMcpError
from skupper_mcp.results import (
    CheckResult,
    DiagnoseResult,
    HistoryResult,
    LogsResult,
    ModelsResult,
    OperationResult,
    ResolveResult,
    StatusResult,
    TestModelResult,
)
from skupper_mcp.sites.kube import ClusterSite
from skupper_mcp.topology import Topology
from skupper_mcp.vocabulary import Progress

if TYPE_CHECKING:
    from skupper_mcp.connectors.pool import ConnectorPool


class Engine:
    """Runs operations on one topology. Use as an async context manager, or call
    ``close`` when done: it closes every connection the engine opened."""

    def __init__(
        self,
        topology: Topology,
        pool: ConnectorPool | None = None,
        *,
        kube_access: op.precheck.KubeAccess = op.precheck.default_kube_access,
    ) -> None:
        self.topology = topology
        self._pool = pool
        self.kube_access = kube_access
        self._sites: SiteMap | None = None
        self._cluster: ClusterSite | None = None
        self.backups = Backups(topology.state_dir)
        self.journal = journal.Journal(topology.state_dir)

    @property
    def pool(self) -> ConnectorPool:
        """The connector pool, created on first use."""
        if self._pool is None:
            from skupper_mcp.connectors.pool import ConnectorPool

            self._pool = ConnectorPool(self.topology.ssh.options())
        return self._pool

    @property
    def sites(self) -> SiteMap:
        """Every site of the topology over the pool, created on first use."""
        if self._sites is None:
            factory = self._cluster_site if self.topology.kubernetes is not None else None
            self._sites = SiteMap(self.topology, self.pool, factory)
        return self._sites

    def _cluster_site(self) -> ClusterSite:
        """The Kubernetes site, over the one API connector the engine opens for it."""
        if self._cluster is None:
            assert self.topology.kubernetes is not None
            secrets = kube_secret_names(self.topology)
            # a pool may have put a MultiKeyListener there, now or in an earlier setup
            pools = bool(self.topology.pools)
            self._cluster = ClusterSite.open(self.topology.kubernetes, secrets, pools)
        return self._cluster

    def _lock(
        self, operation: str, progress: Progress | None, *, plan: bool
    ) -> AbstractAsyncContextManager[None]:
        """The cross-process operation lock for a write; nothing for a plan, which only reads."""
        if plan:
            return nullcontext()
        return operation_lock(
            self.topology.state_dir, self.topology.path, operation, on_wait=progress
        )

    async def resolve(self, name: str) -> ResolveResult:
        """resolve_profile: host, site or profile name -> host, site, role and profile."""
        return await op.resolve.resolve(self.sites, name)

    async def check(self, progress: Progress | None = None, *, needs: bool = False) -> CheckResult:
        """The precheck of every site, with the topology diagram; with ``needs``, also what
        setup would build at each site (``setup --check``)."""
        return await op.precheck.run(
            self.sites,
            kube_access=self.kube_access,
            progress=progress,
            more=(lambda: op.setup.needs_checks(self.sites)) if needs else None,
        )

    async def _recorded(
        self,
        tool: str,
        arguments: dict[str, object],
        write: Callable[[], Awaitable[OperationResult]],
    ) -> OperationResult:
        """Run a write and append it to the journal (inside the operation lock, which the
        caller holds), with its result or the error that ended it."""
        started, clock = journal.now(), time.monotonic()
        try:
            result = await write()
        except SkupperMcpError as error:
            self._append(tool, arguments, started, clock, error=str(error))
            raise
        self._append(tool, arguments, started, clock, result=result)
        return result

    def _append(
        self,
        tool: str,
        arguments: dict[str, object],
        started: datetime,
        clock: float,
        result: OperationResult | None = None,
        error: str | None = None,
    ) -> None:
        seconds = time.monotonic() - clock
        self.journal.append(journal.entry(tool, arguments, started, seconds, result, error))

    async def setup(
        self, *, check: bool = False, plan: bool = False, progress: Progress | None = None
    ) -> CheckResult | OperationResult:
        """setup: with ``check`` the precheck and what setup would build at each site (its
        ``Need`` list); else the one-time build (or its plan)."""
        if check:
            return await self.check(progress, needs=True)

        async def build() -> OperationResult:
            return await op.setup.run(
                self.sites,
                self.backups,
                lambda: self.check(progress),
                plan=plan,
                progress=progress,
            )

        async with self._lock("setup", progress, plan=plan):
            return await build() if plan else await self._recorded("setup", {}, build)

    async def up(
        self, target: str = "all", *, plan: bool = False, progress: Progress | None = None
    ) -> OperationResult:
        """up: start controllers and routers on the targeted sites."""

        async def start() -> OperationResult:
            return await op.updown.up(self.sites, target, plan=plan, progress=progress)

        async with self._lock("up", progress, plan=plan):
            return await start() if plan else await self._recorded("up", {"target": target}, start)

    async def down(
        self, target: str = "all", *, plan: bool = False, progress: Progress | None = None
    ) -> OperationResult:
        """down: stop the targeted sites (the local site only with the last provider)."""

        async def stop() -> OperationResult:
            return await op.updown.down(self.sites, target, plan=plan, progress=progress)

        async with self._lock("down", progress, plan=plan):
            return await stop() if plan else await self._recorded("down", {"target": target}, stop)

    async def teardown(
        self, *, plan: bool = False, progress: Progress | None = None
    ) -> OperationResult:
        """teardown: back up, then remove the Skupper infrastructure on every site."""

        async def remove() -> OperationResult:
            return await op.teardown.run(self.sites, self.backups, plan=plan, progress=progress)

        async with self._lock("teardown", progress, plan=plan):
            return await remove() if plan else await self._recorded("teardown", {}, remove)

    async def history(self, since: str = "") -> HistoryResult:
        """history: the writes the journal recorded, from ``since`` on (a duration or a time)."""
        return self.journal.history(journal.parse_since(since))

    async def status(self, readiness: bool = False) -> StatusResult:
        """status: the live state of every site, link and listener (with ``readiness``,
        each local listener's model's readiness)."""
        return await op.status.run(self.sites, readiness)

    async def models(self) -> ModelsResult:
        """models: every model the VAN brings here, read through its local listener."""
        return await op.catalog.run(self.sites)

    async def test_model(self, target: str) -> TestModelResult:
        """test_model: the six end-to-end checks of one provider's model route."""
        return await op.model_checks.run(self.sites, target)

    async def diagnose(self, target: str = "all") -> DiagnoseResult:
        """diagnose: what is wrong on each targeted site, why, and the next step."""
        return await op.diagnose.run(self.sites, target)

    async def logs(self, target: str, component: str = "router", lines: int = 50) -> LogsResult:
        """logs: the newest lines of one site's router or controller log, redacted."""
        return await op.logs.run(self.sites, target, component, lines)

    async def close(self) -> None:
        """Close every connection."""
        if self._cluster is not None:
            await self._cluster.close()
            self._cluster = None
        if self._pool is not None:
            await self._pool.close()

    async def __aenter__(self) -> Engine:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
