"""``connectors.listening.within``: a deadline that counts the time the loop listened."""

from __future__ import annotations

import asyncio
import time

import pytest

from skupper_mcp.connectors.listening import SLICE, within


def hold_the_loop(seconds: float) -> None:
    """Hold the event loop as a long parse or import on it does (the time is the point)."""
    time.sleep(seconds)


async def test_an_answer_in_time_is_returned() -> None:
    async def answer() -> str:
        await asyncio.sleep(0)
        return "answered"

    assert await within(answer(), 1.0) == "answered"


async def test_silence_while_the_loop_is_free_times_out_and_ends_the_wait() -> None:
    ended = asyncio.Event()

    async def silent() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            ended.set()

    with pytest.raises(TimeoutError):
        await within(silent(), 2 * SLICE)
    assert ended.is_set(), "the timed-out wait was left running"


async def test_an_answer_that_came_while_the_loop_was_held_is_not_a_timeout() -> None:
    """The loop held three times the deadline by other work, the answer there meanwhile
    (as bytes wait in a socket): the held time counts one slice, and the answer is read
    once the loop is back. A wall-clock deadline (``asyncio.timeout``) fails this."""
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[str] = loop.create_future()
    waiting = asyncio.create_task(within(answer, 2 * SLICE))
    await asyncio.sleep(0)  # within waits for the answer
    loop.call_soon(answer.set_result, "answered")  # the answer is there, the loop is not
    hold_the_loop(6 * SLICE)
    assert await waiting == "answered"


async def test_a_failure_is_raised_as_it_is() -> None:
    async def failing() -> None:
        await asyncio.sleep(0)
        raise ConnectionResetError("gone")

    with pytest.raises(ConnectionResetError, match="gone"):
        await within(failing(), 1.0)


async def test_a_cancelled_caller_cancels_the_wait() -> None:
    started, ended = asyncio.Event(), asyncio.Event()

    async def silent() -> None:
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            ended.set()

    waiting = asyncio.create_task(within(silent(), 60.0))
    await started.wait()
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert ended.is_set(), "the cancelled caller's wait was left running"
