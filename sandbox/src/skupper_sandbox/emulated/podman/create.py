"""Making a container from `run`/`create` arguments (it is not started here)."""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

from skupper_sandbox.emulated import images
from skupper_sandbox.emulated.podman import containers
from skupper_sandbox.emulated.podman.containers import Container

from .errors import PodmanError
from .host import Host
from .lifecycle import remove
from .options import Parsed

NAME_PATTERN = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_.-]*$")
RESTART_POLICIES = ("no", "always", "on-failure", "unless-stopped")


def parse_env(parsed: Parsed) -> dict[str, str]:
    env: dict[str, str] = {}
    for env_file in parsed.many("env_file"):
        try:
            lines = Path(env_file).read_text().splitlines()
        except OSError as exc:
            raise PodmanError(f"open {env_file}: no such file or directory") from exc
        for line in lines:
            line = line.strip()
            if line and not line.startswith("#"):
                key, eq, value = line.partition("=")
                if eq:
                    env[key] = value
                elif key in os.environ:
                    env[key] = os.environ[key]
    for item in parsed.many("env"):
        key, eq, value = item.partition("=")
        if eq:
            env[key] = value
        elif key in os.environ:
            env[key] = os.environ[key]
    return env


def _parse_labels(parsed: Parsed) -> dict[str, str]:
    labels: dict[str, str] = {}
    for item in parsed.many("label"):
        key, _, value = item.partition("=")
        labels[key] = value
    return labels


def _volume_source(host: Host, source: str) -> Path:
    if source.startswith("/"):
        path = Path(source)
        if not path.exists():
            raise PodmanError(f"statfs {source}: no such file or directory")
        return path
    if source.startswith("."):
        raise PodmanError(f"invalid volume name {source!r}: must be an absolute path")
    volume = containers.store_root(host.home).parent / "volumes" / source / "_data"
    volume.mkdir(parents=True, exist_ok=True)
    return volume


def _parse_mounts(host: Host, parsed: Parsed) -> tuple[list[list[str]], dict[str, str]]:
    """The ``-v`` mounts, and each one's options as given (``ro``, ``z``, ``Z``, ...), which
    inspect reports back (``report.inspect_mount``)."""
    mounts: list[list[str]] = []
    options: dict[str, str] = {}
    for item in parsed.many("volume"):
        parts = item.split(":")
        if len(parts) < 2 or not parts[1].startswith("/"):
            raise PodmanError(f"invalid container path {item!r}, must be an absolute path")
        mounts.append([parts[1], str(_volume_source(host, parts[0]))])
        if len(parts) > 2 and parts[2]:
            options[parts[1]] = parts[2]
    return mounts, options


def _parse_restart(value: str | None) -> str:
    if value is None or value == "":
        return ""
    name = value.split(":", 1)[0]
    if name not in RESTART_POLICIES:
        raise PodmanError(f"invalid restart policy: {value}")
    return value


def _generated_name(host: Host) -> str:
    adjectives = ("brave", "quiet", "eager", "gentle", "lucid", "nifty", "sharp", "witty")
    nouns = ("turing", "hopper", "lovelace", "ritchie", "thompson", "knuth", "liskov")
    while True:
        name = f"{secrets.choice(adjectives)}_{secrets.choice(nouns)}"
        if containers.get(host.home, name) is None:
            return name


def create_container(host: Host, parsed: Parsed) -> Container:
    """Make a container from `run`/`create` arguments; it is not started."""
    if not parsed.positional:
        raise PodmanError("requires at least 1 arg(s), only received 0")
    image, *command = parsed.positional
    full_image = images.check(image)
    name = parsed.value("name") or _generated_name(host)
    if not NAME_PATTERN.match(name):
        raise PodmanError(
            "running container create option: names must match "
            "[a-zA-Z0-9][a-zA-Z0-9_.-]*: invalid argument"
        )
    env = parse_env(parsed)
    labels = _parse_labels(parsed)
    mounts, mount_options = _parse_mounts(host, parsed)
    restart = _parse_restart(parsed.value("restart"))
    if parsed.flag("rm") and restart not in ("", "no"):
        raise PodmanError(
            'the --rm option conflicts with --restart, when the restartPolicy is not "" and "no"'
        )
    if parsed.flag("replace"):
        existing = containers.get(host.home, name)
        if existing is not None and existing.name == name:
            remove(host, existing, force=True)
    root = containers.store_root(host.home)
    root.mkdir(parents=True, exist_ok=True)
    directory = root / name
    try:
        directory.mkdir()
    except FileExistsError:
        owner = containers.get(host.home, name)
        owner_id = owner.id if owner else "another container"
        raise PodmanError(
            f'creating container storage: the container name "{name}" is already in use by '
            f"{owner_id}. You have to remove that container to be able to reuse that name: "
            "that name is already in use"
        ) from None
    (directory / "tmp").mkdir()
    (directory / "tmp").chmod(0o1777)
    tmpfs: list[str] = []
    tmpfs_options: dict[str, str] = {}
    for item in parsed.many("tmpfs"):
        path, _, opts = item.partition(":")
        tmpfs.append(path)
        tmpfs_options[path] = opts or "rw,noexec,nosuid,nodev"
        if path != "/tmp":
            target = directory / "tmpfs" / path.strip("/").replace("/", "_")
            target.mkdir(parents=True, exist_ok=True)
            mounts.append([path, str(target)])
    if not any(inside.rstrip("/") == "/tmp" for inside, _ in mounts):
        mounts.append(["/tmp", str(directory / "tmp")])
    c = Container(
        name=name,
        id=secrets.token_hex(32),
        image=full_image,
        command=command,
        env=env,
        labels=labels,
        mounts=mounts,
        tmpfs=tmpfs,
        mount_options=mount_options,
        restart_policy=restart,
        status="created",
        pid=None,
        exit_code=None,
        started_at=None,
        finished_at=None,
        dir=directory,
        created_at=containers.now(),
        tmpfs_options=tmpfs_options,
        network=parsed.value("network") or "host",
        hostname=parsed.value("hostname") or "",
        user=parsed.value("user") or "",
        userns=parsed.value("userns") or "",
        auto_remove=parsed.flag("rm"),
    )
    containers.save_config(c)
    containers.save_state(c)
    return c
