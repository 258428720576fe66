"""Per-site bookkeeping for an operation: actions planned from state, run or only listed.

An ``Action`` is a named step with what it will run as data (``does``: scripts for a podman
host, API calls for the cluster, built by the site layer) and the coroutine that runs it
through the site's connector. ``SiteRun`` runs a site's actions in order (or, for a plan,
lists them with what would run), times each one, and turns the first failure into the
site's ``failed`` outcome, so one host's failure never loses the others.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from ..errors import (
    CommandError,
    CommandTimeout,
    ConnectError,
    Kind,
    KubeError,
    SkupperMcpError,
    kind_of,
)
from ..results import ModelAction, Operation, OperationResult, Outcome, SiteResult, Step
from ..sites.kube import ClusterSite
from ..sites.podman import PodmanSite
from ..sites.work import ApiCall, Script, Work, summary
from ..vocabulary import CountedProgress, Progress, plural
from .scope import SiteRef
from .stopping import left_undone, stop_requested, stopped, writing_begins

log = logging.getLogger(__name__)

#: Errors a site's work may raise: the product's own, into which connectors translate
#: everything foreign; and, as a backstop, a parse of the host's text that failed outside
#: its parser's bounds (a ``RecursionError`` of nesting, a JSON error): that host's failure,
#: never the whole network's. Anything else is a bug and propagates as one.
SITE_ERRORS: tuple[type[BaseException], ...] = (
    SkupperMcpError,
    RecursionError,
    json.JSONDecodeError,
)


@dataclass
class Action:
    name: str
    does: tuple[Work, ...]
    run: Callable[[], Awaitable[str]]
    changes: bool = True

    @property
    def plan_detail(self) -> str:
        """What a plan says for this step: ``would run: <commands>``, never stdin."""
        return f"would run: {summary(self.does)}" if self.does else "would run"


def on_host(name: str, site: PodmanSite, script: Script, changes: bool = True) -> Action:
    """A step that runs one script on a podman host."""
    return Action(name, (script,), lambda: site.execute(script), changes)


def on_cluster(name: str, site: ClusterSite, calls: tuple[ApiCall, ...]) -> Action:
    """A step that makes API calls of one verb on the cluster."""
    return Action(name, calls, lambda: site.execute(calls))


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

    async def say(self, line: str) -> None:
        """A progress line of a step that runs for long (a pull), as it happens."""
        await self._say(line)

    async def _say(self, line: str) -> None:
        log.info("%s", line)
        if self.progress is not None:
            await self.progress(line)

    def _expect(self, steps: int) -> None:
        """Tell a counting progress how many steps this site has planned."""
        if isinstance(self.progress, CountedProgress):
            self.progress.expect(steps)

    async def note(
        self,
        name: str,
        detail: str,
        ok: bool = True,
        seconds: float = 0.0,
        *,
        planned: bool = False,
        changes: bool = False,
    ) -> None:
        """Record a step: one that ran outside an Action (a read, a check) unless ``planned``
        (an Action of ``perform``, counted when it was planned)."""
        if not planned:
            self._expect(1)
        step = Step(name=name, ok=ok, detail=detail, seconds=round(seconds, 3), changes=changes)
        self.steps.append(step)
        mark = "ok" if ok else "FAILED"
        await self._say(f"{self.ref.host}: {name}: {mark}" + (f" ({detail})" if detail else ""))

    async def perform(self, actions: list[Action]) -> bool:
        """Run (or, in a plan, list) actions in order; stop at the first failure."""
        self._expect(len(actions))
        for index, action in enumerate(actions):
            if not self.plan and stop_requested():
                await self.stop_short([a.name for a in actions[index:]])
                return False
            if self.plan:
                step = Step(
                    name=action.name, ok=True, detail=action.plan_detail, changes=action.changes
                )
                self.steps.append(step)
                self.changed = self.changed or action.changes
                await self._say(f"{self.ref.host}: {action.name}: planned")
                continue
            started = time.monotonic()
            writing_begins()  # before the await: no cancel can fall between check and step
            try:
                detail = await action.run()
            except SITE_ERRORS as exc:
                logged(exc, self.ref.host)
                await self.note(
                    action.name,
                    describe(exc),
                    ok=False,
                    seconds=time.monotonic() - started,
                    planned=True,
                    changes=action.changes,
                )
                self.fail(f"{action.name} failed: {describe(exc)}")
                return False
            self.changed = self.changed or action.changes
            seconds = time.monotonic() - started
            await self.note(
                action.name, detail, seconds=seconds, planned=True, changes=action.changes
            )
        return True

    def fail(self, reason: str) -> None:
        self.outcome = "failed"
        self.reason = reason

    async def stop_short(self, not_done: list[str]) -> None:
        """The call was asked to stop (``stopping``): these steps are not started. The site
        is skipped with what ran and what did not, so the next run knows where it stands."""
        done = [s.name for s in self.steps if s.ok and s.changes]
        ran = f"done: {', '.join(done)}" if done else "nothing was changed there"
        line = f"cancelled before {not_done[0]}; {ran}; not done: {', '.join(not_done)}"
        self.skip(line)
        left_undone(f"{self.ref.host}: {line}")
        await self._say(f"{self.ref.host}: cancelled: not done: {', '.join(not_done)}")

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


def operation_result(
    operation: Operation,
    target: str,
    results: list[SiteResult],
    model_actions: list[ModelAction],
    plan: bool,
) -> OperationResult:
    cancelled = stopped()  # asked to stop and left something undone: not what was asked
    return OperationResult(
        operation=operation,
        target=target,
        ok=not cancelled and not any(r.outcome == "failed" for r in results),
        sites=results,
        model_actions=model_actions,
        summary=summarize(operation, results, plan, cancelled=cancelled),
        plan=plan,
    )


#: The outcome each operation brings its sites to: its summary names those sites first,
#: without repeating the word ("down: rhel-ai; up: local", not "down: down: rhel-ai; ...").
AIMED: dict[str, Outcome] = {"setup": "up", "up": "up", "down": "down", "teardown": "removed"}


def summarize(
    operation: str, results: list[SiteResult], plan: bool, *, cancelled: bool = False
) -> str:
    groups: dict[str, list[str]] = {}
    aimed = AIMED.get(operation)
    for r in sorted(results, key=lambda r: r.outcome != aimed):  # stable: the aimed first
        groups.setdefault(r.outcome, []).append(r.host)
    parts = [
        ", ".join(hosts) if outcome == aimed else f"{outcome}: {', '.join(hosts)}"
        for outcome, hosts in groups.items()
    ]
    changed = sum(r.changed for r in results)
    verb = "would change" if plan else "changed"
    head = f"{operation} (plan)" if plan else operation
    if cancelled:
        head = f"{operation} cancelled (run it again to finish)"
    return f"{head}: " + "; ".join(parts) + f" ({verb} {changed} of {plural(len(results), 'site')})"


def logged(exc: BaseException, host: str) -> None:
    """Log, with its traceback, a site's failure that is not one of the product's own errors
    (a parse past its bounds that no parser caught): the site fails as any other, and the
    log keeps where it came from, in case it was ours."""
    if not isinstance(exc, SkupperMcpError):
        log.warning("%s: %s outside the product's errors", host, type(exc).__name__, exc_info=exc)


def describe(exc: BaseException) -> str:
    """One line for an error, without a traceback."""
    if isinstance(exc, (ConnectError, CommandError, CommandTimeout, KubeError)):
        return str(exc)
    if isinstance(exc, RecursionError):
        return "its answer nests too deep to be read"
    if not str(exc):  # an HTTP client's transport error often has no text of its own
        name = type(exc).__name__
        match kind_of(exc):
            case Kind.CONNECT:
                return f"no answer: the connection was reset or closed ({name})"
            case Kind.TIMEOUT:
                return f"no answer in time ({name})"
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0] if text else type(exc).__name__
