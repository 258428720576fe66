"""Reach and read every site of the topology, concurrently. One host's failure is that
host's ``SiteView.error``, never an exception that loses the others. Also what readings say
across sites: the peers' link client certificates, the links as their dialling sites report
them, and the models the providers serve."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..connectors.pool import ConnectorPool
from ..errors import ConnectError, KubeError, SiteConfigError
from ..facts import names
from ..facts.site_state import SiteState
from ..sites import resources as cr
from ..sites.kube import ClusterSite, KubeState, status_of
from ..sites.podman import PodmanSite
from ..sites.resources import ClientCert, LinkTarget
from ..topology import ProviderHost, Topology
from ..vocabulary import KUBE_HOST, LOCAL_HOST
from .desired.cluster import link_targets
from .runner import SITE_ERRORS, SiteRun, describe
from .scope import SiteRef, site_ref

KubeFactory = Callable[[], ClusterSite]


@dataclass
class SiteView:
    """A site as an operation found it: its driver and state, or why it could not be read."""

    ref: SiteRef
    podman: PodmanSite | None = None
    kube: ClusterSite | None = None
    state: SiteState | None = None
    kube_state: KubeState | None = None
    error: BaseException | None = None
    seconds: float = 0.0

    @property
    def reachable(self) -> bool:
        """False when the site cannot be acted on at all: the host cannot be reached, or
        the cluster refuses our credentials. Such sites are skipped, not failed."""
        if isinstance(self.error, ConnectError):
            return False
        return not (isinstance(self.error, KubeError) and self.error.status in (401, 403))

    @property
    def ok(self) -> bool:
        return self.error is None

    def usable(self, run: SiteRun) -> bool:
        """Whether the operation can act here; if not, the run says why: skipped when the
        site cannot be reached (or refuses our credentials), failed otherwise."""
        if self.error is None:
            return True
        (run.fail if self.reachable else run.skip)(self.problem())
        return False

    def problem(self) -> str:
        assert self.error is not None
        if isinstance(self.error, SiteConfigError):
            return f"{self.ref.host} cannot be used as configured: {self.error.reason}"
        if isinstance(self.error, ConnectError):
            return f"{self.ref.host} unreachable: {self.error.reason}"
        if isinstance(self.error, KubeError):
            return f"{self.ref.host}: {self.error}"
        return f"cannot read the state of {self.ref.host}: {describe(self.error)}"

    def router_active(self) -> bool | None:
        """Whether the site's router runs (None when unknown)."""
        if self.state is not None and self.podman is not None:
            ns = self.podman.namespace
            return (
                self.state.container_running(names.router_container(ns))
                or self.state.unit(names.router_unit(ns)).active
            )
        return None


class SiteMap:
    """Drivers for every site of a topology, over one connector pool."""

    def __init__(
        self, topology: Topology, pool: ConnectorPool, kube_factory: KubeFactory | None
    ) -> None:
        self.topology = topology
        self.pool = pool
        self.kube_factory = kube_factory

    def provider(self, host: str) -> ProviderHost:
        return next(p for p in self.topology.providers if p.name == host)

    async def podman(self, ref: SiteRef) -> PodmanSite:
        if ref.host == LOCAL_HOST:
            local = self.topology.local
            connector = await self.pool.get(LOCAL_HOST, local.ssh)
            return PodmanSite(connector, local.namespace)
        p = self.provider(ref.host)
        connector = await self.pool.get(p.name, p.ssh)
        return PodmanSite(connector, p.namespace, model_url=model_url(p))

    def kube(self) -> ClusterSite:
        if self.kube_factory is None:
            raise ConnectError(KUBE_HOST, "no Kubernetes site is configured")
        return self.kube_factory()

    async def view(self, ref: SiteRef, log_lines: int = 0) -> SiteView:
        started = time.monotonic()
        view = SiteView(ref)
        try:
            if ref.platform == "kubernetes":
                view.kube = self.kube()
                view.kube_state = await view.kube.read()
            else:
                view.podman = await self.podman(ref)
                view.state = await view.podman.read(log_lines)
        except SITE_ERRORS as exc:
            view.error = exc
        view.seconds = time.monotonic() - started
        return view

    async def views(self, refs: Iterable[SiteRef], log_lines: int = 0) -> dict[str, SiteView]:
        refs = list(refs)
        found = await asyncio.gather(*(self.view(ref, log_lines) for ref in refs))
        return {v.ref.host: v for v in found}

    async def client_cert(self, host: str, site_name: str) -> ClientCert | None:
        """A peer's link client certificate, or None when it cannot be read now."""
        try:
            podman = await self.podman(site_ref(self.topology, host))
            return await podman.client_cert(cr.client_cert_dir(site_name))
        except SITE_ERRORS:
            return None

    async def client_certs(self, targets: dict[str, LinkTarget]) -> dict[str, ClientCert | None]:
        """host -> its link client certificate (None when it cannot be read now), concurrently."""
        found = await asyncio.gather(*(self.client_cert(h, t.site) for h, t in targets.items()))
        return dict(zip(targets, found, strict=True))

    def version_problem(self, state: SiteState) -> str | None:
        """Why this host's Skupper cannot be driven (2.1+ is needed), or None."""
        reading = state.skupper
        meets = reading.meets(self.topology.min_skupper_version)
        if meets is None:
            return f"skupper CLI not usable: {reading.problem or 'no version reported'}"
        if not meets:
            return (
                f"skupper {reading.cli} is not supported: Skupper "
                f"{self.topology.min_skupper_version}+ is needed (2.0.x has no system controller "
                "and different system commands); upgrade the skupper CLI on this host"
            )
        return None


def served_models(views: dict[str, SiteView]) -> dict[str, list[str] | None]:
    """host -> the model ids its endpoint reported (what decides active profiles)."""
    return {h: v.state.served_models for h, v in views.items() if v.state is not None}


def model_url(p: ProviderHost) -> str:
    return f"http://{p.model_host}:{p.model_port}/v1/models"


@dataclass(frozen=True)
class LinkRow:
    """A link the topology asks for, as the dialling site reports it."""

    from_host: str
    from_site: str
    to_host: str
    to_site: str
    host: str
    port: int
    status: str


def link_rows(topo: Topology, views: dict[str, SiteView]) -> list[LinkRow]:
    """The local site's link to every hub, then the cluster's links, with their status."""
    rows: list[LinkRow] = []
    local_view = views.get(LOCAL_HOST)
    local_state = local_view.state if local_view is not None else None
    for p in topo.providers:
        name = cr.link_name(p.site_name)
        res = local_state.runtime_resources.get(("Link", name)) if local_state else None
        if res is None and local_state is not None:
            res = local_state.input_resources.get(("Link", name))
        status = status_of(res) if local_state else "unknown (local site unreadable)"
        rows.append(
            LinkRow(
                LOCAL_HOST,
                topo.local.site_name,
                p.name,
                p.site_name,
                p.public_host,
                p.inter_router_port,
                status,
            )
        )
    kube = topo.kubernetes
    if kube is not None:
        kube_view = views.get(kube.name)
        for host, target in link_targets(topo).items():
            name = cr.link_name(target.site)
            if kube_view is not None and kube_view.kube_state is not None:
                status = status_of(kube_view.kube_state.links.get(name))
            else:
                status = "unknown (API unreachable)"
            rows.append(
                LinkRow(
                    kube.name,
                    kube.site_name,
                    host,
                    target.site,
                    target.host,
                    target.inter_router_port,
                    status,
                )
            )
    return rows
