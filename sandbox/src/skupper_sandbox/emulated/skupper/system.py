"""``skupper system``: install, uninstall, start, reload, stop, apply, delete (2.1+)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ... import hostenv, real_podman
from .. import podman_api, pulls
from ..podman import containers
from . import render, units
from . import resources as res
from . import site_state as sites
from .failure import VALIDATION_ERROR, CliFailure, warn
from .host_commands import (
    PODMAN_SOCKET_UNIT,
    podman,
    podman_socket_active,
    podman_socket_path,
    quietly,
    systemctl,
    systemctl_argv,
)
from .host_commands import HostCommandError as _CommandFailure
from .paths import NamespacePaths, data_home, namespaces, root_host, unit_dir
from .removal import remove_all
from .version import controller_image, is_v22, router_image

CONTROLLER_UNIT = "skupper-controller.service"  # bootstrap/controller/systemd.go@2.1.0-2.2.1:57

ROUTER_CONFIG_MOUNT = "/etc/skupper-router/config"
ROUTER_CERTS_MOUNT = "/etc/skupper-router/runtime/certs"


@dataclass(frozen=True)
class Listed:
    """A container as ``podman ps`` lists it: what the CLI reads of one."""

    name: str
    labels: dict[str, str]


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
        """The login user as Skupper takes it, ``user.Current()`` (install.go@2.1.4:173-178):
        the account of the process's uid, which is the host's user (its ident), never
        ``$USER``, which a login shell may set otherwise (fish sets it from the uid it
        really runs as: this machine's on an emulated host)."""
        try:
            return hostenv.current_host(self.env).user
        except hostenv.NotOnSandboxHost:
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
            written = res.write(paths.input_resources, doc)
            # fs/custom_resource_handler.go@2.1.2:79, then system_apply.go's line
            print("File written to", written)
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
            raise CliFailure(f"namespace already exists: {namespace}", VALIDATION_ERROR)
        self._bootstrap(paths, reload=False)

    def reload(self, namespace: str) -> None:
        """Re-render the site from its input, keeping its site id and CAs."""
        paths = self.paths(namespace)
        self._bootstrap(paths, reload=paths.is_rendered())

    def _sources(self, paths: NamespacePaths) -> None:
        """PreBootstrap (bootstrap.go@2.1.2): its errors are not wrapped."""
        inputs = paths.input_resources
        if not (inputs.is_dir() and any(inputs.iterdir())):
            print(f'Namespace "{paths.namespace}" does not exist')
            raise CliFailure(f"No sources found at: {paths.input_resources}")
        print(f'Sources will be consumed from namespace "{paths.namespace}"')

    def _check_platform(self, paths: NamespacePaths) -> None:
        if not paths.platform_file.is_file():
            return
        recorded = paths.platform_file.read_text().split(":", 1)[-1].strip()
        if recorded and recorded != self.platform:
            raise CliFailure(
                f'existing namespace uses "{recorded}" platform and it cannot change to '
                f'"{self.platform}"'
            )

    def _socket_error(self, what: str) -> CliFailure:
        """What the podman bindings answer while the API socket does not listen."""
        sock = podman_socket_path(self.runtime_dir)
        return CliFailure(f"{what}: dial unix {sock}: connect: no such file or directory")

    def _bootstrap(self, paths: NamespacePaths, reload: bool) -> None:
        self._sources(paths)
        try:
            # Bootstrap: loading and validating the inputs
            state = sites.load(
                paths,
                multi_key_listeners=is_v22(self.cli_version),
                fixed_strategy=is_v22(self.cli_version) and self.cli_version != "2.2.0",
            )
        except CliFailure as exc:
            raise CliFailure(f"Failed to bootstrap: {exc}") from exc
        self._check_platform(paths)
        backup = _NamespaceBackup(paths) if reload else None
        renamed: list[str] = []
        try:
            if reload:
                if not podman_socket_active():  # cleanupExistingNamespace lists containers
                    raise self._socket_error("failed to list containers")
                site_id = render.site_id_of(paths)
                renamed = self._set_aside_containers(site_id)
                for path in render.kept_issuer_files(paths):
                    # fs_config_renderer.go@2.1.2:352, on every reload (slog: stderr)
                    warn("certificate will not be overwritten", path=str(path))
            rendered = render.render(
                paths, state, cli_version=self.cli_version, platform=self.platform
            )
            if not podman_socket_active():
                # the files are rendered before the first podman call (pullImages), and a
                # failed first start is not undone: the namespace stays rendered
                # (compat/site_state_renderer.go@2.1.2 Render: no restore unless reload)
                raise self._socket_error(
                    f"failed to pull router image {router_image(self.cli_version)}"
                )
            self._pull_router()
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

    def _pull_router(self) -> None:
        """pullImages (compat/site_state_renderer.go@2.2.1:265-279): Skupper pulls the
        router's image through podman's API before it creates the container."""
        host = pulls.host_of(self.env)
        image = router_image(self.cli_version)
        refused = pulls.api_pull(host, image) if host is not None else None
        if refused is not None:
            raise CliFailure(f"failed to pull router image {image}: {refused}")

    def _listed(self) -> list[Listed]:
        """The host's containers as its podman lists them: a real-podman host's through
        ``podman ps -a --format json`` (real_podman), an emulated one's from the store."""
        host_dir = Path(hostenv.current_host(self.env).host_dir)
        if real_podman.is_real(host_dir):  # the real CLI asks podman's API the same
            # the caller's runtime directory and home: a rootless podman's run root is there
            given = {k: v for k, v in self.env.items() if k in ("HOME", "XDG_RUNTIME_DIR")}
            env = {"PATH": "/usr/bin:/bin", **given, **real_podman.host_store(host_dir).env_vars()}
            try:
                listed = real_podman.store_containers(env)
            except real_podman.RealPodmanError as exc:
                raise CliFailure(f"failed to list containers: {exc}") from exc
            return [Listed(c.name, c.labels) for c in listed]
        return [Listed(c.name, dict(c.labels)) for c in containers.list_all(self.home)]

    def _exists(self, name: str) -> bool:
        return any(c.name == name for c in self._listed())

    def _site_containers(self, site_id: str | None) -> list[Listed]:
        if not site_id:
            return []
        return [
            c
            for c in self._listed()
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
        if self._exists(paths.router_container):
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
        """``system stop``: bootstrap.Teardown (teardown.go@2.1.2). It needs the namespace's
        ``internal/platform.yaml`` (written by a render): without it nothing is removed.
        2.1.x reports it from Run ("System teardown has failed", exit 1); 2.2.x from
        ValidateInput (exit 2, system_stop.go@2.2.0). Removing the router makes the
        controller write the site's status into ``runtime/resources``; when that lands while
        RemoveAll empties the namespace, the stop fails on it (``unlinkat <dir>: directory not
        empty``) with all the rest removed, the platform file too."""
        paths = self.paths(namespace)
        try:
            self._teardown(paths)
        except CliFailure as exc:
            if is_v22(self.cli_version):
                raise
            raise CliFailure(f"System teardown has failed: {exc}") from exc

    def _teardown(self, paths: NamespacePaths) -> None:
        if not paths.platform_file.is_file():
            raise CliFailure(
                f"failed to read platform config file for namespace {paths.namespace}: "
                f"open {paths.platform_file}: no such file or directory",
                VALIDATION_ERROR if is_v22(self.cli_version) else 1,
            )
        # removeRouter: through the API socket; when it does not answer, ContainerInspect
        # fails and the router is silently left alone
        if podman_socket_active():
            for container in self._site_containers(render.site_id_of(paths)):
                quietly(["podman", "rm", "-f", container.name])
            quietly(["podman", "rm", "-f", paths.router_container])
        # removeService: loads the runtime site state first
        if not paths.runtime_resources.is_dir():
            raise CliFailure(f"open {paths.runtime_resources}: no such file or directory")
        units.remove(self.unit_dir, paths.unit_name)
        remove_all(paths.home)  # removeDefinition: inputs and CAs go too
        print(f'Namespace "{paths.namespace}" has been removed')

    # -- install / uninstall ----------------------------------------------------------

    @property
    def controller_name(self) -> str:
        return f"{self.user}-skupper-controller"

    def install(self, reload_type: str | None) -> None:
        """bootstrap.Install (install.go@2.1.2): enable and start ``podman.socket``, then
        run ``<user>-skupper-controller`` and its unit ``skupper-controller.service``
        (WantedBy=default.target, enabled and started). A controller container that exists,
        even stopped, counts as running (IsContainerRunning lists all containers)."""
        if self.platform not in ("podman", "docker"):
            raise CliFailure(
                "the selected platform is not supported by this command. "
                "There is nothing to install",
                VALIDATION_ERROR,
            )
        try:
            systemctl("enable", PODMAN_SOCKET_UNIT)
            systemctl("start", PODMAN_SOCKET_UNIT)
        except _CommandFailure as exc:
            raise CliFailure(f"failed to configure the environment : {exc}") from exc
        (self.data_home / "namespaces").mkdir(parents=True, exist_ok=True)
        if self._exists(self.controller_name):
            print(
                f'Warning: The system controller container "{self.controller_name}" '
                "is already running in Podman."
            )
            return
        image = controller_image(self.cli_version)
        host = pulls.host_of(self.env)
        refused = pulls.api_pull(host, image) if host is not None else None
        if refused is not None:  # install.go@2.2.1:69-72
            raise CliFailure(f"failed to pull system-controller image: {refused}")
        print(f"Pulled system-controller image: {image}")
        socket = podman_socket_path(self.runtime_dir)
        env = {
            "CONTAINER_ENDPOINT": self._container_endpoint(socket),
            "SKUPPER_OUTPUT_PATH": str(self.data_home),
            "CONTAINER_ENGINE": "podman",
        }
        if is_v22(self.cli_version):
            env["SKUPPER_SYSTEM_RELOAD_TYPE"] = reload_type or "manual"
        args = [
            "create",
            "--name",
            self.controller_name,
            "--network",
            "host",
            "--security-opt",
            "label=disable",
            *self.container_identity,
            *self._endpoint_mount(socket),
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
            name=CONTROLLER_UNIT.removesuffix(".service"),
            runtime_dir=self.runtime_dir,
            mounts="".join(f"RequiresMountsFor={m}\n" for m in (socket, self.data_home)),
            environment=environment,
            scripts=scripts,
        )
        try:
            units.install_and_start(self.unit_dir, CONTROLLER_UNIT, text)
        except _CommandFailure as exc:
            raise CliFailure(
                "failed to create system-controller systemd service: unable to create "
                f'startup service "{CONTROLLER_UNIT}" - {exc}'
            ) from exc
        print(f"Platform {self.platform} is now configured for Skupper")

    def _container_endpoint(self, socket: str) -> str:
        """The controller's ``CONTAINER_ENDPOINT``: 2.2.x gives the socket where it mounts
        it in the container, ``unix:///var/run/<platform>.sock`` (install.go@2.2.1:80-85,
        221-226); 2.1.x the host's path (install.go@2.1.4:205-212), which the container
        does not have (its controller reaches podman through the mount all the same)."""
        if is_v22(self.cli_version):
            return f"unix://{podman_api.mounted_socket(self.platform)}"
        return f"unix://{socket}"

    def _endpoint_mount(self, socket: str) -> list[str]:
        """The controller gets the API socket at ``/var/run/<platform>.sock`` (a bind mount
        of the endpoint's path, ``:z``; install.go@2.1.3:84-104): its container sees no
        other way to the host's podman. Only where the socket is a file: a real-podman
        host's, served by podman; an emulated host has no socket file (its podman.socket
        is the manager's answer only), and its controller reads the store instead."""
        path = podman_api.in_world(socket, hostenv.current_host(self.env))
        if not path.is_socket():
            return []
        return ["-v", f"{path}:{podman_api.mounted_socket(self.platform)}:z"]

    def _active_sites(self) -> list[str]:
        """bootstrap.CheckActiveSites: 2.1.x counts every directory under ``namespaces/``
        (uninstall.go@2.1.2:88-96); 2.2.x only those with a ``runtime/`` directory."""
        root = self.data_home / "namespaces"
        if not root.is_dir():
            raise CliFailure(f"open {root}/: no such file or directory", VALIDATION_ERROR)
        found = namespaces(self.data_home)
        if is_v22(self.cli_version):
            found = [ns for ns in found if self.paths(ns).runtime.is_dir()]
        return found

    def uninstall(self, force: bool) -> None:
        """``system uninstall`` (system_uninstall.go, bootstrap/uninstall.go)."""
        if self.platform not in ("podman", "docker"):
            raise CliFailure(
                "the selected platform is not supported by this command. "
                "There is nothing to uninstall",
                VALIDATION_ERROR,
            )
        v22 = is_v22(self.cli_version)
        if not force:
            active = self._active_sites()
            if active:
                if v22:
                    for namespace in active:
                        sites = res.of_kind(
                            res.load_dir(self.paths(namespace).runtime_resources), "Site"
                        )
                        if sites:
                            name = res.name_of(sites[0])
                            print(f"The {name} site is active (namespace {namespace})")
                        else:
                            print(f"The {namespace} site is active")
                    raise CliFailure(
                        "Uninstallation halted: Active sites detected. "
                        "Use --force flag to stop and remove active sites",
                        VALIDATION_ERROR,
                    )
                raise CliFailure("Uninstallation halted: Active sites detected.", VALIDATION_ERROR)
        elif v22:  # 2.2.0 --force stops every site first; 2.1.x --force only skips the check
            for namespace in namespaces(self.data_home):
                paths = self.paths(namespace)
                if paths.runtime.is_dir():
                    print(f'Removing active site namespace "{namespace}"')
                    try:
                        self._teardown(paths)
                    except CliFailure as exc:
                        raise CliFailure(f'failed to remove site "{namespace}": {exc}') from exc
                else:
                    shutil.rmtree(paths.home, ignore_errors=True)
                    print(f'Namespace "{namespace}" has been removed')
        # the controller container is found through the API socket: without it the client
        # cannot be made (NewCompatClient stats the socket file: compat/client.go@2.1.2:
        # 133-137) and Uninstall fails (bootstrap/uninstall.go@2.1.2:45-48, the same @2.2.1);
        # without the container it returns at once, silently and successfully (:50-53)
        if not podman_socket_active():
            sock = podman_socket_path(self.runtime_dir)
            raise CliFailure(
                "failed to uninstall : failed to create container client: Container engine is "
                f"not available on provided endpoint - stat {sock}: no such file or directory"
            )
        if not self._exists(self.controller_name):
            return
        try:
            podman("stop", "-t", "10", self.controller_name)
            podman("rm", "-f", self.controller_name)
        except _CommandFailure as exc:
            raise CliFailure(f"failed to uninstall : {exc}") from exc
        if v22:
            print("System-controller has been removed")
        units.remove(self.unit_dir, CONTROLLER_UNIT)
        if not v22:
            # 2.1.x also disables the podman socket (common/systemd.go@2.1.2 Disable;
            # removed in 2.2.0)
            quietly(systemctl_argv("disable", PODMAN_SOCKET_UNIT))
            quietly(systemctl_argv("stop", PODMAN_SOCKET_UNIT))
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
