"""Recorded VANs for the VAN view's tests: status results, and what a person should see.

Each scenario's status is the one the engine answered over the recorded site states
(``results/<name>.json``, recorded by ``record_results.py``: never written by hand), with the
state the page should show for every site, link and listener (the page's DOM contract:
``data-site="<host>"``, ``data-link="<from>-><to>"`` with the link's from/to site names,
``data-listener="<port>"``, each with ``data-state``). Where the contract allows more than
one word for a state, the expected value is a set.

The view also draws what is not a status: a diagnose (each site's DiagnosedSite.state), a
plan (each site carries ``data-plan``: ``would-change``, ``would-refuse`` (failed or
skipped) or ``no-change``, and no state: a plan says what would change, not what is) and an
operation that ran (each site's outcome as its state). Those are the recorded scenarios'
``diagnose``, ``up-plan`` and operation results, as the engine answered them. ``now`` is
what the page says of where the VAN is ("Now: ...").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from record_results import HOSTILE
from recorded_results import recorded_diagnose, recorded_operation, recorded_status
from skupper_mcp.results import DiagnoseResult, OperationResult, StatusResult

__all__ = ["HOSTILE", "SCENARIOS", "Scenario"]

UP = {"up"}
STOPPED = {"stopped"}
#: A site the user stopped with ``down``: stopped, never stale (the rendered status keeps
#: saying Ready, but the user asked for the stop).
STOPPED_BY_DOWN = STOPPED
UNREACHABLE = {"unreachable"}
NOT_SET_UP = {"not-set-up"}
STALE = {"stale"}
NOT_REPORTED = {"not-reported"}
CONNECTED = {"connected"}
NOT_CONNECTED = {"not-connected"}
#: A link whose dialling site was not read (LinkStatus.connected None): not known connected.
UNREAD_LINK = {"not-connected", "unknown"}

LOCAL_TO_RHEL_AI = "local-sandbox->hub-rhel-ai"
LOCAL_TO_RHTEVAN = "local-sandbox->hub-rhtevan-work"
RHEL_AI_PORT, RHTEVAN_PORT = 9000, 10000  # the recorded topology's local listeners


@dataclass
class Scenario:
    name: str
    status: StatusResult | DiagnoseResult | OperationResult  # the result drawn
    sites: dict[str, set[str]]  # host -> accepted data-state
    links: dict[str, set[str]]  # "from->to" -> accepted data-state
    listeners: dict[int, set[str]]  # port -> accepted data-state
    texts: list[str] = field(default_factory=list)  # shown as text somewhere on the page
    now: str = ""  # what the page says of where the VAN is ("Now: ...")
    plan: dict[str, str] = field(default_factory=dict)  # host -> data-plan, for a plan
    tool: str = "status"  # the tool whose result it is (page_html's key)

    def as_dict(self) -> dict[str, Any]:
        """The result as the tool's structuredContent carries it (JSON, aliases)."""
        return self.status.model_dump(mode="json", by_alias=True)


def all_up() -> Scenario:
    return Scenario(
        "all-up",
        recorded_status("all-up"),
        sites={"rhel-ai": UP, "rhtevan-work": UP, "local": UP},
        links={LOCAL_TO_RHEL_AI: CONNECTED, LOCAL_TO_RHTEVAN: CONNECTED},
        listeners={RHEL_AI_PORT: {"serving"}, RHTEVAN_PORT: {"serving"}},
    )


def provider_down() -> Scenario:
    """From all up, ``down rhel-ai``: its listener is still bound, closing."""
    return Scenario(
        "provider-down",
        recorded_status("provider-down"),
        sites={"rhel-ai": STOPPED_BY_DOWN, "rhtevan-work": UP, "local": UP},
        links={LOCAL_TO_RHEL_AI: NOT_CONNECTED, LOCAL_TO_RHTEVAN: CONNECTED},
        listeners={RHEL_AI_PORT: {"closing"}, RHTEVAN_PORT: {"serving"}},
    )


def cluster_skipped() -> Scenario:
    return Scenario(
        "cluster-skipped",
        recorded_status("cluster-skipped"),
        sites={"rhel-ai": UP, "rhtevan-work": UP, "local": UP, "crc": UNREACHABLE},
        links={
            LOCAL_TO_RHEL_AI: CONNECTED,
            LOCAL_TO_RHTEVAN: CONNECTED,
            "crc-sandbox->hub-rhel-ai": UNREAD_LINK,
            "crc-sandbox->local-sandbox": UNREAD_LINK,
        },
        listeners={
            RHEL_AI_PORT: {"serving"},
            RHTEVAN_PORT: {"serving"},
            8000: {"unknown"},
            8001: {"unknown"},
        },
        texts=["timed out"],
    )


def link_refuses_certificate() -> Scenario:
    return Scenario(
        "link-tls-refused",
        recorded_status("link-tls-refused"),
        sites={"rhel-ai": UP, "rhtevan-work": UP, "local": UP},
        links={LOCAL_TO_RHEL_AI: NOT_CONNECTED, LOCAL_TO_RHTEVAN: CONNECTED},
        listeners={RHEL_AI_PORT: {"closed"}, RHTEVAN_PORT: {"serving"}},
        texts=["certificate signed by unknown authority"],
    )


def listener_closing() -> Scenario:
    """``down rhel-ai`` 48 s ago: its listener closes within 15 s at most."""
    return Scenario(
        "listener-closing",
        recorded_status("listener-closing"),
        sites={"rhel-ai": STOPPED_BY_DOWN, "rhtevan-work": UP, "local": UP},
        links={LOCAL_TO_RHEL_AI: NOT_CONNECTED, LOCAL_TO_RHTEVAN: CONNECTED},
        listeners={RHEL_AI_PORT: {"closing"}, RHTEVAN_PORT: {"serving"}},
    )


def hostile_text() -> Scenario:
    """Hosts that write markup into what the view shows: it must stay text."""
    return Scenario(
        "hostile-text",
        recorded_status("hostile-text"),
        sites={"rhel-ai": UP, "rhtevan-work": UNREACHABLE, "local": UP},
        # the dialling (local) site was read and says its link to rhtevan-work is Ready
        links={LOCAL_TO_RHEL_AI: NOT_CONNECTED, LOCAL_TO_RHTEVAN: CONNECTED},
        listeners={RHEL_AI_PORT: {"closed"}, RHTEVAN_PORT: {"closed"}},
        texts=["<img src=x onerror=alert(1)>", "</script>"],
    )


SCENARIOS = [all_up, provider_down, cluster_skipped, link_refuses_certificate, listener_closing]
#: The recorded world's hosts, in the order status gives them.
HOSTS = ["rhel-ai", "rhtevan-work", "local"]


def not_set_up() -> Scenario:
    """``fresh``: setup never run, no site installed, nothing listens."""
    return Scenario(
        "not-set-up",
        recorded_status("fresh"),
        sites=dict.fromkeys(HOSTS, NOT_SET_UP),
        links={LOCAL_TO_RHEL_AI: NOT_CONNECTED, LOCAL_TO_RHTEVAN: NOT_CONNECTED},
        listeners={RHEL_AI_PORT: {"closed"}, RHTEVAN_PORT: {"closed"}},
        now="not set up",
    )


def every_state() -> Scenario:
    """A status whose site rows come from four recorded statuses, each row (and each link and
    listener) as the engine produced it there, so up, stale, stopped and unreachable are drawn
    side by side: local from ``all-up``, rhel-ai from ``router-killed`` (stale), rhtevan-work
    from ``all-down`` (stopped), crc from ``cluster-skipped`` (unreachable). Only the summary
    is ours (the rows' scenarios each have their own). A link or listener comes with the
    site that reads it (the dialling site, the listener's site), so local's link to
    rhtevan-work is all-up's, connected, beside rhtevan-work's stopped row from all-down: a
    picture no single moment gives, drawn to show each state once, not to be coherent.
    not-set-up is ``not_set_up``'s;
    degraded and unknown are ``degraded_and_unknown``'s."""
    taken = {
        "local": "all-up",
        "rhel-ai": "router-killed",
        "rhtevan-work": "all-down",
        "crc": "cluster-skipped",
    }
    statuses = {name: recorded_status(name) for name in set(taken.values())}
    sites = [
        next(s for s in statuses[name].sites if s.host == host) for host, name in taken.items()
    ]
    by_site = {s.site: taken[s.host] for s in sites}
    # a link is the dialling site's reading; a listener, the site it is on
    links = [
        link
        for name, status in statuses.items()
        for link in status.links
        if by_site.get(link.from_site) == name
    ]
    listeners = [
        li
        for name, status in statuses.items()
        for li in status.listeners
        if by_site.get(li.site) == name
    ]
    composed = StatusResult(
        sites=sites,
        links=links,
        listeners=listeners,
        summary="rows of four recorded statuses: "
        + ", ".join(f"{h} from {n}" for h, n in taken.items()),
    )
    return Scenario(
        "every-state",
        composed,
        sites={"local": UP, "rhel-ai": STALE, "rhtevan-work": STOPPED, "crc": UNREACHABLE},
        links={
            LOCAL_TO_RHEL_AI: CONNECTED,
            LOCAL_TO_RHTEVAN: CONNECTED,
            "crc-sandbox->hub-rhel-ai": UNREAD_LINK,
            "crc-sandbox->local-sandbox": UNREAD_LINK,
        },
        listeners={
            RHEL_AI_PORT: {"serving"},
            RHTEVAN_PORT: {"serving"},
            8000: {"unknown"},
            8001: {"unknown"},
        },
        texts=[s.state_reason for s in sites if s.state_reason],
    )


def degraded_and_unknown() -> Scenario:
    """``degraded-and-unknown``: rhtevan-work's router runs outside its unit (degraded),
    rhel-ai's reading was cut short (unknown: its listener cannot be told either)."""
    status = recorded_status("degraded-and-unknown")
    return Scenario(
        "degraded-and-unknown",
        status,
        sites={"rhel-ai": {"unknown"}, "rhtevan-work": {"degraded"}, "local": UP},
        links={LOCAL_TO_RHEL_AI: CONNECTED, LOCAL_TO_RHTEVAN: CONNECTED},
        listeners={RHEL_AI_PORT: {"unknown"}, RHTEVAN_PORT: {"serving"}},
        texts=[s.state_reason for s in status.sites if s.state_reason],
    )


def diagnose_healthy() -> Scenario:
    """``all-up``'s diagnose: no finding, every site up (DiagnosedSite.state)."""
    return Scenario(
        "diagnose-healthy",
        recorded_diagnose("all-up"),
        sites=dict.fromkeys(HOSTS, UP),
        links={},
        listeners={},
        now="all up (3 of 3 sites)",
        tool="diagnose",
    )


def diagnose_findings() -> Scenario:
    """``router-killed``'s diagnose: rhel-ai's router stopped behind the user's back (stale,
    with its finding), the others up."""
    result = recorded_diagnose("router-killed")
    return Scenario(
        "diagnose-findings",
        result,
        sites={"rhel-ai": STALE, "rhtevan-work": UP, "local": UP},
        links={},
        listeners={},
        texts=[f.id for f in result.findings],
        tool="diagnose",
    )


def up_plan_running() -> Scenario:
    """``all-up``'s up(plan=true): nothing would change; no site is called stopped."""
    return Scenario(
        "up-plan-running",
        recorded_operation("all-up", "up-plan"),
        sites=dict.fromkeys(HOSTS, NOT_REPORTED),
        links={},
        listeners={},
        plan=dict.fromkeys(HOSTS, "no-change"),
        now="not known from this result",
        tool="up",
    )


def up_plan_after_down() -> Scenario:
    """``provider-down``'s up(plan=true): rhel-ai would change (its steps), the rest not."""
    result = recorded_operation("provider-down", "up-plan")
    steps = [st.name for s in result.sites if s.host == "rhel-ai" for st in s.steps]
    return Scenario(
        "up-plan-after-down",
        result,
        sites=dict.fromkeys(HOSTS, NOT_REPORTED),
        links={},
        listeners={},
        plan={"rhel-ai": "would-change", "rhtevan-work": "no-change", "local": "no-change"},
        texts=steps,
        now="not known from this result",
        tool="up",
    )


def up_plan_not_set_up() -> Scenario:
    """``fresh``'s up(plan=true): every site would refuse (not set up: run setup first), so
    the plan marks each as refusing, never as "no change"."""
    return Scenario(
        "up-plan-not-set-up",
        recorded_operation("fresh", "up-plan"),
        sites=dict.fromkeys(("rhel-ai", "rhtevan-work", "local"), NOT_REPORTED),
        links={},
        listeners={},
        plan=dict.fromkeys(("rhel-ai", "rhtevan-work", "local"), "would-refuse"),
        now="not known from this result",
        tool="up",
    )


def up_with_failures() -> Scenario:
    """``stranger-up``'s up, as it ran: rhel-ai and the local site up, rhtevan-work and the
    cluster skipped (each site's outcome drawn as its state)."""
    return Scenario(
        "up-with-failures",
        recorded_operation("stranger-up", "up"),
        sites={"rhel-ai": UP, "rhtevan-work": {"skipped"}, "local": UP, "crc": {"skipped"}},
        links={},
        listeners={},
        tool="up",
    )


#: Results that are not a status, or a status of every kind of site: drawn from what they say.
MORE_SCENARIOS = [
    not_set_up,
    every_state,
    degraded_and_unknown,
    diagnose_healthy,
    diagnose_findings,
    up_plan_running,
    up_plan_after_down,
    up_plan_not_set_up,
    up_with_failures,
]
