"""What the server claims it does, against what a client sees it do: in-process and over
stdio, in the handshake era (mode="legacy") and the 2026-07-28 one (the default mode).

The server sends no change notification (capabilities.py says why), so it must claim none:
no ``listChanged`` for tools, prompts or resources and no ``resources.subscribe``; and a
client that asks for them anyway is refused, not acknowledged and then left waiting.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.types import ServerCapabilities

from mcp_client import CLIENT_TIMEOUT, served

pytestmark = pytest.mark.usefixtures("bounded_mcp_clients")


def assert_claims_no_notification(caps: ServerCapabilities) -> None:
    assert caps.tools is not None and caps.resources is not None and caps.prompts is not None
    assert not caps.tools.list_changed
    assert not caps.prompts.list_changed
    assert not caps.resources.list_changed
    assert not caps.resources.subscribe


async def assert_refuses_subscriptions(client: Client, mode: str) -> None:
    """What a client that subscribes anyway gets: an error, in the era's own way."""
    with pytest.raises(MCPError):
        if mode == "legacy":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the SDK marks it deprecated (2026-07-28)
                await client.subscribe_resource("skupper://status")
        else:
            async with client.listen(resource_subscriptions=["skupper://status"]):
                pass


async def test_in_process_claims_match_behaviour(example_path: Path, mode: str) -> None:
    async with served(example_path, mode) as client:
        assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
        assert_claims_no_notification(client.server_capabilities)
        await assert_refuses_subscriptions(client, mode)


@pytest.mark.spawns
async def test_over_stdio_claims_match_behaviour(example_path: Path, mode: str) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "skupper_mcp", "--topology", str(example_path)]
    )
    async with Client(params, mode=mode, read_timeout_seconds=CLIENT_TIMEOUT) as client:
        assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
        assert_claims_no_notification(client.server_capabilities)
        await assert_refuses_subscriptions(client, mode)
