"""One attempt at a time, shared by everyone who asks while it runs.

A host that does not answer costs a whole connect timeout. Callers that queue on a lock each
pay it again in turn (three concurrent tool calls answered at 1x, 2x and 3x the timeout);
callers that share the attempt in flight get its outcome, failure included, at 1x. Once it
has finished, the next caller starts a new one, so a host that comes back is tried again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

__all__ = ["SharedAttempt"]

T = TypeVar("T")


class SharedAttempt(Generic[T]):
    """Runs ``start()`` for the first caller; callers that come while it runs await the same
    attempt and get its result or its exception. A caller that is cancelled stops waiting
    but does not cancel the attempt the others wait for."""

    def __init__(self) -> None:
        self._task: asyncio.Future[T] | None = None

    @property
    def running(self) -> bool:
        """Whether an attempt is in flight right now."""
        return self._task is not None and not self._task.done()

    async def run(self, start: Callable[[], Awaitable[T]]) -> T:
        task = self._task
        if task is None or task.done():
            task = asyncio.ensure_future(start())
            task.add_done_callback(_consume)
            self._task = task
        return await asyncio.shield(task)

    def cancel(self) -> None:
        """Abandon the attempt in flight, if any (its waiters get ``CancelledError``)."""
        if self._task is not None:
            self._task.cancel()
            self._task = None


def _consume(task: asyncio.Future[Any]) -> None:
    """Mark the outcome seen: if every waiter was cancelled, nobody reads a failure, and
    asyncio would log it as never retrieved."""
    if not task.cancelled():
        task.exception()
