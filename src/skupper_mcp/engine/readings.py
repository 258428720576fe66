"""A site as one read found it: a podman reading, a cluster reading, or unread with the
reason. Operations ``match`` on the three; none of them holds an optional field that another
must assert on. Each reading carries what the user last asked of the site (``asked``, from
``store.intents``), which decides whether a router that is not running was stopped on
purpose."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from ..errors import ConnectError, Kind, KubeError, MissingExtraError, SiteConfigError, kind_of
from ..facts.site_state import SiteState
from ..results import Operation
from ..sites.kube import ClusterSite, KubeState
from ..sites.podman import PodmanSite
from .runner import describe
from .scope import SiteRef

#: The last write the user asked for on a site (None: nothing recorded). ``setup`` and ``up``
#: ask it to run, ``down`` to stop, ``teardown`` to be removed.
Asked = Operation
ASKED_VALUES: tuple[Asked, ...] = get_args(Operation)

#: How far a site's read got (``Unread.reach``).
Reach = Literal["reached", "refused", "unreachable"]


@dataclass(frozen=True)
class PodmanReading:
    """A podman site read in full."""

    ref: SiteRef
    site: PodmanSite
    state: SiteState
    asked: Asked | None = None
    seconds: float = 0.0
    #: The host's boot id when ``asked`` was (None: not recorded): a boot id read now that
    #: differs says the host rebooted since (``condition.after_reboot``).
    asked_boot: str | None = None

    @property
    def namespace(self) -> str:
        return self.site.namespace


@dataclass(frozen=True)
class ClusterReading:
    """The Kubernetes site read through its API."""

    ref: SiteRef
    site: ClusterSite
    state: KubeState
    asked: Asked | None = None
    seconds: float = 0.0


@dataclass(frozen=True)
class Unread:
    """A site that could not be read, and why."""

    ref: SiteRef
    error: BaseException
    asked: Asked | None = None
    seconds: float = 0.0
    #: The host's boot id when ``asked`` was (None: not recorded), as ``PodmanReading``'s.
    asked_boot: str | None = None

    @property
    def reach(self) -> Reach:
        """How far the read got: it answered and refused our credentials (``refused``,
        from the error's kind, ``errors.kind_of``: SSH authentication, a host key
        known_hosts does not trust, an API's 401/403; a fix of the credentials, not of the
        network), no connection was made (``unreachable``: a ``ConnectError``, whether
        nothing answered, not in time, or topology.env named what is not there), or the
        site answered and what it said could not be used (``reached``: a command that timed
        out or failed, an answer past its bounds)."""
        if kind_of(self.error) is Kind.REFUSED:
            return "refused"
        if isinstance(self.error, ConnectError):
            return "unreachable"
        return "reached"

    @property
    def reachable(self) -> bool:
        """False when the site cannot be acted on at all: the host cannot be reached, or
        the cluster refuses our credentials. Such sites are skipped, not failed."""
        return self.reach == "reached"

    @property
    def missing_extra(self) -> bool:
        """The site needs an optional part of skupper-mcp that is not installed: nothing was
        asked of it, and every tool skips it (the others go on)."""
        return isinstance(self.error, MissingExtraError)

    def problem(self) -> str:
        if isinstance(self.error, MissingExtraError):
            return f"{self.ref.host} skipped: {self.error}"
        if isinstance(self.error, SiteConfigError):
            return f"{self.ref.host} cannot be used as configured: {self.error.reason}"
        if self.reach == "refused":
            why = self.error.reason if isinstance(self.error, ConnectError) else self.error
            return f"{self.ref.host} refused our credentials: {why}"
        if isinstance(self.error, ConnectError):
            return f"{self.ref.host} unreachable: {self.error.reason}"
        if isinstance(self.error, KubeError):
            return f"{self.ref.host}: {self.error}"
        return f"cannot read the state of {self.ref.host}: {describe(self.error)}"


Reading = PodmanReading | ClusterReading | Unread
