"""Issue 23's injection replayed on a world whose provider's model server answers
``/v1/models`` with markers and shell: the state read, setup, up, status, down and teardown
run none of it, and the product sees the host's real user and podman."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from skupper_mcp.engine.core import Engine
from skupper_mcp.engine.scope import site_ref
from skupper_mcp.topology import load_topology
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import World, reachable_dir, running_world

pytestmark = pytest.mark.sandbox

SERVER = Path(__file__).parents[1] / "hostile_model_server.py"
PROVIDER = "rhel-ai"


@pytest.fixture(scope="module")
def marks() -> Iterator[Path]:
    """Where the hostile server writes its marks: it runs as the host's user."""
    with reachable_dir("marks") as made:
        yield made


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory, marks: Path) -> Iterator[World]:
    command = shlex.join([sys.executable, str(SERVER), str(marks)])
    with running_world(
        tmp_path_factory.mktemp("hostile"),
        WorldSpec(
            providers=1,
            kubernetes=False,
            model_server_command=command,
            model_server_volumes=(str(marks), str(SERVER.parent)),
        ),
    ) as world:
        yield world


def host_user(world: World, host: str) -> str:
    return str(json.loads((world.host_dir(host) / "host.json").read_text())["user"])


def test_the_injection_changes_nothing_in_any_operation(hostile: World, marks: Path) -> None:
    async def go() -> dict[str, object]:
        async with Engine(load_topology(hostile.topology)) as engine:
            ref = site_ref(engine.topology, PROVIDER)
            provider = await engine.sites.podman(ref)
            state = await provider.read()
            results: dict[str, object] = {"state": state}
            results["setup"] = await engine.setup()
            results["up"] = await engine.up()
            results["status"] = await engine.status()
            results["down"] = await engine.down()
            results["teardown"] = await engine.teardown()
            return results

    results = asyncio.run(go())
    state = results["state"]
    assert state.user == host_user(hostile, PROVIDER)  # type: ignore[attr-defined]
    assert state.podman_path.endswith("/podman")  # type: ignore[attr-defined]
    # not an OpenAI answer: a model list of nothing
    assert state.served_models is None  # type: ignore[attr-defined]
    for name in ("setup", "up", "down", "teardown"):
        result = results[name]
        assert result.ok, result.model_dump_json(indent=1)  # type: ignore[attr-defined]
    assert sorted(p.name for p in marks.iterdir()) == []
    watch = hostile.host_dir(PROVIDER) / "home/.local/share/skupper-mcp/start-watch.sh"
    assert not watch.exists() or "touch" not in watch.read_text()
