"""The status summary: each site named for its condition; a site whose state could not be
read is unknown (or unreachable), never stopped."""

from __future__ import annotations

from skupper_mcp.engine.operations.status import site_status, summary
from skupper_mcp.engine.readings import Unread
from skupper_mcp.engine.scope import SiteRef
from skupper_mcp.errors import CommandTimeout
from skupper_mcp.results import ListenerStatus, SiteCondition, SiteStatus


def row(host: str, state: SiteCondition, reason: str = "") -> SiteStatus:
    return SiteStatus(
        host=host,
        site=f"hub-{host}",
        role="provider",
        platform="podman",
        reachable=state != "unreachable",
        state=state,
        state_reason=reason,
        stale=state == "stale",
    )


def test_each_site_is_named_for_its_condition() -> None:
    rows = [
        row("a", "up"),
        row("b", "stopped"),
        row("c", "not-set-up"),
        row("d", "unreachable"),
        row("e", "unknown"),  # reachable, but its state read timed out
        row("f", "stale"),
        row("g", "degraded", "the system controller is not running"),
    ]
    listeners = [ListenerStatus(site="local", port=9000, routing_key="k", bound=True)]
    assert summary(rows, listeners) == (
        "running: a, g; stopped: b; not set up: c; unreachable: d; state unknown: e; "
        "1/1 listeners bound; stale status on f; "
        "degraded: g (the system controller is not running)"
    )


def test_a_timed_out_read_is_reported_with_its_reason() -> None:
    ref = SiteRef(host="gpu-1", site="hub-gpu-1", role="provider", platform="podman")
    status = site_status(Unread(ref, CommandTimeout("gpu-1", "state read", 30)))
    assert status.reachable and status.container is None and status.state == "unknown"
    # said once: why it is unknown, not again as what the site said
    assert "timed out" in status.state_reason and status.detail is None
    assert summary([status], []) == "running: none; state unknown: gpu-1; 0/0 listeners bound"
