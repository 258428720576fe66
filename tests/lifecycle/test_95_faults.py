"""Faults through one long-lived MCP server over stdio, as an agent holds it: a provider
that goes silent is skipped within the connect timeout and comes back after restore; then
a short run of the fault matrix (bench/fault_matrix.py) with a fixed seed."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from skupper_mcp.results import OperationResult, StatusResult
from skupper_sandbox.testing import World

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from fault_matrix import run_matrix

pytestmark = pytest.mark.usefixtures("bounded_mcp_clients")

#: Every MCP request of this module is bounded: operations on a world take a minute or two.
CLIENT_TIMEOUT = 180.0

MATRIX_SEED = 2026
MATRIX_SECONDS = 60.0


def _server(world: World) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "skupper_mcp", "--topology", str(world.topology), "--log-level", "ERROR"],
    )


async def _call(client: Client, tool: str, arguments: dict[str, object]):
    started = time.monotonic()
    result = await client.call_tool(tool, arguments, read_timeout_seconds=120)
    assert not result.is_error, result.content
    return result.structured_content, time.monotonic() - started


async def test_a_silent_provider_is_skipped_in_bounded_time_then_comes_back(
    world: World,
) -> None:
    async with Client(_server(world), mode="legacy", read_timeout_seconds=CLIENT_TIMEOUT) as client:
        setup, _ = await _call(client, "setup", {})
        assert OperationResult.model_validate(setup).ok
        await _call(client, "up", {"target": "all"})
        world.fault("rhtevan-work", "blackhole")
        try:
            up, up_seconds = await _call(client, "up", {"target": "all"})
            status, status_seconds = await _call(client, "status", {})
        finally:
            world.fault("rhtevan-work", "restore")
        after, _ = await _call(client, "up", {"target": "all"})

    up_result = OperationResult.model_validate(up)
    silent = next(s for s in up_result.sites if s.host == "rhtevan-work")
    # the subject: the silent host costs the answer deadline (5 s of listening), not the
    # command timeout (60 s); the bounds sit between, clear of what load adds
    assert up_seconds <= 30, up_seconds
    assert silent.outcome == "skipped" and "stopped answering" in (silent.reason or ""), silent
    assert {s.host: s.outcome for s in up_result.sites}["rhel-ai"] == "up"

    status_result = StatusResult.model_validate(status)
    row = next(s for s in status_result.sites if s.host == "rhtevan-work")
    assert status_seconds <= 20, status_seconds  # the subject, as up's above
    assert not row.reachable and "unreachable" in row.state_reason, row
    assert "unreachable: rhtevan-work" in status_result.summary

    back = OperationResult.model_validate(after)
    assert {s.host: s.outcome for s in back.sites}["rhtevan-work"] == "up", back.summary


async def test_the_fault_matrix_holds_its_invariants(world: World) -> None:
    matrix = await run_matrix(world, MATRIX_SEED, MATRIX_SECONDS)
    matrix.report()
    world.restore_all()
    assert not matrix.violations, matrix.violations
