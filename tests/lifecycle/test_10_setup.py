"""T1: setup builds every site and links them; a second setup changes nothing."""

from __future__ import annotations

from skupper_mcp.engine.core import Engine
from skupper_sandbox.testing import World

from .conftest import bound, listener_port


async def test_after_setup_every_site_is_ready_and_both_links_connected(
    built: World, engine: Engine
) -> None:
    status = await engine.status()
    podman_sites = [s for s in status.sites if s.platform == "podman"]
    assert {s.host for s in podman_sites} == {"rhel-ai", "rhtevan-work", "local"}
    for site in podman_sites:
        assert site.reachable and site.container == "running", site
        assert site.router and site.router.startswith("active"), site
        assert not site.stale
    local_links = [link for link in status.links if link.from_site == "local-sandbox"]
    assert len(local_links) == 2
    assert all(link.status == "Ready" and link.tcp_probe for link in local_links), local_links
    for provider in ("rhel-ai", "rhtevan-work"):
        assert await bound(built, "local", listener_port(built, provider))


async def test_second_setup_changes_nothing_and_says_so(engine: Engine) -> None:
    result = await engine.setup()
    assert result.ok, result.summary
    assert not any(site.changed for site in result.sites), [
        (s.host, [st.name for st in s.steps]) for s in result.sites if s.changed
    ]
    assert "nothing to change" in result.summary
    assert {(a.host, a.profile, a.action) for a in result.model_actions} == {
        ("rhel-ai", "g8b-fp8-spec-128k", "setup"),
        ("rhtevan-work", "g3b-16k", "setup"),
    }
