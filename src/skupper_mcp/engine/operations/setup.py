"""``setup``: the seed's idempotent phases, for Skupper 2.1+.

Precheck (stop if anything fails); hubs in parallel (Site, RouterAccess with SANs and
explicit ports, Connector; controller install; ``system start`` the first time, ``system
reload`` only when inputs changed; tmpfs router re-creation where flagged); the local site
(Site, RouterAccess, Listeners, and Links built by hand from each hub's client certificate);
the Kubernetes site; private keys made 0600; auto-restart units everywhere; verify. Each
step runs only when the state read at the start says it is needed, so a second setup
changes nothing. The planning functions (``podman_setup_actions``, ``kube_setup_actions``, and
``desired.podman.local_resources``) are pure: the reads (site states, client certificates, the last
backup's CA) happen before them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace

from ...errors import CheckFailed, SiteStateError
from ...facts import names
from ...facts.images import release_images
from ...facts.site_state import SiteState
from ...facts.skupper_version import Version
from ...results import Check, CheckResult, OperationResult
from ...sites import resources as cr
from ...sites.kube import RESTART_ROUTER, ClusterSite, KubeState, apply_calls, delete_calls
from ...sites.podman import PodmanSite
from ...sites.resources import Resource, resource_status
from ...sites.work import Script
from ...topology import Topology
from ...vocabulary import LOCAL_HOST, Progress
from .. import model_actions as actions_for
from ..condition import podman_condition
from ..desired.cluster import Certs, differing, link_resources, link_targets
from ..desired.leftovers import Key, hub_pool_keys, listener_pool_keys
from ..desired.needs import (
    REFUSALS,
    Need,
    PodmanNeeds,
    cluster_needs,
    podman_needs,
    router_unread,
    shown,
    site_needs,
)
from ..desired.podman import hub_resources, hub_target, local_resources
from ..predicates import claims_ready, link_connected, podman_site_resource
from ..readings import Asked, ClusterReading, PodmanReading, Reading, Unread
from ..runner import (
    SITE_ERRORS,
    Action,
    SiteRun,
    describe,
    on_cluster,
    on_host,
    operation_result,
)
from ..scope import SiteRef
from ..scope import sites as all_sites
from ..sitemap import SiteMap, skip_or_fail
from ..stopping import stop_requested
from ..store.backups import Backups
from ..verify import Pacing, wait_for_links

VERIFY_DEADLINE = 40.0

Precheck = Callable[[], Awaitable[CheckResult]]


#: Steps of a setup plan that bring a site up rather than build it: not in the setup-needed
#: list (``desired.needs``), as up takes them too.
RUN_STATE_STEPS = frozenset({"start units", "create links", "restart router pod", "wait for links"})


def podman_setup_actions(
    site: PodmanSite,
    state: SiteState,
    desired: list[Resource],
    *,
    tmpfs: bool,
    restore_ca: dict[str, bytes] | None,
    owned: Mapping[Key, str] | None = None,
) -> list[Action]:
    """What this podman site still needs (``podman_needs``; ``owned``: what pools may have
    left there), in the seed's order; then its units started where they are not running."""
    need = podman_needs(
        state, desired, namespace=site.namespace, tmpfs=tmpfs, owned=owned, site=site.host
    )
    return needs_actions(site, state, need, restore_ca=restore_ca)


def needs_actions(
    site: PodmanSite,
    state: SiteState,
    need: PodmanNeeds,
    *,
    restore_ca: dict[str, bytes] | None,
) -> list[Action]:
    """The steps that fulfil ``need`` (every one read from its ``Need`` list), then the
    units started that are not running; a need setup cannot fulfil (``refusals``) is the
    one step, which refuses the site with its line and changes nothing."""
    if need.refusals:
        return [_refusal(need)]
    return [
        *_build_steps(site, need),
        *_render_steps(site, need, restore_ca),
        *_tmpfs_steps(site, state, need),
        *_unit_steps(site, state, need),
    ]


def _refusal(need: PodmanNeeds) -> Action:
    lines = "; ".join(n.why for n in need.refusals)

    async def refuse() -> str:
        raise CheckFailed(f"{lines}: nothing was changed")

    return Action("refuse to change the site", (), refuse, changes=False)


def _build_steps(site: PodmanSite, need: PodmanNeeds) -> list[Action]:
    """The controller, podman's socket, and the resources (before any render)."""
    todo: list[Action] = []
    if need.replace_controller:
        # ``system install`` keeps a controller container that exists, even stopped
        # (bootstrap/install.go@2.2.1:50-55): an earlier release's goes first
        old = need.replace_controller
        todo.append(on_host("remove old system controller", site, site.remove_container(old)))
    if need.install_controller:
        # ``system install`` enables and starts podman.socket itself
        todo.append(on_host("install system controller", site, site.install_controller()))
    elif need.enable_socket:
        # the CLI talks to podman only through its API socket: without it start/reload fail
        todo.append(on_host("enable podman.socket", site, site.enable_podman_socket()))
    if need.remove or need.replace:
        todo.append(on_host("remove resources", site, site.delete(need.remove + need.replace)))
    if need.replace and not need.first_render:
        # the running site must lose the old strategy before the new one is rendered
        todo.append(on_host("reload without the old strategy", site, site.render(False)))
    if need.apply:
        todo.append(on_host("apply resources", site, site.apply(need.apply)))
    return todo


def _render_steps(
    site: PodmanSite, need: PodmanNeeds, restore_ca: dict[str, bytes] | None
) -> list[Action]:
    """``skupper system start`` the first time (the backup's CA restored first), else
    ``reload`` when a need asks for one."""
    todo: list[Action] = []
    if need.first_render:
        if restore_ca:
            todo.append(on_host("restore site CA", site, site.restore_issuer(restore_ca)))
        todo.append(on_host("skupper system start", site, site.render(True)))
    elif need.reload:
        if need.leftover:
            # reload renames the router to <name>-backup and only logs a failure to remove
            # it afterwards; a leftover of that name makes every later reload fail
            # (compat/site_state_renderer.go@2.1.0 cleanupExistingNamespace)
            todo.append(
                on_host("remove leftover backup", site, site.remove_container(need.leftover))
            )
        todo.append(on_host("skupper system reload", site, site.render(False)))
    return todo


def _tmpfs_steps(site: PodmanSite, state: SiteState, need: PodmanNeeds) -> list[Action]:
    """The router re-created with a tmpfs /tmp, from its container as rendered now (a
    render above may have replaced it). A router whose inspect cannot be read after the
    stop is started again before setup says so: never left stopped."""
    if not need.recreate_tmpfs:
        return []
    ns = site.namespace
    router_unit = names.router_unit(ns)
    stop = site.systemctl("stop", [router_unit])

    async def recreate_router() -> str:
        await site.execute(stop)
        fresh = await site.read()
        if fresh.router is None:
            await site.execute(site.start([router_unit]))
            why = router_unread(fresh, names.router_container(ns)) or "it is missing"
            raise SiteStateError(
                site.host,
                f"the router container of {ns!r} on {site.host} was not re-created ({why}); "
                "its unit was started again",
            )
        return await site.execute(site.recreate_router_with_tmpfs(fresh.router))

    planned = (stop, site.recreate_router_with_tmpfs(state.router))
    return [Action("recreate router with tmpfs /tmp", planned, recreate_router)]


def _unit_steps(site: PodmanSite, state: SiteState, need: PodmanNeeds) -> list[Action]:
    """Private keys closed, the units written, restarted where they changed (or the router
    was re-created), and the others started where they do not run."""
    todo: list[Action] = []
    if need.close_keys:
        todo.append(on_host("make private keys 0600", site, site.close_keys()))
    if need.install_units:
        todo.append(on_host("install auto-restart units", site, site.install_units(state)))
    router_unit = names.router_unit(site.namespace)
    restart = [
        u for u in need.units if u in need.stale_units or (need.recreate_tmpfs and u == router_unit)
    ]
    start = [u for u in need.units if u not in restart and not state.unit(u).active]
    if restart:
        todo.append(on_host("restart units", site, site.systemctl("restart", restart)))
    if start:
        todo.append(on_host("start units", site, site.start(start)))
    return todo


def kube_setup_actions(
    topology: Topology,
    site: ClusterSite,
    state: KubeState,
    certs: Certs,
    asked: Asked | None = None,
) -> tuple[list[Action], list[str]]:
    """Everything the cluster's site needs (``cluster_needs``), then the links ``down``
    removed made again (setup brings every site up); and the peers it cannot link to yet
    (no client certificate)."""
    links, problems = link_resources(topology, state, certs)
    need = cluster_needs(topology, state, asked, certs)
    removed = [r for r in differing(state, links) if r not in need.links]
    todo: list[Action] = []
    if need.remove:
        todo.append(on_cluster("remove resources", site, delete_calls(need.remove)))
    if need.base:
        todo.append(on_cluster("apply site and listeners", site, apply_calls(need.base)))
    if need.links:
        todo.append(on_cluster("apply links", site, apply_calls(need.links)))
    if removed:
        todo.append(on_cluster("create links", site, apply_calls(removed)))
    if need.links or removed:
        todo.append(on_cluster("restart router pod", site, (RESTART_ROUTER,)))
    names = [r["metadata"]["name"] for r in links if r["kind"] == "Link"]
    if names and (todo or not all(link_connected(state.links.get(n)) for n in names)):
        todo.append(wait_for_links(site, names))
    return todo, problems


async def needs_checks(sites: SiteMap) -> list[Check]:
    """``setup --check``'s word on what setup would build, from the same ``Need`` list as
    its plan, status's drift and up's refusal: one check per site it could read, a fail
    where setup would refuse the site (``REFUSALS``)."""
    views = await sites.read_all(all_sites(sites.topology))
    found = {host: site_needs(sites.topology, view) for host, view in views.items()}
    # a site not read is left to the precheck's own checks, which say why
    return [_needs_check(host, needs) for host, needs in found.items() if needs is not None]


def _needs_check(host: str, needs: list[Need]) -> Check:
    refused = [n.why for n in needs if n.what in REFUSALS]
    if refused:
        return Check(
            name="setup-needed",
            site=host,
            status="fail",
            detail=f"setup would refuse {host}: {shown(refused)}",
            hint="read the site again (status, diagnose) once what it names is fixed",
        )
    if needs:
        detail = f"setup would build: {shown([n.why for n in needs])}"
    else:
        detail = "set up as topology.env says: nothing to build"
    return Check(name="setup-needed", site=host, status="pass", detail=detail)


async def _noop() -> str:
    return "planned"


def _once_set_up(host: str) -> Action:
    """A plan's step for a link whose peer this very setup will create first."""
    return Action(f"link to {host} once it is set up", (), _noop)


async def run(
    sites: SiteMap,
    backups: Backups,
    precheck: Precheck,
    *,
    plan: bool = False,
    progress: Progress | None = None,
) -> OperationResult:
    topo = sites.topology
    refs = all_sites(topo)
    runs = {r.host: SiteRun(r, plan, progress) for r in refs}
    check = await precheck()
    failed = [c for c in check.checks if c.status == "fail"]
    if failed:
        return _stopped(refs, runs, failed)
    views = await sites.read_all(refs, secret_data=True)
    for ref in refs:
        match views[ref.host]:
            case Unread() as unread:
                skip_or_fail(runs[ref.host], unread)
            case PodmanReading(state=state):
                problem = sites.version_problem(state)
                if problem:
                    runs[ref.host].fail(problem)
    providers = [r for r in refs if r.role == "provider"]
    await asyncio.gather(*(_hub(sites, backups, runs[r.host], views[r.host]) for r in providers))
    await _local(sites, backups, runs[LOCAL_HOST], views[LOCAL_HOST])
    kube_ref = next((r for r in refs if r.platform == "kubernetes"), None)
    if kube_ref is not None:
        await _kube(sites, runs[kube_ref.host], views[kube_ref.host], plan)
    if not plan:
        await _verify(topo, runs, views)
    results = [runs[r.host].result("up") for r in refs]
    if not plan:
        sites.remember(results, "setup", views)
    actions = actions_for.model_actions("setup", topo, results, {})
    result = operation_result("setup", "all", results, actions, plan)
    if not plan and result.ok and not any(r.changed for r in results):
        result.summary = "setup: nothing to change, every site is already set up"
    return result


def _stopped(refs: list[SiteRef], runs: dict[str, SiteRun], failed: list[Check]) -> OperationResult:
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
    backups: Backups,
    run: SiteRun,
    view: Reading,
    desired: list[Resource],
    tmpfs: bool,
    owned: Mapping[Key, str],
) -> None:
    if run.failed or not isinstance(view, PodmanReading):
        return
    try:
        ca = None if view.state.rendered else backups.latest_ca(view.ref.host, view.namespace)
    except SITE_ERRORS as exc:  # an incomplete or unreadable backup
        await run.note("restore site CA", describe(exc), ok=False)
        run.fail(describe(exc))
        return
    site = view.site
    need = podman_needs(
        view.state, desired, namespace=site.namespace, tmpfs=tmpfs, owned=owned, site=site.host
    )
    if need.refusals:  # a plan refuses it too: setup would change nothing there
        why = "; ".join(n.why for n in need.refusals)
        await run.note("setup", why, ok=False, seconds=view.seconds)
        run.fail(f"setup cannot build {site.host} as topology.env says: {why}")
        return
    todo = needs_actions(site, view.state, need, restore_ca=ca)
    if not todo:
        await run.note("setup", "already set up", seconds=view.seconds)
    if need.install_controller or need.first_render or need.of("router-release"):
        # Skupper pulls its images in these (an upgraded CLI: the new release's router)
        todo.insert(0, _pull_images(site, view.state.skupper.cli, run))
    await run.perform(todo)


#: How long setup lets a host's image pulls take: a first pull over a slow link takes
#: minutes, far beyond the verify's 40 s (VERIFY_DEADLINE).
PULL_DEADLINE = 900.0


def _pull_images(site: PodmanSite, release: Version | None, run: SiteRun) -> Action:
    """``podman pull`` of the images the host's release runs, before Skupper's silent pull
    (facts/images.py), each line it prints a progress line."""
    images = ", ".join(release_images(release)) or "none known for this release"
    shown = Script(
        f"podman pull of {images} where missing (up to {PULL_DEADLINE:.0f} s)", (), "pulled"
    )
    return Action(
        "pull images", (shown,), lambda: site.pull_images(release, run.say, PULL_DEADLINE)
    )


async def _hub(sites: SiteMap, backups: Backups, run: SiteRun, view: Reading) -> None:
    p = sites.provider(view.ref.host)
    topo = sites.topology
    desired = hub_resources(p, topo.pools)
    await _podman(backups, run, view, desired, p.tmpfs_workaround, hub_pool_keys(topo))


async def _local(sites: SiteMap, backups: Backups, run: SiteRun, view: Reading) -> None:
    if run.failed or not isinstance(view, PodmanReading):
        return
    topo = sites.topology
    certs = await sites.client_certs({p.name: hub_target(p) for p in topo.providers})
    desired, missing = local_resources(topo, view.state, certs)
    if missing and run.plan:
        await run.perform([_once_set_up(name) for name in missing])
    elif missing and not stop_requested():  # a stopped setup says so at the site itself
        await run.note("links", f"no link yet to {', '.join(missing)}: not set up", ok=False)
    await _podman(backups, run, view, desired, False, listener_pool_keys(topo))
    if missing and not run.failed and not run.plan:
        run.fail(f"the local site has no link to {', '.join(missing)} (their setup failed)")


async def _kube(sites: SiteMap, run: SiteRun, view: Reading, plan: bool) -> None:
    if run.failed or not isinstance(view, ClusterReading):
        return
    topo = sites.topology
    certs = await sites.client_certs(link_targets(topo))
    todo, problems = kube_setup_actions(topo, view.site, view.state, certs, view.asked)
    if plan and problems:
        # A plan before the peers exist: their certificates come from this very setup.
        todo += [_once_set_up(host) for host in problems]
        problems = []
    if not todo and not problems:
        await run.note("setup", "already set up", seconds=view.seconds)
    await run.perform(todo)
    if problems and not run.failed:
        run.fail(f"no client certificate from {', '.join(problems)}: is it set up and reachable?")


async def _verify(topology: Topology, runs: dict[str, SiteRun], views: dict[str, Reading]) -> None:
    deadline = time.monotonic() + VERIFY_DEADLINE
    if stop_requested():  # a stopped setup does not wait: each site says verify did not run
        for run in runs.values():
            if not run.failed and isinstance(views[run.ref.host], PodmanReading):
                await run.stop_short(["verify"])
        return
    checks = [
        wait_site_ready(run, reading, deadline, _links_of(topology, host))
        for host, run in runs.items()
        if not run.failed and isinstance(reading := views[host], PodmanReading)
    ]
    await asyncio.gather(*checks)


def _links_of(topology: Topology, host: str) -> list[str]:
    if host != LOCAL_HOST:
        return []
    return [cr.link_name(p.site_name) for p in topology.providers]


async def wait_site_ready(
    run: SiteRun, reading: PodmanReading, deadline: float, links: list[str]
) -> None:
    """Wait for the site to be ``up`` (router and controller running), its Site Ready and
    (on the local site) every link connected, all from one state read per poll.

    The Site's Ready alone proves little: Skupper's renderer writes it before any router
    runs, and the 2.1.0 controller never changes it (fs_config_renderer.go@2.1.2:130-131).
    The router's container and unit and the controller are what say it runs."""
    started = time.monotonic()
    site = reading.site
    last = ""
    pacing = Pacing()
    while True:
        try:
            now = replace(reading, state=await site.read(), asked="setup")
            condition, why = podman_condition(now)
            pending = [] if condition == "up" else [why]
            if not claims_ready(podman_site_resource(now)):
                pending.append("site not Ready")
            for name in links:
                res = now.state.runtime_resources.get(("Link", name))
                if not link_connected(res):
                    pending.append(f"link {name}: {resource_status(res).message or 'absent'}")
            if not pending:
                connected = f", links connected: {', '.join(links)}" if links else ""
                detail = "router running, site Ready" + connected
                await run.note("verify", detail, seconds=time.monotonic() - started)
                return
            last = "; ".join(pending)
        except SITE_ERRORS as exc:
            last = describe(exc)
        if stop_requested():
            await run.stop_short(["verify"])
            return
        if time.monotonic() >= deadline:
            await run.note("verify", last, ok=False, seconds=time.monotonic() - started)
            run.fail(f"not ready after setup: {last}")
            return
        await pacing.pause(deadline)
