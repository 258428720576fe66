"""Skupper's images on a podman host, and podman's pull of them, read. Pure.

A Skupper release's system platform runs two images: the system controller's
(``system-controller:<release>``) and the router's (``skupper-router:<router release>``),
under ``quay.io/skupper`` unless ``SKUPPER_IMAGE_REGISTRY`` names another registry, and
unless ``SKUPPER_SYSTEM_CONTROLLER_IMAGE`` / ``SKUPPER_ROUTER_IMAGE`` name the image
(``internal/images/images.go@2.1.3:4-10``, ``@2.2.1:4-10``; ``internal/images/
image_utils.go@2.1.3:22-35,46-55,142-158``, the same @2.2.1). Skupper pulls them itself,
through podman's API and silently, in ``system install`` and ``system start|reload``
(``internal/nonkube/bootstrap/install.go@2.2.1:69-73``, ``internal/nonkube/compat/
site_state_renderer.go@2.2.1:265-279``); setup pulls them first with ``podman pull``
(``scripts/pull.sh``), whose lines say what it copies (``Copying blob <digest>`` per layer
when its output is no terminal: ``copy/progress_bars.go@v4.9.4:110-116`` of the
containers/image podman vendors), and whose refusal names the registry's answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .framing import split_frames
from .skupper_version import Version

DEFAULT_REGISTRY = "quay.io/skupper"
#: skupper's Makefile ROUTER_IMAGE_TAG by release (facts/router_release.py says the same).
ROUTER_TAG = {
    Version(2, 1, 0): "3.4.0",
    Version(2, 1, 1): "3.4.0",
    Version(2, 1, 2): "3.4.1",
    Version(2, 1, 3): "3.4.2",
    Version(2, 1, 4): "3.4.2",
    Version(2, 2, 0): "3.5.0",
    Version(2, 2, 1): "3.5.1",
}


def release_images(release: Version | None) -> tuple[str, ...]:
    """``COMPONENT=NAME`` (NAME after the registry) of each image a release runs, for
    ``scripts/pull.sh``; none for a release whose images the product does not know (Skupper
    then pulls them itself)."""
    router = ROUTER_TAG.get(release) if release is not None else None
    if release is None or router is None:
        return ()
    return (f"system-controller=system-controller:{release}", f"router=skupper-router:{router}")


@dataclass
class ImagePull:
    """One image podman is pulling (or pulled) on the host."""

    component: str
    image: str
    lines: list[str] = field(default_factory=list)
    #: podman's exit status once it ended (None: still pulling)
    status: int | None = None

    @property
    def layers(self) -> int:
        """The layers copied so far (``Copying blob`` lines)."""
        return sum(1 for line in self.lines if line.startswith("Copying blob "))

    @property
    def error(self) -> str | None:
        """podman's ``Error: ...`` line, when it printed one."""
        found = [line for line in self.lines if line.startswith("Error: ")]
        return found[-1].removeprefix("Error: ")[:600] if found else None

    @property
    def registry(self) -> str:
        """The registry the image is pulled from (its name's first part)."""
        first = self.image.split("/", 1)[0]
        return first if "/" in self.image and ("." in first or ":" in first) else "docker.io"

    def progress(self) -> str:
        """What the pull has done so far, in podman's own terms."""
        if self.status == 0:
            return f"pulled ({self.layers} layers copied)"
        last = self.lines[-1] if self.lines else "started"
        return f"{self.layers} layers copied; {last[:120]}"


@dataclass
class PullState:
    """``scripts/pull.sh``'s answer: the images already there, the ones being pulled."""

    present: list[str] = field(default_factory=list)
    pulls: list[ImagePull] = field(default_factory=list)
    complete: bool = False
    #: the script could not write its work directory under the login's home
    unwritable: bool = False

    @property
    def done(self) -> bool:
        return all(p.status is not None for p in self.pulls) or self.failed is not None

    @property
    def failed(self) -> ImagePull | None:
        return next((p for p in self.pulls if p.status not in (None, 0)), None)


def parse_pull(output: str) -> PullState:
    state = PullState()
    by_index: dict[str, ImagePull] = {}
    for frame in split_frames(output):
        if frame.tag == "present":
            state.present.append(frame.body.strip()[:200])
        elif frame.tag == "pull":
            index, _, component = frame.argument.partition(" ")
            by_index[index] = ImagePull(component[:40], frame.body.strip()[:200])
            state.pulls.append(by_index[index])
        elif frame.tag == "log" and frame.argument in by_index:
            by_index[frame.argument].lines = [line for line in frame.lines if line.strip()]
        elif frame.tag == "done":
            index, _, status = frame.argument.partition(" ")
            if index in by_index and status.isascii() and status.isdigit():
                by_index[index].status = int(status)
        elif frame.tag == "unwritable":
            state.unwritable = True
        elif frame.tag == "end":
            state.complete = True
    return state


def pull_refused(pull: ImagePull, host: str) -> str:
    """Why setup stops at ``pull`` on ``host``, and what the user can do."""
    said = pull.error or (pull.lines[-1] if pull.lines else f"exit {pull.status}")
    return (
        f"podman could not pull the {pull.component} image {pull.image} from {pull.registry} "
        f"({said}). On {host}: log in to the registry (`podman login {pull.registry}`; a "
        "custom authentication file is named by REGISTRY_AUTH_FILE), or pull from a mirror "
        "that holds Skupper's images: SKUPPER_IMAGE_REGISTRY=<mirror> (or "
        "SKUPPER_ROUTER_IMAGE / SKUPPER_SYSTEM_CONTROLLER_IMAGE) in the login's environment; "
        "then run setup again"
    )


@dataclass(frozen=True)
class ReleaseDrift:
    """A site whose skupper CLI went to another release than its router was installed with
    (a package upgrade: the CLI is new, the router container keeps its image)."""

    cli: Version
    router: Version
    #: the router release the CLI installs
    wanted: str

    def line(self, container: str) -> str:
        return (
            f"router container {container}: skupper-router {self.router} runs, installed by "
            f"an earlier Skupper; the skupper CLI is {self.cli}, whose router is "
            f"{self.wanted} (no in-place upgrade: re-bootstrap, skupper #2390)"
        )


@dataclass(frozen=True)
class ControllerDrift:
    """A site whose system controller container runs another release's image than the
    skupper CLI's: ``system install`` skips a controller container that exists
    (``internal/nonkube/bootstrap/install.go@2.2.1:50-55``), so an upgrade keeps the old one
    until it is removed and installed again."""

    cli: Version
    image: str

    def line(self, container: str) -> str:
        return (
            f"system controller {container}: runs {self.image}, installed by an earlier "
            f"Skupper; the skupper CLI is {self.cli}, whose controller is "
            f"system-controller:{self.cli} (system install keeps an existing one: it is "
            "removed and installed again)"
        )


def controller_drift(cli: Version | None, image: str | None) -> ControllerDrift | None:
    """``cli`` (``skupper version``) against the controller container's ``image``: a drift
    when its tag is a release other than the CLI's; None when either is unknown, the CLI's
    release is not one the product knows (as ``release_drift``), the tag is no release (an
    image named by ``SKUPPER_SYSTEM_CONTROLLER_IMAGE``), or they agree."""
    if cli is None or image is None or "/system-controller:" not in f"/{image}":
        return None
    if Version(cli.major, cli.minor, cli.patch) not in ROUTER_TAG:  # a release not known
        return None
    running = Version.parse(image.rpartition(":")[2])
    if running is None or running == cli:
        return None
    return ControllerDrift(cli, image)


def release_drift(cli: Version | None, router: Version | None) -> ReleaseDrift | None:
    """``cli`` (``skupper version``) against ``router`` (the router container's image tag):
    a drift when the CLI's release installs another router than the one that runs; None when
    either is unknown or they agree."""
    if cli is None or router is None:
        return None
    wanted = ROUTER_TAG.get(Version(cli.major, cli.minor, cli.patch))
    if wanted is None or Version.parse(wanted) == router:
        return None
    return ReleaseDrift(cli, router, wanted)
