"""Which of a world's hosts use this machine's real podman, and their images.

Real podman needs real users for a non-root host: the emulated (and the real) Skupper CLI
creates a non-root host's containers with ``--userns keep-id``, which a rootful podman
refuses ("keep-id is only supported in rootless mode", exit 125), and every sandbox host's
processes run as this machine's root. So a real-podman world gives its root hosts
(``--root-host``) the real podman and keeps the emulation on the others until each host
has a Unix user of its own.
"""

from __future__ import annotations

import sys
from pathlib import Path

from skupper_sandbox import hostenv, real_podman
from skupper_sandbox.emulated import images
from skupper_sandbox.emulated.skupper.version import controller_image, router_image
from skupper_sandbox.layout import (
    BUILTIN_MODEL_IMAGE,
    CUSTOM_MODEL_IMAGE,
    HostEntry,
    WorldInfo,
    WorldLayout,
    WorldSpec,
)
from skupper_sandbox.router import choice
from skupper_sandbox.router.release import RELEASE_VAR


def uses_real_podman(info: WorldInfo, host: HostEntry) -> bool:
    return info.podman == "real" and host.role != "kubernetes" and host.uid == hostenv.ROOT_UID


def wants_real_podman(spec: WorldSpec) -> bool:
    """Whether some host of the world ``spec`` asks for could use real podman (today its
    root hosts): without one, ``--podman auto`` needs no probe."""
    return bool(spec.root_hosts)


def host_images(info: WorldInfo, host: HostEntry, python: str) -> list[real_podman.ImageSpec]:
    """The images a host's podman has, each running what the emulation's table runs."""
    router = router_image(host.skupper_version)
    found = [
        real_podman.ImageSpec(
            router,
            choice.recorded(info.router, info.router_home).start(python),
            {RELEASE_VAR: router.rsplit(":", 1)[-1]},
        ),
        real_podman.ImageSpec(
            controller_image(host.skupper_version), [python, "-m", images.CONTROLLER_PROGRAM]
        ),
    ]
    if host.role == "provider":
        found.append(
            real_podman.ImageSpec(BUILTIN_MODEL_IMAGE, [python, "-m", images.MODEL_SERVER_PROGRAM])
        )
        command = info.model_server_command or ""
        found.append(
            real_podman.ImageSpec(
                CUSTOM_MODEL_IMAGE,
                ["/bin/sh", "-c", command],
                {images.MODEL_COMMAND_VAR: command, "HOST": host.address},
            )
        )
    return found


def prepare(layout: WorldLayout, info: WorldInfo, python: str = sys.executable) -> list[str]:
    """Give each root host its real podman store and images, and the world the wrapper;
    the names of the hosts that got one."""
    real = [h for h in info.hosts if uses_real_podman(info, h)]
    if not real:
        return []
    real_podman.write_wrapper(layout.bin_dir)
    extra = [f"{info.router_home}:{info.router_home}:ro"] if info.router_home else []
    for host in real:
        host_dir = layout.host_dir(host.name)
        env = {hostenv.HOST_VAR: str(host_dir), hostenv.WORLD_ID_VAR: info.id}
        real_podman.prepare_host(
            host_dir, layout.root, env, host_images(info, host, python), python, extra
        )
    return [h.name for h in real]


def remove(layout: WorldLayout, info: WorldInfo) -> None:
    """Remove every real podman store of the world (its containers and images)."""
    for host in info.hosts:
        real_podman.remove_host(layout.host_dir(host.name))


def container_names(host_dir: Path) -> tuple[list[str], int] | None:
    """The names of a real-podman host's running containers and how many it has; None
    for an emulated host."""
    if not real_podman.is_real(host_dir):
        return None
    listed = real_podman.host_containers(host_dir)
    return [c.name for c in listed if c.state == "running"], len(listed)
