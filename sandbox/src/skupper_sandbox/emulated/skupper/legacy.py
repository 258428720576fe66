"""``skupper system`` as 2.0.x had it: setup/teardown, start/stop of the router container.

Enough for clear behaviour; the product refuses 2.0.x. There is no system-controller.
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Mapping

from . import units
from .failure import CliFailure
from .host_commands import HostCommandError, podman, quietly, systemctl, systemctl_argv
from .system import System


class LegacySystem(System):
    """2.0.x meanings: ``setup`` bootstraps, ``start``/``stop`` only run the router."""

    def __init__(self, env: Mapping[str, str], cli_version: str, platform: str) -> None:
        super().__init__(env, cli_version, platform)

    def run(self, action: str, namespace: str, args: argparse.Namespace) -> None:
        paths = self.paths(namespace)
        if action == "setup":
            if paths.is_rendered() and not args.force:
                raise CliFailure(f"namespace already exists: {namespace} (use -f to re-create it)")
            self._bootstrap(paths, reload=paths.is_rendered())
        elif action == "reload":
            self.reload(namespace)
        elif action == "start":
            podman("start", paths.router_container)
        elif action == "stop":
            podman("stop", paths.router_container)
        elif action == "teardown":
            quietly(["podman", "rm", "-f", paths.router_container])
            units.remove(self.unit_dir, paths.unit_name)
            shutil.rmtree(paths.home, ignore_errors=True)
            print(f'Namespace "{namespace}" has been removed')
        elif action == "install":
            try:
                systemctl("enable", "podman.socket")
                systemctl("start", "podman.socket")
            except HostCommandError as exc:
                raise CliFailure(f"failed to configure the environment : {exc}") from exc
            print(f"Platform {self.platform} is now configured for Skupper")
        elif action == "uninstall":
            quietly(systemctl_argv("stop", "podman.socket"))
            quietly(systemctl_argv("disable", "podman.socket"))
            print(f"Platform {self.platform} infrastructure for Skupper is now uninstalled")
