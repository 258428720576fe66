"""What setup does before the network exists: its plan changes nothing, and a host with
Skupper 2.0.x stops it before anything is changed anywhere."""

from __future__ import annotations

from skupper_mcp.results import OperationResult
from skupper_sandbox.testing import World

from .conftest import namespace_dir, new_engine
from .helpers import skupper_version


def namespaces(world: World) -> list[str]:
    found = []
    for host in ("local", "rhel-ai", "rhtevan-work"):
        if namespace_dir(world, host).exists():
            found.append(host)
    return found


async def test_setup_plan_lists_every_step_and_changes_nothing(world: World) -> None:
    async with new_engine(world) as engine:
        result = await engine.setup(plan=True)
    assert isinstance(result, OperationResult), result.summary
    assert result.plan and result.ok, result.summary
    by_host = {s.host: s for s in result.sites}
    for host in ("rhel-ai", "rhtevan-work", "local"):
        names = [step.name for step in by_host[host].steps]
        assert by_host[host].changed
        assert "skupper system start" in names and "install auto-restart units" in names
    assert "recreate router with tmpfs /tmp" in [s.name for s in by_host["rhel-ai"].steps]
    assert "recreate router with tmpfs /tmp" not in [s.name for s in by_host["rhtevan-work"].steps]
    assert namespaces(world) == []


async def test_a_skupper_2_0_host_fails_setup_and_nothing_changes(world: World) -> None:
    with skupper_version(world, "rhtevan-work", "2.0.1"):
        async with new_engine(world) as engine:
            result = await engine.setup()
    assert isinstance(result, OperationResult), result.summary
    by_host = {s.host: s for s in result.sites}
    assert not result.ok
    assert by_host["rhtevan-work"].outcome == "failed"
    assert "2.1" in (by_host["rhtevan-work"].reason or "")
    for host in ("rhel-ai", "local"):
        assert by_host[host].outcome == "skipped"
        assert not by_host[host].changed
    assert namespaces(world) == []
