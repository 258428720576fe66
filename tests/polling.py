"""The tests' one way to wait for something: poll with a deadline, never a bare sleep.

``wait_for`` (a plain function) and ``eventually`` (a coroutine function) call ``check``
every ``every`` seconds until it returns something truthy and return that; after ``timeout``
seconds they fail the test, naming ``what`` and the last answer. Exceptions of the types in
``ignoring`` count as "not yet" (a port that refuses while a server starts).

The deadline is a bound on failure, never a bet on speed: a poll ends as soon as its check
holds, so the default (30 s) and the floor ``tests/test_suite_rules.py`` holds literal
deadlines to (``MIN_DEADLINE``, 10 s) cost nothing on a quiet machine and leave room for a
busy one, where a second is ten.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

T = TypeVar("T")


def _give_up(what: str, timeout: float, last: Any) -> None:
    pytest.fail(f"{what}: not within {timeout:g}s (last: {last!r})", pytrace=False)


def wait_for(
    check: Callable[[], T | None],
    *,
    timeout: float = 30.0,
    every: float = 0.05,
    what: str = "the condition",
    ignoring: tuple[type[BaseException], ...] = (),
) -> T:
    """Poll ``check`` until it answers something truthy; return that answer."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            last: Any = check()
        except ignoring as exc:
            last = exc
        else:
            if last:
                return last
        if time.monotonic() >= deadline:
            _give_up(what, timeout, last)
        time.sleep(every)


async def eventually(
    check: Callable[[], Awaitable[T | None]],
    *,
    timeout: float = 30.0,
    every: float = 0.05,
    what: str = "the condition",
    ignoring: tuple[type[BaseException], ...] = (),
) -> T:
    """``wait_for`` for a coroutine function: awaits ``check`` until it answers truthy."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            last: Any = await check()
        except ignoring as exc:
            last = exc
        else:
            if last:
                return last
        if time.monotonic() >= deadline:
            _give_up(what, timeout, last)
        await asyncio.sleep(every)
