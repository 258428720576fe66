"""The real server process over stdio, as agents start it."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from skupper_mcp.results import ResolveResult
from topology_samples import ALL_TOOLS, READ_ONLY_TOOLS

pytestmark = [pytest.mark.spawns, pytest.mark.usefixtures("bounded_mcp_clients")]

#: Every MCP request of this module is bounded: in-process and stdio servers answer in seconds.
CLIENT_TIMEOUT = 30.0

STARTUP_BOUND = 3.0  # generous: the contract is 1 s on a quiet machine


def _params(topology: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "skupper_mcp", "--topology", str(topology), *extra]
    )


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_stdio_server_lists_and_calls_tools(example_path: Path, mode: str) -> None:
    async with Client(
        _params(example_path), mode=mode, read_timeout_seconds=CLIENT_TIMEOUT
    ) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        result = await client.call_tool("resolve_profile", {"name": "hub-rhel-ai-nope"})
        good = await client.call_tool("resolve_profile", {"name": "g8b-32k"})
    assert set(tools) == ALL_TOOLS
    assert tools["setup"].output_schema is not None
    assert tools["resolve_profile"].annotations is not None
    assert result.is_error and "valid names" in result.content[0].text  # type: ignore[union-attr]
    assert ResolveResult.model_validate(good.structured_content).host == "rhel-ai"


async def test_stdio_read_only(example_path: Path) -> None:
    async with Client(
        _params(example_path, "--read-only"), mode="legacy", read_timeout_seconds=CLIENT_TIMEOUT
    ) as client:
        tools = (await client.list_tools()).tools
    assert sorted(t.name for t in tools) == READ_ONLY_TOOLS


def _sdk_import_seconds() -> float:
    """How long importing the MCP SDK alone takes here, now (the floor of any start-up)."""
    start = time.monotonic()
    subprocess.run(
        [sys.executable, "-c", "import mcp.server.mcpserver"], check=True, capture_output=True
    )
    return time.monotonic() - start


async def test_stdio_answers_tools_list_quickly(example_path: Path) -> None:
    start = time.monotonic()
    async with Client(
        _params(example_path), mode="legacy", read_timeout_seconds=CLIENT_TIMEOUT
    ) as client:
        await client.list_tools()
        elapsed = time.monotonic() - start
    floor = _sdk_import_seconds()
    print(f"stdio start-up to tools/list: {elapsed:.2f}s (MCP SDK import alone: {floor:.2f}s)")
    # on a loaded machine the SDK import alone can exceed the bound; our own share is small
    assert elapsed < max(STARTUP_BOUND, floor + 1.5)
