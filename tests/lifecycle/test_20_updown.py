"""T2a-T2c and T3a-T3e: up and down, all or scoped, with the listeners each case expects
(checked by connecting to the local listener ports), idempotence, and plans."""

from __future__ import annotations

import pytest

from polling import eventually
from skupper_mcp.engine.core import Engine
from skupper_sandbox.testing import World

from .conftest import bound, listener_port
from .helpers import only_up, outcomes

PROVIDERS = ("rhel-ai", "rhtevan-work")
LISTENER_CLOSE_SECONDS = 75.0


async def listeners(world: World) -> dict[str, bool]:
    return {p: await bound(world, "local", listener_port(world, p)) for p in PROVIDERS}


async def settle(world: World, expected: dict[str, bool]) -> dict[str, bool]:
    async def check() -> dict[str, bool] | None:
        found = await listeners(world)
        return found if found == expected else None

    # skrouterd 3.4 keeps a stopped hub's addresses until remoteLsMaxAgeSeconds (60 s) pass
    # after its last advertisement, so the local tcpListener of a provider taken down alone
    # closes 30-63 s later.
    return await eventually(
        check,
        timeout=LISTENER_CLOSE_SECONDS,
        every=0.3,
        what=f"the local listeners to become {expected}",
    )


async def test_t2a_up_all_starts_every_site_and_both_listeners(
    built: World, engine: Engine
) -> None:
    await only_up(engine, ())
    result = await engine.up()
    assert result.ok, result.summary
    assert outcomes(result) == {"rhel-ai": "up", "rhtevan-work": "up", "local": "up", "crc": "up"}
    assert await listeners(built) == {"rhel-ai": True, "rhtevan-work": True}
    assert {(a.host, a.profile, a.action) for a in result.model_actions} == {
        ("rhel-ai", "g8b-fp8-spec-128k", "start"),
        ("rhtevan-work", "g3b-16k", "start"),
    }
    again = await engine.up()
    assert again.ok and not any(s.changed for s in again.sites), again.summary


@pytest.mark.parametrize(
    ("started", "target"), [("rhtevan-work", "rhel-ai"), ("rhel-ai", "rhtevan-work")]
)
async def test_t2b_t2c_up_one_host_keeps_the_other_route(
    built: World, engine: Engine, started: str, target: str
) -> None:
    await only_up(engine, (started,))
    assert await settle(built, {started: True, target: False}) == {started: True, target: False}
    result = await engine.up(target)
    assert result.ok, result.summary
    assert {s.host for s in result.sites} == {target, "local"}
    assert not next(s for s in result.sites if s.host == "local").changed
    assert await listeners(built) == {"rhel-ai": True, "rhtevan-work": True}
    assert [(a.host, a.action) for a in result.model_actions] == [(target, "start")]


async def test_t3a_down_all_stops_everything(built: World, engine: Engine) -> None:
    await only_up(engine, PROVIDERS)
    result = await engine.down()
    assert result.ok, result.summary
    assert set(outcomes(result).values()) == {"down"}
    assert await settle(built, {"rhel-ai": False, "rhtevan-work": False}) == {
        "rhel-ai": False,
        "rhtevan-work": False,
    }
    status = await engine.status()
    assert all(s.container != "running" for s in status.sites if s.platform == "podman")
    again = await engine.down()
    assert again.ok and not any(s.changed for s in again.sites), again.summary


@pytest.mark.parametrize(
    ("stopped", "other"), [("rhel-ai", "rhtevan-work"), ("rhtevan-work", "rhel-ai")]
)
async def test_t3b_t3c_down_one_host_keeps_the_other_route(
    built: World, engine: Engine, stopped: str, other: str
) -> None:
    await only_up(engine, PROVIDERS)
    result = await engine.down(stopped)
    assert result.ok, result.summary
    assert outcomes(result) == {stopped: "down", "local": "up"}
    # The local router keeps the stopped hub's route for 30-63 s (remoteLsMaxAgeSeconds): down
    # and status say the port is bound but closing, never that the route is up.
    [after] = result.listeners
    assert (after.provider, after.bound, after.state) == (stopped, True, "closing"), after
    assert after.closes_within is not None and 0 < after.closes_within <= 63, after
    assert f"{stopped}'s router is stopped" in (after.detail or ""), after
    assert "closing" in result.summary, result.summary
    status = await engine.status()
    local = {li.provider: li for li in status.listeners if li.site == after.site}
    assert local[other].state == "serving", local[other]
    if local[stopped].bound:  # still within the minute: closing, with about how long
        assert local[stopped].state == "closing", local[stopped]
        assert "within " in (local[stopped].detail or ""), local[stopped]
        assert f":{after.port} ({stopped})" in status.summary, status.summary
    assert await settle(built, {stopped: False, other: True}) == {stopped: False, other: True}
    status = await engine.status()
    local = {li.provider: li for li in status.listeners if li.site == after.site}
    assert (local[stopped].state, local[other].state) == ("closed", "serving"), local


@pytest.mark.parametrize("last", PROVIDERS)
async def test_t3d_t3e_down_the_last_host_stops_the_local_site(
    built: World, engine: Engine, last: str
) -> None:
    await only_up(engine, (last,))
    result = await engine.down(last)
    assert result.ok, result.summary
    assert outcomes(result) == {last: "down", "local": "down"}
    assert next(s for s in result.sites if s.host == "local").changed
    assert await settle(built, {"rhel-ai": False, "rhtevan-work": False}) == {
        "rhel-ai": False,
        "rhtevan-work": False,
    }


async def test_down_plan_changes_nothing_and_predicts_the_real_down(
    built: World, engine: Engine
) -> None:
    await only_up(engine, PROVIDERS)
    before = (await engine.status()).sites
    plan = await engine.down("rhel-ai", plan=True)
    assert plan.plan and plan.ok
    after = (await engine.status()).sites
    assert [(s.host, s.container, s.router, s.controller) for s in before] == [
        (s.host, s.container, s.router, s.controller) for s in after
    ]
    assert [(a.host, a.profile, a.action) for a in plan.model_actions] == [
        ("rhel-ai", "g8b-fp8-spec-128k", "stop")
    ]
    real = await engine.down("rhel-ai")
    assert outcomes(real) == outcomes(plan)
    assert [s.changed for s in real.sites] == [s.changed for s in plan.sites]


async def test_up_plan_predicts_the_real_up_with_a_profile_target(
    built: World, engine: Engine
) -> None:
    await only_up(engine, ())
    plan = await engine.up("g3b-4k", plan=True)
    assert not await bound(built, "local", listener_port(built, "rhtevan-work"))
    assert [(a.host, a.profile, a.action) for a in plan.model_actions] == [
        ("rhtevan-work", "g3b-4k", "start")
    ]
    real = await engine.up("g3b-4k")
    assert outcomes(real) == outcomes(plan) == {"rhtevan-work": "up", "local": "up"}
    assert [a.profile for a in real.model_actions] == ["g3b-4k"]
