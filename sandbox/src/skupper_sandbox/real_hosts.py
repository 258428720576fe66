"""Which of a world's hosts use this machine's real podman and real users, and their images.

Real podman needs real users for a non-root host: the emulated (and the real) Skupper CLI
creates a non-root host's containers with ``--userns keep-id``, which a rootful podman
refuses ("keep-id is only supported in rootless mode", exit 125). So in a real-podman world
every non-root SSH host's user is a Unix user made for the world (``real_users``), whose
podman is rootless, and the root hosts (``--root-host``) use the rootful podman.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from skupper_sandbox import hostenv, real_podman, real_users
from skupper_sandbox.emulated import images
from skupper_sandbox.emulated.podman import warnings
from skupper_sandbox.emulated.podman.userns import ROUTER_IMAGE_USER
from skupper_sandbox.emulated.skupper.version import controller_image, router_image
from skupper_sandbox.layout import (
    BUILTIN_MODEL_IMAGE,
    CUSTOM_MODEL_IMAGE,
    HostEntry,
    WorldInfo,
    WorldLayout,
)
from skupper_sandbox.quirks import HostQuirks
from skupper_sandbox.router import choice
from skupper_sandbox.router.release import RELEASE_VAR

#: Where a machine's journal takes entries (systemd-journald's socket): podman's journald
#: log driver writes there
JOURNAL_SOCKET = Path("/run/systemd/journal/socket")


def stays_emulated(host: HostEntry) -> str | None:
    """Why a host of a real-podman world keeps the emulation (None: it need not). The
    ``journald`` quirk is podman's journald log driver with a journal the host's journalctl
    reads: the emulation's journal. A machine without systemd-journald has none to give
    real podman, and the sandbox's journalctl reads no real one either."""
    if not HostQuirks(tuple(host.quirks)).journald:
        return None
    if not JOURNAL_SOCKET.exists():
        return f"the journald quirk needs a journal, and this machine has none ({JOURNAL_SOCKET})"
    return "the journald quirk is emulated only (the host's journalctl reads the emulation's)"


def uses_real_podman(info: WorldInfo, host: HostEntry) -> bool:
    return info.podman == "real" and host.role != "kubernetes" and stays_emulated(host) is None


def make_users(layout: WorldLayout, info: WorldInfo) -> list[str]:
    """Make a Unix user for each non-root SSH host of a real-podman world, and record it in
    the host's entry (``user``, ``uid``, ``gid``, ``real_user``); the names made. On a
    failure every user made so far is removed."""
    if info.podman != "real":
        return []
    made = []
    try:
        for host in info.ssh_hosts:
            # an emulated host of the world is one of an emulated world: no user of its own
            if host.uid == hostenv.ROOT_UID or not uses_real_podman(info, host):
                continue
            shell = HostQuirks(tuple(host.quirks)).shell
            name = real_users.user_name(info.id, host.name)
            account = real_users.create(name, layout.host_dir(host.name) / "home", shell)
            host.user, host.uid, host.gid, host.real_user = name, account.uid, account.gid, True
            made.append(name)
    except (real_users.RealUserError, OSError, subprocess.SubprocessError):
        real_users.remove_world(info.id)
        raise
    return made


def give_hosts(layout: WorldLayout, info: WorldInfo, python: str = sys.executable) -> list[Path]:
    """Hand each real user its host's directory (owner, a 0750 home), its runtime directory
    ``/run/user/<uid>`` (the host's ``run/`` is a link to it: what ``hostenv.runtime_dir``
    maps ``/run/user/<uid>`` to is then the real one), and a way through every directory
    above the world and the sandbox's Python; the directories opened for search."""
    users = [h for h in info.ssh_hosts if h.real_user]
    if not users:
        return []
    accounts = []
    for host in users:
        account = real_users.lookup(host.user)
        if account is None:
            raise real_users.RealUserError(f"user {host.user} of {host.name} is gone")
        accounts.append(account)
        host_dir = layout.host_dir(host.name)
        run = host_dir / "run"
        run.rmdir()
        run.symlink_to(real_users.make_runtime_dir(account))
        real_users.give(host_dir, account)
        (host_dir / "home").chmod(0o750)
    given = given_paths(layout, info, python)
    opened = real_users.open_for_search(info.id, [p if p.is_dir() else p.parent for p in given])
    # each user is one of the others: what one reaches, they all do
    blocked = real_users.unreachable(accounts[0], given)
    if blocked:
        raise real_users.RealUserError(
            f"the world's users ({', '.join(h.user for h in users)}) cannot reach what they "
            "are given: " + "; ".join(blocked)
        )
    return opened


def given_paths(layout: WorldLayout, info: WorldInfo, python: str = sys.executable) -> list[Path]:
    """Every path a world's users are handed: the world, the Python their user managers
    and containers run and its trees (every container mounts them), a real router's
    installation, and the model server's volumes and the files its command names (each
    mounted into the model container)."""
    given = [layout.root, Path(python), Path(python).parent]
    given += [Path(tree) for tree in real_podman.sandbox_trees(python)]
    if info.router_home:
        given.append(Path(info.router_home))
    given += [Path(volume) for volume in info.model_server_volumes]
    given += [Path(f) for f in real_podman.command_files(info.model_server_command)]
    return list(dict.fromkeys(given))


def run_as(host_dir: Path) -> real_podman.RunAs | None:
    """Who the host's podman runs as, when it is not this machine's root: the host's user."""
    info = hostenv.load_host_info(host_dir)
    account = real_users.lookup(info.user) if info.real_user else None
    if account is None:
        return None
    return real_podman.RunAs(
        account.uid,
        account.gid,
        tuple(account.groups),
        str(account.home),
        str(account.runtime_dir),
    )


def remove_users(layout: WorldLayout, info: WorldInfo) -> list[Path]:
    """Remove every user of the world (and every process it has), and take back the search
    bit from the directories the world opened or held that no other live world holds; those
    directories."""
    real_users.remove_world(info.id, layout.root)
    return real_users.close_for_search(info.id)


def host_images(info: WorldInfo, host: HostEntry, python: str) -> list[real_podman.ImageSpec]:
    """The images a host's podman has, each running what the emulation's table runs."""
    router = router_image(host.skupper_version)
    found = [
        real_podman.ImageSpec(
            router,
            choice.recorded(info.router, info.router_home).start(python),
            # the image's tools (skmanage) first on its PATH, as the emulation's image has them
            {RELEASE_VAR: router.rsplit(":", 1)[-1], "PATH": hostenv.router_image_path(info.dir)},
            # skupper-router's Containerfile: a container made without --user runs as it
            str(ROUTER_IMAGE_USER),
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
        as_user = run_as(host_dir)
        store = real_podman.prepare_host(
            host_dir,
            layout.root,
            env,
            host_images(info, host, python),
            python,
            extra,
            as_user=as_user,
        )
        if HostQuirks(tuple(host.quirks)).podman_warns:  # the wrapper prints it (WRAPPER)
            warning = store.root / real_podman.WARNING_FILE
            warning.write_text(warnings.go_quote(warnings.CGROUPS_V1) + "\n")
            if as_user is not None:
                os.chown(warning, as_user.uid, as_user.gid)
        if not HostQuirks(tuple(host.quirks)).images_pulled:  # emulated/pulls.py pulls
            (store.root / real_podman.PULL_MARKER).write_text("")
    return [h.name for h in real]


def remove(layout: WorldLayout, info: WorldInfo) -> None:
    """Remove every real podman store of the world (its containers and images)."""
    for host in info.hosts:
        host_dir = layout.host_dir(host.name)
        real_podman.remove_host(host_dir, _owner(host_dir))


def container_names(host_dir: Path) -> tuple[list[str], int] | None:
    """The names of a real-podman host's running containers and how many it has; None
    for an emulated host."""
    if not real_podman.is_real(host_dir):
        return None
    listed = host_containers(host_dir)
    return [c.name for c in listed if c.state == "running"], len(listed)


def log_tail(host_dir: Path, name: str) -> str:
    """The end of a real-podman host's container output, as its own user's podman gives it."""
    return real_podman.log_tail(host_dir, name, run_as(host_dir))


def host_containers(host_dir: Path) -> list[real_podman.Listed]:
    """A real-podman host's containers, as its own user's podman lists them."""
    return real_podman.host_containers(host_dir, run_as(host_dir))


def _owner(host_dir: Path) -> real_podman.RunAs | None:
    """The host's user, when it is still there to remove its store (``down`` after a failed
    ``up`` may find the host half made)."""
    try:
        return run_as(host_dir)
    except (OSError, ValueError, TypeError):
        return None


def upgrade_images(layout: WorldLayout, info: WorldInfo, host: HostEntry, python: str) -> None:
    """The images of ``host``'s (new) release imported into its store, as after a pull."""
    host_dir = layout.host_dir(host.name)
    store = real_podman.host_store(host_dir)
    wanted = [i for i in host_images(info, host, python) if i.name.startswith("quay.io/skupper/")]
    real_podman.import_images(store, wanted, run_as(host_dir))
