"""Rules about the links between sites: an inter-router port nobody can reach, and a link
refused because the name it dials is not in the hub's certificate. Matched on the TCP probe
from this machine and on what the dialling skrouterd logs (src/adaptors/amqp/qd_connector.c:
``Connection to <host>:<port> failed: ...``)."""

from __future__ import annotations

from collections.abc import Iterator

from ...facts import names
from ...results import Finding
from ..scope import site_ref
from .context import LinkProbe, Network, call, finding, set_variable
from .podman import STANDALONE

VERIFY_FAILED = "certificate verify failed"
SETTLE_SECONDS = 15


def _dialler_log(network: Network, link: LinkProbe, *needles: str) -> list[str]:
    view = network.podman_reading(link.from_host)
    if view is None:
        return []
    endpoint = f"Connection to {link.host}:{link.port} failed"
    # the log's tail, after what a search of the whole log found (a failure is logged once)
    searched = [line for n in needles for line in view.state.log_matches.get(n, [])]
    lines = list(dict.fromkeys([*searched, *view.state.logs.get("router", [])]))
    # skrouterd logs each failure twice: as SERVER (error) and again inside a FLOW_LOG record
    return [
        f"{link.from_host} router log: {line.strip()}"
        for line in lines
        if endpoint in line and " FLOW_LOG " not in line and all(n in line for n in needles)
    ][-2:]


def _dialler_management(network: Network, link: LinkProbe, needle: str) -> list[str]:
    """What the dialling router's own connector status says of this link's endpoint, when
    its last failure holds ``needle``: the management answer keeps it while the router
    retries, where the log has it once."""
    view = network.podman_reading(link.from_host)
    if view is None or view.state.connectors is None:
        return []
    return [
        f"{link.from_host} router management: connector {c.name} to {c.endpoint} "
        f"{c.status}: {c.message.strip()}"
        for c in view.state.connectors
        if c.endpoint == f"{link.host}:{link.port}" and needle in c.message
    ][:1]


def _management_unread(network: Network, link: LinkProbe) -> list[str]:
    """Why the dialling router's connector status is not among the evidence, if it was
    asked and could not be read."""
    view = network.podman_reading(link.from_host)
    if view is None or view.state.connectors_error is None:
        return []
    return [f"{link.from_host} router management not read: {view.state.connectors_error}"]


def _router_listening(network: Network, host: str) -> bool:
    """Whether the dialled site's router runs with its site's configuration (so a port that
    does not answer is the network's doing, not the router's)."""
    view = network.podman_reading(host)
    if view is None:
        return False
    router = names.router_container(network.namespace(host))
    running_for = view.state.running_for(router)
    # a router that has just (re)started may not listen yet: not a firewall's doing
    if running_for is None or running_for < SETTLE_SECONDS:
        return False
    # a log that could not be read says nothing: a standalone router's (no listener) line
    # may be the one missing
    if not view.state.log_known("router"):
        return False
    return not any(STANDALONE in line for line in view.state.logs.get("router", []))


def link_port_unreachable(network: Network) -> Iterator[Finding]:
    for link in network.links:
        if link.reachable is not False or not _router_listening(network, link.to_host):
            continue
        ref = site_ref(network.topology, link.to_host)
        variable = f"{network.prefix(link.to_host)}_INTER_ROUTER_PORT"
        yield finding(
            "link-port-unreachable",
            ref,
            "error",
            symptom=f"{link.from_host} cannot link to {ref.site}: nothing answers on "
            f"{link.host}:{link.port}",
            evidence=[
                f"{link.to_host} answers SSH and its router runs",
                f"TCP connect to {link.host}:{link.port} from this machine: failed",
                f"link {link.from_host} -> {ref.site}: {link.status}",
                *_dialler_log(network, link),
            ],
            cause="a firewall or cloud security group between the sites drops the "
            "inter-router port",
            fix=f"open port {link.port} to {link.host} in the host's firewall or security "
            f"group, or set {variable} to a port it lets through (setup then moves the "
            f"RouterAccess {ref.site}-public and every link to it)",
            next=[
                set_variable(network, variable, None, "a port the firewall lets through"),
                call("setup"),
            ],
        )


def link_cert_verify_failed(network: Network) -> Iterator[Finding]:
    for link in network.links:
        if link.ready:  # up again: failures still in the log's tail are history
            continue
        lines = [
            *_dialler_management(network, link, VERIFY_FAILED),
            *_dialler_log(network, link, VERIFY_FAILED),
        ]
        if not lines and VERIFY_FAILED not in link.status:
            continue
        ref = site_ref(network.topology, link.to_host)
        p = network.provider(link.to_host)
        sans = list(p.sans) if p is not None else list(network.topology.local.sans)
        variable = f"{network.prefix(link.to_host)}_SANS"
        named = link.host in sans
        evidence = [
            *lines,
            *_management_unread(network, link),
            f"link {link.from_host} -> {ref.site}: {link.status}",
            f"{variable} in topology.env: {' '.join(sans) or '(none)'}",
        ]
        if named:
            # topology.env has the name: the site's RouterAccess lost it (applied by hand)
            cause = (
                f"{ref.site}'s server certificate does not name {link.host}: its "
                f"RouterAccess on the site lacks the subject alternative names of "
                f"{variable} (changed by hand since setup)"
            )
            fix = (
                "run setup: it applies the RouterAccess with the names and reloads the hub, "
                "which re-issues its certificate"
            )
            steps = [call("setup")]
        else:
            cause = (
                f"the name dialled, {link.host}, is not among the subject alternative names "
                f"of {ref.site}'s server certificate"
            )
            fix = (
                f"set {variable} to include {link.host}, then run setup (the RouterAccess "
                "gets the names and the hub re-issues its certificate)"
            )
            steps = [
                set_variable(network, variable, " ".join([*sans, link.host]), ""),
                call("setup"),
            ]
        yield finding(
            "link-cert-verify-failed",
            ref,
            "error",
            symptom=f"{link.from_host}'s link to {ref.site} fails TLS verification",
            evidence=evidence,
            cause=cause,
            fix=fix,
            next=steps,
        )


LINK_RULES = (link_port_unreachable, link_cert_verify_failed)
