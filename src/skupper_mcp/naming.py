"""The names an agent reads in the server's instructions and in the tools' and prompts'
argument descriptions: the user's own hosts, sites and profiles, from their topology.

A model copies the examples it is shown, so they must be names the user's topology accepts,
never the makers' lab hosts. When no topology could be loaded the texts say "e.g." with
neutral names (gpu1) instead. Nothing heavy is imported here: ``tools`` uses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from skupper_mcp.vocabulary import KUBE_HOST, LOCAL_HOST

if TYPE_CHECKING:
    from skupper_mcp.topology import Topology

#: How many names of a kind a description lists before it says how many more there are.
LISTED = 4


def listing(names: tuple[str, ...]) -> str:
    """``a, b, c`` or, past LISTED names, ``a, b, c, d and 3 more``."""
    shown = ", ".join(names[:LISTED])
    more = len(names) - LISTED
    return f"{shown} and {more} more" if more > 0 else shown


def sentence(text: str) -> str:
    """``text`` with its first letter capital (the rest as it is: names keep their case)."""
    return text[:1].upper() + text[1:]


def either(parts: list[str]) -> str:
    """``a, b or c``."""
    return " or ".join([", ".join(parts[:-1]), parts[-1]]) if len(parts) > 1 else parts[0]


@dataclass(frozen=True)
class Names:
    """What a target can name in one topology (``known``), or neutral examples."""

    hosts: tuple[str, ...]  # the providers' host names
    sites: tuple[str, ...]  # the providers' Skupper site names
    profiles: tuple[str, ...]
    local_site: str
    kube_site: str | None  # None: no Kubernetes site
    known: bool
    pools: tuple[str, ...] = ()  # the model pools' names (test_model takes them)
    #: HOST/ENDPOINT of each host with several model endpoints (test_model takes them)
    endpoints: tuple[str, ...] = ()

    @classmethod
    def of(cls, topology: Topology | None) -> Names:
        if topology is None:
            return EXAMPLES
        kube = topology.kubernetes
        return cls(
            hosts=tuple(p.name for p in topology.providers),
            sites=tuple(p.site_name for p in topology.providers),
            profiles=tuple(topology.profile_names()),
            local_site=topology.local.site_name,
            kube_site=kube.site_name if kube else None,
            known=True,
            pools=tuple(pool.name for pool in topology.pools),
            endpoints=tuple(e.label for e in topology.model_endpoints() if e.name is not None),
        )

    def _of(self, names: tuple[str, ...]) -> str:
        return listing(names) if self.known else f"e.g. {listing(names)}"

    @property
    def host_list(self) -> str:
        return self._of(self.hosts)

    @property
    def site_list(self) -> str:
        return self._of(self.sites)

    @property
    def profile_list(self) -> str:
        return self._of(self.profiles)

    @property
    def local(self) -> str:
        """The local consumer site, as a target names it."""
        site = self.local_site if self.known else f"e.g. {self.local_site}"
        return f"{LOCAL_HOST} (this machine's site, {site})"

    @property
    def kubernetes(self) -> str | None:
        """The Kubernetes consumer site as a target names it; None when there is none."""
        if not self.known:
            return f"the Kubernetes site ({KUBE_HOST}) when the topology has one"
        if self.kube_site is None:
            return None
        return f"the Kubernetes site ({KUBE_HOST}, site {self.kube_site})"

    def _provider_parts(self) -> list[str]:
        return [
            f"a provider host ({self.host_list})",
            f"its Skupper site ({self.site_list})",
            f"a profile ({self.profile_list}: resolved to its host)",
        ]

    def model_routes(self) -> str:
        """What test_model takes: a provider (host, site, profile), one of a host's several
        model endpoints (HOST/ENDPOINT) or a model pool."""
        pools = [f"a model pool ({listing(self.pools)})"] if self.pools else []
        endpoints = (
            [f"one of a host's model endpoints ({listing(self.endpoints)})"]
            if self.endpoints
            else []
        )
        return either([*self._provider_parts(), *endpoints, *pools])

    def any_site(self) -> str:
        """Any one site: a provider (host, site, profile), local or the Kubernetes site."""
        consumers = [self.local, *([self.kubernetes] if self.kubernetes else [])]
        return either([*self._provider_parts(), *consumers])

    def target(self) -> str:
        """What up, down and diagnose take: a host's model endpoint names its host (one site
        serves all its endpoints), and up's model action that endpoint's profile."""
        endpoints = (
            [
                f"one of a host's model endpoints ({listing(self.endpoints)}: its whole host, "
                "with that endpoint's hosted-model-ctl action)"
            ]
            if self.endpoints
            else []
        )
        consumers = [self.local, *([self.kubernetes] if self.kubernetes else [])]
        return "all (the default), " + either([*self._provider_parts(), *endpoints, *consumers])


#: The names said when no topology could be loaded: neutral, each after "e.g.".
EXAMPLES = Names(
    hosts=("gpu1", "gpu2"),
    sites=("hub-gpu1", "hub-gpu2"),
    profiles=("small-16k",),
    local_site="local-site",
    kube_site=None,
    known=False,
)
