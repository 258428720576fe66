"""``diagnose``: what is wrong on each site, why, and the next step. Read-only.

One read per site (its state plus the last lines of the router's and the controller's logs),
every site at once and bounded like ``status``, plus a TCP probe of every link and, for a
provider whose model did not answer on its host, ``GET /v1/models`` through the local
listener with its key (what tells a refused key from a stopped server); then the pure
rules of ``findings`` turn what was read into findings. A site that cannot be read is one
finding; the others are still diagnosed.
"""

from __future__ import annotations

import asyncio

from ...errors import Unparsed
from ...facts import names
from ...facts.logs import MAX_LOG_BYTES, log_unavailable
from ...facts.redact import redact_lines
from ...results import DiagnosedSite, DiagnoseResult, Finding, NextStep
from ...vocabulary import plural
from ..condition import site_condition
from ..desired.cluster import cluster_link_names
from ..findings import RULES, Network
from ..findings.context import LinkProbe
from ..findings.links import VERIFY_FAILED
from ..model_http import ModelsProbe
from ..predicates import stopped_as_asked
from ..readings import ASKED_VALUES, Asked, PodmanReading, Unread
from ..scope import resolve_target
from ..scope import sites as all_sites
from ..served import ServedMap, read_served, served_ids
from ..sitemap import SiteMap, link_rows
from ..verify import tcp_probe

LOG_LINES = 100
#: What a search of a whole router log returns at most (the newest matches).
SEARCH_LINES = 10
SEARCH_BYTES = 8 * 1024
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


async def read(sites: SiteMap) -> Network:
    topo = sites.topology
    views = await sites.read_all(all_sites(topo), log_lines=LOG_LINES)
    await asyncio.gather(
        *(journal_fallback(v) for v in views.values() if isinstance(v, PodmanReading))
    )
    rows = link_rows(topo, views)
    failing = {r.from_host for r in rows if not r.ready}
    await asyncio.gather(
        *(
            refusals_searched(v)
            for host, v in views.items()
            if host in failing and isinstance(v, PodmanReading)
        )
    )
    probes = await asyncio.gather(*(tcp_probe(r.host, r.port) for r in rows))
    # after the link probes, never beside them: a connect has its second, and the HTTP
    # client's import and set-up on the loop would make it miss a port that accepts
    served = await read_served(topo, views)
    links = [
        LinkProbe(r.from_host, r.to_host, r.host, r.port, probe, r.status, r.ready is True)
        for r, probe in zip(rows, probes, strict=True)
    ]
    return Network(topo, views, links, model_probes(served), served_ids(served))


def model_probes(served: ServedMap) -> dict[str, ModelsProbe]:
    """``GET /v1/models`` through the local listener, with the provider's key, of every
    provider whose router runs and whose endpoint has a key or answered no list on the host
    (``served.read_served``: the read that decides active profiles everywhere)."""
    return {host: s.probe for host, s in served.items() if s.probe is not None}


async def journal_fallback(view: PodmanReading) -> None:
    """For each container whose ``podman logs`` printed nothing (exit 0), its lines from the
    journal (podman's journald log driver), or why its log is unavailable (``SiteState.
    logs_unavailable``), so that no rule reads an unread log's silence as evidence."""
    state = view.state
    containers = {
        "router": names.router_container(view.namespace),
        "controller": names.controller_container(state.user),
    }
    for component, container in containers.items():
        if state.logs.get(component) != [] or state.container(container) is None:
            continue
        journal = await view.site.journal_logs(LOG_LINES, MAX_LOG_BYTES, container)
        if journal.has_lines:
            lines = journal.text.split("\n")[1 if journal.cut else 0 :]  # a cut first line goes
            state.logs[component] = [line for line in lines if line.strip()]
            continue
        why = log_unavailable(container, journal)
        if why is not None:
            state.logs_unavailable[component] = why


async def refusals_searched(view: PodmanReading) -> None:
    """The dialling router's refusals of a server certificate: first its own connector
    status (management's ``connectionMsg`` keeps a connector's last failure while it
    retries), then its whole log, since skrouterd logs a connector's failure only when its
    message changes (``src/adaptors/amqp/qd_connector.c@3.4.2:416-431``, "logged only
    once") and the tail read with the state may have lost it."""
    container = names.router_container(view.namespace)
    if view.state.container(container) is None:
        return
    try:
        view.state.connectors = await view.site.connector_status(container)
    except Unparsed as exc:  # the connector status is unknown; the log is still searched
        view.state.connectors_error = str(exc)
    found = await view.site.log_search(container, VERIFY_FAILED, SEARCH_LINES, SEARCH_BYTES)
    if found is not None:
        view.state.log_matches[VERIFY_FAILED] = found


async def run(sites: SiteMap, target: str) -> DiagnoseResult:
    wanted = resolve_target(sites.topology, target)
    network = await read(sites)
    found = [respecting_asked(f, network) for rule in RULES for f in rule(network)]
    findings = await asyncio.to_thread(redacted_all, found)
    views = list(network.views.values())
    if not wanted.everything:
        findings = [f for f in findings if f.host == wanted.host]
        views = [v for v in views if v.ref.host == wanted.host]
    findings.sort(key=lambda f: SEVERITY_ORDER[f.severity])
    links_of_cluster = cluster_link_names(sites.topology)
    diagnosed = [
        DiagnosedSite(
            host=v.ref.host,
            site=v.ref.site,
            read=not isinstance(v, Unread),
            state=site_condition(v, links_of_cluster)[0],
            findings=sum(f.host == v.ref.host for f in findings),
            seconds=round(v.seconds, 3),
        )
        for v in views
    ]
    return DiagnoseResult(
        target=target,
        findings=findings,
        sites=diagnosed,
        ok=not any(f.severity != "info" for f in findings),
        summary=summary(findings, len(diagnosed)),
    )


#: For each thing a user may ask of a site, the tool calls that would undo it there.
#: What stops a site is undone by what starts it, and the other way round.
UNDOES: dict[Asked, frozenset[str]] = {
    asked: frozenset(a for a in ASKED_VALUES if stopped_as_asked(a) != stopped_as_asked(asked))
    for asked in ASKED_VALUES
}


def undoes(step: NextStep, host: str, asked: Asked | None) -> bool:
    """Whether ``step`` would undo, on ``host``, what the user last asked of it: a call of
    an operation that reverses it, aimed at that host (or at everything)."""
    if asked is None or step.kind != "tool" or step.tool not in UNDOES[asked]:
        return False
    if step.arguments.get("check") is True or step.arguments.get("plan") is True:
        return False  # only reads
    target = step.arguments.get("target", "all")
    return step.tool == "setup" or target in ("all", host)


def respecting_asked(finding: Finding, network: Network) -> Finding:
    """The finding without next steps that would undo what the user last asked of its
    site; its fix says how to undo that, should the user want to."""
    view = network.views.get(finding.host)
    asked = view.asked if view is not None else None
    dropped = [s for s in finding.next if undoes(s, finding.host, asked)]
    if not dropped:
        return finding
    kept = [s for s in finding.next if s not in dropped]
    how = ", ".join(s.text for s in dropped)
    fix = (
        f"{finding.fix}. {finding.host} was last asked to {asked}: the step ({how}) would "
        "undo that, so it is not proposed; run it when you want to undo it"
    )
    return finding.model_copy(update={"next": kept, "fix": fix})


def redacted_all(findings: list[Finding]) -> list[Finding]:
    """``redacted`` over every finding: run in a thread, since evidence may be long."""
    return [redacted(f) for f in findings]


def redacted(finding: Finding) -> Finding:
    """Evidence quotes logs and API fields: keys and tokens never leave in it."""
    evidence, _ = redact_lines(finding.evidence)
    return finding.model_copy(update={"evidence": evidence})


def summary(findings: list[Finding], site_count: int) -> str:
    serious = [f for f in findings if f.severity != "info"]
    if not serious:
        return f"{plural(site_count, 'site')} diagnosed: nothing wrong"
    per_site: dict[str, list[str]] = {}
    for f in serious:
        per_site.setdefault(f.host, []).append(f.id)
    listed = "; ".join(f"{host}: {', '.join(ids)}" for host, ids in per_site.items())
    return f"{plural(site_count, 'site')} diagnosed, {plural(len(serious), 'problem')}: {listed}"
