"""The status summary: a site whose state could not be read is unknown, never stopped."""

from __future__ import annotations

from skupper_mcp.engine.operations.status import summary, unread_site_status
from skupper_mcp.models import ListenerStatus, SiteStatus


def row(host: str, reachable: bool = True, container: str | None = None) -> SiteStatus:
    return SiteStatus(
        host=host,
        site=f"hub-{host}",
        role="provider",
        platform="podman",
        reachable=reachable,
        state="unreachable" if not reachable else "unknown",
        container=container,
    )


def test_each_site_is_named_for_what_is_known_of_it() -> None:
    rows = [
        row("a", container="running"),
        row("b", container="exited"),
        row("c", container="absent"),
        row("d", reachable=False),
        row("e"),  # reachable, but its state read timed out
    ]
    listeners = [ListenerStatus(site="local", port=9000, routing_key="k", bound=True)]
    assert summary(rows, listeners) == (
        "running: a; stopped: b, c; unreachable: d; state unknown: e; 1/1 listeners bound"
    )


def test_a_timed_out_read_is_reported_with_its_reason() -> None:
    from skupper_mcp.engine.scope import SiteRef
    from skupper_mcp.engine.sitemap import SiteView
    from skupper_mcp.errors import CommandTimeout

    ref = SiteRef(host="gpu-1", site="hub-gpu-1", role="provider", platform="podman")
    view = SiteView(ref=ref, error=CommandTimeout("gpu-1", "state read", 30))
    status = unread_site_status(view)
    assert status.reachable and status.container is None
    assert "timed out" in (status.detail or "")
    assert summary([status], []) == "running: none; state unknown: gpu-1; 0/0 listeners bound"
