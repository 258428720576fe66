"""Recorded VANs for the VAN view's tests: status results, and what a person should see.

Each scenario is a StatusResult built through the models (so it stays valid as they change)
and the state the page should show for every site, link and listener (the page's DOM
contract: ``data-site="<host>"``, ``data-link="<from>-><to>"`` with the link's from/to
site names, ``data-listener="<port>"``, each with ``data-state``). Where the contract
allows more than one word for a state, the expected value is a set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from skupper_mcp.models import LinkStatus, ListenerStatus, SiteStatus, StatusResult

HOSTILE = "<img src=x onerror=alert(1)></script><script>alert(2)</script>"

UP = {"up"}
STOPPED = {"stopped", "down"}
UNREACHABLE = {"unreachable", "skipped"}
CONNECTED = {"connected"}
NOT_CONNECTED = {"not-connected"}


@dataclass
class Scenario:
    name: str
    status: StatusResult
    sites: dict[str, set[str]]  # host -> accepted data-state
    links: dict[str, set[str]]  # "from->to" -> accepted data-state
    listeners: dict[int, set[str]]  # port -> accepted data-state
    texts: list[str] = field(default_factory=list)  # shown as text somewhere on the page

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
    }
    if platform == "kubernetes":
        # the shape engine/operations/status.py gives a cluster site (site_status)
        base |= {
            "controller": "api v1.31.0",
            "router": "skupper-router-7c5d9d6f4b-qg2lp Running",
            "container": "running",
        }
    else:
        base |= {"controller": "active", "router": "active", "container": "running"}
    fields = base | kw
    if "state" not in fields:  # the condition status would give these fields
        stopped = fields.get("container") not in (None, "running")
        fields["state"] = (
            "unreachable" if not fields["reachable"] else "stopped" if stopped else "up"
        )
    return SiteStatus.model_validate(fields)


def _link(to: str, ready: bool = True, status: str | None = None) -> LinkStatus:
    return LinkStatus.model_validate(
        {
            "from": "local-workstation",
            "to": f"hub-{to}",
            "endpoint": f"{to}.lab.example.org:55671",
            "tcp_probe": ready,
            "status": status or ("Ready" if ready else "Pending: connection refused"),
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
            [_link("gpu1"), _link("gpu2")],
            [
                _listener("local-workstation", 9000, "gpu1", "serving"),
                _listener("local-workstation", 9001, "gpu2", "serving"),
                _listener("crc-workstation", 8000, "gpu1", "serving"),
            ],
            "4 sites: 4 reachable; 2 of 2 links up; 3 listeners serving",
        ),
        sites={"local": UP, "gpu1": UP, "gpu2": UP, "crc": UP},
        links={"local-workstation->hub-gpu1": CONNECTED, "local-workstation->hub-gpu2": CONNECTED},
        listeners={9000: {"serving"}, 9001: {"serving"}, 8000: {"serving"}},
    )


def provider_down() -> Scenario:
    return Scenario(
        "provider-down",
        _status(
            [
                _site("local"),
                _site("gpu1"),
                _site("gpu2", router="inactive", container="exited", controller="active"),
                _site("crc"),
            ],
            [_link("gpu1"), _link("gpu2", ready=False)],
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
                    controller=None,
                    router=None,
                    container=None,
                    detail=detail,
                ),
            ],
            [_link("gpu1")],
            [_listener("local-workstation", 9000, "gpu1", "serving")],
            "3 sites: 2 reachable, 1 skipped; 1 of 1 links up; 1 listener serving",
        ),
        sites={"local": UP, "gpu1": UP, "crc": UNREACHABLE},
        links={"local-workstation->hub-gpu1": CONNECTED},
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
            [_link("gpu1", ready=True, status=tls)],
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
                _site("gpu2", router="inactive", container="exited"),
                _site("crc"),
            ],
            [_link("gpu1"), _link("gpu2", ready=False)],
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


SCENARIOS = [all_up, provider_down, cluster_skipped, link_refuses_certificate, listener_closing]
