"""Recorded sites, replayed: the engine's real operations over ``engine/site_states/``.

``engine/site_states/<phase>/<host>.txt`` is the real output of the site-state script, read
from a sandbox world (``engine/record_site_states.py`` records it). Here each host is a
``FakeConnector`` that answers the state read with the phase it is in, as one change of it
(``Edit``) may have it: a scenario the recordings cannot produce (a host's text that is
markup, a router killed a minute ago) is a recorded reading changed before the operation
reads it, never a result written by hand.

A host answers reads only, unless it is given the phase a write takes it to (``then``): then
it accepts the write's commands and, from the first, answers reads with that phase, as the
world did when the phases were recorded (``down rhel-ai`` took ``up`` to ``rhel-ai-down``).

The TCP probes the operations send (links to a hub's inter-router port, a consumer's
listeners) are answered from the readings, as the recorded world would have: a hub's port
accepts while its router runs; a local listener accepts while the local router runs and the
provider's router runs or stopped less than ``ROUTE_MAX_AGE`` ago (skrouterd keeps the route
that long: ``engine/listeners.py``). A probe of any other address fails the run.
"""

from __future__ import annotations

import base64
import contextlib
import re
import shlex
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import skupper_mcp.engine.operations  # noqa: F401  (every module that probes, loaded)
from fake_connector import Call, FakeConnector, FakeHosts, Reply, Unscripted
from skupper_mcp.connectors.pool import ConnectorPool
from skupper_mcp.engine import Engine, verify
from skupper_mcp.engine.listeners import ROUTE_MAX_AGE
from skupper_mcp.errors import ConnectError
from skupper_mcp.facts import names
from skupper_mcp.facts.site_state import parse_site_state
from skupper_mcp.sites.kube import ClusterSite
from skupper_mcp.topology import Topology, load_topology
from skupper_mcp.vocabulary import KUBE_HOST, LOCAL_HOST

STATES = Path(__file__).resolve().parent / "engine" / "site_states"
HOSTS = ("rhel-ai", "rhtevan-work", "local")
PHASES = ("fresh", "up", "rhel-ai-down", "down", "rhel-ai-up")
READ = "@@section version"  # only the site-state script prints this
CERT = "@@file cert"  # only the client-certificate script prints this
SEARCH = "# log-search.sh\n"  # the search of a whole router log (diagnose)
CONNECTORS = "# connector-status.sh\n"  # the router's connector status (diagnose)
#: The recordings hold no management answer: the replayed router's image answers as one
#: without skmanage does (crun's words, exit 127), so its connector status is unknown.
NO_SKMANAGE = (
    "@@connectors\n\n@@stderr\n|Error: crun: executable file `skmanage` not found in $PATH: "
    "No such file or directory: OCI runtime attempted to invoke a command that was not "
    "found\n@@rc 127\n"
)

#: A change to one host's recorded reading, made before an operation reads it.
Edit = Callable[[str], str]


def recorded(phase: str, host: str) -> str:
    return (STATES / phase / f"{host}.txt").read_text()


def recorded_topology(state_dir: Path) -> Topology:
    """The recorded world's topology (``site_states/topology.env``), its state in
    ``state_dir``."""
    path = state_dir / "topology.env"
    path.write_text(f"{(STATES / 'topology.env').read_text()}STATE_DIR={state_dir}\n")
    return load_topology(path)


def cert_reply(site: str) -> str:
    """The client certificate as the recorded Secrets hold it (placeholders, no key)."""
    lines = []
    for name in ("ca.crt", "tls.crt", "tls.key"):
        data = base64.b64encode(f"recorded {name} of {site}".encode()).decode()
        lines += [f"@@file cert {name}", f"|{data}"]
    return "\n".join([*lines, "@@end", ""])


# --- Edits of a reading ------------------------------------------------------------------


def in_section(header: str, old: str, new: str) -> Edit:
    """Replace ``old`` by ``new`` in the reading's section that starts with ``header`` (e.g.
    ``@@file runtime Link-link-hub-rhel-ai.yaml``). A reading without it fails: a
    re-recording that moved it must not quietly turn the scenario into another one."""

    def edit(text: str) -> str:
        parts = re.split(r"(?m)^(?=@@)", text)
        for i, part in enumerate(parts):
            if part.startswith(header + "\n"):
                if old not in part:
                    raise AssertionError(f"{header}: {old!r} is not in the recorded reading")
                parts[i] = part.replace(old, new, 1)
                return "".join(parts)
        raise AssertionError(f"no {header!r} in the recorded reading")

    return edit


def clock_after_exit(container: str, seconds: int) -> Edit:
    """The reading taken ``seconds`` after ``container`` exited (its ``@@now``)."""

    def edit(text: str) -> str:
        state = parse_site_state(text)
        exited = state.containers[container].exited_at
        if not exited:
            raise AssertionError(f"{container} has not exited in the recorded reading")
        return re.sub(r"(?m)^@@now \d+$", f"@@now {exited + seconds}", text, count=1)

    return edit


# --- Hosts ---------------------------------------------------------------------------------


@dataclass
class ReplayedHost:
    """One host of the recorded world: its phase, the edits of its reading and, if a write
    may reach it, the phase the write takes it to."""

    name: str
    phase: str
    edits: Sequence[Edit] = ()
    unreachable: str | None = None
    then: str | None = None
    fake: FakeConnector = field(init=False)

    def __post_init__(self) -> None:
        self.fake = FakeConnector(self.name, self._answer, unreachable=self.unreachable)

    def reading(self) -> str:
        text = recorded(self.phase, self.name)
        for edit in self.edits:
            text = edit(text)
        return text

    def _answer(self, call: Call) -> Reply | None:
        if READ in call.command:
            return Reply(self.reading())
        if SEARCH in call.command:
            return Reply(self.log_search(call.command))
        if CONNECTORS in call.command:
            return Reply(NO_SKMANAGE)
        if CERT in call.command:
            if self.phase == "fresh":  # no namespace yet: the script's base64 fails
                return Reply("@@file cert ca.crt\n", 1, "base64: No such file or directory")
            return Reply(cert_reply(f"hub-{self.name}"))
        if self.then is not None:
            self.phase = self.then
            return Reply()
        return None  # not a read: Unscripted

    def log_search(self, command: str) -> str:
        """What ``scripts/log-search.sh`` prints: the recorded router log's lines that hold
        the string it was given (the recording's log is the whole log here)."""
        line = next(li for li in command.split("\n") if li.startswith("set -- "))
        _, _, _, needle, lines, _ = shlex.split(line)
        logs = parse_site_state(self.reading()).logs.get("router", [])
        found = [li for li in logs if needle in li][-int(lines) :]
        return "@@matches\n" + "".join(f"|{li}\n" for li in found) + "\n@@rc 0\n"

    @property
    def writes(self) -> list[str]:
        return [
            c
            for c in self.fake.commands
            if READ not in c and CERT not in c and SEARCH not in c and CONNECTORS not in c
        ]


class UnreachableCluster:
    """The Kubernetes site of a world whose API cannot be reached (``reason``)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __call__(self) -> ClusterSite:
        raise ConnectError(KUBE_HOST, self.reason)


#: The cluster site a scenario adds to the recorded topology (which has none): the example
#: topology's, linked directly to rhel-ai, with a listener for each provider.
CLUSTER_KEYS = """\
CRC_SITE_NAME=crc-sandbox
CRC_NAMESPACE=skupper-models
CRC_CONTEXT=crc-admin
CRC_MODEL_PORT=8000
CRC_ROUTING_KEY=model-api-rhel-ai
CRC_RHTEVAN_WORK_PORT=8001
CRC_DIRECT_LINKS="rhel-ai"
"""


def replay_topology(state_dir: Path, cluster: bool = False) -> Topology:
    """The recorded world's topology, its STATE_DIR in ``state_dir``."""
    text = (STATES / "topology.env").read_text() + f"STATE_DIR={state_dir}\n"
    if cluster:
        text += CLUSTER_KEYS
    path = state_dir / "topology.env"
    path.write_text(text)
    return load_topology(path)


class ReplayEngine(Engine):
    """The product's Engine over replayed hosts; its cluster, if the topology has one, is
    unreachable for ``cluster_unreachable``."""

    def __init__(
        self, topology: Topology, hosts: dict[str, ReplayedHost], cluster_unreachable: str
    ) -> None:
        fakes = {h: r.fake for h, r in hosts.items()}
        super().__init__(topology, ConnectorPool(topology.ssh.options(), factory=FakeHosts(fakes)))
        self.unreachable_cluster = UnreachableCluster(cluster_unreachable)

    def _cluster_site(self) -> ClusterSite:
        return self.unreachable_cluster()


# --- Probes ---------------------------------------------------------------------------------


def router_running(host: ReplayedHost, namespace: str) -> bool:
    if host.unreachable is not None:
        return False  # a host that cannot be reached: nothing of it answers
    state = parse_site_state(host.reading())
    return state.container_running(names.router_container(namespace))


def provider_routes(host: ReplayedHost, namespace: str) -> bool:
    """Whether a consumer's router still has a route to this provider's router."""
    if router_running(host, namespace):
        return True
    if host.unreachable is not None:
        return False
    stopped = parse_site_state(host.reading()).stopped_for(names.router_container(namespace))
    return stopped is not None and stopped < ROUTE_MAX_AGE


def probe_answers(
    topology: Topology, hosts: dict[str, ReplayedHost], no_route: frozenset[str] = frozenset()
) -> Callable[..., object]:
    """A ``tcp_probe`` that answers from the readings (see the module's docstring); the local
    listeners of the providers in ``no_route`` never accept (their link cannot connect, e.g.
    it is refused in the TLS handshake, which no reading of the provider shows)."""
    local = topology.local
    local_host = hosts[LOCAL_HOST]
    #: inter-router ports: (address, port) -> the host whose router answers there
    routers: dict[tuple[str, int], tuple[ReplayedHost, str]] = {}
    if local.public_host is not None:  # the cluster's link to the local site
        routers[(local.public_host, local.inter_router_port)] = (local_host, local.namespace)
    #: the local site's listeners: (address, port) -> the provider behind it
    listeners: dict[tuple[str, int], tuple[ReplayedHost, str] | None] = {}
    for p in topology.providers:
        routers[(p.public_host, p.inter_router_port)] = (hosts[p.name], p.namespace)
        behind = None if p.name in no_route else (hosts[p.name], p.namespace)
        listeners[(local.listener_host, p.local_port)] = behind

    async def tcp_probe(host: str, port: int, timeout: float = 1.0) -> bool:
        if (host, port) in routers:
            return router_running(*routers[(host, port)])
        if (host, port) in listeners:
            behind = listeners[(host, port)]
            return (
                behind is not None
                and router_running(local_host, local.namespace)
                and provider_routes(*behind)
            )
        raise Unscripted(f"nothing in the recorded world listens at {host}:{port}")

    return tcp_probe


@contextmanager
def probes_answered(
    topology: Topology, hosts: dict[str, ReplayedHost], no_route: frozenset[str] = frozenset()
) -> Iterator[None]:
    """Every module of the product that probes TCP probes the recorded world instead."""
    fake = probe_answers(topology, hosts, no_route)
    users = [
        m
        for name, m in list(sys.modules.items())
        if name.startswith("skupper_mcp") and getattr(m, "tcp_probe", None) is verify.tcp_probe
    ]
    with contextlib.ExitStack() as stack:
        for module in users:
            stack.enter_context(mock.patch.object(module, "tcp_probe", fake))
        yield
