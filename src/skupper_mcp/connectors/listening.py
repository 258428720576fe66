"""A deadline on a host's answer that counts only the time this process was listening.

``asyncio.timeout(5)`` counts wall time, and so counts the time the event loop spent on
other work: a parse or an import that holds the loop 6 s (on a busy machine the kubernetes
client's first import took 5-13 s) fails every channel whose host answered at once, with
"stopped answering", and the answer sits unread in the socket meanwhile. ``within`` counts
the wait in slices of ``SLICE``: a slice the loop came back to late (it was busy elsewhere,
or the process was not scheduled) counts as ``SLICE`` only, since the answer could not be
read in the time it was late. A host that is silent while the loop is free still fails
after ``seconds``; one that answered while the loop was held does not fail for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

__all__ = ["SLICE", "within"]

T = TypeVar("T")

#: The most a single wake of the loop counts against a deadline.
SLICE = 0.25


async def within(awaitable: Awaitable[T], seconds: float) -> T:
    """``awaitable``'s result, or ``TimeoutError`` once it has had ``seconds`` of this
    loop's listening time without finishing (it is cancelled then, and awaited). A caller
    that is cancelled cancels it too."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(awaitable)
    left = seconds
    try:
        while not task.done():
            if left <= 0:
                raise TimeoutError
            step = min(left, SLICE)
            started = loop.time()
            await asyncio.wait({task}, timeout=step)
            left -= min(loop.time() - started, step)
        return task.result()
    finally:
        if not task.done():
            task.cancel()
            await asyncio.wait({task})
        if not task.cancelled():
            task.exception()  # seen: a failure after the deadline is not logged as lost
