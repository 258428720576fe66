"""A scripted connector for tests, in the spirit of httpx's ``MockTransport``.

``FakeConnector`` answers each command from a handler function or from rules added with
``on(pattern, ...)`` (the first rule whose regular expression is found in the command wins),
and records every command it ran with its timeout, stdin and ``check``. A command nothing
answers raises ``Unscripted``: an ``AssertionError``, which no site error handler catches, so
a test never passes on a command it did not expect. ``unreachable`` makes ``connect`` (and
every ``run``) fail as a host that cannot be reached does.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from skupper_mcp.connectors.base import (
    DEFAULT_COMMAND_TIMEOUT,
    CommandResult,
    SSHOptions,
    SSHTarget,
)
from skupper_mcp.errors import ConnectError


@dataclass(frozen=True)
class Call:
    """One command the fake ran."""

    command: str
    timeout: float
    stdin: str | None
    check: bool


@dataclass(frozen=True)
class Reply:
    """What a scripted command prints and how it exits."""

    stdout: str = ""
    exit_status: int = 0
    stderr: str = ""


Handler = Callable[[Call], Reply | None]


class Unscripted(AssertionError):
    """The fake was asked to run a command no rule or handler answers."""


class FakeConnector:
    """A Connector whose answers are scripted and whose commands are recorded."""

    def __init__(
        self, host: str, handler: Handler | None = None, *, unreachable: str | None = None
    ) -> None:
        self._host = host
        self._handler = handler
        self._rules: list[tuple[re.Pattern[str], Reply]] = []
        self.unreachable = unreachable
        self.calls: list[Call] = []
        self.connects = 0
        self.closed = False

    @property
    def host(self) -> str:
        return self._host

    def on(self, pattern: str, stdout: str = "", exit_status: int = 0, stderr: str = "") -> None:
        """Answer commands matching ``pattern`` (``re.search``) with this output."""
        self._rules.append((re.compile(pattern), Reply(stdout, exit_status, stderr)))

    @property
    def commands(self) -> list[str]:
        return [c.command for c in self.calls]

    async def connect(self) -> None:
        self.connects += 1
        if self.unreachable is not None:
            raise ConnectError(self._host, self.unreachable)

    async def run(
        self,
        command: str,
        *,
        timeout: float = DEFAULT_COMMAND_TIMEOUT,
        check: bool = False,
        stdin: str | None = None,
    ) -> CommandResult:
        if self.unreachable is not None:
            raise ConnectError(self._host, self.unreachable)
        call = Call(command, timeout, stdin, check)
        self.calls.append(call)
        started = time.monotonic()
        reply = self._answer(call)
        result = CommandResult(
            host=self._host,
            command=command,
            exit_status=reply.exit_status,
            stdout=reply.stdout,
            stderr=reply.stderr,
            seconds=time.monotonic() - started,
        )
        if check:
            result.raise_for_status()
        return result

    def _answer(self, call: Call) -> Reply:
        if self._handler is not None:
            reply = self._handler(call)
            if reply is not None:
                return reply
        for pattern, reply in self._rules:
            if pattern.search(call.command):
                return reply
        first = next((line for line in call.command.splitlines() if line.strip()), "")
        raise Unscripted(f"{self._host}: nothing answers {first[:120]!r}")

    async def close(self) -> None:
        self.closed = True


class FakeHosts:
    """A ``ConnectorPool`` factory that hands out one ``FakeConnector`` per host name."""

    def __init__(self, connectors: dict[str, FakeConnector]) -> None:
        self.connectors = connectors

    def __call__(self, name: str, target: SSHTarget | None, options: SSHOptions) -> FakeConnector:
        try:
            return self.connectors[name]
        except KeyError:
            raise Unscripted(f"no fake connector for host {name!r}") from None


def framed(text: str) -> str:
    """``text`` as a framed script prints it (``skupper_mcp.facts.framing``): its ``@@``
    lines are the script's markers and every other line is the host's, stuffed with ``|``.
    For readable fixtures; a test of what a host's text cannot do builds its lines itself."""
    return "\n".join(line if line.startswith("@@") else f"|{line}" for line in text.split("\n"))
