"""``teardown``: remove the Skupper infrastructure on every site, keeping a backup first.

Each podman site's inputs and CA are copied into the local backup folder before anything is
removed, so nothing the user made is lost and a later setup restores the same CA.
Confirmation (elicitation or ``confirm=true``) is the front ends' job.
"""

from __future__ import annotations

import asyncio

from ..facts.site_state import SiteState
from ..models import OperationResult
from ..sites.podman import PodmanSite
from ..vocabulary import Progress
from . import model_actions as actions_for
from .backups import Backups, check_complete
from .kubesetup import kube_teardown_actions
from .runner import Action, SiteRun
from .scope import sites as all_sites
from .sitemap import SiteMap, served_models
from .updown import operation_result


def podman_teardown_actions(
    host: str, site: PodmanSite, state: SiteState, backups: Backups
) -> list[Action]:
    if not (state.rendered or state.input_resources or state.unit_files or state.containers):
        return []

    async def backup() -> str:
        found = await site.backup_archive()
        if not found.files:
            return "nothing to back up"
        check_complete(host, found.archive, found.files)
        path = backups.save(host, site.namespace, found.archive)
        return f"inputs and CA saved to {path}"

    return [
        Action("back up inputs and CA", backup, changes=False),
        Action("remove site", lambda: site.remove(state)),
    ]


class Teardown:
    def __init__(self, sites: SiteMap, backups: Backups, progress: Progress | None) -> None:
        self.sites = sites
        self.backups = backups
        self.progress = progress

    async def run(self, plan: bool = False) -> OperationResult:
        topo = self.sites.topology
        refs = all_sites(topo)
        views = await self.sites.views(refs)
        runs = {r.host: SiteRun(r, plan, self.progress) for r in refs}
        work = []
        for ref in refs:
            view, run = views[ref.host], runs[ref.host]
            if not view.usable(run):
                continue
            if view.kube is not None:
                todo = kube_teardown_actions(self.sites, view)
            else:
                assert view.podman is not None and view.state is not None
                todo = podman_teardown_actions(ref.host, view.podman, view.state, self.backups)
            if not todo:
                await run.note("teardown", "nothing to remove", seconds=view.seconds)
            work.append(run.perform(todo))
        await asyncio.gather(*work)
        results = [runs[r.host].result("down") for r in refs]
        served = served_models(views)
        return operation_result(
            "teardown",
            "all",
            results,
            actions_for.model_actions("teardown", topo, results, served),
            plan,
        )
