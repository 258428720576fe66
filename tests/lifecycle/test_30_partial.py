"""T9a, T9c and a fault in the middle of an operation: unreachable hosts are skipped with
the reason, quickly and concurrently, and never block the others."""

from __future__ import annotations

import asyncio
import time

import pytest
from mcp import Client

from skupper_mcp.engine.core import Engine
from skupper_mcp.server import build_server
from skupper_mcp.topology import load_topology
from skupper_sandbox.testing import World

from .conftest import bound, listener_port, new_engine
from .helpers import faulted, only_up, outcomes

pytestmark = pytest.mark.usefixtures("bounded_mcp_clients")

CONNECT_TIMEOUT = 5.0


@pytest.mark.parametrize("fault", ["down", "blackhole"])
async def test_t9a_up_skips_an_unreachable_provider(
    built: World, engine: Engine, fault: str
) -> None:
    await only_up(engine, ())
    async with faulted(built, "rhel-ai", fault) as fresh:
        started = time.monotonic()
        result = await fresh.up()
        took = time.monotonic() - started
    by_host = {s.host: s for s in result.sites}
    assert by_host["rhel-ai"].outcome == "skipped"
    assert "rhel-ai" in (by_host["rhel-ai"].reason or "")
    expected = "refused" if fault == "down" else "timed out"
    assert expected in (by_host["rhel-ai"].reason or ""), by_host["rhel-ai"].reason
    assert by_host["rhtevan-work"].outcome == "up" and by_host["local"].outcome == "up"
    assert result.ok
    assert [(a.host, a.action) for a in result.model_actions] == [("rhtevan-work", "start")]
    assert took < CONNECT_TIMEOUT + 15, took
    assert await bound(built, "local", listener_port(built, "rhtevan-work"))


class FirstHeard:
    """A progress callback: when each host's first line came, in seconds from its making."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.at: dict[str, float] = {}

    async def __call__(self, line: str) -> None:
        self.at.setdefault(line.split(":", 1)[0], time.monotonic() - self.started)


#: A connect timeout well above what reading and stopping a site take under load.
SILENT_TIMEOUT = 10.0


async def test_a_silent_provider_holds_up_no_other_site(built: World, engine: Engine) -> None:
    """Each site acts on its own reading: with rhel-ai silent, rhtevan-work's first step is
    reported long before rhel-ai's connect timeout runs out, in up and in down. (Gated on
    every reading, nothing came before the timeout.)"""
    assert (await engine.up("rhtevan-work")).ok
    topology = load_topology(built.topology)
    patient = topology.model_copy(
        update={"ssh": topology.ssh.model_copy(update={"connect_timeout": SILENT_TIMEOUT})}
    )
    built.fault("rhel-ai", "blackhole")
    try:
        for operation in ("up", "down"):
            async with Engine(patient) as fresh:
                heard = FirstHeard()
                call = fresh.up if operation == "up" else fresh.down
                result = await call("all", progress=heard)
                took = time.monotonic() - heard.started
            assert outcomes(result)["rhel-ai"] == "skipped", (operation, result.summary)
            assert outcomes(result)["rhtevan-work"] == operation, (operation, result.summary)
            assert took >= SILENT_TIMEOUT, (operation, took)
            assert heard.at["rhtevan-work"] < SILENT_TIMEOUT / 2, (operation, heard.at)
    finally:
        built.fault("rhel-ai", "restore")


async def test_t9c_down_skips_an_unreachable_provider(built: World, engine: Engine) -> None:
    await only_up(engine, ("rhel-ai", "rhtevan-work"))
    async with faulted(built, "rhtevan-work", "down") as fresh:
        result = await fresh.down()
    by_host = outcomes(result)
    assert by_host["rhel-ai"] == "down" and by_host["local"] == "down"
    assert by_host["rhtevan-work"] == "skipped"
    assert [(a.host, a.action) for a in result.model_actions] == [("rhel-ai", "stop")]


async def test_a_host_lost_mid_operation_fails_with_its_reason(
    built: World, engine: Engine
) -> None:
    await only_up(engine, ())
    fired = False

    async def progress(line: str) -> None:
        nonlocal fired
        if not fired and line.startswith("rhel-ai: start controller"):
            fired = True
            await asyncio.to_thread(built.fault, "rhel-ai", "down")

    try:
        async with new_engine(built) as fresh:
            result = await fresh.up(progress=progress)
    finally:
        built.fault("rhel-ai", "restore")
    assert fired
    by_host = {s.host: s for s in result.sites}
    assert by_host["rhel-ai"].outcome == "failed", by_host["rhel-ai"]
    assert by_host["rhel-ai"].reason
    assert by_host["rhtevan-work"].outcome == "up"
    assert not result.ok


async def test_concurrent_reads_with_a_silent_provider_wait_one_connect_timeout(
    built: World, engine: Engine
) -> None:
    """An agent's status, diagnose and up(plan=true) sent at once, with rhel-ai silent: they
    share one connect attempt to it (and its failure) and none waits for the operation lock,
    so every answer comes within one connect timeout plus the work, not one timeout each
    (before: 6, 11 and 15 s)."""
    await only_up(engine, ("rhtevan-work",))
    built.fault("rhel-ai", "blackhole")
    answered: dict[str, float] = {}
    try:
        async with Client(build_server(built.topology), read_timeout_seconds=120) as client:
            started = time.monotonic()

            async def call(tool: str, arguments: dict[str, object]) -> object:
                result = await client.call_tool(tool, arguments)
                answered[tool] = time.monotonic() - started
                return result

            results = await asyncio.gather(
                call("status", {}), call("diagnose", {}), call("up", {"plan": True})
            )
    finally:
        built.fault("rhel-ai", "restore")
    for result in results:
        assert not result.is_error, result.content  # type: ignore[attr-defined]
    plan = results[2].structured_content  # type: ignore[attr-defined]
    rhel_ai = next(s for s in plan["sites"] if s["host"] == "rhel-ai")
    assert rhel_ai["outcome"] == "skipped" and "timed out" in rhel_ai["reason"], rhel_ai
    assert max(answered.values()) < CONNECT_TIMEOUT + 4, answered
