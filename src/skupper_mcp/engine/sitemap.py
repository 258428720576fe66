"""Reach and read every site of the topology, concurrently. One host's failure is that
host's ``Unread`` reading, never an exception that loses the others. Also what readings say
across sites: the peers' link client certificates, the links as their dialling sites report
them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from ..connectors.pool import ConnectorPool
from ..errors import ConfigError, ConnectError
from ..facts.site_state import SiteState
from ..results import SiteResult
from ..sites import resources as cr
from ..sites.kube import ClusterSite, status_of
from ..sites.podman import KnownVersions, PodmanSite
from ..sites.resources import ClientCert, LinkTarget
from ..topology import ModelEndpoint, ProviderHost, Topology
from ..vocabulary import KUBE_HOST, LOCAL_HOST
from .condition import site_condition
from .desired.cluster import link_targets
from .predicates import claims_ready, link_up
from .readings import Asked, ClusterReading, PodmanReading, Reading, Unread
from .runner import SITE_ERRORS, SiteRun, logged
from .scope import SiteRef, site_ref
from .store.intents import Intents

KubeFactory = Callable[[], ClusterSite]


def skip_or_fail(run: SiteRun, reading: Unread) -> None:
    """An operation cannot act on a site it could not read: skipped when the site cannot be
    reached (or refuses our credentials) or needs an extra that is not installed, failed
    otherwise; the run says why."""
    skipped = not reading.reachable or reading.missing_extra
    (run.skip if skipped else run.fail)(reading.problem())


async def nothing_to_do(
    run: SiteRun, reading: PodmanReading | ClusterReading, operation: str, done: str
) -> None:
    """A site where ``operation`` (down, teardown) finds nothing to change, said as
    ``status`` says it (``condition.site_condition``, decided once): one never set up, or
    removed by teardown, is skipped as not set up, with status's reason; another is noted
    as ``done`` (``already stopped``, ``nothing to remove``)."""
    state, why = site_condition(reading)
    if state == "not-set-up":
        run.skip(f"not set up: {why}")
        await run.note(operation, "not set up: nothing to do", seconds=reading.seconds)
        return
    await run.note(operation, done, seconds=reading.seconds)


class SiteMap:
    """Drivers for every site of a topology, over one connector pool."""

    def __init__(
        self, topology: Topology, pool: ConnectorPool, kube_factory: KubeFactory | None
    ) -> None:
        self.topology = topology
        self.pool = pool
        self.kube_factory = kube_factory
        self.intents = Intents(topology.state_dir, topology.path)
        self.known_versions = KnownVersions()

    def provider(self, host: str) -> ProviderHost:
        """The provider of that name (``ConfigError`` for a name that is none)."""
        found = self.topology.provider(host)
        if found is None:
            raise ConfigError(f"{host!r} is not a provider host of the topology")
        return found

    def asked(self, ref: SiteRef) -> Asked | None:
        """What the user last asked of the site (None: nothing recorded)."""
        return self.intents.read(ref.host, ref.site)

    def remember(
        self,
        results: Iterable[SiteResult],
        asked: Asked,
        views: Mapping[str, Reading] | None = None,
    ) -> None:
        """Record that the user asked ``asked`` of these sites (after a write, never a plan):
        of each that the write reached and changed, or that ended as asked. A site it
        skipped or refused untouched keeps what was asked of it before. With ``views`` (the
        write's readings), each podman host's boot id goes with it."""
        boot_ids = {
            host: view.state.boot.boot_id
            for host, view in (views or {}).items()
            if isinstance(view, PodmanReading) and view.state.boot.boot_id is not None
        }
        self.intents.record(
            {
                r.host: (r.site, asked)
                for r in results
                if r.changed or r.outcome not in ("failed", "skipped")
            },
            boot_ids,
        )

    async def podman(self, ref: SiteRef) -> PodmanSite:
        if ref.host == LOCAL_HOST:
            local = self.topology.local
            connector = await self.pool.get(LOCAL_HOST, local.ssh)
            return PodmanSite(connector, local.namespace, known_versions=self.known_versions)
        p = self.provider(ref.host)
        connector = await self.pool.get(p.name, p.ssh)
        urls = [model_url(e) for e in p.endpoints]
        return PodmanSite(
            connector,
            p.namespace,
            model_url=urls[0],
            more_model_urls=tuple(urls[1:]),
            known_versions=self.known_versions,
        )

    def kube(self) -> ClusterSite:
        if self.kube_factory is None:
            raise ConnectError(KUBE_HOST, "no Kubernetes site is configured")
        return self.kube_factory()

    async def read(self, ref: SiteRef, log_lines: int = 0, secret_data: bool = False) -> Reading:
        """The site as it is now, with what the user last asked of it. The cluster's link
        Secrets come with their data only for ``secret_data`` (the writes that compare it)."""
        started = time.monotonic()
        last = self.intents.last(ref.host, ref.site)
        asked, boot = (None, None) if last is None else (last.asked, last.boot_id)
        try:
            if ref.platform == "kubernetes":
                kube = self.kube()
                state = await kube.read(secret_data)
                return ClusterReading(ref, kube, state, asked, time.monotonic() - started)
            podman = await self.podman(ref)
            found = await podman.read(log_lines)
            return PodmanReading(ref, podman, found, asked, time.monotonic() - started, boot)
        except SITE_ERRORS as exc:
            logged(exc, ref.host)
            return Unread(ref, exc, asked, time.monotonic() - started, boot)

    async def read_all(
        self, refs: Iterable[SiteRef], log_lines: int = 0, secret_data: bool = False
    ) -> dict[str, Reading]:
        refs = list(refs)
        found = await asyncio.gather(*(self.read(ref, log_lines, secret_data) for ref in refs))
        return {r.ref.host: r for r in found}

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
        if reading.not_installed:
            return (
                f"the skupper CLI is not installed: install skupper "
                f"{self.topology.min_skupper_version} or later on this host"
            )
        if meets is None:
            return f"skupper CLI not usable: {reading.problem or 'no version reported'}"
        if not meets:
            return (
                f"skupper {reading.cli} is not supported: Skupper "
                f"{self.topology.min_skupper_version}+ is needed (2.0.x has no system controller "
                "and different system commands); upgrade the skupper CLI on this host"
            )
        return None


def model_url(e: ModelEndpoint) -> str:
    """A model endpoint's ``/v1/models`` as the provider host reaches it."""
    return f"http://{e.model_host}:{e.model_port}/v1/models"


@dataclass(frozen=True)
class LinkRow:
    """A link the topology asks for, as the dialling site reports it: its status text (for
    people), whether that site reports it Ready (``ready``) and whether it carries traffic
    now (``connected``: ``predicates.link_up``); both None when that site was not read."""

    from_host: str
    from_site: str
    to_host: str
    to_site: str
    host: str
    port: int
    status: str
    connected: bool | None
    ready: bool | None = None


def link_rows(topo: Topology, readings: dict[str, Reading]) -> list[LinkRow]:
    """The local site's link to every hub, then the cluster's links, with their status."""
    rows: list[LinkRow] = []
    local = readings.get(LOCAL_HOST)
    for p in topo.providers:
        name = cr.link_name(p.site_name)
        if isinstance(local, PodmanReading):
            res = local.state.runtime_resources.get(("Link", name))
            if res is None:
                res = local.state.input_resources.get(("Link", name))
            status, connected = status_of(res), link_up(res, local, readings.get(p.name))
            ready: bool | None = claims_ready(res)
        else:
            status, connected, ready = "unknown (local site unreadable)", None, None
        rows.append(
            LinkRow(
                LOCAL_HOST,
                topo.local.site_name,
                p.name,
                p.site_name,
                p.public_host,
                p.inter_router_port,
                status,
                connected,
                ready,
            )
        )
    kube = topo.kubernetes
    if kube is not None:
        cluster = readings.get(kube.name)
        for host, target in link_targets(topo).items():
            name = cr.link_name(target.site)
            if isinstance(cluster, ClusterReading):
                link = cluster.state.links.get(name)
                status, connected = status_of(link), link_up(link, cluster, readings.get(host))
                ready = claims_ready(link)
            else:
                status, connected, ready = "unknown (API unreachable)", None, None
            rows.append(
                LinkRow(
                    kube.name,
                    kube.site_name,
                    host,
                    target.site,
                    target.host,
                    target.inter_router_port,
                    status,
                    connected,
                    ready,
                )
            )
    return rows
