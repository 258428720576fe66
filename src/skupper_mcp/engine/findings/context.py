"""What the rules see (``Network``: the topology, every site as it was read, the link
probes) and the helpers that build findings and their next steps."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ...facts.site_state import SiteState
from ...results import Finding, NextStep, Severity, UnparsedOutput
from ...sites.kube import KubeState
from ...topology import ProviderHost, Topology
from ...vocabulary import LOCAL_HOST
from ..model_http import ModelsProbe
from ..readings import ClusterReading, PodmanReading, Reading
from ..scope import SiteRef


@dataclass(frozen=True)
class LinkProbe:
    """A link the topology asks for, and whether its endpoint accepted a TCP connection
    from this machine (None: not probed); its status text (evidence for people) and
    whether the dialling site reports it Ready (``ready``: what rules judge by)."""

    from_host: str
    to_host: str
    host: str
    port: int
    reachable: bool | None
    status: str
    ready: bool = False


@dataclass
class Network:
    """Everything one diagnose read found."""

    topology: Topology
    views: dict[str, Reading]
    links: list[LinkProbe] = field(default_factory=list)
    #: ``GET /v1/models`` through the local listener with the provider's key, for each
    #: provider whose own endpoint did not answer a list (what tells a refused key)
    model_probes: dict[str, ModelsProbe] = field(default_factory=dict)
    #: What each model endpoint serves, by label (``served.read_served``: the ids that
    #: decide active profiles everywhere; None or absent: not known)
    served: dict[str, list[str] | None] = field(default_factory=dict)

    @property
    def topology_file(self) -> str:
        return str(self.topology.path) if isinstance(self.topology.path, Path) else "topology.env"

    def podman_readings(self) -> Iterable[PodmanReading]:
        for view in self.views.values():
            if isinstance(view, PodmanReading):
                yield view

    def podman_sites(self) -> Iterable[tuple[SiteRef, SiteState]]:
        for view in self.podman_readings():
            yield view.ref, view.state

    def podman_reading(self, host: str) -> PodmanReading | None:
        view = self.views.get(host)
        return view if isinstance(view, PodmanReading) else None

    def kube_site(self) -> tuple[SiteRef, KubeState] | None:
        for view in self.views.values():
            if isinstance(view, ClusterReading):
                return view.ref, view.state
        return None

    def namespace(self, host: str) -> str:
        if host == LOCAL_HOST:
            return self.topology.local.namespace
        p = self.provider(host)
        return p.namespace if p is not None else "default"

    def provider(self, host: str) -> ProviderHost | None:
        return self.topology.provider(host)

    def prefix(self, host: str) -> str:
        """The topology.env variable prefix of a host."""
        p = self.provider(host)
        if p is not None:
            return p.prefix
        if host == LOCAL_HOST:
            return "LOCAL"
        return "CRC"


Rule = Callable[[Network], Iterable[Finding]]


def finding(
    id: str,
    ref: SiteRef,
    severity: Severity,
    *,
    symptom: str,
    evidence: Iterable[str],
    cause: str,
    fix: str,
    next: Iterable[NextStep] = (),
    unparsed: Iterable[UnparsedOutput] = (),
) -> Finding:
    return Finding(
        id=id,
        site=ref.site,
        host=ref.host,
        severity=severity,
        symptom=symptom,
        evidence=list(evidence),
        cause=cause,
        fix=fix,
        next=list(next),
        unparsed=list(unparsed),
    )


def call(tool: str, **arguments: str | bool) -> NextStep:
    """A call of one of this server's tools."""
    shown = ", ".join(
        f"target={v!r}" if k == "target" else f"{k}={v!r}" for k, v in arguments.items()
    )
    return NextStep(kind="tool", text=f"{tool}({shown})", tool=tool, arguments=dict(arguments))


def set_variable(network: Network, variable: str, value: str | None, why: str) -> NextStep:
    """A topology.env variable to set (``value`` None when only the user can know it)."""
    shown = value if value is not None else "<" + why + ">"
    return NextStep(
        kind="topology",
        text=f"set {variable}={shown} in {network.topology_file}",
        file=network.topology_file,
        variable=variable,
        value=value,
    )


def model_ctl(action: str, profile: str, host: str) -> NextStep:
    return NextStep(
        kind="hosted-model-ctl",
        text=f"hosted-model-ctl {action} {profile} (on {host})",
        action=action,
        profile=profile,
    )


def on_host(host: str, command: str) -> NextStep:
    return NextStep(kind="host", text=f"on {host}: {command}", command=command)


def log_lines(state: SiteState, component: str, *needles: str, limit: int = 4) -> list[str]:
    """The last lines of a component's log that contain any of ``needles``."""
    found = [
        f"{component} log: {line.strip()}"
        for line in state.logs.get(component, [])
        if any(n in line for n in needles)
    ]
    return found[-limit:]
