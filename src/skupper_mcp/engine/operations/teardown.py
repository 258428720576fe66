"""``teardown``: remove the Skupper infrastructure on every site, keeping a backup first.

Each podman site's inputs and CA are copied into the local backup folder before anything is
removed, so nothing the user made is lost and a later setup restores the same CA.
Confirmation (elicitation or ``confirm=true``) is the front ends' job.
"""

from __future__ import annotations

import asyncio

from ...facts import names
from ...facts.site_state import SiteState
from ...results import OperationResult
from ...sites import resources as cr
from ...sites.kube import ClusterSite, KubeState, delete_calls
from ...sites.podman import PodmanSite
from ...topology import Topology
from ...vocabulary import Progress
from .. import model_actions as actions_for
from ..desired.cluster import base_resources, link_targets
from ..readings import ClusterReading, PodmanReading, Unread
from ..runner import Action, SiteRun, on_cluster, operation_result
from ..scope import sites as all_sites
from ..served import read_served, served_ids
from ..sitemap import SiteMap, nothing_to_do, skip_or_fail
from ..store.backups import Backups, checked


def podman_teardown_actions(
    host: str, site: PodmanSite, state: SiteState, backups: Backups
) -> list[Action]:
    ours = {names.router_container(site.namespace), names.controller_container(state.user)}
    if not (
        state.rendered or state.input_resources or state.unit_files or ours & set(state.containers)
    ):
        return []  # other containers (the model server) are not Skupper's to remove

    async def backup() -> str:
        found = await site.backup_archive()
        if not found.files:
            return "nothing to back up"
        await checked(host, found.archive, found.files)
        path = backups.save(host, site.namespace, found.archive)
        return f"inputs and CA saved to {path}"

    return [
        Action("back up inputs and CA", (site.backup_script(),), backup, changes=False),
        Action("remove site", (site.remove(state),), lambda: site.removed(state)),
    ]


def kube_teardown_actions(topology: Topology, site: ClusterSite, state: KubeState) -> list[Action]:
    names = [cr.link_name(t.site) for t in link_targets(topology).values()]
    keys = [("Link", n) for n in names if n in state.links]
    keys += [("Secret", n) for n in names if n in state.secrets]
    keys += [cr.key(r) for r in base_resources(topology)[1:] if state.existing(r) is not None]
    if state.site is not None:
        keys.append(("Site", state.site["metadata"]["name"]))
    return [on_cluster("remove skupper resources", site, delete_calls(keys))] if keys else []


async def run(
    sites: SiteMap, backups: Backups, *, plan: bool = False, progress: Progress | None = None
) -> OperationResult:
    topo = sites.topology
    refs = all_sites(topo)
    views = await sites.read_all(refs)
    # before anything stops: a keyed server is asked through the route the sites still hold
    served = served_ids(await read_served(topo, views))
    runs = {r.host: SiteRun(r, plan, progress) for r in refs}
    work = []
    for ref in refs:
        view, run = views[ref.host], runs[ref.host]
        match view:
            case Unread():
                skip_or_fail(run, view)
                continue
            case ClusterReading():
                todo = kube_teardown_actions(topo, view.site, view.state)
            case PodmanReading():
                todo = podman_teardown_actions(ref.host, view.site, view.state, backups)
        if not todo:
            await nothing_to_do(run, view, "teardown", "nothing to remove")
        work.append(run.perform(todo))
    await asyncio.gather(*work)
    results = [runs[r.host].result("removed") for r in refs]
    if not plan:
        sites.remember(results, "teardown")
    return operation_result(
        "teardown",
        "all",
        results,
        actions_for.model_actions("teardown", topo, results, served, planned=plan),
        plan,
    )
