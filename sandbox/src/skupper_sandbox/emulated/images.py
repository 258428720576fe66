"""The images the emulated podman knows, and the process each one runs.

There is no registry: an image is a name that maps to a command on this machine
(docs/sandbox.md section 4). An image missing from the table fails as a failed pull does.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from types import ModuleType

from skupper_sandbox.hostenv import HostInfo, router_image_path, translate
from skupper_sandbox.router import choice as router_choice
from skupper_sandbox.router import imitation, skrouterd
from skupper_sandbox.router.release import RELEASE_VAR

ROUTER = "quay.io/skupper/skupper-router:*"
CONTROLLER = "quay.io/skupper/system-controller:*"
MODEL_SERVER = "localhost/skupper-mcp-sandbox/model-server:*"
CUSTOM_MODEL = "localhost/skupper-mcp-sandbox/custom-model:*"
SHELL_IMAGES = (
    "localhost/skupper-mcp-sandbox/shell:*",
    "docker.io/library/busybox:*",
    "docker.io/library/alpine:*",
    "registry.access.redhat.com/ubi9*:*",
)
KNOWN = (ROUTER, CONTROLLER, MODEL_SERVER, CUSTOM_MODEL, *SHELL_IMAGES)

MODEL_COMMAND_VAR = "SKMCP_MODEL_SERVER_COMMAND"

#: The sandbox's own image programs (``python -m`` of these modules), each with the name its
#: process has on a real host (the image's binary: ``ps`` shows it).
CONTROLLER_PROGRAM, MODEL_SERVER_PROGRAM = (
    "skupper_sandbox.emulated.controller",
    "skupper_sandbox.model_server",
)
PROGRAMS = {
    skrouterd.PROGRAM: "skrouterd",
    imitation.PROGRAM: "skrouterd",
    CONTROLLER_PROGRAM: "controller",
    MODEL_SERVER_PROGRAM: "model-server",
}


def program_module(program: str) -> str:
    """The module whose ``main`` ``python -m program`` runs: a package runs its __main__."""
    spec = importlib.util.find_spec(program)
    return f"{program}.__main__" if spec and spec.submodule_search_locations else program


def loaded_program(argv: list[str]) -> tuple[str, ModuleType] | None:
    """``(program, module with its main)`` when ``argv`` runs a sandbox program that this
    process has already imported (the command server imports them all: a container's
    monitor is one of its children), else None."""
    if len(argv) != 3 or argv[:2] != [sys.executable, "-m"] or argv[2] not in PROGRAMS:
        return None
    module = sys.modules.get(program_module(argv[2]))
    if module is None or not callable(getattr(module, "main", None)):
        return None
    return argv[2], module


class UnknownImage(LookupError):
    """The image is not in the table: podman reports a failed pull."""

    def __init__(self, image: str) -> None:
        repo, _, tag = normalize(image).rpartition(":")
        self.message = (
            f"initializing source docker://{repo}:{tag}: "
            f"reading manifest {tag} in {repo}: manifest unknown"
        )
        super().__init__(self.message)


@dataclass(frozen=True)
class ImageProcess:
    """What a container of an image runs: argv plus variables the image adds."""

    argv: list[str]
    env: dict[str, str]


def normalize(image: str) -> str:
    """Fully qualified `registry/repo:tag` as podman shows it (short names -> docker.io)."""
    name = image.split("@", 1)[0]
    first, _, rest = name.partition("/")
    if not rest:
        name = f"docker.io/library/{name}"
    elif "." not in first and ":" not in first and first != "localhost":
        name = f"docker.io/{name}"
    last = name.rsplit("/", 1)[-1]
    if ":" not in last:
        name += ":latest"
    return name


def is_known(image: str) -> bool:
    """True when a container can be made from this image."""
    full = normalize(image)
    return any(fnmatchcase(full, pattern) for pattern in KNOWN)


def check(image: str) -> str:
    """The normalized name of a known image; raises UnknownImage otherwise."""
    if not is_known(image):
        raise UnknownImage(image)
    return normalize(image)


def _model_server_command(host: HostInfo) -> str:
    try:
        world = json.loads((Path(host.world_dir) / "world.json").read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return ""
    return str(world.get("model_server_command") or "")


def process_for(
    image: str,
    command: list[str],
    container_env: dict[str, str],
    tmpfs: list[str],
    host: HostInfo,
    python: str = sys.executable,
) -> ImageProcess:
    """The process a container of `image` runs on `host` (its command overrides the image's)."""
    full = check(image)
    if command:
        return ImageProcess(list(command), {})
    if fnmatchcase(full, ROUTER):
        # The image's launch.sh, on the world's router (both fall back to the image's default
        # config when /tmp cannot be written).
        release = full.rsplit(":", 1)[-1]
        return ImageProcess(
            router_choice.for_world(host.world_dir).start(python),
            {RELEASE_VAR: release, "PATH": router_image_path(host.world_dir)},
        )
    if fnmatchcase(full, CONTROLLER):
        return ImageProcess([python, "-m", CONTROLLER_PROGRAM], {})
    if fnmatchcase(full, MODEL_SERVER):
        return ImageProcess([python, "-m", MODEL_SERVER_PROGRAM], {})
    if fnmatchcase(full, CUSTOM_MODEL):
        command_text = container_env.get(MODEL_COMMAND_VAR) or _model_server_command(host)
        env = {MODEL_COMMAND_VAR: command_text}
        env["HOST"] = translate(container_env.get("HOST", "0.0.0.0"), host)
        return ImageProcess(["/bin/sh", "-c", env[MODEL_COMMAND_VAR]], env)
    return ImageProcess(["/bin/sh"], {})
