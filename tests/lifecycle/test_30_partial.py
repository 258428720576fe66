"""T9a, T9c and a fault in the middle of an operation: unreachable hosts are skipped with
the reason, quickly and concurrently, and never block the others."""

from __future__ import annotations

import asyncio
import time

import pytest

from skupper_mcp.engine.core import Engine
from skupper_mcp.topology import load_topology
from skupper_sandbox.testing import World

from .conftest import bound, listener_port, new_engine
from .test_20_updown import only_up, outcomes

CONNECT_TIMEOUT = 5.0


@pytest.mark.parametrize("fault", ["down", "blackhole"])
async def test_t9a_up_skips_an_unreachable_provider(
    built: World, engine: Engine, fault: str
) -> None:
    await only_up(engine, ())
    built.fault("rhel-ai", fault)
    try:
        async with new_engine(built) as fresh:  # new connections, as a new agent session
            started = time.monotonic()
            result = await fresh.up()
            took = time.monotonic() - started
    finally:
        built.fault("rhel-ai", "restore")
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
    built.fault("rhtevan-work", "down")
    try:
        async with new_engine(built) as fresh:
            result = await fresh.down()
    finally:
        built.fault("rhtevan-work", "restore")
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
