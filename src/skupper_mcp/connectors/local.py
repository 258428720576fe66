"""Running commands on this machine, through ``sh -c``, behind the Connector interface."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time

from skupper_mcp.connectors import shell
from skupper_mcp.connectors.base import DEFAULT_COMMAND_TIMEOUT, CommandResult, read_output
from skupper_mcp.errors import CommandError, CommandTimeout
from skupper_mcp.vocabulary import LOCAL_HOST

__all__ = ["LocalConnector"]

log = logging.getLogger(__name__)


class LocalConnector:
    """Runs commands as local subprocesses. Each command gets its own process group so a
    timeout or a cancellation kills everything it started, not only the shell."""

    def __init__(self, name: str = LOCAL_HOST) -> None:
        self._name = name

    @property
    def host(self) -> str:
        """The host name used in results and errors."""
        return self._name

    async def connect(self) -> None:
        """Nothing to open; present for the Connector interface."""

    async def run(
        self,
        command: str,
        *,
        timeout: float = DEFAULT_COMMAND_TIMEOUT,
        check: bool = False,
        stdin: str | None = None,
    ) -> CommandResult:
        """Run ``command`` with ``sh -c``; see ``Connector.run``."""
        started = time.monotonic()
        try:
            proc = await asyncio.create_subprocess_exec(
                "sh",
                "-c",
                command,
                stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:  # no sh, no more processes or file descriptors
            raise CommandError(
                self._name,
                command,
                None,
                f"cannot start sh: {exc.strerror or exc}",
                summary=shell.summary(command),
            ) from exc
        data = stdin.encode() if stdin is not None else None
        try:
            async with asyncio.timeout(timeout):
                out, err = await _talk(proc, data, self._name, command)
        except TimeoutError as exc:
            await _kill_group(proc)
            raise CommandTimeout(
                self._name, command, timeout, summary=shell.summary(command)
            ) from exc
        except BaseException:
            await _kill_group(proc)
            raise
        assert proc.returncode is not None
        result = CommandResult(
            host=self._name,
            command=command,
            exit_status=proc.returncode,
            stdout=out.decode(errors="replace"),
            stderr=err.decode(errors="replace"),
            seconds=time.monotonic() - started,
        )
        if check:
            result.raise_for_status()
        return result

    async def close(self) -> None:
        """Nothing to release; present for the Connector interface."""


async def _talk(
    proc: asyncio.subprocess.Process, data: bytes | None, host: str, command: str
) -> tuple[bytes, bytes]:
    """Feed ``data`` to the command and read its output within the bounds until it ends."""

    async def feed() -> None:
        if proc.stdin is None:
            return
        # a command that exits without reading its input: its status is the answer
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            if data:
                proc.stdin.write(data)
                await proc.stdin.drain()
            proc.stdin.close()

    assert proc.stdout is not None and proc.stderr is not None
    out, err = await read_output(
        proc.stdout.read, proc.stderr.read, b"", host, command, alongside=feed()
    )
    await proc.wait()
    return out, err


async def _reaped(proc: asyncio.subprocess.Process) -> None:
    """Wait for a killed command. asyncio's ``wait`` also waits for its pipes to close, and
    a pipe whose reader stopped at a full buffer (a command past its output bound) is
    paused and never sees its end: what is left is read and dropped."""

    async def drain(stream: asyncio.StreamReader | None) -> None:
        while stream is not None and await stream.read(1 << 16):
            pass

    await asyncio.gather(drain(proc.stdout), drain(proc.stderr))
    await proc.wait()


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the command's whole process group and reap the shell."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    # Shielded so a cancelled caller still leaves no zombie behind.
    with contextlib.suppress(asyncio.CancelledError, ProcessLookupError):
        await asyncio.shield(_reaped(proc))
    log.debug("killed process group %s", proc.pid)
