"""Pulling Skupper's images on a host with the ``slow-pull=SECONDS`` or ``pull-fails=REASON``
quirk: until pulled, its ``quay.io/skupper/*`` images are not there (``podman image exists``
says 1), and a pull takes SECONDS or fails with REASON. A host without either quirk has
every image from the start, as before. The same on both podman kinds: the emulated podman
and the real-podman world's wrapper (``real_podman.WRAPPER``) run ``podman_main`` for
``pull`` and ``image exists`` of these images on such a host.

Two pullers, as on a real host:
- ``podman pull`` prints, on stderr, libimage's ``Trying to pull IMAGE...``, the copier's
  ``Getting image source signatures``, ``Copying blob <digest>`` per layer and ``Copying
  config <digest>`` (the lines it prints when its output is no terminal: progress bars are
  discarded, ``printCopyInfo``), ``Writing manifest to image destination``, then the image
  id on stdout; a registry's refusal is ``Error: initializing source docker://IMAGE:
  reading manifest TAG in REPO: REASON``, exit 125 (``vendor/github.com/containers/common/
  libimage/pull.go@v4.9.4:647``, ``vendor/github.com/containers/image/v5/copy/
  progress_bars.go@v4.9.4:110-116``, ``copy/single.go@v4.9.4:114,574``, ``copy/copy.go
  @v4.9.4:213``, ``docker/docker_client.go@v4.9.4:967``).
- Skupper's own pull (``system install``: the system controller's image; ``system start``
  and ``reload``: the router's) goes through podman's API (``POST /images/create``) and
  says nothing until it ends; a refusal is ``unable to pull image IMAGE: REASON`` with its
  recommendation to log in (``internal/nonkube/client/compat/image.go@2.2.1:19-26,92-139``,
  the same @2.1.3; ``internal/nonkube/bootstrap/install.go@2.2.1:69-73``,
  ``internal/nonkube/compat/site_state_renderer.go@2.2.1:265-279``).
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from skupper_sandbox.hostenv import HostInfo, NotOnSandboxHost, current_host

from .images import normalize

SKUPPER_IMAGES = ("quay.io/skupper/",)
#: How many layers a Skupper image has here (each a ``Copying blob`` line).
LAYERS = 3
RECORD = "pulled-images"

#: Skupper's recommendation after a failed pull (compat/image.go's imagePullRecommendation).
RECOMMENDATION = """
If the image is being pulled from an authenticated registry,
make sure to log in first, using:

    podman login <registry-url>

In case you are using a custom authentication file, you should
set the REGISTRY_AUTH_FILE environment variable."""


def _record(info: HostInfo) -> Path:
    return Path(info.host_dir) / RECORD


def quirked(info: HostInfo, image: str) -> bool:
    """Whether ``image`` is one a pull quirk of the host governs."""
    return not info.quirks.images_pulled and normalize(image).startswith(SKUPPER_IMAGES)


def present(info: HostInfo, image: str) -> bool:
    """Whether the host has ``image`` (always, unless a pull quirk keeps it away)."""
    if not quirked(info, image):
        return True
    try:
        return normalize(image) in _record(info).read_text().split("\n")
    except FileNotFoundError:
        return False


def _pulled(info: HostInfo, image: str) -> None:
    with _record(info).open("a") as f:
        f.write(normalize(image) + "\n")


def _digest(image: str, what: str) -> str:
    return "sha256:" + hashlib.sha256(f"{image} {what}".encode()).hexdigest()


def _refusal(image: str, reason: str) -> str:
    full = normalize(image)
    repo, _, tag = full.rpartition(":")
    return f"initializing source docker://{full}: reading manifest {tag} in {repo}: {reason}"


def podman_pull(info: HostInfo, image: str, quiet: bool = False) -> int:
    """``podman pull IMAGE`` on a quirked host: its lines over the quirk's time, or its
    refusal."""
    full = normalize(image)
    say = (lambda _line: None) if quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    say(f"Trying to pull {full}...")
    if present(info, full):
        say("Getting image source signatures")
        print(_digest(full, "id")[7:], flush=True)
        return 0
    reason = info.quirks.pull_fails
    if reason is not None:
        print(f"Error: {_refusal(full, reason)}", file=sys.stderr, flush=True)
        return 125
    seconds = info.quirks.slow_pull or 0.0
    steps = LAYERS + 2
    say("Getting image source signatures")
    for layer in range(LAYERS):
        time.sleep(seconds / steps)
        say(f"Copying blob {_digest(full, f'layer {layer}')}")
    time.sleep(seconds / steps)
    say(f"Copying config {_digest(full, 'config')}")
    time.sleep(seconds / steps)
    say("Writing manifest to image destination")
    _pulled(info, full)
    print(_digest(full, "id")[7:], flush=True)
    return 0


def api_pull(info: HostInfo, image: str) -> str | None:
    """Skupper's pull through podman's API: silent for the quirk's time; None when done, or
    the error Skupper wraps (``unable to pull image ...`` and its recommendation)."""
    if present(info, image):
        return None
    reason = info.quirks.pull_fails
    if reason is not None:
        return f"unable to pull image {image}: {reason}\n\nRecommendation: {RECOMMENDATION}\n"
    time.sleep(info.quirks.slow_pull or 0.0)
    _pulled(info, image)
    return None


def host_of(env: Mapping[str, str] | None = None) -> HostInfo | None:
    """The sandbox host this command runs on (None: not on one)."""
    try:
        return current_host(os.environ if env is None else env)
    except (NotOnSandboxHost, FileNotFoundError):
        return None


def podman_main(argv: list[str]) -> int | None:
    """``podman pull IMAGE`` / ``podman image pull IMAGE`` / ``podman image exists IMAGE``
    for an image a pull quirk governs; None when it is none of those (the real or emulated
    podman answers)."""
    info = host_of()
    if info is None or info.quirks.images_pulled:
        return None
    args = argv[1:] if argv[:1] == ["image"] else argv
    verb, rest = (args[0], args[1:]) if args else ("", [])
    quiet = any(a in ("-q", "--quiet") for a in rest)
    images = [a for a in rest if not a.startswith("-")]
    if verb == "exists" and argv[:1] == ["image"] and len(images) == 1:
        if not quirked(info, images[0]):
            return None
        return 0 if present(info, images[0]) else 1
    if verb == "pull" and len(images) == 1 and quirked(info, images[0]):
        return podman_pull(info, images[0], quiet)
    return None


if __name__ == "__main__":  # the real-podman world's wrapper
    code = podman_main(sys.argv[1:])
    sys.exit(99 if code is None else code)
