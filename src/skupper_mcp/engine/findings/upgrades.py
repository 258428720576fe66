"""A host whose skupper CLI was upgraded under a running site (issue 46 item 4).

Skupper has no in-place upgrade of a system site (skupper #2390, open: "check if the router
container is using the correct image otherwise the site needs to be bootstrapped again"):
a package upgrade brings the new CLI, and the router container keeps the image of the
release that bootstrapped it. ``skupper system reload`` is a bootstrap
(``internal/cmd/skupper/system/nonkube/system_reload.go@2.2.1``): it makes the router
container anew with the CLI's image (``internal/images/image_utils.go@2.2.1:46-55``) and
keeps the site's CA and inputs (``internal/nonkube/common/fs_config_renderer.go@2.2.1:33-40``,
``reloadDirectories``), so the site keeps its identity, links and listeners. The fact is
decided once (``facts/images.release_drift``); setup's ``router-release`` need reloads.

The system controller's container is no part of a site's bootstrap: ``system install``
makes it only where no container of its name exists, running or not
(``internal/nonkube/bootstrap/install.go@2.2.1:50-62``), and ``system uninstall`` removes it
without touching a site's files (``bootstrap/uninstall.go@2.2.1:50-74``; the CLI halts it
while sites are active, or with ``--force`` tears them down first). So setup removes an
earlier release's controller container itself and installs again
(``facts/images.controller_drift``, the ``controller-release`` need).
"""

from __future__ import annotations

from collections.abc import Iterator

from ...facts import names
from ...facts.images import controller_drift, release_drift
from ...facts.router_release import image_release
from ...results import Finding
from .context import Network, call, finding


def release_upgraded(network: Network) -> Iterator[Finding]:
    for view in network.podman_readings():
        state = view.state
        drift = release_drift(
            state.skupper.cli, image_release(state.router.inspect) if state.router else None
        )
        if drift is None:
            continue
        ref = view.ref
        controller = names.controller_container(state.user)
        found = state.containers.get(controller)
        old = controller_drift(state.skupper.cli, found.image if found else None)
        yield finding(
            "release-upgraded",
            ref,
            "warning",
            symptom=f"{ref.host}'s skupper CLI is {drift.cli}, but its site still runs the "
            f"router an earlier Skupper installed (skupper-router {drift.router})",
            evidence=[
                f"skupper version on {ref.host}: {drift.cli} (its router: {drift.wanted})",
                f"{names.router_container(view.namespace)}: skupper-router {drift.router}",
                *([old.line(controller)] if old else []),
            ],
            cause="a package upgrade changes the CLI only: Skupper has no in-place upgrade of "
            "a system site, whose router keeps its image until the site is bootstrapped "
            "again (skupper #2390)",
            fix=f"run setup on {ref.host}: it re-bootstraps the site (skupper system reload "
            f"makes the router anew with {drift.cli}'s image and keeps the site's CA, links "
            "and listeners)"
            + (
                f", and replaces the system controller of {old.image} (system install keeps "
                "an existing one: setup removes it, then installs again)"
                if old
                else ""
            ),
            next=[call("setup", target=ref.host)],
        )


UPGRADE_RULES = (release_upgraded,)
