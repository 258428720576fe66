"""A write asked to stop: the cooperative cancel of an operation that runs as an MCP task.

A task's cancel (``tasks/cancel``) does not cut a step in flight: a script killed halfway on
a host leaves what nobody can name (a half-written unit, a controller half installed). It
asks the operation to stop at the next step: the step that runs finishes (within its own
command deadline), no further step starts, and every site says what ran and what did not.
The front that runs the call as a task sets ``STOP`` for it; the operations read it through
``stop_requested``, and ``Stop.left`` is what they left undone (empty: nothing was left, the
operation ended before the cancel could stop it).

Before its first step a write has only read (the sites' state, a precheck): nothing is
half done, so a cancel then may cut it at once, as a read's is (``Stop.writing`` says
whether a step has begun; ``SiteRun.perform`` sets it, ``writing_begins``, before it runs
one).
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field


@dataclass
class Stop:
    """One call's stop: whether it was asked for, and what each site left undone."""

    requested: bool = False
    #: one line per site the stop left short: ``host: what ran; what did not``
    left: list[str] = field(default_factory=list)
    #: a step of the write has begun: from then on a cancel waits for the step in flight
    writing: bool = False

    @property
    def honoured(self) -> bool:
        """The stop left something undone (else the call ended before it could act)."""
        return bool(self.left)


#: The stop of the call running in this context (none: a call that cannot be cancelled so,
#: the CLI's and a plain MCP call's).
STOP: ContextVar[Stop | None] = ContextVar("skupper_mcp_stop", default=None)


def stop_requested() -> bool:
    """Whether the call running here was asked to stop."""
    stop = STOP.get()
    return stop is not None and stop.requested


def writing_begins() -> None:
    """A step of the write running here begins (a cancel no longer cuts the call)."""
    stop = STOP.get()
    if stop is not None:
        stop.writing = True


def left_undone(line: str) -> None:
    """Record what a site left undone because the call was asked to stop."""
    stop = STOP.get()
    if stop is not None:
        stop.left.append(line)


def stopped() -> bool:
    """Whether the call running here stopped short because it was asked to."""
    stop = STOP.get()
    return stop is not None and stop.honoured
