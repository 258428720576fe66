"""Issue 46 item 4 on a sandbox world: rhel-ai set up at Skupper 2.1.3, then its package
upgraded to 2.2.1 (``skupper-sandbox upgrade``: the new CLI and images, nothing running
touched). diagnose names it (``release-upgraded``), status lists it as setup-needed; setup
re-bootstraps the site (``skupper system reload``) to 2.2.1's router, its link and listener
back, the local site untouched."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator

import pytest
from mcp import Client

import product
from polling import wait_for
from product import set_up
from skupper_mcp.results import DiagnoseResult, OperationResult, StatusResult
from skupper_mcp.server import build_server
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import World, running_world

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.spawns,
    pytest.mark.usefixtures("bounded_mcp_clients"),
]

HOST = "rhel-ai"
ROUTER = "default-skupper-router"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    spec = WorldSpec(
        providers=1,
        kubernetes=False,
        skupper_versions={HOST: "2.1.3", "local": "2.2.1"},
    )
    with running_world(tmp_path_factory.mktemp("upgrade"), spec) as w:
        set_up(w.topology)
        yield w


#: setup here can take minutes (a pull, a re-bootstrap) on a loaded machine
cli = functools.partial(product.cli, timeout=600)


def router_image(world: World, container: str = ROUTER) -> str:
    code, out, err = world.ssh(HOST, f"podman inspect --format '{{{{.ImageName}}}}' {container}")
    assert code == 0, err
    return out.strip()


def controller_image(world: World) -> str:
    code, out, err = world.ssh(HOST, "id -un")
    assert code == 0, err
    return router_image(world, f"{out.strip()}-skupper-controller")


async def _upgraded(world: World) -> list[str]:
    async with Client(build_server(world.topology), read_timeout_seconds=60) as client:
        result = await client.call_tool("diagnose", {"target": "all"})
    assert not result.is_error, result.content
    found = DiagnoseResult.model_validate(result.structured_content)
    return [f"{f.host} {f.symptom} | {f.fix}" for f in found.findings if f.id == "release-upgraded"]


async def test_an_upgraded_host_is_named_then_rebootstrapped_by_setup(world: World) -> None:
    assert router_image(world).endswith(":3.4.2")
    assert controller_image(world).endswith("system-controller:2.1.3")
    assert await _upgraded(world) == []

    said = world.sandbox("upgrade", HOST, "2.2.1")
    assert "2.1.3 -> 2.2.1" in said.stdout
    assert router_image(world).endswith(":3.4.2")  # nothing running touched
    assert controller_image(world).endswith("system-controller:2.1.3")

    [named] = await _upgraded(world)
    assert named.startswith(HOST) and "2.2.1" in named and "3.4.2" in named
    assert "run setup" in named and "skupper system reload" in named
    assert "system-controller:2.1.3" in named and "replaces the system controller" in named
    status = StatusResult.model_validate(json.loads(cli(world.topology, "status", "--json").stdout))
    row = next(s for s in status.sites if s.host == HOST)
    assert any("skupper-router 3.4.2 runs" in line for line in row.drift or []), row.drift
    assert any("system-controller:2.1.3" in line for line in row.drift or []), row.drift

    done = cli(world.topology, "setup", "--json")
    result = OperationResult.model_validate(json.loads(done.stdout))
    assert result.ok, done.stdout + done.stderr
    sites = {s.host: s for s in result.sites}
    steps = [s.name for s in sites[HOST].steps]
    assert "skupper system reload" in steps
    # system install keeps an existing controller: the old one is removed first
    assert steps.index("remove old system controller") < steps.index("install system controller")
    assert not sites["local"].changed  # the other site untouched
    assert router_image(world).endswith(":3.5.1")
    assert controller_image(world).endswith("system-controller:2.2.1")
    assert await _upgraded(world) == []

    def back() -> StatusResult | None:
        now = StatusResult.model_validate(
            json.loads(cli(world.topology, "status", "--json").stdout)
        )
        up = all(li.connected for li in now.links) and all(li.bound for li in now.listeners)
        return now if up else None

    after = wait_for(
        back, timeout=120, every=2.0, what="rhel-ai's link and listener back after setup"
    )
    assert next(s for s in after.sites if s.host == HOST).state == "up"
