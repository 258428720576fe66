"""The product's MCP server in-process through the real ``mcp.Client``: what the MCP suites
open, in the legacy and the default (``auto``) mode.

Every client opened here has ``read_timeout_seconds``. This is no test module, so it cannot
request the ``bounded_mcp_clients`` fixture itself: each test module that opens clients
through it does (``pytestmark``), as tests/test_suite_rules.py asks of one that opens them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.server.mcpserver import MCPServer

from skupper_mcp.server import build_server

CLIENT_TIMEOUT = 30.0
MODES = ["legacy", "auto"]


def served(
    topology: Path | MCPServer | StdioServerParameters,
    mode: str,
    *,
    read_only: bool = False,
    timeout: float = CLIENT_TIMEOUT,
    **options: Any,
) -> Client:
    """A client in ``mode`` of the server for ``topology`` (a path), or of a server already
    built or started; ``options`` go to the client as they are (extensions,
    elicitation_callback)."""
    server = build_server(topology, read_only=read_only) if isinstance(topology, Path) else topology
    return Client(server, mode=mode, read_timeout_seconds=timeout, **options)
