"""The long calls as MCP tasks (``io.modelcontextprotocol/tasks``) against the sandbox,
through the SDK's client in the default (2026-07-28) mode with the extension declared
(tests/tasks_client.py): a real teardown and setup are tasks polled to completion with the
result a plain call gives; a cancel mid-setup stops it at a step's end and leaves a typed
result naming what each site did and did not do; setup again finishes it."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import ElicitRequestParams, ElicitResult

from mcp_client import served
from skupper_mcp.results import OperationResult
from skupper_sandbox.testing import World
from tasks_client import TaskCancelled, TasksClient

from .conftest import namespace_dir

pytestmark = pytest.mark.usefixtures("bounded_mcp_clients")

#: Every MCP request of this module is bounded: one poll or one call answers in seconds, but
#: the server holds a tools/call that is not a task for the whole operation.
CLIENT_TIMEOUT = 180.0
#: The world's podman sites, whose namespace directories teardown removes and setup makes.
HOSTS = ("rhel-ai", "rhtevan-work", "local")


async def yes(context: Any, params: ElicitRequestParams) -> ElicitResult:
    """The user's yes to the teardown question."""
    return ElicitResult(action="accept", content={"confirm": True})


def comparable(result: Any) -> dict[str, Any]:
    """A tool result's structured content without its timings."""
    content = dict(result.structured_content or {})
    for site in content.get("sites", []):
        for step in site.get("steps", []):
            step.pop("seconds", None)
    return content


def first_step_done(message: str) -> bool:
    """A task's status message once a setup step changed a site (``3/20 host: step: ok``)."""
    return any(
        f": {step}: ok" in message
        for step in ("install system controller", "apply resources", "skupper system start")
    )


async def test_teardown_and_setup_as_tasks_and_a_cancel_mid_setup(built: World) -> None:
    removing = TasksClient()
    async with served(
        built.topology,
        "auto",
        extensions=[removing],
        elicitation_callback=yes,  # the user's yes, asked before the task
        timeout=CLIENT_TIMEOUT,
    ) as client:
        removed = await client.call_tool("teardown", {})
    assert len(removing.created) == 1 and removing.polls >= 1
    assert not removed.is_error, removed.content
    teardown = OperationResult.model_validate(removed.structured_content)
    assert teardown.ok and all(s.outcome == "removed" for s in teardown.sites), teardown.summary
    assert not any(namespace_dir(built, h).exists() for h in HOSTS)

    # rhel-ai answers each command seconds late: its steps are still running when the
    # other provider's first step is done, which is when the client cancels
    cancelling = TasksClient(cancel_when=first_step_done)
    built.fault("rhel-ai", "slow", "2")
    try:
        async with served(
            built.topology, "auto", extensions=[cancelling], timeout=CLIENT_TIMEOUT
        ) as c:
            with pytest.raises(TaskCancelled) as cancelled:
                await c.call_tool("setup", {})
    finally:
        built.fault("rhel-ai", "restore")
    assert cancelling.cancelled, cancelling.statuses
    assert cancelled.value.result is not None, cancelled.value
    half = OperationResult.model_validate(cancelled.value.result.structured_content)
    assert not half.ok and half.summary.startswith("setup cancelled"), half.summary
    stopped = [s for s in half.sites if s.outcome == "skipped"]
    assert stopped, half.model_dump_json(indent=1)
    for site in stopped:
        assert site.reason and site.reason.startswith("cancelled before"), site.reason
        assert "not done: " in site.reason, site.reason
    # the task's own message names what was left, site by site
    message = str(cancelled.value)
    assert "Left undone: " in message and all(s.host in message for s in stopped), message
    # a step that ran was not cut: every step the result lists ran to its end
    assert all(step.ok for s in half.sites for step in s.steps if step.name != "verify")

    finishing = TasksClient()
    async with served(built.topology, "auto", extensions=[finishing], timeout=CLIENT_TIMEOUT) as c:
        finished = await c.call_tool("setup", {})
        again = await c.call_tool("setup", {})
    assert len(finishing.created) == 2
    done = OperationResult.model_validate(finished.structured_content)
    assert done.ok and all(s.outcome == "up" for s in done.sites), done.summary
    assert all(namespace_dir(built, h).exists() for h in HOSTS)
    async with served(built.topology, "auto", timeout=CLIENT_TIMEOUT) as c:
        plain = await c.call_tool("setup", {})
    assert comparable(again) == comparable(plain)
    assert OperationResult.model_validate(plain.structured_content).summary == (
        "setup: nothing to change, every site is already set up"
    )


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_over_stdio_setup_is_a_task_only_for_a_2026_client(built: World, mode: str) -> None:
    """The server as agents start it: the same client declares the extension in both modes;
    only the 2026-07-28 one can carry it, so only it gets a task, and both the same result."""
    tasks = TasksClient()
    lines: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        lines.append((progress, total))

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "skupper_mcp", "--topology", str(built.topology)]
    )
    async with Client(
        params, mode=mode, extensions=[tasks], read_timeout_seconds=CLIENT_TIMEOUT
    ) as client:
        result = await client.call_tool("setup", {}, progress_callback=on_progress)
    assert not result.is_error, result.content
    done = OperationResult.model_validate(result.structured_content)
    assert done.ok, done.summary
    if mode == "auto":
        assert len(tasks.created) == 1 and tasks.statuses[-1] == done.summary
        assert lines == []  # a task reports its steps in its status, not as notifications
    else:
        assert tasks.created == []
        assert lines and all(total is not None and n <= total for n, total in lines), lines
