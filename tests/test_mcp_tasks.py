"""The MCP Tasks extension (mcp_tasks) in-process and over stdio, through the SDK's client:
a client that declares the extension gets setup and diagnose as tasks and the same result
as a plain call; a client that does not (and every handshake-era one) gets the plain call,
with its progress notifications, as before. The real setup, teardown and a cancel mid-setup
run against the sandbox in tests/lifecycle/test_74_tasks.py."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncssh
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.extension import advertise

from mcp_client import CLIENT_TIMEOUT, served
from skupper_mcp.mcp_tasks import EXTENSION_ID
from skupper_mcp.results import DiagnoseResult, OperationResult
from tasks_client import (
    CancelTaskRequest,
    DetailedTask,
    GetTaskRequest,
    TaskCancelled,
    TaskParams,
    TasksClient,
)
from topology_samples import ssh_topology

pytestmark = pytest.mark.usefixtures("bounded_mcp_clients")


def without_volatile(result: Any) -> dict[str, Any]:
    """A tool result's structured content without its timings."""
    content = dict(result.structured_content or {})
    for site in content.get("sites", []):
        for step in site.get("steps", []):
            step.pop("seconds", None)
    content.pop("seconds", None)
    return content


async def test_a_declaring_client_gets_setup_as_a_task_with_the_plain_result(
    refusing_topology: Path,
) -> None:
    tasks = TasksClient()
    async with served(refusing_topology, "auto", extensions=[tasks]) as client:
        assert EXTENSION_ID in (client.server_capabilities.extensions or {})
        as_task = await client.call_tool("setup", {})
    async with served(refusing_topology, "auto") as client:
        plain = await client.call_tool("setup", {})
    assert [c.status for c in tasks.created] == ["working"]
    assert tasks.created[0].ttl_ms and tasks.created[0].poll_interval_ms
    assert not as_task.is_error and not plain.is_error
    stopped = OperationResult.model_validate(as_task.structured_content)
    assert stopped.summary.startswith("setup stopped: the precheck failed on alpha")
    assert without_volatile(as_task) == without_volatile(plain)
    # the last poll's message is the result's own summary
    assert tasks.statuses[-1] == stopped.summary


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_client_without_the_extension_gets_the_plain_call_and_its_progress(
    refusing_topology: Path, mode: str
) -> None:
    lines: list[tuple[float, float | None, str]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        lines.append((progress, total, message or ""))

    # a legacy client declares the extension too: the handshake era cannot carry it per
    # request, so the SDK does not send it and the server makes no task
    tasks = TasksClient()
    extensions = [tasks] if mode == "legacy" else []
    async with served(refusing_topology, mode, extensions=extensions) as client:
        result = await client.call_tool("setup", {}, progress_callback=on_progress)
    assert tasks.created == []
    assert not result.is_error
    assert OperationResult.model_validate(result.structured_content).summary.startswith(
        "setup stopped"
    )
    assert lines and all(total is not None and done <= total for done, total, _ in lines)
    assert any(line.startswith("alpha:") for _, _, line in lines)


async def test_diagnose_runs_as_a_task_and_a_quick_read_does_not(refusing_topology: Path) -> None:
    tasks = TasksClient()
    async with served(refusing_topology, "auto", extensions=[tasks]) as client:
        diagnosed = await client.call_tool("diagnose", {})
        status = await client.call_tool("status", {})  # not a long tool: never a task
        resolved = await client.call_tool("resolve_profile", {"name": "nowhere"})
    assert len(tasks.created) == 1
    assert not diagnosed.is_error and not status.is_error
    DiagnoseResult.model_validate(diagnosed.structured_content)
    assert resolved.is_error


async def test_a_call_answered_before_its_long_work_is_no_task(write_topology) -> None:
    """A topology that cannot be read: setup says what to fix at once, as a plain result."""
    tasks = TasksClient()
    path = write_topology("RHEL_AI_SSH_HOST=h\nRHEL_AI_MODEL_PORT=99999\n")
    async with served(path, "auto", extensions=[tasks]) as client:
        result = await client.call_tool("setup", {})
    assert tasks.created == []
    assert result.is_error and "Fix topology.env" in result.content[0].text  # type: ignore[union-attr]


async def test_tasks_methods_refuse_an_unknown_task_and_a_client_that_did_not_declare(
    refusing_topology: Path,
) -> None:
    async with served(refusing_topology, "auto", extensions=[TasksClient()]) as client:
        with pytest.raises(MCPError) as unknown:
            await client.session.send_request(
                GetTaskRequest(params=TaskParams(task_id="task-nope")),
                DetailedTask,
            )
    assert unknown.value.error.code == -32602
    async with served(
        refusing_topology, "auto", extensions=[advertise("example.com/other")]
    ) as client:
        with pytest.raises(MCPError) as undeclared:
            await client.session.send_request(
                CancelTaskRequest(params=TaskParams(task_id="task-nope")),
                DetailedTask,
            )
    assert undeclared.value.error.code == -32021
    async with served(refusing_topology, "legacy") as client:
        with pytest.raises(MCPError) as legacy:
            await client.session.send_request(
                GetTaskRequest(params=TaskParams(task_id="task-nope")),
                DetailedTask,
            )
    assert legacy.value.error.code == -32601  # not defined on the handshake era's wire


@pytest.mark.spawns
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_over_stdio_setup_is_a_task_only_where_declared(
    refusing_topology: Path, mode: str
) -> None:
    tasks = TasksClient()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "skupper_mcp", "--topology", str(refusing_topology)],
        env={"PATH": "/nonexistent"},
    )
    async with Client(
        params, mode=mode, extensions=[tasks], read_timeout_seconds=CLIENT_TIMEOUT
    ) as client:
        result = await client.call_tool("setup", {})
    assert len(tasks.created) == (1 if mode == "auto" else 0)
    assert not result.is_error
    assert OperationResult.model_validate(result.structured_content).summary.startswith(
        "setup stopped"
    )


@contextlib.asynccontextmanager
async def silent_host_topology(
    write_topology: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Path]:
    """A topology whose provider accepts TCP and never says a word of SSH: a read of it
    waits out the minute of its connect timeout. Its server and connections closed after."""
    held: list[asyncio.StreamWriter] = []

    async def hold(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    silent = await asyncio.start_server(hold, "127.0.0.1", 0)
    try:
        port = silent.sockets[0].getsockname()[1]
        monkeypatch.setenv("PATH", "/nonexistent")
        key = tmp_path / "id_ed25519"  # a key that exists: the read goes as far as the host
        asyncssh.generate_private_key("ssh-ed25519").write_private_key(str(key))
        key.chmod(0o600)
        yield write_topology(
            ssh_topology(
                [("alpha", "127.0.0.1", port)],
                identities=[str(key)],
                known_hosts=str(tmp_path / "known_hosts"),
                connect_timeout=60,
            )
        )
    finally:
        for writer in held:
            writer.close()
        silent.close()
        await silent.wait_closed()


@pytest.mark.parametrize("tool", ["up", "down"])
async def test_a_write_cancelled_while_it_still_reads_stops_at_once_having_done_nothing(
    write_topology: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str
) -> None:
    """A write's cancel waits for the step in flight; before its first step there is none,
    only the read of the sites, which would wait out its host's minute: the cancel cuts it
    at once, and the task says nothing was changed (no half result)."""
    tasks = TasksClient(cancel_when=lambda _message: True)
    loop = asyncio.get_running_loop()
    started = loop.time()
    silent = silent_host_topology(write_topology, tmp_path, monkeypatch)
    async with silent as path, served(path, "auto", extensions=[tasks]) as client:
        with pytest.raises(TaskCancelled) as cancelled:
            await client.call_tool(tool, {"target": "alpha"})
    # the subject: cut at once, far from the minute the host's connect timeout would take
    assert loop.time() - started < 30
    assert tasks.cancelled and len(tasks.created) == 1
    assert cancelled.value.task.status == "cancelled" and cancelled.value.result is None
    assert str(cancelled.value) == (
        f"{tool} cancelled: it was still reading the sites, before its first step: "
        "nothing was changed"
    )


async def test_a_cancelled_diagnose_stops_at_once(
    write_topology, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """diagnose only reads: its cancel stops it at once (a write stops at a step's end). Its
    provider accepts TCP and never says a word of SSH, so the read would wait out the
    minute of its connect timeout, and the task would end completed, had the cancel not
    stopped it."""
    tasks = TasksClient(cancel_when=lambda _message: True)
    silent = silent_host_topology(write_topology, tmp_path, monkeypatch)
    async with silent as path, served(path, "auto", extensions=[tasks]) as client:
        with pytest.raises(TaskCancelled) as cancelled:
            await client.call_tool("diagnose", {})
    assert tasks.cancelled and len(tasks.created) == 1
    assert cancelled.value.task.status == "cancelled" and cancelled.value.result is None
    assert str(cancelled.value) == "diagnose cancelled: it only reads, nothing was changed"
