"""A client of the MCP Tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663) on the
SDK's own client: the SDK (``mcp`` 2.3.0) has the client extension surface
(``ClientExtension``, a ``ResultClaim`` on ``resultType: "task"``) but no Tasks client, so the
tests declare the extension and finish a task as the spec tells a client to: poll
``tasks/get`` at ``pollIntervalMs`` until the task ends, then hand back the inlined
``CallToolResult`` (``completed``), raise the JSON-RPC error (``failed``) or ``TaskCancelled``.

``TasksClient.created`` keeps every ``CreateTaskResult`` the server answered and
``statuses`` every ``statusMessage`` polled, so a test sees the task itself, not only the
final result. ``cancel_when`` (a predicate over a ``statusMessage``) makes the client send
``tasks/cancel`` once, the first time a poll's message matches it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import anyio
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, ErrorData, Request, RequestParams, Result

EXTENSION_ID = "io.modelcontextprotocol/tasks"
TERMINAL = frozenset({"completed", "failed", "cancelled"})


class _Task(Result):
    """A task's fields, as both a ``tools/call`` handle and ``tasks/get`` carry them."""

    task_id: str
    status: str
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: int | None
    poll_interval_ms: int | None = None


class CreateTaskResult(_Task):
    """The task handle a server answers ``tools/call`` with (flat: ``Result & Task``)."""

    result_type: Literal["task"] = "task"


class TaskParams(RequestParams):
    task_id: str


class GetTaskRequest(Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams
    name_param = "taskId"  # the Mcp-Name header the spec asks for on tasks/*


class CancelTaskRequest(Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskParams
    name_param = "taskId"


class DetailedTask(_Task):
    """``tasks/get``'s answer: the task, with its result or error once it ended."""

    result_type: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class TaskCancelled(Exception):
    """The task ended ``cancelled``: its message, and the result of what was done when the
    server gave one (this server does)."""

    def __init__(self, task: DetailedTask) -> None:
        super().__init__(task.status_message or "cancelled")
        self.task = task
        self.result = CallToolResult.model_validate(task.result) if task.result else None


class TasksClient(ClientExtension):
    """The Tasks extension of a test's client: declared on each request, and finishing every
    task the server answers."""

    identifier = EXTENSION_ID

    def __init__(self, cancel_when: Callable[[str], bool] | None = None) -> None:
        self.created: list[CreateTaskResult] = []
        self.statuses: list[str] = []
        self.cancel_when = cancel_when
        self.cancelled = False
        self.polls = 0

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=self._resolve)]

    async def _resolve(self, created: CreateTaskResult, ctx: ClaimContext) -> CallToolResult:
        self.created.append(created)
        task_id = created.task_id
        pause = (created.poll_interval_ms or 1000) / 1000
        while True:
            await anyio.sleep(pause)  # the server's own pollIntervalMs, as the spec asks
            task = await ctx.session.send_request(
                GetTaskRequest(params=TaskParams(task_id=task_id)), DetailedTask
            )
            self.polls += 1
            self.statuses.append(task.status_message or "")
            if task.status in TERMINAL:
                return self._ended(task)
            if self.cancel_when and not self.cancelled and self.cancel_when(self.statuses[-1]):
                self.cancelled = True
                await ctx.session.send_request(
                    CancelTaskRequest(params=TaskParams(task_id=task_id)), Result
                )
            pause = (task.poll_interval_ms or 1000) / 1000

    def _ended(self, task: DetailedTask) -> CallToolResult:
        if task.status == "completed":
            assert task.result is not None, task
            return CallToolResult.model_validate(task.result)
        if task.status == "failed":
            assert task.error is not None, task
            raise MCPError.from_error_data(ErrorData.model_validate(task.error))
        raise TaskCancelled(task)
