"""The lifecycle operations behind one object: what ``Engine`` delegates setup, up, down,
status, test_model and teardown to. Holds the per-topology pieces they share: the site
drivers over the connector pool, the Kubernetes connector, the backup folder and the
cross-process operation lock."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from ..models import (
    CheckResult,
    DiagnoseResult,
    LogsResult,
    OperationResult,
    StatusResult,
    TestModelResult,
)
from ..topology import Topology
from ..vocabulary import Progress
from .desired.cluster import kube_secret_names
from .operations.diagnose import Diagnose
from .operations.logs import Logs
from .operations.model_checks import ModelChecks
from .operations.setup import Setup
from .operations.status import Status
from .operations.teardown import Teardown
from .operations.updown import UpDown
from .sitemap import SiteMap
from .store.backups import Backups
from .store.lock import operation_lock

if TYPE_CHECKING:
    from ..connectors.kube import KubeConnector
    from ..connectors.pool import ConnectorPool
    from ..sites.kube import ClusterSite

KUBE_TIMEOUT = 10.0


class Lifecycle:
    def __init__(self, topology: Topology, pool: ConnectorPool, state_dir: Path) -> None:
        self.topology = topology
        self.state_dir = state_dir
        self._kube_api: KubeConnector | None = None
        factory = self._cluster_site if topology.kubernetes is not None else None
        self.sites = SiteMap(topology, pool, factory)
        self.backups = Backups(state_dir)

    def _cluster_site(self) -> ClusterSite:
        from ..connectors.kube import KubeConnector
        from ..sites.kube import ClusterSite

        kube = self.topology.kubernetes
        assert kube is not None
        if self._kube_api is None:
            self._kube_api = KubeConnector(
                kube.kubeconfig, kube.context, KUBE_TIMEOUT, namespace=kube.namespace
            )
        return ClusterSite(self._kube_api, kube.namespace, kube_secret_names(self.topology))

    async def setup(
        self, precheck: Callable[[], Awaitable[CheckResult]], plan: bool, progress: Progress | None
    ) -> OperationResult:
        async with self._lock("setup", progress):
            return await Setup(self.sites, self.backups, precheck, progress).run(plan)

    async def up(self, target: str, plan: bool, progress: Progress | None) -> OperationResult:
        async with self._lock("up", progress):
            return await UpDown(self.sites, progress).up(target, plan)

    async def down(self, target: str, plan: bool, progress: Progress | None) -> OperationResult:
        async with self._lock("down", progress):
            return await UpDown(self.sites, progress).down(target, plan)

    async def teardown(self, plan: bool, progress: Progress | None) -> OperationResult:
        async with self._lock("teardown", progress):
            return await Teardown(self.sites, self.backups, progress).run(plan)

    def _lock(self, operation: str, progress: Progress | None) -> AbstractAsyncContextManager[None]:
        return operation_lock(self.state_dir, self.topology.path, operation, on_wait=progress)

    async def status(self) -> StatusResult:
        return await Status(self.sites).run()

    async def test_model(self, target: str) -> TestModelResult:
        return await ModelChecks(self.sites).run(target)

    async def diagnose(self, target: str) -> DiagnoseResult:
        return await Diagnose(self.sites).run(target)

    async def logs(self, target: str, component: str, lines: int) -> LogsResult:
        return await Logs(self.sites).run(target, component, lines)

    async def close(self) -> None:
        if self._kube_api is not None:
            await self._kube_api.close()
            self._kube_api = None
