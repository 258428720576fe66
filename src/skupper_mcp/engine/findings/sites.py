"""Rules about a site as a whole: it could not be read, it was never set up, it differs
from topology.env, or its Skupper version cannot work with the others."""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import ConnectError, MissingExtraError, SiteConfigError, install_hint
from ...facts.skupper_version import SkupperVersion
from ...results import Finding, NextStep
from ..condition import unparsed_reason
from ..desired.needs import drift_lines
from ..readings import ClusterReading, PodmanReading, Unread
from ..scope import SiteRef
from ..unreached import unreached_advice
from .context import Network, call, finding, on_host


def unreadable(network: Network) -> Iterator[Finding]:
    for view in network.views.values():
        if not isinstance(view, Unread):
            continue
        if isinstance(view.error, SiteConfigError):
            yield misconfigured(network, view.ref, view.error)
            continue
        if isinstance(view.error, MissingExtraError):
            yield extra_missing(view.ref, view.error)
            continue
        reach = {
            "unreachable": "cannot be reached",
            "refused": "refuses our credentials",
            "reached": "could not be read",
        }[view.reach]
        cause, fix, step = _unread_advice(network, view)
        yield finding(
            "site-unreadable",
            view.ref,
            "error",
            symptom=f"{view.ref.host} {reach}: nothing else about it could be diagnosed",
            evidence=[view.problem()],
            cause=cause,
            fix=fix,
            next=[step],
        )


def _unread_advice(network: Network, view: Unread) -> tuple[str, str, NextStep]:
    """Why a site could not be read and what to do, by how far its read got (``reach``,
    from the error's kind), its platform and, for a host not reached, why the dial reached
    nothing (``unreached``): a refusal is a fix of the credentials, never of the network;
    a name that does not resolve is a fix of the name, not of the host."""
    cluster = view.ref.platform == "kubernetes"
    check = call("setup", check=True)
    if view.reach == "refused" and not cluster:
        # sshd answers: the network is fine, the key or the host's key is not
        cause = (
            "the host's SSH server answered and refused the credentials the topology gives "
            "(the identity's public key is not in its authorized_keys), or its host key "
            "is not the one known_hosts trusts"
        )
        fix = (
            f"authorize the key on {view.ref.host} (e.g. ssh-copy-id) or verify its host "
            "key (ssh-keyscan, known_hosts), then check it with setup check=true"
        )
        return cause, fix, check
    if view.reach == "refused":
        # it answers: the network is fine, the credentials are not
        cause = (
            "the cluster's API answered and refused the kubeconfig's credentials "
            "(HTTP 401: not logged in or the token expired; 403: the user may not do this)"
        )
        fix = (
            "log in again (e.g. `oc login`) or use a kubeconfig whose user may manage "
            "Skupper in the namespace, then check it with setup check=true"
        )
        return cause, fix, check
    if cluster:
        # a cluster is no SSH host, and diagnosing it again finds the same
        cause = (
            "the cluster is stopped, or its API does not answer at the kubeconfig's server "
            "address (one that answered and refused the credentials would say so)"
        )
        fix = (
            "start the cluster (e.g. `crc start`) or fix the kubeconfig's server address, then "
            "check it with setup check=true; up and down skip it meanwhile"
        )
        return cause, fix, check
    if view.reach == "reached":
        # it answered: what it said (the evidence) is the cause, and carries its own fix
        cause = (
            f"{view.ref.host} was reached and what it answered could not be used: the "
            "evidence says what it said, and its fix where there is one"
        )
        fix = (
            "do what the evidence says, then check the host with setup check=true (each "
            "of its checks with its own hint)"
        )
        return cause, fix, check
    unreached = view.error.unreached if isinstance(view.error, ConnectError) else None
    if unreached is not None:
        # the dial's own error says which: a name, a closed port, no route, no answer
        advice = unreached_advice(unreached, view.ref.host, network.prefix(view.ref.host))
        return advice.cause, advice.fix, check
    # a failure that does not say why (a ProxyJump hop, a connection lost)
    cause = (
        "the host is down, its name does not resolve, or its SSH server does not answer in "
        "time at the address and port the topology gives (one that answered and refused "
        "the key would say so)"
    )
    fix = (
        f"check that {view.ref.host}'s name resolves, the host is up and its SSH server "
        "answers: setup check=true tries each and says which"
    )
    return cause, fix, check


def extra_missing(ref: SiteRef, error: MissingExtraError) -> Finding:
    """The site needs an optional part of skupper-mcp: the site is not at fault, and every
    tool skips it until the part is added where skupper-mcp runs."""
    return finding(
        "extra-missing",
        ref,
        "warning",
        symptom=f"{ref.host} is skipped by every tool: skupper-mcp lacks its {error.extra} extra",
        evidence=[str(error)],
        cause=f"the Python package {error.package} is not installed beside skupper-mcp; "
        "nothing was asked of the site",
        fix=install_hint(error.package, error.extra) + "; then run setup with check=true",
        next=[call("setup", check=True)],
    )


def misconfigured(network: Network, ref: SiteRef, error: SiteConfigError) -> Finding:
    """topology.env names a file or context that is not there: the host is not at fault and
    diagnosing again finds the same, so the next step is the topology, then the precheck."""
    return finding(
        "site-misconfigured",
        ref,
        "error",
        symptom=f"{ref.host} cannot be used as {network.topology_file} describes it",
        evidence=[error.reason],
        cause=f"{error.variable} in {network.topology_file} names something that does not "
        "exist on this machine; nothing was asked of the host",
        fix=f"edit {error.variable} in {network.topology_file}, then run setup with "
        "check=true to confirm",
        next=[call("setup", check=True)],
    )


def not_set_up(network: Network) -> Iterator[Finding]:
    for view in network.podman_readings():
        ref = view.ref
        if view.state.rendered or view.asked == "teardown":
            continue  # torn down as the user asked: nothing to fix
        yield finding(
            "not-set-up",
            ref,
            "warning",
            symptom=f"{ref.site} does not exist on {ref.host} yet",
            evidence=["no runtime/resources in the namespace (skupper system start never ran)"],
            cause="setup has not been run for this site, or teardown removed it",
            fix="run setup (check=true first)",
            next=[call("setup", check=True), call("setup")],
        )


def drift(network: Network) -> Iterator[Finding]:
    for view in network.views.values():
        match view:
            case PodmanReading() if not view.state.rendered:
                continue  # not-set-up says it better
            case PodmanReading() if unparsed_reason(view) is not None:
                continue  # read-unparsed: what runs there is unknown, not missing
            case ClusterReading() if view.state.site is None:
                continue
        lines = drift_lines(network.topology, view)
        if not lines:
            continue
        yield finding(
            "drift",
            view.ref,
            "warning",
            symptom=f"{view.ref.site} differs from {network.topology_file}",
            evidence=lines,
            cause="topology.env changed since the last setup, or the site's resources were "
            "changed by hand (skupper system apply, oc edit)",
            fix="run setup: it applies what topology.env says and reloads the site",
            next=[call("setup")],
        )


def version_mismatch(network: Network) -> Iterator[Finding]:
    minimum = network.topology.min_skupper_version
    readings: dict[str, SkupperVersion] = {
        ref.host: state.skupper for ref, state in network.podman_sites()
    }
    for ref, state in network.podman_sites():
        reading = state.skupper
        meets = reading.meets(minimum)
        if reading.not_installed:
            yield finding(
                "skupper-missing",
                ref,
                "error",
                symptom=f"the skupper CLI is not installed on {ref.host}",
                evidence=[f"skupper version: {reading.problem}"],
                cause="setup, up and down drive Skupper through its CLI on the host",
                fix=f"install the skupper CLI {minimum} or later on {ref.host}, then run setup",
                next=[on_host(ref.host, f"install skupper {minimum} or later"), call("setup")],
            )
        elif meets is None:
            yield finding(
                "version-mismatch",
                ref,
                "error",
                symptom=f"the skupper CLI on {ref.host} does not report a usable version",
                evidence=[f"skupper version: {reading.problem or 'no version reported'}"],
                cause="the skupper CLI is missing or broken on the host",
                fix=f"install the skupper CLI {minimum} or later on {ref.host}",
                next=[on_host(ref.host, f"install skupper {minimum} or later")],
            )
        elif not meets:
            yield finding(
                "version-mismatch",
                ref,
                "error",
                symptom=f"{ref.host} runs skupper {reading.cli}, below {minimum}",
                evidence=[f"{h}: skupper {r.cli}" for h, r in sorted(readings.items())],
                cause="Skupper 2.0.x has no system controller and different system commands; "
                "this network needs 2.1 or later on every host",
                fix=f"upgrade the skupper CLI on {ref.host} to {minimum} or later, then run setup",
                next=[on_host(ref.host, f"upgrade skupper to {minimum} or later"), call("setup")],
            )
    minors = {
        f"{r.cli.major}.{r.cli.minor}" for r in readings.values() if r.cli and r.meets(minimum)
    }
    if len(minors) > 1:
        first = next(iter(network.views.values())).ref
        yield finding(
            "version-mismatch",
            first,
            "info",
            symptom=f"the hosts run different Skupper minor versions ({', '.join(sorted(minors))})",
            evidence=[f"{h}: skupper {r.cli}" for h, r in sorted(readings.items()) if r.cli],
            cause="sites of 2.1 and 2.2 link and route together; nothing fails because of it",
            fix="nothing to do now; upgrade the hosts together when convenient",
        )


SITE_RULES = (unreadable, not_set_up, drift, version_mismatch)
