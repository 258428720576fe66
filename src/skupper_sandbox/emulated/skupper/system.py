"""``skupper system``: install, uninstall, start, reload, stop, apply, delete (2.1+)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from ... import hostenv
from .. import containers
from . import render, units
from . import resources as res
from . import site_state as sites
from .failure import CliFailure
from .host_commands import HostCommandError as _CommandFailure
from .host_commands import podman, quietly, systemctl, systemctl_argv
from .paths import NamespacePaths, data_home, namespaces, root_host, unit_dir
from .version import controller_image, router_image

ROUTER_CONFIG_MOUNT = "/etc/skupper-router/config"
ROUTER_CERTS_MOUNT = "/etc/skupper-router/runtime/certs"


class System:
    """The system commands for one host environment and CLI version."""

    def __init__(self, env: Mapping[str, str], cli_version: str, platform: str) -> None:
        self.env = env
        self.cli_version = cli_version
        self.platform = platform
        self.data_home = data_home(env)
        self.unit_dir = unit_dir(env)
        self.home = Path(env["HOME"])

    def paths(self, namespace: str) -> NamespacePaths:
        return NamespacePaths(self.data_home, namespace)

    @property
    def user(self) -> str:
        return self.env.get("USER") or self.env.get("LOGNAME") or "root"

    @property
    def runtime_dir(self) -> str:
        # GetRuntimeDir (pkg/nonkube/api/environment.go): /run for root
        if root_host(self.env) is not None:
            return "/run"
        return self.env.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}"

    @property
    def container_identity(self) -> list[str]:
        """``--user``/``--userns`` of every container the CLI creates: the user's own ids,
        and rootless ``keep-id`` (``ToSpecGenerator``, client/compat/container.go@2.1.2)."""
        info = hostenv.current_host(self.env)
        if info.is_root:
            return ["--user", "0:0"]
        return ["--user", f"{info.uid}:{info.group_id}", "--userns", "keep-id"]

    # -- apply / delete -------------------------------------------------------------

    def apply(self, namespace: str, text: str, source: str) -> None:
        """Store each resource of ``text`` in input/resources as ``<Kind>-<name>.yaml``."""
        documents = self._checked_documents(text, source)
        paths = self.paths(namespace)
        for doc in documents:
            doc.setdefault("metadata", {})["namespace"] = namespace
            res.write(paths.input_resources, doc)
            print(f"{doc['kind']} {res.name_of(doc)} added")
        print(
            "Custom resources are applied. If a site is already running, run "
            "`skupper system reload` to make effective the changes."
        )

    def delete(self, namespace: str, text: str, source: str) -> None:
        """Remove the input files of each resource in ``text``."""
        documents = self._checked_documents(text, source)
        paths = self.paths(namespace)
        for doc in documents:
            path = paths.input_resources / res.file_name(doc)
            if path.exists():
                path.unlink()
                print(f"{doc['kind']} {res.name_of(doc)} deleted")
            else:
                print(f"{doc['kind']} {res.name_of(doc)} not found")
        print(
            "Custom resources deleted. If a site is already running, run "
            "`skupper system reload` to make effective the changes."
        )

    @staticmethod
    def _checked_documents(text: str, source: str) -> list[res.Resource]:
        documents = res.parse_documents(text, source)
        if not documents:
            raise CliFailure(f"no resources found in {source}")
        for doc in documents:
            if doc["kind"] not in res.APPLY_KINDS:
                raise CliFailure(
                    f"unsupported resource kind {doc['kind']!r}; supported kinds: "
                    + ", ".join(res.APPLY_KINDS)
                )
        return documents

    # -- start / reload / stop --------------------------------------------------------

    def start(self, namespace: str) -> None:
        """Create the site: fails when the namespace was already rendered."""
        paths = self.paths(namespace)
        if paths.is_rendered():
            raise CliFailure(f"namespace already exists: {namespace}")
        self._bootstrap(paths, reload=False)

    def reload(self, namespace: str) -> None:
        """Re-render the site from its input, keeping its site id and CAs."""
        paths = self.paths(namespace)
        self._bootstrap(paths, reload=paths.is_rendered())

    def _sources(self, paths: NamespacePaths) -> sites.SiteState:
        inputs = paths.input_resources
        if not (inputs.is_dir() and any(inputs.iterdir())):
            print(f'Namespace "{paths.namespace}" does not exist')
            raise CliFailure(f"No sources found at: {paths.input_resources}")
        print(f'Sources will be consumed from namespace "{paths.namespace}"')
        return sites.load(paths)

    def _check_platform(self, paths: NamespacePaths) -> None:
        if not paths.platform_file.is_file():
            return
        recorded = paths.platform_file.read_text().split(":", 1)[-1].strip()
        if recorded and recorded != self.platform:
            raise CliFailure(
                f'existing namespace uses "{recorded}" platform and it cannot change to '
                f'"{self.platform}"'
            )

    def _bootstrap(self, paths: NamespacePaths, reload: bool) -> None:
        state = self._sources(paths)
        self._check_platform(paths)
        backup = _NamespaceBackup(paths) if reload else None
        renamed: list[str] = []
        try:
            if reload:
                site_id = render.site_id_of(paths)
                renamed = self._set_aside_containers(site_id)
            rendered = render.render(
                paths, state, cli_version=self.cli_version, platform=self.platform
            )
            self._create_router(paths, rendered.site_id)
            self._install_site_unit(paths)
        except CliFailure as exc:
            if backup is not None:
                quietly(["podman", "rm", "-f", paths.router_container])
                backup.restore()
                for name in renamed:
                    original = name.removesuffix("-backup")
                    quietly(["podman", "rename", name, original])
                    quietly(["podman", "start", original])
            elif not reload:
                # a failed first start must not leave a namespace that blocks the next start
                quietly(["podman", "rm", "-f", paths.router_container])
                shutil.rmtree(paths.runtime, ignore_errors=True)
                shutil.rmtree(paths.scripts, ignore_errors=True)
            raise CliFailure(f"Failed to bootstrap: {exc}") from exc
        finally:
            if backup is not None:
                backup.discard()
        for name in renamed:
            quietly(["podman", "rm", "-f", name])
        print(f'Site "{state.name}" has been created on namespace "{paths.namespace}"')
        print(f"Platform: {self.platform}")
        if rendered.link_files:
            print(f"Static links have been defined at: {paths.links}")
        print(f"Definition is available at: {paths.input_resources}")

    def _site_containers(self, site_id: str | None) -> list[containers.Container]:
        if not site_id:
            return []
        return [
            c
            for c in containers.list_all(self.home)
            if c.labels.get("application") == "skupper-v2"
            and c.labels.get("skupper.io/site-id") == site_id
        ]

    def _set_aside_containers(self, site_id: str | None) -> list[str]:
        """Stop the site's containers and rename them ``*-backup`` (restored on failure)."""
        renamed = []
        for container in self._site_containers(site_id):
            if container.name.endswith("-backup"):
                quietly(["podman", "rm", "-f", container.name])
                continue
            podman("stop", "-t", "10", container.name)
            backup = f"{container.name}-backup"
            quietly(["podman", "rm", "-f", backup])
            podman("rename", container.name, backup)
            renamed.append(backup)
        return renamed

    def _create_router(self, paths: NamespacePaths, site_id: str) -> None:
        if containers.get(self.home, paths.router_container) is not None:
            raise CliFailure(f'container "{paths.router_container}" already exists')
        podman(
            "create",
            "--name", paths.router_container,
            "--network", "host",
            "--restart", "always",
            *self.container_identity,
            "--label", "application=skupper-v2",
            "--label", "skupper.io/v2-component=router",
            "--label", f"skupper.io/site-id={site_id}",
            "-e", "SSL_PROFILE_BASE_PATH=/etc/skupper-router",
            "-e", "QDROUTERD_CONF=/etc/skupper-router/config/skrouterd.json",
            "-e", "QDROUTERD_CONF_TYPE=json",
            "-e", f"SKUPPER_SITE_ID={site_id}",
            "-v", f"{paths.router}:{ROUTER_CONFIG_MOUNT}:z",
            "-v", f"{paths.certs}:{ROUTER_CERTS_MOUNT}:z",
            router_image(self.cli_version),
        )  # fmt: skip
        podman("start", paths.router_container)

    def _install_site_unit(self, paths: NamespacePaths) -> None:
        text = units.SITE_UNIT.format(
            namespace=paths.namespace, runtime_dir=self.runtime_dir, scripts=paths.scripts
        )
        try:
            units.install_and_start(self.unit_dir, paths.unit_name, text)
        except _CommandFailure as exc:
            raise CliFailure(
                f'unable to create startup service "{paths.unit_name}" - {exc}'
            ) from exc

    def stop(self, namespace: str) -> None:
        """Tear the site down: containers, unit, and the whole namespace directory."""
        paths = self.paths(namespace)
        if not paths.home.is_dir():
            raise CliFailure(f'System teardown has failed: namespace "{namespace}" does not exist')
        for container in self._site_containers(render.site_id_of(paths)):
            quietly(["podman", "rm", "-f", container.name])
        quietly(["podman", "rm", "-f", paths.router_container])
        units.remove(self.unit_dir, paths.unit_name)
        shutil.rmtree(paths.home)  # the real CLI deletes inputs and CAs too
        print(f'Namespace "{namespace}" has been removed')

    # -- install / uninstall ----------------------------------------------------------

    @property
    def controller_name(self) -> str:
        return f"{self.user}-skupper-controller"

    def install(self, reload_type: str) -> None:
        """Enable the podman socket; run the system-controller container and its unit."""
        if self.platform not in ("podman", "docker"):
            raise CliFailure(
                "the selected platform is not supported by this command. "
                "There is nothing to install"
            )
        try:
            systemctl("enable", "podman.socket")
            systemctl("start", "podman.socket")
        except _CommandFailure as exc:
            raise CliFailure(f"failed to configure the environment : {exc}") from exc
        existing = containers.get(self.home, self.controller_name)
        if existing is not None and containers.running(existing):
            print(
                f'Warning: The system controller container "{self.controller_name}" '
                "is already running in Podman."
            )
            return
        if existing is not None:
            quietly(["podman", "rm", "-f", self.controller_name])
        image = controller_image(self.cli_version)
        print(f"Pulled system-controller image: {image}")
        env = {
            "CONTAINER_ENDPOINT": "unix:///var/run/podman.sock",
            "SKUPPER_OUTPUT_PATH": str(self.data_home),
            "CONTAINER_ENGINE": "podman",
            "SKUPPER_SYSTEM_RELOAD_TYPE": reload_type,
        }
        self.data_home.mkdir(parents=True, exist_ok=True)
        args = [
            "create",
            "--name",
            self.controller_name,
            "--network",
            "host",
            "--security-opt",
            "label=disable",
            *self.container_identity,
            "-v",
            f"{self.data_home}:/output:z",
        ]
        for key, value in env.items():
            args += ["-e", f"{key}={value}"]
        try:
            podman(*args, image)
        except _CommandFailure as exc:
            raise CliFailure(f"failed to create system-controller container: {exc}") from exc
        try:
            podman("start", self.controller_name)
        except _CommandFailure as exc:
            raise CliFailure(f"failed to start system-controller container: {exc}") from exc
        scripts = self.data_home / "system-controller" / "internal" / "scripts"
        scripts.mkdir(parents=True, exist_ok=True)
        for name, action in (("start.sh", "start"), ("stop.sh", "stop -t 10")):
            script = scripts / name
            script.write_text(f"#!/usr/bin/env sh\n\npodman {action} {self.controller_name}\n")
            script.chmod(0o755)
        environment = "".join(f'Environment="{k}={v}"\n' for k, v in sorted(env.items()))
        text = units.CONTROLLER_UNIT.format(
            name=self.controller_name,
            runtime_dir=self.runtime_dir,
            data_home=self.data_home,
            environment=environment,
            scripts=scripts,
        )
        try:
            units.install_and_start(self.unit_dir, f"{self.controller_name}.service", text)
        except _CommandFailure as exc:
            raise CliFailure(f"failed to create system-controller systemd service: {exc}") from exc
        print(f"Platform {self.platform} is now configured for Skupper")

    def uninstall(self, force: bool) -> None:
        """Remove the controller; with active sites only when forced (then tear them down)."""
        if self.platform not in ("podman", "docker"):
            raise CliFailure(
                "the selected platform is not supported by this command. "
                "There is nothing to uninstall"
            )
        active = [ns for ns in namespaces(self.data_home) if self.paths(ns).is_rendered()]
        if active and not force:
            raise CliFailure("Uninstallation halted: Active sites detected.")
        for namespace in active:
            self.stop(namespace)
        quietly(["podman", "stop", "-t", "10", self.controller_name])
        quietly(["podman", "rm", "-f", self.controller_name])
        units.remove(self.unit_dir, f"{self.controller_name}.service")
        if self.cli_version.startswith("2.1."):
            # 2.1.x also disabled the podman socket (fixed in 2.2.0, skupper#2430)
            quietly(systemctl_argv("stop", "podman.socket"))
            quietly(systemctl_argv("disable", "podman.socket"))
        print(f"Platform {self.platform} infrastructure for Skupper is now uninstalled")


class _NamespaceBackup:
    """A copy of the namespace's runtime and scripts, to restore when a reload fails."""

    def __init__(self, paths: NamespacePaths) -> None:
        self.paths = paths
        self.dir = Path(tempfile.mkdtemp(prefix=".reload-", dir=paths.home))
        for name, source in self._parts():
            if source.exists():
                shutil.copytree(source, self.dir / name, symlinks=True)

    def _parts(self) -> list[tuple[str, Path]]:
        return [("runtime", self.paths.runtime), ("scripts", self.paths.scripts)]

    def restore(self) -> None:
        for name, target in self._parts():
            if (self.dir / name).exists():
                shutil.rmtree(target, ignore_errors=True)
                shutil.copytree(self.dir / name, target, symlinks=True)

    def discard(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def read_source(file: str) -> tuple[str, str]:
    """The text of ``-f FILE`` (``-`` is stdin) and a name for messages."""
    if file == "-":
        return sys.stdin.read(), "stdin"
    try:
        return Path(file).read_text(), file
    except OSError as exc:
        raise CliFailure(f"unable to read {file}: {exc.strerror}") from exc
