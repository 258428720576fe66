"""Recorded VANs for the VAN view's tests: status results, and what a person should see.

Each scenario is a StatusResult built through the models (so it stays valid as they change)
and the state the page should show for every site, link and listener (the page's DOM
contract: ``data-site="<host>"``, ``data-link="<from>-><to>"`` with the link's from/to
site names, ``data-listener="<port>"``, each with ``data-state``). Where the contract
allows more than one word for a state, the expected value is a set.

A site's ``data-state`` is its typed state (SiteStatus.state, DiagnosedSite.state, an
operation's outcome); a result that carries none draws ``not-reported`` (or ``not-read``
for a site diagnose could not read), never a state made up. A plan's site also carries
``data-plan``: ``would-change`` or ``no-change``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from skupper_mcp.models import (
    DiagnosedSite,
    DiagnoseResult,
    Finding,
    LinkStatus,
    ListenerStatus,
    NextStep,
    OperationResult,
    SiteResult,
    SiteStatus,
    StatusResult,
    Step,
)

HOSTILE = "<img src=x onerror=alert(1)></script><script>alert(2)</script>"

UP = {"up"}
STOPPED = {"stopped"}
UNREACHABLE = {"unreachable"}
NOT_SET_UP = {"not-set-up"}
NOT_REPORTED = {"not-reported"}
CONNECTED = {"connected"}
NOT_CONNECTED = {"not-connected"}


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


def _site(host: str, **kw: Any) -> SiteStatus:
    role = "provider" if host.startswith("gpu") else "consumer"
    platform = "kubernetes" if host == "crc" else "podman"
    site = {"local": "local-workstation", "crc": "crc-workstation"}.get(host, f"hub-{host}")
    base: dict[str, Any] = {
        "host": host,
        "site": site,
        "role": role,
        "platform": platform,
        "reachable": True,
        "state": "up",
    }
    if platform == "kubernetes":
        # the shape engine/operations/status.py gives a cluster site (kube_site_status)
        base |= {
            "controller": "api v1.31.0",
            "router": "skupper-router-7c5d9d6f4b-qg2lp Running",
            "container": "running",
        }
    else:
        base |= {"controller": "active", "router": "active", "container": "running"}
    return SiteStatus.model_validate(base | kw)


def _link(
    to: str, ready: bool = True, status: str | None = None, connected: bool | None = None
) -> LinkStatus:
    return LinkStatus.model_validate(
        {
            "from": "local-workstation",
            "to": f"hub-{to}",
            "endpoint": f"{to}.lab.example.org:55671",
            "tcp_probe": ready,
            "connected": ready if connected is None else connected,
            "status": status or ("Ready" if ready else "Pending: connection refused"),
        }
    )


def _cluster_link(connected: bool | None = True) -> LinkStatus:
    """The cluster's link to the local site (the cluster reaches the providers through it)."""
    return LinkStatus.model_validate(
        {
            "from": "crc-workstation",
            "to": "local-workstation",
            "endpoint": "workstation.lab.example.org:55671",
            "tcp_probe": connected is not False,
            "connected": connected,
            "status": {True: "Ready", False: "Pending: connection refused"}.get(
                connected, "unknown (API unreachable)"
            ),
        }
    )


def _listener(site: str, port: int, provider: str, state: str, **kw: Any) -> ListenerStatus:
    base: dict[str, Any] = {
        "site": site,
        "port": port,
        "routing_key": f"model-api-{provider}",
        "provider": provider,
        "bound": state in ("serving", "closing", "unknown"),
        "state": state,
    }
    if site == "crc-workstation":
        base["service"] = f"model-listener-{provider}.skupper-models.svc.cluster.local:{port}"
    return ListenerStatus.model_validate(base | kw)


def _status(sites, links, listeners, summary: str) -> StatusResult:  # type: ignore[no-untyped-def]
    return StatusResult(sites=sites, links=links, listeners=listeners, summary=summary)


def all_up() -> Scenario:
    return Scenario(
        "all-up",
        _status(
            [_site("local"), _site("gpu1"), _site("gpu2"), _site("crc")],
            [_link("gpu1"), _link("gpu2"), _cluster_link()],
            [
                _listener("local-workstation", 9000, "gpu1", "serving"),
                _listener("local-workstation", 9001, "gpu2", "serving"),
                _listener("crc-workstation", 8000, "gpu1", "serving"),
            ],
            "4 sites: 4 reachable; 2 of 2 links up; 3 listeners serving",
        ),
        sites={"local": UP, "gpu1": UP, "gpu2": UP, "crc": UP},
        links={
            "local-workstation->hub-gpu1": CONNECTED,
            "local-workstation->hub-gpu2": CONNECTED,
            "crc-workstation->local-workstation": CONNECTED,
        },
        listeners={9000: {"serving"}, 9001: {"serving"}, 8000: {"serving"}},
    )


def provider_down() -> Scenario:
    return Scenario(
        "provider-down",
        _status(
            [
                _site("local"),
                _site("gpu1"),
                _site(
                    "gpu2",
                    state="stopped",
                    state_reason="stopped by down",
                    router="inactive",
                    container="exited",
                    controller="active",
                ),
                _site("crc"),
            ],
            [_link("gpu1"), _link("gpu2", ready=False), _cluster_link()],
            [
                _listener("local-workstation", 9000, "gpu1", "serving"),
                _listener(
                    "local-workstation",
                    9001,
                    "gpu2",
                    "closing",
                    detail="gpu2's router is stopped: no route behind the port",
                    closes_within=48.0,
                ),
                _listener("crc-workstation", 8000, "gpu1", "serving"),
            ],
            "4 sites: 4 reachable, 1 router stopped; 1 of 2 links up; 1 listener closing",
        ),
        sites={"local": UP, "gpu1": UP, "gpu2": STOPPED, "crc": UP},
        links={
            "local-workstation->hub-gpu1": CONNECTED,
            "local-workstation->hub-gpu2": NOT_CONNECTED,
            "crc-workstation->local-workstation": CONNECTED,
        },
        listeners={9000: {"serving"}, 9001: {"closing"}, 8000: {"serving"}},
    )


def cluster_skipped() -> Scenario:
    detail = "kubernetes context crc-admin: the API server did not answer within 5.0s"
    return Scenario(
        "cluster-skipped",
        _status(
            [
                _site("local"),
                _site("gpu1"),
                _site(
                    "crc",
                    reachable=False,
                    state="unreachable",
                    controller=None,
                    router=None,
                    container=None,
                    detail=detail,
                ),
            ],
            [_link("gpu1"), _cluster_link(None)],
            [_listener("local-workstation", 9000, "gpu1", "serving")],
            "3 sites: 2 reachable, 1 skipped; 1 of 1 links up; 1 listener serving",
        ),
        sites={"local": UP, "gpu1": UP, "crc": UNREACHABLE},
        links={
            "local-workstation->hub-gpu1": CONNECTED,
            "crc-workstation->local-workstation": {"unknown"},
        },
        listeners={9000: {"serving"}},
        texts=["did not answer"],
    )


def link_refuses_certificate() -> Scenario:
    tls = (
        "Error: TLS handshake failed: x509: certificate signed by unknown authority "
        '(possibly because of "crypto/rsa: verification error" while trying to verify '
        'candidate authority certificate "skupper-site-ca")'
    )
    return Scenario(
        "link-tls-refused",
        _status(
            [_site("local"), _site("gpu1")],
            [_link("gpu1", ready=True, status=tls, connected=False)],
            [
                _listener(
                    "local-workstation",
                    9000,
                    "gpu1",
                    "unknown",
                    detail="no route: the link to hub-gpu1 is not up",
                )
            ],
            "2 sites: 2 reachable; 0 of 1 links up; 1 listener unknown",
        ),
        sites={"local": UP, "gpu1": UP},
        links={"local-workstation->hub-gpu1": NOT_CONNECTED},
        listeners={9000: {"unknown"}},
        texts=["certificate signed by unknown authority"],
    )


def listener_closing() -> Scenario:
    return Scenario(
        "listener-closing",
        _status(
            [
                _site("local"),
                _site("gpu1"),
                _site("gpu2", state="stopped", router="inactive", container="exited"),
                _site("crc"),
            ],
            [_link("gpu1"), _link("gpu2", ready=False), _cluster_link()],
            [
                _listener("local-workstation", 9000, "gpu1", "serving"),
                _listener(
                    "local-workstation",
                    9001,
                    "gpu2",
                    "closing",
                    closes_within=12.0,
                    detail="gpu2's router stopped 48 s ago",
                ),
                _listener(
                    "crc-workstation",
                    8001,
                    "gpu2",
                    "closed",
                    bound=False,
                    detail="nothing accepts on the port",
                ),
                _listener("crc-workstation", 8000, "gpu1", "serving"),
            ],
            "4 sites: 4 reachable, 1 router stopped; 1 of 2 links up; 1 listener closing, 1 closed",
        ),
        sites={"local": UP, "gpu1": UP, "gpu2": STOPPED, "crc": UP},
        links={
            "local-workstation->hub-gpu1": CONNECTED,
            "local-workstation->hub-gpu2": NOT_CONNECTED,
            "crc-workstation->local-workstation": CONNECTED,
        },
        listeners={9000: {"serving"}, 9001: {"closing"}, 8001: {"closed"}, 8000: {"serving"}},
    )


def hostile_text() -> Scenario:
    """A host that writes markup into what the view shows: it must stay text."""
    return Scenario(
        "hostile-text",
        _status(
            [
                _site("local"),
                _site(
                    "gpu1",
                    reachable=False,
                    state="unreachable",
                    controller=None,
                    router=None,
                    container=None,
                    detail=f"ssh said: {HOSTILE}",
                ),
            ],
            [_link("gpu1", ready=False, status=f"Pending: {HOSTILE}")],
            [_listener("local-workstation", 9000, "gpu1", "unknown", detail=HOSTILE)],
            f"2 sites: 1 reachable {HOSTILE}",
        ),
        sites={"local": UP, "gpu1": UNREACHABLE},
        links={"local-workstation->hub-gpu1": NOT_CONNECTED},
        listeners={9000: {"unknown"}},
        texts=["<img src=x onerror=alert(1)>", "</script>"],
    )


def not_set_up() -> Scenario:
    """A VAN whose setup was never run: no site installed, nothing listens."""

    def fresh(host: str) -> SiteStatus:
        return _site(
            host,
            state="not-set-up",
            state_reason="no site installed",
            controller="not installed",
            router="not installed",
            container="absent",
            detail="not set up",
        )

    return Scenario(
        "not-set-up",
        _status(
            [fresh("local"), fresh("gpu1"), fresh("gpu2"), fresh("crc")],
            [],
            [
                _listener("local-workstation", 9000, "gpu1", "closed"),
                _listener("local-workstation", 9001, "gpu2", "closed"),
            ],
            "running: none; 0/2 listeners bound; setup needed on local, gpu1, gpu2, crc",
        ),
        sites={"local": NOT_SET_UP, "gpu1": NOT_SET_UP, "gpu2": NOT_SET_UP, "crc": NOT_SET_UP},
        links={},
        listeners={9000: {"closed"}, 9001: {"closed"}},
        now="not set up",
    )


def every_state() -> Scenario:
    """One site in each state status can give, so each is drawn (and coloured) once."""
    states = {
        "local": ("up", "the router runs"),
        "gpu1": ("stale", "Skupper says Ready, the router is not running, nothing asked so"),
        "gpu2": ("degraded", "the router runs, its controller is not active"),
        "gpu3": ("unknown", "the container state could not be parsed"),
        "gpu4": ("stopped", "stopped by down"),
        "gpu5": ("not-set-up", "no site installed"),
        "crc": ("unreachable", "the API server did not answer"),
    }
    sites = [
        _site(host, state=state, state_reason=why, reachable=state != "unreachable")
        for host, (state, why) in states.items()
    ]
    return Scenario(
        "every-state",
        _status(
            sites,
            [
                _link("gpu1", ready=False),
                _link("gpu2", ready=True),
                # the dialling site was not read: connected is None
                _link("gpu3", ready=True).model_copy(update={"connected": None}),
            ],
            [],
            "running: local, gpu2; stale status on gpu1",
        ),
        sites={host: {state} for host, (state, _) in states.items()},
        links={
            "local-workstation->hub-gpu1": NOT_CONNECTED,
            "local-workstation->hub-gpu2": CONNECTED,
            "local-workstation->hub-gpu3": {"unknown"},
        },
        listeners={},
        texts=[why for _, why in states.values()],
        now="some up (1 of 7 sites; 1 stopped, 1 not set up, 1 unreachable, 1 stale, "
        "1 degraded, 1 unknown)",
    )


def _diagnosed(host: str, state: str | None, read: bool = True, findings: int = 0) -> DiagnosedSite:
    site = {"local": "local-workstation", "crc": "crc-workstation"}.get(host, f"hub-{host}")
    return DiagnosedSite.model_validate(
        {"host": host, "site": site, "read": read, "state": state, "findings": findings}
    )


def diagnose_healthy() -> Scenario:
    """diagnose on a VAN that runs: no finding, every site up (DiagnosedSite.state)."""
    hosts = ["local", "gpu1", "gpu2", "crc"]
    return Scenario(
        "diagnose-healthy",
        DiagnoseResult(
            target="all",
            findings=[],
            sites=[_diagnosed(h, "up") for h in hosts],
            ok=True,
            summary="4 sites read: no finding",
        ),
        sites={h: UP for h in hosts},
        links={},
        listeners={},
        now="all up (4 of 4 sites)",
        tool="diagnose",
    )


def diagnose_findings() -> Scenario:
    """diagnose that says no site's state (as before DiagnosedSite.state): findings per site,
    one site not read. The view draws the findings and invents no state."""
    stale = Finding(
        id="stale-status",
        site="hub-gpu2",
        host="gpu2",
        severity="warning",
        symptom="the rendered status says Ready but the router is not running",
        evidence=["skupper-router-hub-gpu2.service: inactive (dead)"],
        cause="the router died while its controller was stopped",
        fix="start the site again",
        next=[NextStep(kind="tool", text="up(target='gpu2')", tool="up")],
    )
    unread = Finding(
        id="host-unreachable",
        site="crc-workstation",
        host="crc",
        severity="error",
        symptom="the cluster could not be read",
        cause="the API server did not answer within 5.0s",
        fix="check that the cluster runs",
    )
    hint = Finding(
        id="model-not-served",
        site="hub-gpu1",
        host="gpu1",
        severity="info",
        symptom="no model is served on gpu1's model port",
        cause="the hosted model is stopped",
        fix="hosted-model-ctl start",
    )
    return Scenario(
        "diagnose-findings",
        DiagnoseResult(
            target="all",
            findings=[unread, stale, hint],
            sites=[
                _diagnosed("local", None),
                _diagnosed("gpu1", None, findings=1),
                _diagnosed("gpu2", None, findings=1),
                _diagnosed("crc", None, read=False, findings=1),
            ],
            ok=False,
            summary="4 sites: 1 error, 1 warning, 1 info",
        ),
        sites={
            "local": NOT_REPORTED,
            "gpu1": NOT_REPORTED,
            "gpu2": NOT_REPORTED,
            "crc": {"not-read"},
        },
        links={},
        listeners={},
        texts=["stale-status", "host-unreachable", "model-not-served", "up(target='gpu2')"],
        now="not known from this result",
        tool="diagnose",
    )


def _planned(host: str, outcome: str, steps: list[str]) -> SiteResult:
    site = {"local": "local-workstation", "crc": "crc-workstation"}.get(host, f"hub-{host}")
    return SiteResult.model_validate(
        {
            "host": host,
            "site": site,
            "role": "provider" if host.startswith("gpu") else "consumer",
            "platform": "kubernetes" if host == "crc" else "podman",
            "outcome": outcome,
            "changed": bool(steps),
            "steps": [Step(name=name, ok=True) for name in steps],
        }
    )


def up_plan_running() -> Scenario:
    """up(plan=true) on a VAN that runs: nothing would change; no site is called stopped."""
    hosts = ["local", "gpu1", "gpu2", "crc"]
    return Scenario(
        "up-plan-running",
        OperationResult(
            operation="up",
            target="all",
            ok=True,
            sites=[_planned(h, "up", []) for h in hosts],
            summary="plan: nothing to change",
            plan=True,
        ),
        sites={h: NOT_REPORTED for h in hosts},
        links={},
        listeners={},
        plan={h: "no-change" for h in hosts},
        now="not known from this result",
        tool="up",
    )


def up_plan_after_down() -> Scenario:
    """up(plan=true) after down gpu2: gpu2 would change (its steps), the rest would not."""
    steps = ["start controller unit", "start router unit"]
    return Scenario(
        "up-plan-after-down",
        OperationResult(
            operation="up",
            target="all",
            ok=True,
            sites=[
                _planned("local", "up", []),
                _planned("gpu1", "up", []),
                _planned("gpu2", "up", steps),
                _planned("crc", "up", []),
            ],
            summary="plan: start gpu2",
            plan=True,
        ),
        sites={h: NOT_REPORTED for h in ["local", "gpu1", "gpu2", "crc"]},
        links={},
        listeners={},
        plan={
            "local": "no-change",
            "gpu1": "no-change",
            "gpu2": "would-change",
            "crc": "no-change",
        },
        texts=steps,
        now="not known from this result",
        tool="up",
    )


def up_with_failures() -> Scenario:
    """An up that ran: one site up, one failed, the cluster skipped (outcomes as states)."""
    return Scenario(
        "up-with-failures",
        OperationResult(
            operation="up",
            target="all",
            ok=False,
            sites=[
                _planned("local", "up", ["start router unit"]),
                _planned("gpu1", "failed", []).model_copy(
                    update={"reason": "systemctl --user start failed: exit 1"}
                ),
                _planned("crc", "skipped", []).model_copy(
                    update={"reason": "the API server did not answer"}
                ),
            ],
            summary="up: 1 up, 1 failed, 1 skipped",
        ),
        sites={"local": UP, "gpu1": {"failed"}, "crc": {"skipped"}},
        links={},
        listeners={},
        texts=["systemctl --user start failed"],
        now="some up (1 of 3 sites; 1 skipped, 1 failed)",
        tool="up",
    )


SCENARIOS = [all_up, provider_down, cluster_skipped, link_refuses_certificate, listener_closing]
#: Results that are not a status, or a status of every kind of site: drawn from what they say.
MORE_SCENARIOS = [
    not_set_up,
    every_state,
    diagnose_healthy,
    diagnose_findings,
    up_plan_running,
    up_plan_after_down,
    up_with_failures,
]
