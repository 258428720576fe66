"""Teardown's consent through the real mcp.Client in-process: only the user's own answer,
a JSON boolean true, lets it remove anything; confirm=true counts only when the client cannot
ask. The engine's teardown is replaced by a recorder, so a call that should not remove
anything fails the test if it reaches it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp.types import ElicitRequestParams, ElicitResult

from mcp_client import served
from skupper_mcp.engine import Engine
from skupper_mcp.results import OperationResult

pytestmark = pytest.mark.usefixtures("bounded_mcp_clients")


@pytest.fixture
def teardowns(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Every call that reached the engine's teardown, by its plan flag."""
    calls: list[bool] = []

    async def teardown(
        self: Engine, *, plan: bool = False, progress: Any = None
    ) -> OperationResult:
        calls.append(plan)
        return OperationResult(
            operation="teardown", target="all", ok=True, sites=[], summary="removed", plan=plan
        )

    monkeypatch.setattr(Engine, "teardown", teardown)
    return calls


class User:
    """An elicitation callback that gives one answer and counts the questions."""

    def __init__(self, action: str, content: dict[str, Any] | None = None) -> None:
        self.action = action
        self.content = content
        self.questions: list[ElicitRequestParams] = []

    async def __call__(self, context: Any, params: ElicitRequestParams) -> ElicitResult:
        self.questions.append(params)
        return ElicitResult(action=self.action, content=self.content)  # type: ignore[arg-type]


async def call_teardown(
    topology: Path, mode: str, user: User | None, arguments: dict[str, Any]
) -> Any:
    async with served(topology, mode, elicitation_callback=user) as client:
        return await client.call_tool("teardown", arguments)


def text(result: Any) -> str:
    return str(result.content[0].text)


@pytest.mark.parametrize(("action", "word"), [("decline", "declined"), ("cancel", "cancelled")])
async def test_a_user_who_says_no_removes_nothing_even_with_confirm_true(
    example_path: Path, teardowns: list[bool], mode: str, action: str, word: str
) -> None:
    user = User(action)
    result = await call_teardown(example_path, mode, user, {"confirm": True})
    assert result.is_error
    assert word in text(result) and "nothing was removed" in text(result)
    assert len(user.questions) == 1
    assert teardowns == []


@pytest.mark.parametrize("answer", ["yes", 1, "on", "true", 0, None, False])
async def test_an_answer_that_is_not_the_boolean_true_removes_nothing(
    example_path: Path, teardowns: list[bool], mode: str, answer: object
) -> None:
    user = User("accept", {"confirm": answer})
    result = await call_teardown(example_path, mode, user, {"confirm": True})
    assert result.is_error, result.content
    assert "othing was removed" in text(result)
    assert teardowns == []


async def test_a_text_answer_is_refused_with_what_to_do(
    example_path: Path, teardowns: list[bool], mode: str
) -> None:
    user = User("accept", {"confirm": "yes"})
    result = await call_teardown(example_path, mode, user, {"confirm": True})
    assert result.is_error
    assert "was a string, not the boolean true" in text(result)
    assert "yes/no control" in text(result)
    assert teardowns == []


async def test_the_question_asks_for_a_strict_boolean(
    example_path: Path, teardowns: list[bool], mode: str
) -> None:
    user = User("decline")
    await call_teardown(example_path, mode, user, {})
    schema = user.questions[0].requested_schema  # type: ignore[union-attr]
    assert schema["properties"]["confirm"]["type"] == "boolean"
    assert schema["required"] == ["confirm"]
    assert "every host" in user.questions[0].message


@pytest.mark.parametrize("confirm", [False, True])
async def test_the_users_true_proceeds_whatever_confirm_says(
    example_path: Path, teardowns: list[bool], mode: str, confirm: bool
) -> None:
    user = User("accept", {"confirm": True})
    result = await call_teardown(example_path, mode, user, {"confirm": confirm})
    assert not result.is_error, result.content
    assert OperationResult.model_validate(result.structured_content).summary == "removed"
    assert teardowns == [False]
    assert len(user.questions) == 1


async def test_the_user_is_asked_every_time(
    example_path: Path, teardowns: list[bool], mode: str
) -> None:
    user = User("accept", {"confirm": True})
    async with served(example_path, mode, elicitation_callback=user) as client:
        for _ in range(2):
            assert not (await client.call_tool("teardown", {"confirm": True})).is_error
    assert len(user.questions) == 2
    assert teardowns == [False, False]


async def test_a_plan_asks_nothing(example_path: Path, teardowns: list[bool], mode: str) -> None:
    user = User("decline")
    result = await call_teardown(example_path, mode, user, {"plan": True})
    assert not result.is_error, result.content
    assert user.questions == []
    assert teardowns == [True]


async def test_a_client_that_cannot_ask_needs_confirm_true(
    example_path: Path, teardowns: list[bool], mode: str
) -> None:
    refused = await call_teardown(example_path, mode, None, {})
    assert refused.is_error and "confirm=true" in text(refused)
    assert "Nothing was removed" in text(refused)
    assert teardowns == []
    agreed = await call_teardown(example_path, mode, None, {"confirm": True})
    assert not agreed.is_error, agreed.content
    assert teardowns == [False]


async def test_the_skill_pre_approves_only_read_only_tools(example_path: Path) -> None:
    """Claude Code asks no permission for a tool in allowed-tools: a write tool there would let
    the model run it without the user."""
    skill = (Path(__file__).parent.parent / "SKILL.md").read_text()
    front_matter = skill.split("---")[1]
    allowed = next(
        line.removeprefix("allowed-tools:").split()
        for line in front_matter.splitlines()
        if line.startswith("allowed-tools:")
    )
    async with served(example_path, "legacy") as client:
        tools = (await client.list_tools()).tools
    read_only = {
        f"mcp__skupper__{t.name}"
        for t in tools
        if t.annotations is not None and t.annotations.read_only_hint
    }
    assert set(allowed) == read_only
