"""T4 status and T5 test_model against the live sandbox."""

from __future__ import annotations

from polling import eventually
from skupper_mcp.engine.core import Engine
from skupper_sandbox.testing import World

from .conftest import NS, on_host
from .helpers import only_up


async def test_t4_status_reports_every_component_live(built: World, engine: Engine) -> None:
    await only_up(engine, ("rhtevan-work",))
    status = await engine.status()
    sites = {s.host: s for s in status.sites}
    assert sites["rhtevan-work"].container == "running"
    assert sites["rhel-ai"].container == "exited"
    assert sites["local"].container == "running"
    listeners = {(li.site, li.port): li.bound for li in status.listeners}
    assert listeners[("local-sandbox", 10000)] is True
    assert listeners[("local-sandbox", 9000)] is False
    assert {(a.host, a.action) for a in status.model_actions} == {
        ("rhel-ai", "status"),
        ("rhtevan-work", "status"),
    }


async def test_status_flags_stale_state_when_the_router_dies_with_its_controller(
    built: World, engine: Engine
) -> None:
    await only_up(engine, ("rhtevan-work",))

    async def ready() -> bool:
        sites = (await engine.status()).sites
        return next(s for s in sites if s.host == "rhtevan-work").detail == "Ready"

    await eventually(ready, timeout=20, every=0.3, what="the controller to write Ready")
    code, _, err = built.ssh(
        "rhtevan-work",
        on_host(
            f"$SKMCP_CTL stop skupper-controller.service && $SKMCP_CTL stop skupper-{NS}.service"
        ),
    )
    assert code == 0, err
    status = await engine.status()
    site = next(s for s in status.sites if s.host == "rhtevan-work")
    assert site.stale, site
    assert "stale" in status.summary


async def test_t5_test_model_passes_six_of_six(built: World, engine: Engine) -> None:
    await only_up(engine, ("rhtevan-work",))
    result = await engine.test_model("rhtevan-work")
    assert (result.passed, result.total) == (6, 6), result.checks
    assert result.profile == "g3b-16k"
    by_profile = await engine.test_model("g3b-16k")
    assert by_profile.host == "rhtevan-work" and by_profile.passed == 6


async def test_test_model_on_a_stopped_route_says_which_check_failed(
    built: World, engine: Engine
) -> None:
    await only_up(engine, ("rhtevan-work",))
    result = await engine.test_model("rhel-ai")
    checks = {c.name: c for c in result.checks}
    assert not checks["listener port"].passed
    assert checks["remote host reachable"].passed
    assert checks["remote container running"].passed
    assert result.passed == 2
