"""LocalConnector: commands on this machine with the Connector interface's behaviour."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from polling import eventually
from skupper_mcp.connectors.local import LocalConnector
from skupper_mcp.connectors.shell import script
from skupper_mcp.errors import CommandError, CommandTimeout, OutputLimitError


async def wait_gone(pid: int) -> None:
    async def gone() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False

    await eventually(gone, timeout=30, every=0.02, what=f"process {pid} to end")


async def test_output_and_exit_status_are_returned() -> None:
    result = await LocalConnector("here").run("echo out; echo err >&2; exit 3")
    assert (result.host, result.exit_status, result.stdout, result.stderr) == (
        "here",
        3,
        "out\n",
        "err\n",
    )
    assert not result.ok


async def test_check_raises_command_error_with_the_stderr_tail() -> None:
    with pytest.raises(CommandError) as raised:
        await LocalConnector("here").run("echo boom >&2; exit 7", check=True)
    error = raised.value
    assert (error.host, error.exit_status, error.stderr) == ("here", 7, "boom\n")
    assert "exit 7" in str(error) and "boom" in str(error)


async def test_a_failed_script_is_named_by_its_own_lines_not_the_prelude() -> None:
    command = script("set -e", "true", "echo broke >&2; exit 4")
    with pytest.raises(CommandError) as caught:
        await LocalConnector().run(command, check=True)
    message = str(caught.value)
    assert "(exit 4): true; echo broke >&2; exit 4: broke" in message
    assert "SKMCP_DATA" not in message and "XDG_RUNTIME_DIR" not in message
    with pytest.raises(CommandTimeout) as timed_out:
        await LocalConnector().run(script("sleep 5"), timeout=0.2)
    assert str(timed_out.value).endswith("after 0.2s: sleep 5")


async def test_stdin_is_fed_to_the_command() -> None:
    result = await LocalConnector().run("tr a-z A-Z", stdin="hello")
    assert result.stdout == "HELLO"


async def test_without_stdin_a_reading_command_does_not_hang() -> None:
    result = await LocalConnector().run("cat; echo done", timeout=5)
    assert result.stdout == "done\n"


async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    started = time.monotonic()
    with pytest.raises(CommandTimeout) as raised:
        await LocalConnector("here").run(f"sleep 30 & echo $! > {pidfile}; wait", timeout=0.5)
    # the subject: the 0.5 s timeout ends it, not the 30 s sleep (a bound clear of both)
    assert time.monotonic() - started < 15
    assert raised.value.seconds == 0.5
    await wait_gone(int(pidfile.read_text()))


async def test_cancellation_kills_the_command(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    task = asyncio.create_task(LocalConnector().run(f"echo $$ > {pidfile}; exec sleep 30"))

    async def written() -> bool:
        return pidfile.exists() and bool(pidfile.read_text().strip())

    await eventually(written, timeout=30, every=0.02, what="the command to write its pid")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await wait_gone(int(pidfile.read_text()))


async def test_a_shell_that_cannot_start_is_a_command_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(CommandError, match="cannot start sh") as caught:
        await LocalConnector("here").run("true")
    assert caught.value.host == "here" and caught.value.exit_status is None


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
async def test_a_command_that_sends_without_end_is_ended_past_the_bound(
    tmp_path: Path, stream: str
) -> None:
    pidfile = tmp_path / "pid"
    redirect = ">&2" if stream == "stderr" else ""
    started = time.monotonic()
    with pytest.raises(OutputLimitError) as raised:
        await LocalConnector("here").run(f"echo $$ > {pidfile}; exec yes {redirect}", timeout=30)
    assert raised.value.stream == stream and "the command was ended" in str(raised.value)
    # the subject: the bound ended it, not the 30 s timeout (a bound clear of both)
    assert time.monotonic() - started < 20
    await wait_gone(int(pidfile.read_text()))
