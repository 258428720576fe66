"""Recorded VANs for the VAN view's tests: status results, and what a person should see.

Each scenario's status is the one the engine answered over the recorded site states
(``results/<name>.json``, recorded by ``record_results.py``: never written by hand), with the
state the page should show for every site, link and listener (the page's DOM contract:
``data-site="<host>"``, ``data-link="<from>-><to>"`` with the link's from/to site names,
``data-listener="<port>"``, each with ``data-state``). Where the contract allows more than
one word for a state, the expected value is a set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from record_results import HOSTILE
from recorded_results import recorded_status
from skupper_mcp.models import StatusResult

__all__ = ["HOSTILE", "SCENARIOS", "Scenario"]

UP = {"up"}
STOPPED = {"stopped", "down"}
#: A site the user stopped with ``down``: stopped, never stale (the rendered status keeps
#: saying Ready, but the user asked for the stop).
STOPPED_BY_DOWN = STOPPED
UNREACHABLE = {"unreachable", "skipped"}
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
    status: StatusResult
    sites: dict[str, set[str]]  # host -> accepted data-state
    links: dict[str, set[str]]  # "from->to" -> accepted data-state
    listeners: dict[int, set[str]]  # port -> accepted data-state
    texts: list[str] = field(default_factory=list)  # shown as text somewhere on the page

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
    """``down rhel-ai`` 48 s ago: its listener closes within 12 s."""
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
        links={LOCAL_TO_RHEL_AI: NOT_CONNECTED, LOCAL_TO_RHTEVAN: NOT_CONNECTED},
        listeners={RHEL_AI_PORT: {"closed"}, RHTEVAN_PORT: {"closed"}},
        texts=["<img src=x onerror=alert(1)>", "</script>"],
    )


SCENARIOS = [all_up, provider_down, cluster_skipped, link_refuses_certificate, listener_closing]
