"""The MCP Tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663, schema 2026-07-28)
for the calls that can take minutes: ``setup``, ``up``, ``down``, ``teardown`` and
``diagnose``.

The SDK (``mcp`` 2.3.0) has the extension machinery (``Extension``: new methods and a
``tools/call`` interceptor) but no Tasks extension, so it is built here on that machinery.
What the spec (modelcontextprotocol/ext-tasks, ``specification/draft/tasks.md``) asks and
how this server does it:

- Only a client that declares the extension on the request gets a task (the server
  decides, per request). The capability travels in each request's ``_meta``, which only the
  2026-07-28 protocol has: a handshake-era (initialize) session, or a 2026-07-28 request
  without the extension, gets the plain ``CallToolResult``, with progress notifications,
  exactly as before (nothing of this module runs for it).
- A call becomes a task when its long work starts (``TaskRecord.begin``, from the tool's
  function, after the arguments are checked and the user's consent is in): a call answered
  before that (a bad topology, a refused consent, the MRTR question for teardown's consent)
  is answered as it is, and no task is made for it.
- ``tools/call`` then answers at once with a ``CreateTaskResult`` (``resultType: "task"``,
  ``status: "working"``); ``tasks/get`` gives the task, its ``statusMessage`` the last step
  with its count (``5/12 gpu1: apply resources: ok``), and at the end the tool's own
  ``CallToolResult`` inlined (``completed``; a tool error is ``completed`` with
  ``isError``), or the JSON-RPC error (``failed``).
- ``tasks/cancel`` is cooperative, as the spec allows: a write still reading the sites
  before its first step is cut at once (nothing is changed yet: ``Stop.writing``); after it,
  a write is asked to stop
  (``engine.stopping``), the step in flight finishes, no further step starts, and the task
  ends ``cancelled`` with a ``statusMessage`` naming what each site did and did not do;
  ``result`` also carries the tool's typed result of what was done (a member the spec does
  not define for ``cancelled``: a client that does not know it ignores it). A cancel that
  comes after the last step leaves the task ``completed``. A read (``diagnose``) changes
  nothing, so its cancel stops it at once.
- Task ids are 128 random bits (the spec: unguessable); a task is kept an hour after it
  ends. Progress notifications are not sent for a task (the spec: not supported on tasks).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver.server import require_client_extension
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, INVALID_PARAMS, CallToolRequestParams, RequestParams
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field

from skupper_mcp.engine.stopping import STOP, Stop
from skupper_mcp.vocabulary import CountedProgress

log = logging.getLogger(__name__)

__all__ = ["EXTENSION_ID", "LONG_TOOLS", "TaskRecord", "Tasks", "current_task"]

EXTENSION_ID = "io.modelcontextprotocol/tasks"

#: The tools that can take minutes (pulls, reboots, re-bootstraps, every site read over SSH):
#: each call of one of them runs as a task for a client that declared the extension.
LONG_TOOLS = frozenset({"setup", "up", "down", "teardown", "diagnose"})

#: Of those, the ones that only read: a cancel stops them at once, nothing is left half done.
READS = frozenset({"diagnose"})

#: How often a client should poll (the spec's ``pollIntervalMs``).
POLL_INTERVAL_MS = 1000

#: How long a task is kept from its creation (``ttlMs``), at least an hour after it ends.
TTL_MS = 6 * 3600 * 1000
KEPT_AFTER_END = 3600.0

Status = Literal["working", "completed", "failed", "cancelled"]
TERMINAL = frozenset({"completed", "failed", "cancelled"})


def _stamp() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass
class TaskRecord:
    """One task: its wire state, the stop its call reads, and its outcome when it ends."""

    tool: str
    task_id: str = field(default_factory=lambda: f"task-{secrets.token_urlsafe(16)}")
    status: Status = "working"
    message: str = "started"
    created_at: str = field(default_factory=_stamp)
    updated_at: str = field(default_factory=_stamp)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    stop: Stop = field(default_factory=Stop)
    ended: float | None = None  # monotonic time of the end
    began: asyncio.Event = field(default_factory=asyncio.Event)
    runner: asyncio.Task[HandlerResult] | None = None

    def begin(self) -> CountedProgress:
        """The call's long work starts: the client gets the task now. The progress the call
        reports goes to the task's ``statusMessage`` (a task gets no progress notification)."""
        self.began.set()
        return CountedProgress(self._report)

    async def _report(self, done: int, total: int, line: str) -> None:
        if self.status == "working":
            self._set(self.message if self.stop.requested else f"{done}/{total} {line}")

    def _set(self, message: str, status: Status | None = None) -> None:
        self.message = message
        if status is not None:
            self.status = status
        self.updated_at = _stamp()

    def wire(self) -> dict[str, Any]:
        """The task as the spec's ``Task`` (camelCase)."""
        return {
            "taskId": self.task_id,
            "status": self.status,
            "statusMessage": self.message,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.updated_at,
            "ttlMs": TTL_MS,
            "pollIntervalMs": POLL_INTERVAL_MS,
        }

    def detailed(self) -> dict[str, Any]:
        """``tasks/get``'s answer: the task with its result or error inlined."""
        answer = {"resultType": "complete", **self.wire()}
        if self.result is not None and self.status in ("completed", "cancelled"):
            answer["result"] = self.result
        if self.error is not None and self.status == "failed":
            answer["error"] = self.error
        return answer

    def cancel(self) -> None:
        """Ask the call to stop (``tasks/cancel``): a read stops at once, and so does a write
        still reading before its first step (``Stop.writing``); a write after the step in
        flight."""
        if self.status != "working" or self.stop.requested:
            return
        self.stop.requested = True
        if (self.tool in READS or not self.stop.writing) and self.runner is not None:
            self.runner.cancel()
            return
        self._set("cancel asked: stopping once the step in flight ends, no further step starts")

    def end(self, runner: asyncio.Task[HandlerResult]) -> None:
        """Record how the call ended (the runner's done callback)."""
        self.ended = time.monotonic()
        if runner.cancelled():  # a read's cancel, or the server stopping under the call
            if self.tool in READS:
                why = "it only reads, nothing was changed"
            elif not self.stop.writing:
                why = "it was still reading the sites, before its first step: nothing was changed"
            else:
                why = "the server stopped while it ran; status says where each site stands"
            self._set(f"{self.tool} cancelled: {why}", "cancelled")
            return
        error = runner.exception()
        if error is not None:
            self._failed(error)
            return
        self.result = _wire_payload(runner.result())
        structured = self.result.get("structuredContent")
        summary = structured.get("summary") if isinstance(structured, dict) else None
        if self.stop.honoured:
            left = "; ".join(self.stop.left)
            self._set(f"{summary or self.tool + ' cancelled'}. Left undone: {left}", "cancelled")
        else:
            self._set(summary if isinstance(summary, str) else f"{self.tool} done", "completed")

    def _failed(self, error: BaseException) -> None:
        if isinstance(error, MCPError):
            self.error = error.error.model_dump(by_alias=True, mode="json", exclude_none=True)
        else:
            log.error("task %s (%s) ended with %r", self.task_id, self.tool, error)
            self.error = {"code": INTERNAL_ERROR, "message": f"{self.tool} failed unexpectedly"}
        self._set(str(self.error.get("message", "failed")), "failed")


def _wire_payload(result: HandlerResult) -> dict[str, Any]:
    """The tool's result as the wire dict the plain call would have answered."""
    if isinstance(result, BaseModel):
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dict(result) if isinstance(result, dict) else {}


async def _call(call_next: CallNext, ctx: ServerRequestContext[Any, Any]) -> HandlerResult:
    return await call_next(ctx)


#: The task of the call running in this context (none: a plain call).
_CURRENT: ContextVar[TaskRecord | None] = ContextVar("skupper_mcp_task", default=None)


def current_task() -> TaskRecord | None:
    """The task the running tool call is, when the client declared the extension and the
    tool is a long one; the tool's function calls ``begin`` on it when its long work
    starts."""
    return _CURRENT.get()


class TaskParams(RequestParams):
    """``tasks/get`` and ``tasks/cancel``'s params."""

    task_id: str = Field(max_length=128)


class UpdateParams(TaskParams):
    """``tasks/update``'s params (no task of this server ever asks for input)."""

    input_responses: dict[str, Any] = Field(default_factory=dict)


def declared(ctx: ServerRequestContext[Any, Any]) -> bool:
    """The client declared the extension on this request (2026-07-28 only: a handshake-era
    session cannot carry it, and its results are never tasks)."""
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False
    capabilities = ctx.session.client_capabilities
    extensions = capabilities.extensions if capabilities is not None else None
    return bool(extensions) and EXTENSION_ID in (extensions or {})


class Tasks(Extension):
    """The extension: the interceptor that makes a long call a task, and ``tasks/*``."""

    identifier = EXTENSION_ID

    def __init__(self) -> None:
        self._tasks: dict[str, TaskRecord] = {}

    def methods(self) -> Sequence[MethodBinding]:
        modern = frozenset(MODERN_PROTOCOL_VERSIONS)
        return [
            MethodBinding("tasks/get", TaskParams, self._get, protocol_versions=modern),
            MethodBinding("tasks/update", UpdateParams, self._update, protocol_versions=modern),
            MethodBinding("tasks/cancel", TaskParams, self._cancel, protocol_versions=modern),
        ]

    async def intercept_tool_call(
        self,
        params: CallToolRequestParams,
        ctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
    ) -> HandlerResult:
        if params.name not in LONG_TOOLS or not declared(ctx):
            return await call_next(ctx)
        record = TaskRecord(params.name)
        # the call runs in a task of its own, which outlives this request once it is a task;
        # it reads its record and its stop from its context (copied when it is created)
        task_token, stop_token = _CURRENT.set(record), STOP.set(record.stop)
        try:
            runner: asyncio.Task[HandlerResult] = asyncio.create_task(_call(call_next, ctx))
        finally:
            STOP.reset(stop_token)
            _CURRENT.reset(task_token)
        began = asyncio.create_task(record.began.wait())
        try:
            await asyncio.wait({runner, began}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the request was cancelled before it became a task
            runner.cancel()
            began.cancel()
            raise
        began.cancel()
        if not record.began.is_set():  # answered before its long work: no task
            return await runner
        record.runner = runner
        self._keep(record)
        runner.add_done_callback(record.end)
        return {"resultType": "task", **record.wire()}

    def _keep(self, record: TaskRecord) -> None:
        now = time.monotonic()
        for task_id, old in list(self._tasks.items()):
            if old.ended is not None and now - old.ended > KEPT_AFTER_END:
                del self._tasks[task_id]
        self._tasks[record.task_id] = record

    def _find(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> TaskRecord:
        require_client_extension(ctx, EXTENSION_ID)
        record = self._tasks.get(task_id)
        if record is None:
            raise MCPError(code=INVALID_PARAMS, message="Failed to retrieve task: Task not found")
        return record

    async def _get(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
        return self._find(ctx, params.task_id).detailed()

    async def _update(
        self, ctx: ServerRequestContext[Any, Any], params: UpdateParams
    ) -> HandlerResult:
        self._find(ctx, params.task_id)  # no task asks for input: every answer is ignored
        return {"resultType": "complete"}

    async def _cancel(
        self, ctx: ServerRequestContext[Any, Any], params: TaskParams
    ) -> HandlerResult:
        self._find(ctx, params.task_id).cancel()
        return {"resultType": "complete"}

    async def close(self) -> None:
        """The server stops: every call still running is cancelled, as a plain call's is
        when its client goes away, and awaited, so none outlives the engine it uses."""
        running = [r.runner for r in self._tasks.values() if r.runner and not r.runner.done()]
        for runner in running:
            runner.cancel()
        await asyncio.gather(*running, return_exceptions=True)
