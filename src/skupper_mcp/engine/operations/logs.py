"""``logs``: the newest lines of one site's router or controller log, secrets taken out.

One site per call (it is a single-target read): a host, site, profile, ``local`` or the
Kubernetes site. Podman sites answer with ``podman logs --tail`` over their connector (and,
when it prints nothing, with ``journalctl``: podman's journald log driver keeps a container's
lines in the journal), the Kubernetes site with the router pod's log through the API.
Whatever is read is bounded (``MAX_LINES`` lines, ``MAX_LOG_BYTES`` bytes, newest kept) and
redacted before it is returned. An unreachable host is an error naming it; a container or
pod that does not exist is a result that says so.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

from ...errors import ConfigError, ConnectError
from ...facts import names
from ...facts.logs import (
    MAX_LOG_BYTES,
    log_unavailable,
    merged_pod_logs,
    probe_eof_line,
    tail_lines,
)
from ...facts.redact import redact
from ...results import LogComponent, LogsResult, LogVia
from ...sites.kube import (
    CONTROLLER_DEPLOYMENT,
    ROUTER_CONTAINER,
    ROUTER_DEPLOYMENT,
    ROUTER_DEPLOYMENTS,
)
from ...topology import Topology
from ..scope import SiteRef, resolve_target, site_ref, valid_targets
from ..sitemap import SiteMap

MAX_LINES = 500
#: A container's or pod's name as the summary may say it: a DNS name's characters.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,252}")
COMPONENTS: tuple[LogComponent, ...] = ("router", "controller")


@dataclass(frozen=True)
class _Read:
    source: str | None
    found: bool
    text: str = ""
    cut: bool = False
    detail: str | None = None
    via: LogVia | None = None
    unavailable: str | None = None
    #: older lines went for the bound, other than at the text's front (``cut``)
    dropped: bool = False


def check_arguments(component: str, lines: int) -> None:
    """The bounds the tool's schema states, for callers that do not go through it."""
    if component not in COMPONENTS:
        raise ConfigError(f"unknown component {component!r}: use router or controller")
    if isinstance(lines, bool) or not isinstance(lines, int) or not 1 <= lines <= MAX_LINES:
        raise ConfigError(f"lines must be a whole number from 1 to {MAX_LINES}, not {lines!r}")


def one_site(topology: Topology, query: str) -> SiteRef:
    """The one site a logs target names; ``all`` (or nothing) is refused, since a log is
    read from one site at a time."""
    names = [n for n in valid_targets(topology) if n != "all"]
    if query.strip() in ("", "all"):
        raise ConfigError(
            f"logs reads one site at a time: name one of {', '.join(names)} (not {query!r})"
        )
    try:
        target = resolve_target(topology, query)
    except ConfigError:
        raise ConfigError(f"unknown target {query!r}: name one of {', '.join(names)}") from None
    assert target.host is not None
    return site_ref(topology, target.host)


async def run(sites: SiteMap, target: str, component: str, lines: int) -> LogsResult:
    check_arguments(component, lines)
    ref = one_site(sites.topology, target)
    chosen: LogComponent = "router" if component == "router" else "controller"
    if ref.platform == "kubernetes":
        read = await _cluster(sites, ref, chosen, lines)
    else:
        read = await _podman(sites, ref, chosen, lines)
    redacted, count = await asyncio.to_thread(redact, read.text)
    tail = tail_lines(redacted, lines, MAX_LOG_BYTES, cut=read.cut)
    truncated = tail.truncated or read.dropped
    probes = sum(probe_eof_line(line) for line in tail.lines) if chosen == "router" else 0
    summary = _summary(ref, chosen, read, len(tail.lines), truncated, count)
    if probes:
        summary += (
            f"; {probes} line{'s' * (probes != 1)} an incoming connection closed before its "
            "TLS handshake (unexpected eof): what a TCP probe of the link port, as status "
            "and diagnose send, leaves in the router's log; no fault of a link"
        )
    return LogsResult(
        target=target,
        host=ref.host,
        site=ref.site,
        role=ref.role,
        platform=ref.platform,
        component=chosen,
        source=read.source,
        found=read.found,
        lines=tail.lines,
        requested=lines,
        truncated=truncated,
        redactions=count,
        detail=read.detail,
        via=read.via,
        unavailable=read.unavailable,
        probe_lines=probes,
        summary=summary,
    )


async def _podman(sites: SiteMap, ref: SiteRef, component: LogComponent, lines: int) -> _Read:
    site = await sites.podman(ref)
    container = names.router_container(site.namespace) if component == "router" else None
    read = await site.logs(lines, MAX_LOG_BYTES, container)
    name = read.container or container
    if read.exists != 0:
        why = (
            "the site is not set up there (setup creates it)"
            if component == "router"
            else "the system controller is not installed (setup installs it)"
        )
        detail = f"container {name} does not exist on {ref.host}: {why}"
        return _Read(name, False, detail=detail)
    # podman's own warnings (libpod's cgroups-v1 one on many hosts) are no line of the log
    said = _podman_said(read.podman_said)
    if read.rc != 0 or read.text.strip() or not name:
        return _Read(
            name,
            True,
            read.text,
            read.cut,
            detail=said,
            via="podman-logs",
            dropped=read.dropped,
        )
    # nothing, successfully: on podman's journald log driver the lines are in the journal,
    # which journalctl may show where podman cannot (podman #26910, #24088)
    journal = await site.journal_logs(lines, MAX_LOG_BYTES, name)
    if journal.has_lines:
        return _Read(name, True, journal.text, journal.cut, detail=said, via="journal")
    return _Read(
        name, True, detail=said, via="podman-logs", unavailable=log_unavailable(name, journal)
    )


def _podman_said(messages: tuple[str, ...]) -> str | None:
    """What podman itself said on its standard error while it read the log, in a line."""
    if not messages:
        return None
    more = f" (and {len(messages) - 1} more)" if len(messages) > 1 else ""
    return f"podman warned on its standard error, not part of the log: {messages[-1]}{more}"


async def _cluster(sites: SiteMap, ref: SiteRef, component: LogComponent, lines: int) -> _Read:
    cluster = sites.kube()
    ns = cluster.namespace
    # an HA site runs a second router Deployment: both routers' logs, merged
    deployments = ROUTER_DEPLOYMENTS if component == "router" else (CONTROLLER_DEPLOYMENT,)
    container = ROUTER_CONTAINER if component == "router" else None
    try:
        read = await asyncio.gather(
            *(cluster.pod_log(d, container, lines, MAX_LOG_BYTES) for d in deployments)
        )
    except ConnectError as exc:
        raise ConnectError(ref.host, exc.reason) from exc
    found = [(pod, text, cut) for pod, text, cut in read if pod is not None]
    if len(found) == 1:
        pod, text, cut = found[0]
        return _Read(pod, True, text, cut, via="pod-log")
    if found:
        text = merged_pod_logs(ROUTER_CONTAINER, found)
        return _Read(",".join(pod for pod, _, _ in found), True, text, via="pod-log")
    if component == "router":
        detail = (
            f"no router pod (of Deployment {ROUTER_DEPLOYMENT}) in namespace {ns}: the site "
            "is not set up there, or its router pod has not been created yet"
        )
    else:
        detail = (
            f"no Skupper controller pod (of Deployment {CONTROLLER_DEPLOYMENT}) in namespace "
            f"{ns}: on Kubernetes the controller is the Deployment skupper-controller, which a "
            "cluster-wide install runs in its own namespace (usually skupper), outside the "
            "site's namespace this tool reads; read it there with: kubectl logs -n skupper "
            "deployment/skupper-controller"
        )
    return _Read(None, False, detail=detail)


def _summary(
    ref: SiteRef, component: str, read: _Read, count: int, truncated: bool, redactions: int
) -> str:
    """Our own words and the counts: a container or pod name is said only when it is a
    plain name (the host chooses it; ``source`` and ``detail`` carry it, marked)."""
    where = "pod" if ref.platform == "kubernetes" else "container"
    source = read.source if read.source and _PLAIN_NAME.fullmatch(read.source) else None
    if not read.found:
        return f"{ref.host} {component}: no log (no {where} {source or ''}".rstrip() + ")"
    said = source or f"its {component} {where}"
    if read.unavailable is not None:
        return f"{ref.host} {component}: the log of {said} is unavailable (see unavailable)"
    via = " (from the journal: podman logs printed nothing)" if read.via == "journal" else ""
    parts = [f"{ref.host} {component}: {count} line{'s' * (count != 1)} from {said}{via}"]
    if truncated:
        parts.append(f"older lines left out (over {MAX_LOG_BYTES // 1024} KiB)")
    if redactions:
        parts.append(f"{redactions} secret{'s' * (redactions != 1)} redacted")
    return "; ".join(parts)
