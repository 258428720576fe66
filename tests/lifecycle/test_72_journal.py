"""What the agent did, as the user asks for it afterwards: the journal of the writes (setup,
up, down) with their client and outcomes, and the progress with a total they reported."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from mcp import Client
from mcp.types import Implementation

from skupper_mcp.results import HistoryResult, OperationResult
from skupper_mcp.server import build_server
from skupper_mcp.topology import load_topology
from skupper_sandbox.testing import World

from .helpers import cli

pytestmark = pytest.mark.usefixtures("bounded_mcp_clients")

CLIENT_TIMEOUT = 180.0
AGENT = Implementation(name="journal-test-agent", version="9.9.1")


def counted(seen: list[tuple[float, float | None]]) -> None:
    """Each notification has a total, counts up by one, and never passes its total."""
    assert seen, "no progress notification"
    assert all(total is not None for _, total in seen), seen
    assert [done for done, _ in seen] == list(range(1, len(seen) + 1)), seen
    assert all(total is not None and done <= total for done, total in seen), seen


async def test_setup_up_and_down_are_in_the_journal_with_their_client(built: World) -> None:
    state_dir = load_topology(built.topology).state_dir
    journal = state_dir / "journal.jsonl"
    before = len(journal.read_text().splitlines()) if journal.exists() else 0
    ups: list[tuple[float, float | None]] = []
    downs: list[tuple[float, float | None]] = []

    async def on_up(progress: float, total: float | None, message: str | None) -> None:
        ups.append((progress, total))

    async def on_down(progress: float, total: float | None, message: str | None) -> None:
        downs.append((progress, total))

    async with Client(
        build_server(built.topology),
        mode="legacy",
        client_info=AGENT,
        read_timeout_seconds=CLIENT_TIMEOUT,
    ) as client:
        up = await client.call_tool("up", {"target": "rhel-ai"}, progress_callback=on_up)
        plan = await client.call_tool("down", {"plan": True})  # a plan is not a write
        down = await client.call_tool("down", {}, progress_callback=on_down)
        resource = await client.read_resource("skupper://history")
    assert not up.is_error and not plan.is_error and not down.is_error
    counted(ups)
    counted(downs)
    stopped = OperationResult.model_validate(down.structured_content)
    assert downs[-1][1] is not None
    assert downs[-1][1] >= sum(len(s.steps) for s in stopped.sites)  # the plan's steps

    run = cli(built, "history", "--json")
    assert run.returncode == 0, run.stderr
    history = HistoryResult.model_validate_json(run.stdout)
    assert stat.S_IMODE(journal.stat().st_mode) == 0o600
    written = history.entries
    assert len(written) == before + 2  # the up and the down; the plan is not there
    assert written[0].tool == "setup" and written[0].client == "cli"
    assert written[0].ok and all(s.outcome == "up" for s in written[0].sites)
    last_up, last_down = written[-2], written[-1]
    assert (last_up.tool, last_up.arguments, last_up.client, last_up.client_version) == (
        "up",
        {"target": "rhel-ai"},
        AGENT.name,
        AGENT.version,
    )
    assert {s.host: s.outcome for s in last_up.sites}["rhel-ai"] == "up"
    assert [a.action for a in last_up.model_actions] == ["start"]
    assert last_down.tool == "down" and last_down.ok
    assert {s.host: s.outcome for s in last_down.sites} == {
        s.host: s.outcome for s in stopped.sites
    }
    changed = {s.host: s.changed_steps for s in last_down.sites if s.changed}
    assert changed["rhel-ai"][0] == "stop router", changed  # what ran and changed it
    assert changed.get("crc", ["delete links"]) == ["delete links"], changed
    assert last_down.seconds > 0
    text = resource.contents[0].text  # type: ignore[union-attr]
    assert HistoryResult.model_validate(json.loads(text)).entries[-1] == last_down

    recent = cli(built, "history", "--since", "1h")
    # the client's name and version, in one cell (which a table as wide as COLUMNS wraps)
    assert recent.returncode == 0, recent.stderr
    assert "journal-test-agent" in recent.stdout and "9.9.1" in recent.stdout
    assert "down" in recent.stdout and Path(history.path) == journal
