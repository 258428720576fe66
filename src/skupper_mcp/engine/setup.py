"""``setup``: the seed's idempotent phases, for Skupper 2.1+.

Precheck (stop if anything fails); hubs in parallel (Site, RouterAccess with SANs and
explicit ports, Connector; controller install; ``system start`` the first time, ``system
reload`` only when inputs changed; tmpfs router re-creation where flagged); the local site
(Site, RouterAccess, Listeners, and Links built by hand from each hub's client certificate);
the Kubernetes site; ``chmod -R o+r`` on certs; auto-restart units everywhere; verify. Each
step runs only when the state read at the start says it is needed, so a second setup
changes nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from ..errors import BackupError
from ..facts.site_state import SiteState
from ..models import Check, CheckResult, OperationResult
from ..sites import resources as cr
from ..sites import units
from ..sites.podman import PodmanSite, SiteStateError
from ..sites.resources import LinkTarget, Resource
from ..topology import ProviderHost
from ..vocabulary import LOCAL_HOST, Progress
from . import model_actions as actions_for
from .backups import Backups
from .kubesetup import fetch_cert, kube_setup_actions
from .runner import SITE_ERRORS, Action, SiteRun, describe
from .scope import SiteRef
from .scope import sites as all_sites
from .sitemap import SiteMap, SiteView
from .updown import operation_result

VERIFY_DEADLINE = 40.0

Precheck = Callable[[], Awaitable[CheckResult]]


def hub_resources(p: ProviderHost) -> list[Resource]:
    return [
        cr.site(p.site_name),
        cr.router_access(p.site_name, p.inter_router_port, p.edge_port, p.sans),
        cr.connector(p.routing_key, p.model_host, p.model_port),
    ]


def hub_target(p: ProviderHost) -> LinkTarget:
    return LinkTarget(p.site_name, p.public_host, p.inter_router_port, p.edge_port)


def podman_setup_actions(
    site: PodmanSite,
    state: SiteState,
    desired: list[Resource],
    *,
    tmpfs: bool,
    restore_ca: dict[str, bytes] | None,
) -> list[Action]:
    """What this podman site still needs, in the seed's order."""
    ns = site.namespace
    podman = state.podman_path or "podman"
    todo: list[Action] = []
    if units.controller_container(state.user) not in state.containers:
        todo.append(Action("install system controller", site.install_controller))
    changed = [r for r in desired if not cr.same(r, state.input_resources.get(cr.key(r)))]
    if changed:
        todo.append(Action("apply resources", lambda: site.apply(changed)))
    rendering = False
    if not state.rendered:
        if restore_ca:
            todo.append(Action("restore site CA", lambda: site.restore_issuer(restore_ca)))
        todo.append(Action("skupper system start", lambda: site.render(True)))
        rendering = True
    elif changed or units.router_container(ns) not in state.containers:
        todo.append(Action("skupper system reload", lambda: site.render(False)))
        rendering = True
    router_unit = units.router_unit(ns)
    recreate = tmpfs and (
        rendering
        or state.router is None
        or not (state.router.has_tmpfs and state.router.has_ssl_base_path)
    )
    if recreate:

        async def recreate_router() -> str:
            await site.systemctl("stop", [router_unit])
            fresh = await site.read()
            if fresh.router is None:
                raise SiteStateError(f"the router container of {ns!r} is missing on {site.host}")
            return await site.recreate_router_with_tmpfs(fresh.router)

        todo.append(Action("recreate router with tmpfs /tmp", recreate_router))
    if rendering or state.certs_private:
        todo.append(Action("chmod -R o+r certs", site.open_certs))
    wanted = units.site_units(ns, state.user, podman)
    stale_units = [
        w.name
        for w in wanted
        if rendering or state.unit_files.get(w.name) != w.content or w.name in state.enabled_at_boot
    ]
    if stale_units or state.watch_script != units.watch_script(podman):
        todo.append(Action("install auto-restart units", lambda: site.install_units(state)))
    restart = [
        w.name for w in wanted if w.name in stale_units or (recreate and w.name == router_unit)
    ]
    start = [w.name for w in wanted if w.name not in restart and not state.unit(w.name).active]
    if restart:
        todo.append(Action("restart units", lambda: site.systemctl("restart", restart)))
    if start:
        todo.append(Action("start units", lambda: site.systemctl("start", start)))
    return todo


async def _noop() -> str:
    return "planned"


class Setup:
    def __init__(
        self, sites: SiteMap, backups: Backups, precheck: Precheck, progress: Progress | None
    ) -> None:
        self.sites = sites
        self.backups = backups
        self.precheck = precheck
        self.progress = progress

    async def run(self, plan: bool = False) -> OperationResult:
        topo = self.sites.topology
        refs = all_sites(topo)
        runs = {r.host: SiteRun(r, plan, self.progress) for r in refs}
        check = await self.precheck()
        failed = [c for c in check.checks if c.status == "fail"]
        if failed:
            return self._stopped(refs, runs, failed)
        views = await self.sites.views(refs)
        for ref in refs:
            view = views[ref.host]
            if not view.usable(runs[ref.host]):
                continue
            if view.state is not None:
                problem = self.sites.version_problem(view.state)
                if problem:
                    runs[ref.host].fail(problem)
        providers = [r for r in refs if r.role == "provider"]
        await asyncio.gather(*(self._hub(runs[r.host], views[r.host]) for r in providers))
        await self._local(runs[LOCAL_HOST], views[LOCAL_HOST])
        kube_ref = next((r for r in refs if r.platform == "kubernetes"), None)
        if kube_ref is not None:
            await self._kube(runs[kube_ref.host], views[kube_ref.host], plan)
        if not plan:
            await self._verify(runs, views)
        results = [runs[r.host].result("up") for r in refs]
        actions = actions_for.model_actions("setup", topo, results, {})
        result = operation_result("setup", "all", results, actions, plan)
        if not plan and result.ok and not any(r.changed for r in results):
            result.summary = "setup: nothing to change, every site is already set up"
        return result

    def _stopped(
        self, refs: list[SiteRef], runs: dict[str, SiteRun], failed: list[Check]
    ) -> OperationResult:
        by_site: dict[str, list[str]] = {}
        for c in failed:
            by_site.setdefault(c.site, []).append(
                f"{c.name}: {c.detail}" + (f" ({c.hint})" if c.hint else "")
            )
        for ref in refs:
            problems = by_site.get(ref.host)
            if problems:
                runs[ref.host].fail("precheck failed: " + "; ".join(problems))
            else:
                runs[ref.host].skip(
                    "setup stopped before changing anything: precheck failed on "
                    + ", ".join(sorted(by_site))
                )
        results = [runs[r.host].result("skipped") for r in refs]
        result = operation_result("setup", "all", results, [], runs[refs[0].host].plan)
        result.summary = (
            "setup stopped: the precheck failed on "
            + ", ".join(sorted(by_site))
            + "; nothing was changed"
        )
        return result

    async def _podman(
        self, run: SiteRun, view: SiteView, desired: list[Resource], tmpfs: bool
    ) -> None:
        if run.failed or view.podman is None or view.state is None:
            return
        try:
            ca = (
                None
                if view.state.rendered
                else self.backups.latest_ca(view.ref.host, view.podman.namespace)
            )
        except BackupError as exc:
            await run.note("restore site CA", str(exc), ok=False)
            run.fail(str(exc))
            return
        todo = podman_setup_actions(view.podman, view.state, desired, tmpfs=tmpfs, restore_ca=ca)
        if not todo:
            await run.note("setup", "already set up", seconds=view.seconds)
        await run.perform(todo)

    async def _hub(self, run: SiteRun, view: SiteView) -> None:
        p = self.sites.provider(view.ref.host)
        await self._podman(run, view, hub_resources(p), p.tmpfs_workaround)

    async def _local(self, run: SiteRun, view: SiteView) -> None:
        if run.failed or view.state is None:
            return
        topo = self.sites.topology
        local = topo.local
        desired: list[Resource] = [
            cr.site(local.site_name),
            cr.router_access(local.site_name, local.inter_router_port, local.edge_port, local.sans),
        ]
        desired += [
            cr.listener(p.routing_key, p.routing_key, "0.0.0.0", p.local_port)
            for p in topo.providers
        ]
        certs = await asyncio.gather(
            *(fetch_cert(self.sites, p.name, p.site_name) for p in topo.providers)
        )
        missing = []
        for p, cert in zip(topo.providers, certs, strict=True):
            target = hub_target(p)
            existing = view.state.input_resources.get(("Secret", cr.link_name(p.site_name)))
            if cert is not None:
                desired.append(cr.link_secret(target, cert))
            elif existing is None:
                missing.append(p.name)
                continue
            desired.append(cr.link(target))
        if missing and run.plan:
            await run.perform(
                [Action(f"link to {name} once it is set up", _noop) for name in missing]
            )
        elif missing:
            await run.note("links", f"no link yet to {', '.join(missing)}: not set up", ok=False)
        await self._podman(run, view, desired, tmpfs=False)
        if missing and not run.failed and not run.plan:
            run.fail(f"the local site has no link to {', '.join(missing)} (their setup failed)")

    async def _kube(self, run: SiteRun, view: SiteView, plan: bool) -> None:
        if run.failed:
            return
        todo, problems = await kube_setup_actions(self.sites, view, plan)
        if plan and problems:
            # A plan before the peers exist: their certificates come from this very setup.
            todo += [Action(f"link to {host} once it is set up", _noop) for host in problems]
            problems = []
        if not todo and not problems:
            await run.note("setup", "already set up", seconds=view.seconds)
        await run.perform(todo)
        if problems and not run.failed:
            run.fail(
                f"no client certificate from {', '.join(problems)}: is it set up and reachable?"
            )

    async def _verify(self, runs: dict[str, SiteRun], views: dict[str, SiteView]) -> None:
        deadline = time.monotonic() + VERIFY_DEADLINE
        checks = [
            wait_site_ready(run, views[host].podman, deadline, self._links_of(host))
            for host, run in runs.items()
            if not run.failed and views[host].podman is not None
        ]
        await asyncio.gather(*checks)

    def _links_of(self, host: str) -> list[str]:
        if host != LOCAL_HOST:
            return []
        return [cr.link_name(p.site_name) for p in self.sites.topology.providers]


async def wait_site_ready(
    run: SiteRun, site: PodmanSite | None, deadline: float, links: list[str]
) -> None:
    """Wait for the router, the Site's Ready status and (on the local site) every link,
    all from one state read per poll."""
    assert site is not None
    started = time.monotonic()
    router_unit = units.router_unit(site.namespace)
    router_container = units.router_container(site.namespace)
    last = ""
    while True:
        try:
            state = await site.read()
            pending = []
            if not (state.container_running(router_container) and state.unit(router_unit).active):
                pending.append(f"router {state.unit(router_unit).active_state}")
            sites_ready = [r for (k, _), r in state.runtime_resources.items() if k == "Site"]
            if not sites_ready or (sites_ready[0].get("status") or {}).get("status") != "Ready":
                pending.append("site not Ready")
            for name in links:
                res = state.runtime_resources.get(("Link", name))
                if not res or (res.get("status") or {}).get("status") != "Ready":
                    msg = ((res or {}).get("status") or {}).get("message") or "absent"
                    pending.append(f"link {name}: {msg}")
            if not pending:
                connected = f", links connected: {', '.join(links)}" if links else ""
                detail = "router running, site Ready" + connected
                await run.note("verify", detail, seconds=time.monotonic() - started)
                return
            last = "; ".join(pending)
        except SITE_ERRORS as exc:
            last = describe(exc)
        if time.monotonic() >= deadline:
            await run.note("verify", last, ok=False, seconds=time.monotonic() - started)
            run.fail(f"not ready after setup: {last}")
            return
        await asyncio.sleep(0.5)
