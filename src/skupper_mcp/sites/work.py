"""What a step will run, as data: a script on a podman host or calls to the Kubernetes API.

The site drivers build these (``PodmanSite``'s builders, ``sites.kube``'s call lists) and run
them (``PodmanSite.execute``, ``ClusterSite.execute``), so a plan can show what would run and
a test can compare it without a host. A ``summary`` is one short line that names the commands,
never what travels on stdin or in a Secret's body.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..connectors.shell import program_body, script
from ..errors import cut

SKUPPER_TIMEOUT = 120.0
#: How many times in all a script with ``retry_when`` may run.
RUNS = 3
#: Seconds before a script's second run (and twice that before its third).
RETRY_PAUSE = 0.5


@dataclass(frozen=True)
class Script:
    """A shell script for one podman host (``set -e``: the first failing line ends it)."""

    summary: str
    body: tuple[str, ...]
    done: str
    stdin: str | None = field(default=None, repr=False)
    timeout: float = SKUPPER_TIMEOUT
    #: A failure whose text holds this is a race that undid itself: the script runs again
    #: (up to ``RUNS`` times in all) rather than fail the step.
    retry_when: str | None = None

    @property
    def text(self) -> str:
        """The whole script as the host's shell receives it."""
        return script("set -e", *self.body)

    @classmethod
    def shipped(
        cls, summary: str, name: str, args: tuple[str | int, ...], done: str, **more: Any
    ) -> Script:
        """The shipped script ``name`` (``scripts/NAME``) with ``args`` as its positional
        parameters (``shell.program``), after ``set -e``."""
        return cls(summary, (program_body(name, *args),), done, **more)


@dataclass(frozen=True)
class ApiCall:
    """One call to the Kubernetes API: ``verb`` (apply, delete, wait) on ``kind``/``name``.

    ``name`` may be the objects' owner (``of Deployment/NAME``). ``body`` is what ``apply``
    sends; it may be a Secret, so it is kept out of the summary and the repr.
    """

    verb: str
    kind: str
    name: str
    body: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    @property
    def summary(self) -> str:
        if self.name.startswith("of "):
            return f"{self.verb} {self.kind} {self.name}"
        if self.verb == "wait":
            return f"wait for {self.kind}/{self.name} Ready"
        return f"{self.verb} {self.kind}/{self.name}"


Work = Script | ApiCall


def summary(work: tuple[Work, ...], limit: int = 240) -> str:
    """One line for a plan's step: what would run, cut at ``limit`` characters."""
    return cut("; ".join(w.summary for w in work), limit)
