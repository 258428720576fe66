"""Per-site bookkeeping for an operation: actions planned from state, run or only listed.

An ``Action`` is a named step with the coroutine that performs it. ``SiteRun`` runs a
site's actions in order (or, for a plan, lists them), times each one, and turns the first
failure into the site's ``failed`` outcome, so one host's failure never loses the others.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from ..errors import CommandError, CommandTimeout, ConnectError, KubeError, SkupperMcpError
from ..models import Outcome, SiteResult, Step
from ..vocabulary import Progress
from .scope import SiteRef

log = logging.getLogger(__name__)

#: Errors a site's work may raise; anything else is a bug and propagates.
SITE_ERRORS: tuple[type[BaseException], ...] = (SkupperMcpError, OSError, RuntimeError)


@dataclass
class Action:
    name: str
    run: Callable[[], Awaitable[str]]
    changes: bool = True


@dataclass
class SiteRun:
    """The steps taken at one site and how it ended."""

    ref: SiteRef
    plan: bool
    progress: Progress | None = None
    steps: list[Step] = field(default_factory=list)
    changed: bool = False
    outcome: Outcome | None = None
    reason: str | None = None

    @property
    def failed(self) -> bool:
        return self.outcome in ("failed", "skipped")

    async def _say(self, line: str) -> None:
        log.info("%s", line)
        if self.progress is not None:
            await self.progress(line)

    async def note(self, name: str, detail: str, ok: bool = True, seconds: float = 0.0) -> None:
        """Record a step that ran outside an Action (a read, a check)."""
        self.steps.append(Step(name=name, ok=ok, detail=detail, seconds=round(seconds, 3)))
        mark = "ok" if ok else "FAILED"
        await self._say(f"{self.ref.host}: {name}: {mark}" + (f" ({detail})" if detail else ""))

    async def perform(self, actions: list[Action]) -> bool:
        """Run (or, in a plan, list) actions in order; stop at the first failure."""
        for action in actions:
            if self.plan:
                self.steps.append(Step(name=action.name, ok=True, detail="would run"))
                self.changed = self.changed or action.changes
                await self._say(f"{self.ref.host}: {action.name}: planned")
                continue
            started = time.monotonic()
            try:
                detail = await action.run()
            except SITE_ERRORS as exc:
                await self.note(
                    action.name, describe(exc), ok=False, seconds=time.monotonic() - started
                )
                self.fail(f"{action.name} failed: {describe(exc)}")
                return False
            self.changed = self.changed or action.changes
            await self.note(action.name, detail, seconds=time.monotonic() - started)
        return True

    def fail(self, reason: str) -> None:
        self.outcome = "failed"
        self.reason = reason

    def skip(self, reason: str) -> None:
        self.outcome = "skipped"
        self.reason = reason

    def result(self, default: Outcome) -> SiteResult:
        return SiteResult(
            host=self.ref.host,
            site=self.ref.site,
            role=self.ref.role,
            platform=self.ref.platform,
            outcome=self.outcome or default,
            changed=self.changed,
            reason=self.reason,
            steps=self.steps,
        )


def describe(exc: BaseException) -> str:
    """One line for an error, without a traceback."""
    if isinstance(exc, (ConnectError, CommandError, CommandTimeout, KubeError)):
        return str(exc)
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0] if text else type(exc).__name__
