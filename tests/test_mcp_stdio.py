"""The real server process over stdio, as agents start it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from skupper_mcp.results import ResolveResult
from topology_samples import ALL_TOOLS, READ_ONLY_TOOLS

pytestmark = [pytest.mark.spawns, pytest.mark.usefixtures("bounded_mcp_clients")]

#: Every MCP request of this module is bounded: in-process and stdio servers answer in seconds.
CLIENT_TIMEOUT = 30.0


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


#: What the stdio server must not import before it answers tools/list (prefixes of module
#: names): the engine and what reaches hosts (made at the first call), the renderers and the
#: VAN picture (a resource's read), the exports, the HTTP front, the YAML editor (connect),
#: and the sandbox (not even installed for a user). (``cryptography.hazmat`` is the SDK's own
#: at its import, for its request state: asyncssh stands for the product's use of it.)
LATE_IMPORTS = (
    "skupper_mcp.engine.core",
    "skupper_mcp.engine.operations",
    "skupper_mcp.sites",
    "skupper_mcp.connectors.pool",
    "skupper_mcp.connectors.ssh",
    "skupper_mcp.connectors.kube",
    "skupper_mcp.render",
    "skupper_mcp.view.svg",
    "skupper_mcp.topology.diagram",
    "skupper_mcp.exports",
    "skupper_mcp.http_auth",
    "skupper_sandbox",
    "asyncssh",
    "kubernetes",
    "ruamel",
)

#: ``python -X importtime -m skupper_mcp ARGS`` with its stderr (the import report) in a file.
_IMPORTTIME = (
    "import os, sys\n"
    "os.dup2(os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 2)\n"
    "os.execv(sys.executable, [sys.executable, '-X', 'importtime', '-m', 'skupper_mcp', "
    "*sys.argv[2:]])\n"
)


def _imported(report: str) -> set[str]:
    """The modules an ``-X importtime`` report names (its header and other lines skipped)."""
    names = set()
    for line in report.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if line.startswith("import time:") and len(parts) == 3 and parts[0].strip().isdigit():
            names.add(parts[2].strip())
    return names


async def test_the_stdio_start_leaves_the_heavy_modules_for_later(
    example_path: Path, tmp_path: Path
) -> None:
    """The real server process over stdio, to its tools/list answer, imports none of
    LATE_IMPORTS (each costs every client's start and tools/list needs none): read from the
    interpreter's own import report, while the server still runs, not from a stopwatch."""
    report = tmp_path / "importtime.txt"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", _IMPORTTIME, str(report), "--topology", str(example_path)],
    )
    async with Client(params, mode="legacy", read_timeout_seconds=CLIENT_TIMEOUT) as client:
        tools = (await client.list_tools()).tools
        imported = _imported(report.read_text(encoding="utf-8", errors="replace"))
    assert {t.name for t in tools} == ALL_TOOLS
    assert "skupper_mcp.server" in imported and "skupper_mcp.results" in imported, (
        "the import report does not show the server's start: the check would prove nothing"
    )
    late = sorted(m for m in imported if m.startswith(LATE_IMPORTS))
    assert late == [], f"the stdio start imported {late} before tools/list"
