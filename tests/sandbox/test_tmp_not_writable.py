"""rhel-ai in the example topology: a host whose containers cannot write /tmp.

On the real router image that does not crash the router: configure.sh cannot write
/tmp/skrouterd.json, launch.sh starts skrouterd on the image's default config ("Router
started in Standalone mode") and the container runs on, with no link listener and no
management listener of the site's. The product must never report that site's link as
up; with the tmpfs workaround (setup re-creates the router with ``--tmpfs /tmp``) it all
works. A world of its own, since setup is run on it twice with different topologies.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from mcp import Client

from polling import eventually
from skupper_mcp.engine.core import Engine
from skupper_mcp.engine.findings.podman import STANDALONE
from skupper_mcp.results import DiagnoseResult, OperationResult, StatusResult
from skupper_mcp.server import build_server
from skupper_mcp.topology import load_topology
from skupper_sandbox.testing import World

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.usefixtures("bounded_mcp_clients")]

HOST = "rhel-ai"
ROUTER = "default-skupper-router"


def topology(world: World, workaround: bool) -> Path:
    text = world.topology.read_text()
    value = "true" if workaround else "false"
    changed = re.sub(r"^(RHEL_AI_TMPFS_WORKAROUND)=\w+$", rf"\1={value}", text, flags=re.M)
    assert changed != text or workaround, "the topology names no rhel-ai workaround"
    path = world.dir / f"topology-workaround-{value}.env"
    path.write_text(changed)
    return path


def router_log(world: World) -> str:
    """The router's output as the host's podman gives it (its own log, real or emulated)."""
    status, out, err = world.ssh(HOST, f"podman logs {ROUTER} 2>&1")
    assert status == 0, err
    return out


async def test_without_the_workaround_the_hub_runs_standalone_and_its_link_is_never_up(
    small_world: World,
) -> None:
    async with Engine(load_topology(topology(small_world, workaround=False))) as engine:
        result = await engine.setup()
        status = await engine.status()

    assert isinstance(result, OperationResult)
    assert not result.ok  # setup's verify waits for the site and the link, which never come
    failed = {s.host: s.reason or "" for s in result.sites if s.outcome == "failed"}
    assert "not ready after setup" in failed.get(HOST, ""), result.model_dump_json(indent=1)
    [link] = status.links
    assert link.to_site == "hub-rhel-ai"
    assert not link.status.startswith("Ready")
    assert link.tcp_probe is False  # nothing listens for links on the hub
    assert [li.bound for li in status.listeners] == [False]
    log = router_log(small_world)
    assert "/tmp/skrouterd.json: Permission denied" in log
    assert "Router started in Standalone mode" in log
    row = next(s for s in status.sites if s.host == HOST)
    assert row.container == "running"  # the container does not exit...
    assert not (row.detail or "").startswith("Ready")  # ...but the site is not Ready


async def test_diagnose_names_tmp_not_writable_and_the_variable_that_fixes_it(
    small_world: World,
) -> None:
    async with Client(
        build_server(topology(small_world, workaround=False)), read_timeout_seconds=60
    ) as client:
        result = await client.call_tool("diagnose", {"target": "all"})
    assert not result.is_error, result.content
    found = DiagnoseResult.model_validate(result.structured_content)
    [finding] = [f for f in found.findings if f.id == "tmp-not-writable"]
    assert finding.host == HOST and finding.severity == "error"
    assert any("/tmp/skrouterd.json: Permission denied" in e for e in finding.evidence)
    assert any(STANDALONE in e for e in finding.evidence)
    variable, setup = finding.next
    assert (variable.kind, variable.variable, variable.value) == (
        "topology",
        "RHEL_AI_TMPFS_WORKAROUND",
        "true",
    )
    assert (setup.kind, setup.tool) == ("tool", "setup")
    # the standalone hub has no link listener: that is this finding, not a firewall's
    assert {f.id for f in found.findings if f.severity != "info"} == {"tmp-not-writable"}


async def test_with_the_workaround_the_same_hub_links_and_serves(small_world: World) -> None:
    async with Engine(load_topology(topology(small_world, workaround=True))) as engine:
        result = await engine.setup()
        assert isinstance(result, OperationResult) and result.ok, result.model_dump_json(indent=1)

        async def bound() -> StatusResult | None:
            # setup waits for the link; the listener binds once the hub's connector is known
            # across it, which takes longer on a busy machine
            status = await engine.status()
            return status if [li.bound for li in status.listeners] == [True] else None

        status = await eventually(bound, timeout=30, every=0.5, what="the listener bound")

    [link] = status.links
    assert link.status == "Ready" and link.tcp_probe
    port = status.listeners[0].port
    local = small_world.addresses["local"]

    async def models() -> dict[str, object] | None:
        try:
            async with httpx.AsyncClient(timeout=3) as client:
                reply = await client.get(f"http://{local}:{port}/v1/models")
        except httpx.HTTPError:
            return None
        return reply.json() if reply.status_code == 200 else None

    assert await eventually(models, timeout=20, what="the listener's /v1/models through the link")
    async with Engine(load_topology(topology(small_world, workaround=True))) as engine:
        diagnosis = await engine.diagnose()
    assert diagnosis.ok, diagnosis.model_dump_json(indent=1)
