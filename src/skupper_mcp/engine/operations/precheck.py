"""The precheck (``setup --check``): every site checked concurrently.

A site's failure becomes that site's checks; nothing here raises for one host's sake.
The pure ``evaluate_*`` functions turn facts into checks and are tested on their own.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from skupper_mcp.engine.scope import site_ref
from skupper_mcp.engine.sitemap import SiteMap
from skupper_mcp.engine.unreached import unreached_advice
from skupper_mcp.errors import (
    CommandTimeout,
    ConfigError,
    ConnectError,
    HostKeyError,
    Kind,
    KubeError,
    MissingExtraError,
    SiteConfigError,
    SkupperMcpError,
    install_hint,
    kind_of,
)
from skupper_mcp.facts.precheck import SiteFacts, install_command, ports_bound
from skupper_mcp.facts.private_keys import KEYS_CAUSE, KEYS_FIX, summary
from skupper_mcp.facts.site_state import is_active
from skupper_mcp.results import Check, CheckResult
from skupper_mcp.sites.kube import ClusterSite, credential_plugin, site_kubeconfigs
from skupper_mcp.topology import KubeSite, SSHTarget, Topology
from skupper_mcp.topology.diagram import topology_diagram
from skupper_mcp.vocabulary import CountedProgress, Progress, plural

log = logging.getLogger(__name__)

FACTS_TIMEOUT = 30.0
DNS_TIMEOUT = 3.0


def evaluate_facts(host: str, facts: SiteFacts, min_version: str, *, is_local: bool) -> list[Check]:
    """Checks for podman, skupper, systemd --user and lingering from a site's facts."""
    checks = [_podman_check(host, facts), _skupper_check(host, facts, min_version)]
    if facts.systemd_ok:
        checks.append(Check(name="systemd-user", site=host, status="pass", detail="usable"))
        checks.append(_podman_socket_check(host, facts))
    else:
        error = " | ".join(facts.systemd_error) or "no answer"
        checks.append(
            Check(
                name="systemd-user",
                site=host,
                status="fail",
                detail=f"systemctl is not usable: {error}",
                hint=_systemd_hint(facts),
            )
        )
    if facts.complete:  # the listing ran to its end: "none open" is then a finding too
        checks.append(_private_keys_check(host, facts))
    if facts.linger is None and not facts.root and not facts.systemd_ok:
        pass  # no loginctl and no systemd: the systemd-user check says what the host lacks
    elif facts.root:
        checks.append(
            Check(
                name="linger",
                site=host,
                status="pass",
                detail="root: Skupper runs under the system manager (no lingering needed)",
            )
        )
    elif facts.lingering:
        checks.append(Check(name="linger", site=host, status="pass", detail="Linger=yes"))
    elif not is_local:
        checks.append(
            Check(
                name="linger",
                site=host,
                status="warn",
                detail=f"lingering is not confirmed ({facts.linger or 'loginctl not available'}): "
                "the user's manager runs only with a login session, so after a reboot "
                "nothing of the site starts by itself",
                hint="run `sudo loginctl enable-linger $USER` on the host "
                "(it needs root, or polkit's consent) so Skupper keeps running after you log "
                "out and comes back after a reboot",
            )
        )
    return checks


def _systemd_hint(facts: SiteFacts) -> str:
    """What to do when systemctl does not answer, consistent with the linger check: root and
    a lingering user need no lingering, a host without loginctl has no systemd to linger."""
    if facts.root:
        return (
            "Skupper's podman site runs under systemd: use a host whose init is systemd "
            "(a container or WSL without systemd cannot host a site)"
        )
    if facts.linger is None:
        return (
            "this host has no systemd (no loginctl): Skupper's podman site needs a systemd "
            "user manager; use a host whose init is systemd"
        )
    if facts.lingering:
        return (
            "lingering is on but the user manager does not answer: log in to the host as "
            "this user once, or check `systemctl --user status` and XDG_RUNTIME_DIR"
        )
    return (
        "enable lingering (`sudo loginctl enable-linger $USER`: it needs "
        "root, or polkit's consent) so the user manager runs without a login session"
    )


def _private_keys_check(host: str, facts: SiteFacts) -> Check:
    """A key others may read is a warning, not a failure: setup is what repairs it."""
    if not facts.open_keys:
        return Check(
            name="private-keys",
            site=host,
            status="pass",
            detail="no private-key file of the site is readable by group or others",
        )
    return Check(
        name="private-keys",
        site=host,
        status="warn",
        detail=f"{summary(facts.open_keys)}. {KEYS_CAUSE}",
        hint=KEYS_FIX,
    )


def _podman_socket_check(host: str, facts: SiteFacts) -> Check:
    """Every ``skupper system`` command drives podman through its API socket; setup starts
    it, so an inactive socket is a warning, not a failure."""
    state = facts.podman_socket or "unknown"
    if is_active(facts.podman_socket):
        return Check(name="podman-socket", site=host, status="pass", detail="podman.socket active")
    return Check(
        name="podman-socket",
        site=host,
        status="warn",
        detail=f"podman.socket is {state}: skupper reaches podman only through its API socket, "
        "so `skupper system start|reload` fail without it",
        hint="setup enables it (systemctl --user enable --now podman.socket)",
    )


def podman_hint(facts: SiteFacts) -> str:
    """Install podman with the package manager of the host whose facts these are."""
    command = install_command(facts.distribution, "podman")
    if command is None:
        return "install podman on the host with its package manager"
    return f"install podman on the host ({command})"


def _podman_check(host: str, facts: SiteFacts) -> Check:
    if facts.podman:
        return Check(name="podman", site=host, status="pass", detail=facts.podman)
    return Check(
        name="podman",
        site=host,
        status="fail",
        detail="podman is not installed",
        hint=podman_hint(facts),
    )


def _skupper_check(host: str, facts: SiteFacts, min_version: str) -> Check:
    if facts.skupper_missing:
        return Check(
            name="skupper",
            site=host,
            status="fail",
            detail="the skupper CLI is not installed",
            hint=f"install the skupper CLI {min_version} or newer (https://skupper.io/install)",
        )
    reading = facts.skupper
    meets = reading.meets(min_version)
    if meets is None:
        return Check(
            name="skupper",
            site=host,
            status="warn",
            detail=f"could not read the skupper version: {reading.problem}",
            hint="run `skupper version` on the host and check it works",
        )
    version = reading.cli
    if not meets:
        return Check(
            name="skupper",
            site=host,
            status="fail",
            detail=f"skupper {version} is not supported (needs {min_version} or newer)",
            hint=f"upgrade the skupper CLI to {min_version} or newer: 2.0.x has a different "
            "`skupper system` command set",
        )
    return Check(name="skupper", site=host, status="pass", detail=f"skupper {version}")


def evaluate_ports(
    host: str, facts: SiteFacts, listener_host: str, ports: dict[int, str]
) -> list[Check]:
    """Local listener ports: free, or bound by our own router (which is configured with them).

    ``ports`` maps port -> the provider it brings to this site.
    """
    bound = ports_bound(facts.listening, listener_host, ports)
    checks = []
    for port, provider in ports.items():
        name = f"port {port}"
        if not bound[port]:
            checks.append(
                Check(name=name, site=host, status="pass", detail=f"free (listener for {provider})")
            )
        elif port in facts.router_ports:
            checks.append(
                Check(
                    name=name,
                    site=host,
                    status="pass",
                    detail=f"bound by the local Skupper router (listener for {provider})",
                )
            )
        else:
            checks.append(
                Check(
                    name=name,
                    site=host,
                    status="fail",
                    detail=f"already in use on {listener_host} by another process",
                    hint=f"stop what listens on port {port} (ss -ltnp 'sport = :{port}') or "
                    f"change the local port of {provider} in topology.env",
                )
            )
    return checks


# What the example and `skupper-mcp init` write where the user's own values go: names
# under the reserved example domains (RFC 2606) and the documentation networks (RFC 5737).
_PLACEHOLDER_DOMAINS = ("example.com", "example.net", "example.org", "example", "invalid")
_PLACEHOLDER_NETWORKS = tuple(
    ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")
)


def is_placeholder(host: str) -> bool:
    """Whether ``host`` is an example value left in topology.env, not a real host."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        name = host.lower().rstrip(".")
        return any(name == d or name.endswith("." + d) for d in _PLACEHOLDER_DOMAINS)
    return any(address in network for network in _PLACEHOLDER_NETWORKS)


def _name_or_address(host: str) -> str:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return "a name"
    return "an address"


def placeholder_check(
    site: str, name: str, variable: str, value: str, what: str, source: Path
) -> Check:
    """A name or address reserved for examples (RFC 2606's domains, RFC 5737's networks,
    as the example topology uses): nothing is tried with it. ``source``: the topology file
    that gives it."""
    return Check(
        name=name,
        site=site,
        status="fail",
        detail=f"{value} is {_name_or_address(value)} reserved for examples, not {what}",
        hint=f"replace the placeholder host {value} in {variable} ({source.name}) with {what}",
    )


def evaluate_sans(topology: Topology) -> list[Check]:
    """Each router certificate's SANs must cover the address its peers dial."""
    sites: list[tuple[str, str, str | None, list[str]]] = [
        (p.name, p.prefix, p.public_host, p.sans) for p in topology.providers
    ]
    if topology.kubernetes:
        local = topology.local
        sites.append((local.name, "LOCAL", local.public_host, local.sans))
    checks = []
    for host, prefix, public, sans in sites:
        if public is None:
            checks.append(
                Check(
                    name="sans",
                    site=host,
                    status="fail",
                    detail="no public host: the Kubernetes site cannot dial this site",
                    hint=f"set {prefix}_PUBLIC_HOST in topology.env",
                )
            )
        elif public.lower() in (s.lower() for s in sans):
            checks.append(
                Check(name="sans", site=host, status="pass", detail=f"{public} in {' '.join(sans)}")
            )
        else:
            checks.append(
                Check(
                    name="sans",
                    site=host,
                    status="fail",
                    detail=f"{public} is not among the SANs {' '.join(sans)}: links would fail "
                    "with certificate verify failed",
                    hint=f"add {public} to {prefix}_SANS in topology.env",
                )
            )
    return checks


async def _public_host_check(host: str, prefix: str, public_host: str, source: Path) -> Check:
    if is_placeholder(public_host):
        what = "the address the other sites dial to reach it"
        return placeholder_check(host, "dns", f"{prefix}_PUBLIC_HOST", public_host, what, source)
    return await check_dns(host, public_host)


async def check_dns(host: str, name: str, timeout: float = DNS_TIMEOUT) -> Check:
    """Whether ``name`` (a public host) resolves from here."""
    try:
        ipaddress.ip_address(name)
        return Check(name="dns", site=host, status="pass", detail=f"{name} is an IP address")
    except ValueError:
        pass
    start = time.monotonic()
    loop = asyncio.get_running_loop()
    try:
        infos = await asyncio.wait_for(
            loop.getaddrinfo(name, None, type=socket.SOCK_STREAM), timeout
        )
    except (OSError, TimeoutError) as error:
        reason = "timed out" if isinstance(error, TimeoutError) else str(error)
        return Check(
            name="dns",
            site=host,
            status="fail",
            detail=f"{name} does not resolve: {reason}",
            hint=f"add {name} to DNS or /etc/hosts, or use an IP address as the public host",
            seconds=round(time.monotonic() - start, 3),
        )
    addresses = sorted({str(info[4][0]) for info in infos})
    return Check(
        name="dns",
        site=host,
        status="pass",
        detail=f"{name} -> {', '.join(addresses)}",
        seconds=round(time.monotonic() - start, 3),
    )


async def check_podman_site(sites: SiteMap, host: str, target: SSHTarget | None) -> list[Check]:
    """SSH reachability, then one script for the site's facts."""
    topology = sites.topology
    is_local = host == topology.local.name
    if target is not None and is_placeholder(target.host):
        prefix = "LOCAL" if is_local else sites.provider(host).prefix
        what = "this machine's SSH address" if is_local else f"{host}'s name or address"
        return [
            placeholder_check(
                host, "ssh", f"{prefix}_SSH_HOST", target.host, what, sites.topology.path
            )
        ]
    start = time.monotonic()
    try:
        site = await asyncio.wait_for(
            sites.podman(site_ref(topology, host)), topology.ssh.connect_timeout + 2
        )
    except (ConnectError, TimeoutError) as error:
        prefix = "LOCAL" if is_local else sites.provider(host).prefix
        hint = _ssh_hint(topology, target, error, host, prefix)
        return [_ssh_fail(host, target, error, start, hint)]
    seconds = round(time.monotonic() - start, 3)
    how = f"connected to {target} in {seconds:.2f}s" if target else "local commands"
    settings = site.ssh_settings
    if settings:
        how += " (" + ", ".join(f"{s.option} {s.value} from {s.source}" for s in settings) + ")"
    checks = [
        Check(name="ssh", site=host, status="pass", detail=how, seconds=seconds, ssh=settings)
    ]
    try:
        facts = await site.facts(with_ports=is_local, timeout=FACTS_TIMEOUT)
    except (ConnectError, CommandTimeout) as error:
        checks.append(
            Check(
                name="facts",
                site=host,
                status="fail",
                detail=str(error),
                hint="the host answered SSH but not the precheck script; check its load",
            )
        )
        return checks
    checks += evaluate_facts(host, facts, topology.min_skupper_version, is_local=is_local)
    if is_local:
        ports = {e.local_port: e.label for e in topology.model_endpoints()}
        checks += evaluate_ports(host, facts, topology.local.listener_host, ports)
    return checks


def _ssh_fail(
    host: str, target: SSHTarget | None, error: BaseException, start: float, hint: str
) -> Check:
    seconds = round(time.monotonic() - start, 3)
    reason = str(error) or f"no answer within {seconds:.1f}s"
    return Check(
        name="ssh",
        site=host,
        status="fail",
        detail=f"{target}: {reason}",
        hint=hint,
        seconds=seconds,
    )


def _ssh_hint(
    topology: Topology, target: SSHTarget | None, error: BaseException, host: str, prefix: str
) -> str:
    """What to fix when SSH failed, by the failure's kind (``errors.kind_of``): topology.env
    (config), the credentials or the host key (refused: the host answered), or the host and
    the network between (connect, timeout), told apart by why the dial reached nothing
    (``unreached``: a name, a closed port, no route, no answer) where the socket said."""
    unreached = error.unreached if isinstance(error, ConnectError) else None
    if unreached is not None:
        return unreached_advice(unreached, host, prefix).fix
    match kind_of(error):
        case Kind.CONFIG:
            variable = getattr(error, "variable", None)
            if variable == "SSH_CONFIG":
                return "fix the SSH config file, or name another with SSH_CONFIG in topology.env"
            return f"fix {variable} in topology.env"
        case Kind.REFUSED if isinstance(error, HostKeyError):
            return _host_key_hint(topology, target)
        case Kind.REFUSED:
            return (
                f"{target} answered and refused the key: add the identity's public key to its "
                "~/.ssh/authorized_keys (e.g. ssh-copy-id), or name the authorized one with "
                "SSH_IDENTITY in topology.env"
            )
        case _:
            return (
                f"check that {target} is up and its SSH server answers (on the port "
                "topology.env or the SSH config gives it)"
            )


def _host_key_hint(topology: Topology, target: SSHTarget | None) -> str:
    known = topology.ssh.known_hosts or "~/.ssh/known_hosts"
    return (
        f"verify {target}'s host key and add it to {known} "
        "(ssh-keyscan), or remove a stale entry if the host was reinstalled"
    )


def _kube_refusal(
    kube: KubeSite, error: BaseException, where: str, seconds: float, start: float
) -> Check:
    """The failed check of a cluster's API, its hint by the failure's kind: refused (401/403:
    log in again), not reached or no answer in time (start the cluster), or an API error."""
    match kind_of(error):
        case Kind.REFUSED:
            hint = (
                f"log in to the cluster again (e.g. `oc login` or `crc console --credentials`) "
                f"so {where} has a valid token"
            )
            return _kube_fail(kube, str(error), hint, start)
        case Kind.CONNECT | Kind.TIMEOUT:
            return _kube_fail(
                kube,
                # A bare TimeoutError has no text: say what happened instead of nothing.
                f"unreachable: {str(error) or f'no answer within {seconds:g}s'}",
                "start the cluster (crc start) or fix the kubeconfig's server address",
                start,
            )
    hint = f"check the cluster is running and namespace {kube.namespace} is accessible"
    return _kube_fail(kube, str(error), hint, start)


#: How the precheck asks the cluster's site for its API version (tests give their own).
KubeAccess = Callable[[ClusterSite], Awaitable[str]]


async def default_kube_access(cluster: ClusterSite) -> str:
    """Ask the cluster's API for its version with the site's kubeconfig and context."""
    return await cluster.check_access()


async def check_kubernetes(
    kube: KubeSite, access: Callable[[], Awaitable[str]], timeout: float = 5.0
) -> Check:
    """The Kubernetes API answers and accepts our credentials."""
    start = time.monotonic()
    where = f"context {kube.context}" if kube.context else "the current context"
    try:
        version = await asyncio.wait_for(access(), timeout + 2)
    except SiteConfigError as error:
        return _kube_fail(kube, error.reason, f"fix {error.variable} in topology.env", start)
    except (KubeError, ConnectError, TimeoutError) as error:
        return _kube_refusal(kube, error, where, timeout + 2, start)
    except MissingExtraError as error:
        # The cluster is optional: setup goes on with the other sites and skips this one.
        return Check(
            name="kubernetes",
            site=kube.name,
            status="warn",
            detail=f"{kube.name} is skipped: {error}",
            hint=install_hint(error.package, error.extra),
            seconds=round(time.monotonic() - start, 3),
        )
    except (ConfigError, SkupperMcpError, ImportError) as error:
        return _kube_fail(kube, str(error), "check CRC_KUBECONFIG and CRC_CONTEXT", start)
    return Check(
        name="kubernetes",
        site=kube.name,
        status="pass",
        detail=f"API reachable and authenticated ({where}, server {version})",
        seconds=round(time.monotonic() - start, 3),
    )


def _kube_fail(kube: KubeSite, detail: str, hint: str, start: float) -> Check:
    return Check(
        name="kubernetes",
        site=kube.name,
        status="fail",
        detail=detail,
        hint=hint,
        seconds=round(time.monotonic() - start, 3),
    )


KubeconfigDocument = tuple[Path, dict[str, Any]]


def kubeconfig_documents(kube: KubeSite) -> list[KubeconfigDocument]:
    """The kubeconfig files the Kubernetes client reads for ``kube`` (its own file, else each
    of ``$KUBECONFIG``, else ``~/.kube/config``), parsed; files it cannot read are left to
    ``check_kubernetes`` to report."""
    return site_kubeconfigs(kube)


def evaluate_kube_tls(kube: KubeSite, documents: list[KubeconfigDocument]) -> list[Check]:
    """A warning when the cluster ``kube``'s context uses turns off TLS verification: its bearer
    token then goes to whoever answers at the server's address. The first file to name a
    context or cluster wins, as when the client merges ``$KUBECONFIG``."""
    name = kube.context or next(
        (str(d["current-context"]) for _, d in documents if d.get("current-context")), None
    )
    context = _named(documents, "contexts", name)
    cluster_name = ((context[1].get("context") if context else None) or {}).get("cluster")
    cluster = _named(documents, "clusters", cluster_name)
    if cluster is None:
        return []
    path, entry = cluster
    settings = entry.get("cluster") or {}
    if str(settings.get("insecure-skip-tls-verify")).lower() != "true":
        return []
    return [
        Check(
            name="kubernetes-tls",
            site=kube.name,
            status="warn",
            detail=(
                f"{path} turns off TLS verification for cluster {cluster_name} "
                "(insecure-skip-tls-verify: true): the bearer token is sent to whoever answers "
                f"at {settings.get('server') or 'its server address'}"
            ),
            hint=(
                f"remove insecure-skip-tls-verify from cluster {cluster_name} in {path} and give "
                "the cluster's CA instead, with certificate-authority (a file) or "
                "certificate-authority-data (base64); with oc, log in again with "
                "`oc login --certificate-authority=<the cluster's CA file> <server>`"
            ),
        )
    ]


def _named(
    documents: list[KubeconfigDocument], section: str, name: object
) -> tuple[Path, dict[str, Any]] | None:
    """The first entry called ``name`` in ``section`` (contexts, clusters) of the files."""
    if not name:
        return None
    for path, document in documents:
        for entry in document.get(section) or []:
            if isinstance(entry, dict) and entry.get("name") == name:
                return path, entry
    return None


async def check_kube_plugin(kube: KubeSite) -> list[Check]:
    """Which command the site's kubeconfig runs for its credentials (an ``exec`` plugin or
    an ``auth-provider``), if any: the Kubernetes client runs it whenever it loads the file.
    A fail when the connector refuses to run it (a kubeconfig named by a relative path)."""
    plugin, refused = await asyncio.to_thread(credential_plugin, kube)
    if plugin is None:
        return []
    if refused:
        return [
            Check(
                name="kubernetes-plugin",
                site=kube.name,
                status="fail",
                detail=refused,
                hint=(
                    f"if you trust {plugin.path}, name it by its absolute path in "
                    "CRC_KUBECONFIG or $KUBECONFIG; else remove it"
                ),
            )
        ]
    return [
        Check(
            name="kubernetes-plugin",
            site=kube.name,
            status="pass",
            detail=f"{plugin.describe()} whenever skupper-mcp loads it, for its credentials",
        )
    ]


async def check_kube_tls(kube: KubeSite) -> list[Check]:
    documents = await asyncio.to_thread(kubeconfig_documents, kube)
    return evaluate_kube_tls(kube, documents)


async def run(
    sites: SiteMap,
    *,
    kube_access: KubeAccess = default_kube_access,
    progress: Progress | None = None,
    more: Callable[[], Awaitable[list[Check]]] | None = None,
) -> CheckResult:
    """The precheck of every site, with the topology diagram; ``more`` checks after it
    (``setup --check``: what setup would build)."""
    checks = await run_precheck(sites, kube_access=kube_access, progress=progress)
    if more is not None:
        checks += await more()
    failed = [c for c in checks if c.status == "fail"]
    warned = [c for c in checks if c.status == "warn"]
    summary = f"{plural(len(checks), 'check')}: {len(checks) - len(failed) - len(warned)} passed"
    summary += f", {plural(len(warned), 'warning')}, {len(failed)} failed"
    if failed:
        names = sorted({c.site for c in failed})
        summary += f" (on {', '.join(names)})"
    return CheckResult(
        topology=topology_diagram(sites.topology),
        checks=checks,
        ok=not failed,
        summary=summary,
    )


async def run_precheck(
    sites: SiteMap,
    *,
    kube_access: KubeAccess = default_kube_access,
    progress: Progress | None = None,
) -> list[Check]:
    """Every check of every site, concurrently; results in topology order. ``progress``
    gets one line a site, in the same order (a site's line as soon as it and every site
    before it are done), listing its checks as the result lists them."""
    topology = sites.topology

    async def guarded(host: str, work: Awaitable[list[Check]]) -> list[Check]:
        try:
            return await work
        except Exception as error:  # one site's bug must not lose the others
            log.exception("precheck of %s failed", host)
            return [
                Check(
                    name="precheck",
                    site=host,
                    status="fail",
                    detail=f"precheck error: {error}",
                    hint="see the server log",
                )
            ]

    async def one(work: Awaitable[Check]) -> list[Check]:
        return [await work]

    order = topology.host_names()
    works: dict[str, list[Awaitable[list[Check]]]] = {host: [] for host in order}
    for p in topology.providers:
        works[p.name].append(check_podman_site(sites, p.name, p.ssh))
    local = topology.local
    works[local.name].append(check_podman_site(sites, local.name, local.ssh))
    for p in topology.providers:
        works[p.name].append(
            one(_public_host_check(p.name, p.prefix, p.public_host, topology.path))
        )
    if topology.kubernetes:
        kube = topology.kubernetes
        if local.public_host:
            works[local.name].append(
                one(_public_host_check(local.name, "LOCAL", local.public_host, topology.path))
            )
        works[kube.name] += [
            one(
                check_kubernetes(
                    kube, lambda: kube_access(sites.kube()), topology.ssh.connect_timeout
                )
            ),
            check_kube_tls(kube),
            check_kube_plugin(kube),
        ]
    sans: dict[str, list[Check]] = {host: [] for host in order}
    for check in evaluate_sans(topology):
        sans.setdefault(check.site, []).append(check)
    done = {host: asyncio.Event() for host in order}
    if isinstance(progress, CountedProgress):
        progress.expect(len(order))  # one line a site: "1/3", not "1/1" as if all were done

    async def site(index: int, host: str) -> list[Check]:
        groups = await asyncio.gather(*(guarded(host, work) for work in works[host]))
        checks = [c for group in groups for c in group] + sans.pop(host, [])
        if index:
            await done[order[index - 1]].wait()
        if progress and checks:
            await progress(f"{host}: " + ", ".join(f"{c.name} {c.status}" for c in checks))
        done[host].set()
        return checks

    results = await asyncio.gather(*(site(i, host) for i, host in enumerate(order)))
    # a SANs check of a name outside the topology's hosts (none today) stays listed, last
    return [c for group in results for c in group] + [c for rest in sans.values() for c in rest]
