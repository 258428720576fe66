"""One connect attempt shared by concurrent callers (``connectors.shared.SharedAttempt``),
the mechanism the SSH connector opens its connection through: three tool calls at once to a
silent host wait one connect timeout, not three. The same through a real SSH port is in
tests/test_connectors_ssh.py."""

from __future__ import annotations

import asyncio

import pytest

from skupper_mcp.connectors.shared import SharedAttempt
from skupper_mcp.errors import ConnectError


class SlowConnect:
    """A host whose connect takes a while and then fails, as a silent host's does."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.unreachable: str | None = "timed out after 5s connecting to 127.0.0.2:22"
        self.connects = 0
        self.started = asyncio.Event()

    async def connect(self) -> str:
        self.connects += 1
        self.started.set()
        await asyncio.sleep(self.seconds)
        if self.unreachable is not None:
            raise ConnectError("rhel-ai", self.unreachable)
        return "connection"


async def test_concurrent_callers_share_one_attempt_and_its_failure() -> None:
    """The callers that came while the attempt ran get its error; a later one tries again."""
    silent = SlowConnect(0.3)
    shared: SharedAttempt[str] = SharedAttempt()
    outcomes = await asyncio.gather(
        *(shared.run(silent.connect) for _ in range(5)), return_exceptions=True
    )
    assert silent.connects == 1
    assert all(isinstance(o, ConnectError) for o in outcomes), outcomes
    assert len({str(o) for o in outcomes}) == 1 and "timed out" in str(outcomes[0])
    silent.unreachable, silent.seconds = None, 0
    assert await shared.run(silent.connect) == "connection"  # after it finished: a new one
    assert silent.connects == 2


async def test_a_cancelled_caller_does_not_cancel_the_attempt_others_wait_for() -> None:
    silent = SlowConnect(0.2)
    shared: SharedAttempt[str] = SharedAttempt()
    first = asyncio.ensure_future(shared.run(silent.connect))
    second = asyncio.ensure_future(shared.run(silent.connect))
    await silent.started.wait()
    first.cancel()
    with pytest.raises(ConnectError, match="timed out"):
        await second
    assert first.cancelled() and silent.connects == 1


async def test_cancel_abandons_the_attempt_in_flight() -> None:
    """What a connector's close does: a connect still running must not finish after it."""
    silent = SlowConnect(0.2)
    shared: SharedAttempt[str] = SharedAttempt()
    waiting = asyncio.ensure_future(shared.run(silent.connect))
    await silent.started.wait()
    shared.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert not shared.running
