"""T6: teardown asks for consent (elicitation, or confirm=true), keeps a backup of each
site's inputs and CA, removes everything; a later setup restores the same CA."""

from __future__ import annotations

import tarfile
from pathlib import Path
from typing import Any, Literal

import pytest
from mcp import Client
from mcp.client.session import ElicitationFnT
from mcp.types import ElicitRequestParams, ElicitResult

from skupper_mcp.results import OperationResult
from skupper_mcp.server import build_server
from skupper_sandbox.testing import World

from .conftest import NS, namespace_dir, new_engine, unit_dir

pytestmark = pytest.mark.usefixtures("bounded_mcp_clients")

#: Every MCP request of this module is bounded: operations on a world take a minute or two.
CLIENT_TIMEOUT = 180.0
HOSTS = ("rhel-ai", "rhtevan-work", "local")


def site_ca(world: World, host: str) -> bytes:
    return (namespace_dir(world, host) / "runtime/issuers/skupper-site-ca/ca.crt").read_bytes()


def namespaces_left(world: World) -> list[str]:
    return [h for h in HOSTS if namespace_dir(world, h).exists()]


def answer(action: Literal["accept", "decline"]) -> ElicitationFnT:
    """An elicitation callback that gives the user's answer."""

    async def callback(context: Any, params: ElicitRequestParams) -> ElicitResult:
        content: dict[str, Any] | None = {"confirm": True} if action == "accept" else None
        return ElicitResult(action=action, content=content)

    return callback


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_declined_or_unasked_teardown_removes_nothing(built: World, mode: str) -> None:
    async with Client(
        build_server(built.topology),
        mode=mode,
        elicitation_callback=answer("decline"),
        read_timeout_seconds=CLIENT_TIMEOUT,
    ) as client:
        declined = await client.call_tool("teardown", {})
    async with Client(
        build_server(built.topology), mode=mode, read_timeout_seconds=CLIENT_TIMEOUT
    ) as client:
        unasked = await client.call_tool("teardown", {})
        plan = await client.call_tool("teardown", {"plan": True})
    assert declined.is_error and "declined" in declined.content[0].text  # type: ignore[union-attr]
    assert unasked.is_error and "confirm=true" in unasked.content[0].text  # type: ignore[union-attr]
    planned = OperationResult.model_validate(plan.structured_content)
    assert planned.plan and {a.action for a in planned.model_actions} == {"stop"}
    assert namespaces_left(built) == list(HOSTS)


async def test_accepted_teardown_backs_up_removes_and_setup_restores_the_ca(built: World) -> None:
    before = {h: site_ca(built, h) for h in HOSTS}
    async with Client(
        build_server(built.topology),
        mode="legacy",
        elicitation_callback=answer("accept"),
        read_timeout_seconds=CLIENT_TIMEOUT,
    ) as client:
        result = await client.call_tool("teardown", {})
    assert not result.is_error, result.content
    removed = OperationResult.model_validate(result.structured_content)
    assert removed.ok and all(s.outcome == "removed" for s in removed.sites), removed.summary
    assert namespaces_left(built) == []
    for host in HOSTS:
        units = unit_dir(built, host)
        assert not (units / f"skupper-{NS}.service").exists()
        backups = sorted((built.dir / "state/backups" / host / NS).glob("*.tar.gz"))
        assert backups, host
        with tarfile.open(backups[-1]) as tar:
            names = {Path(m.name).as_posix().removeprefix("./") for m in tar.getmembers()}
        assert "runtime/issuers/skupper-site-ca/ca.crt" in names
        assert any(n.startswith("input/resources/Site-") for n in names)
    _, out, _ = built.ssh("rhel-ai", "podman ps -a --format '{{.Names}}'")
    assert f"{NS}-skupper-router" not in out and "hosted-model" in out  # models untouched

    async with new_engine(built) as engine:
        rebuilt = await engine.setup()
    assert rebuilt.ok, rebuilt.summary
    assert {h: site_ca(built, h) for h in HOSTS} == before
