"""The lifecycle through what agents and people use: the MCP client (in-process and over
stdio, legacy and default mode) with progress notifications, and the CLI's exit codes."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from skupper_mcp.results import OperationResult, StatusResult
from skupper_mcp.server import build_server
from skupper_mcp.topology import load_topology
from skupper_sandbox.testing import World

from .conftest import NS, new_engine
from .helpers import cli, only_up

pytestmark = pytest.mark.usefixtures("bounded_mcp_clients")

#: Every MCP request of this module is bounded: operations on a world take a minute or two.
CLIENT_TIMEOUT = 180.0


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_up_over_mcp_reports_progress_step_by_step(built: World, mode: str) -> None:
    async with new_engine(built) as engine:
        await only_up(engine, ())
    lines: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        lines.append(message or "")

    async with Client(
        build_server(built.topology), mode=mode, read_timeout_seconds=CLIENT_TIMEOUT
    ) as client:
        result = await client.call_tool(
            "up", {"target": "rhtevan-work"}, progress_callback=on_progress
        )
        status = await client.call_tool("status", {})
    assert not result.is_error, result.content
    up = OperationResult.model_validate(result.structured_content)
    assert up.ok and {s.host: s.outcome for s in up.sites} == {"rhtevan-work": "up", "local": "up"}
    assert any(line.startswith("rhtevan-work: start router") for line in lines), lines
    assert any(line.startswith("local: verify router") for line in lines), lines
    live = StatusResult.model_validate(status.structured_content)
    assert next(s for s in live.sites if s.host == "rhtevan-work").container == "running"


async def test_down_plan_over_stdio_lists_model_actions(built: World) -> None:
    async with new_engine(built) as engine:
        await only_up(engine, ("rhel-ai",))
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "skupper_mcp", "--topology", str(built.topology)]
    )
    async with Client(params, mode="legacy", read_timeout_seconds=CLIENT_TIMEOUT) as client:
        result = await client.call_tool("down", {"target": "g8b-32k", "plan": True})
        bad = await client.call_tool("down", {"target": "nowhere"})
    plan = OperationResult.model_validate(result.structured_content)
    assert plan.plan and [(a.host, a.profile, a.action) for a in plan.model_actions] == [
        ("rhel-ai", "g8b-fp8-spec-128k", "stop")
    ]
    assert bad.is_error
    assert "unknown target 'nowhere'" in bad.content[0].text  # type: ignore[union-attr]


def router_states(world: World) -> dict[str, str]:
    """What podman says of each podman site's router container now."""
    topology = load_topology(world.topology)
    states = {}
    for host in [p.name for p in topology.providers] + [topology.local.name]:
        _, out, _ = world.ssh(
            host, f"podman inspect {NS}-skupper-router --format '{{{{.State.Status}}}}'"
        )
        states[host] = out.strip()
    return states


async def test_a_cancelled_up_releases_the_lock_and_status_tells_the_truth(built: World) -> None:
    async with new_engine(built) as engine:
        await only_up(engine, ())
    started = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        if (message or "").startswith("rhel-ai: start controller"):
            started.set()

    async with Client(
        build_server(built.topology), mode="legacy", read_timeout_seconds=CLIENT_TIMEOUT
    ) as client:
        async with anyio.create_task_group() as tasks:

            async def call() -> None:
                await client.call_tool("up", {}, progress_callback=on_progress)

            tasks.start_soon(call)
            with anyio.fail_after(60):
                await started.wait()
            tasks.cancel_scope.cancel()
        # A unit whose start was asked for goes on starting after the call is cancelled
        # (systemd runs the job, as on a real host): the truth is what the host says just
        # before or just after status reads it.
        before = router_states(built)
        status = await client.call_tool("status", {})
        after = router_states(built)
    live = StatusResult.model_validate(status.structured_content)
    for site in live.sites:
        if site.platform != "podman":
            continue
        seen = {before[site.host], after[site.host]}
        assert site.container in seen, (site.host, site.container, seen)
    async with new_engine(built) as engine:  # the lock was released: the next call runs
        again = await engine.up()
    assert again.ok, again.summary


def test_cli_exit_codes_and_json(built: World) -> None:
    up = cli(built, "--json", "up", "rhtevan-work")
    assert up.returncode == 0, up.stderr
    assert OperationResult.model_validate_json(up.stdout).ok
    assert "rhtevan-work: " in up.stderr  # one progress line per step
    built.fault("rhel-ai", "down")
    try:
        skipped = cli(built, "up")
    finally:
        built.fault("rhel-ai", "restore")
    assert skipped.returncode == 3, skipped.stdout + skipped.stderr
    assert "skipped" in skipped.stdout and "rhel-ai" in skipped.stdout
    unknown = cli(built, "down", "nowhere")
    assert unknown.returncode == 2 and "unknown target" in unknown.stderr
    status = cli(built, "--json", "status")
    assert status.returncode == 0
    assert {s["host"] for s in json.loads(status.stdout)["sites"]} >= {"rhel-ai", "local"}


@pytest.mark.browser
def test_status_html_against_the_sandbox_draws_every_site_link_and_listener(
    built: World, tmp_path: Path
) -> None:
    """What a person opens: `status --html` on the running VAN, in headless Chromium,
    offline. Every site, link and listener that `status --json` reports is drawn with the
    state it reports."""
    from browser import chromium
    from van_page import ELEMENTS_JS, assert_clean

    status = StatusResult.model_validate_json(cli(built, "--json", "status").stdout)
    page_file = tmp_path / "van.html"
    wrote = cli(built, "status", "--html", str(page_file))
    # the status the page shows (that call's own result: a second status call on a loaded
    # machine may read another moment), named in a failure so it says which site was not read
    data = page_file.read_text().split('id="van-data">', 1)[1].split("</script>", 1)[0]
    drawn_status = StatusResult.model_validate(json.loads(data)["status"])
    states = {s.host: f"{s.state}: {s.state_reason}" for s in drawn_status.sites}
    assert wrote.returncode == 0, f"{wrote.stdout}{wrote.stderr}{states}"
    assert f"wrote {page_file}" in wrote.stdout
    with chromium() as browser:
        page = browser.new_page()
        try:
            page.open(page_file.read_text())
            page.wait_for("document.querySelector('[data-site]') !== null", what="a site drawn")
            seen = page.evaluate(ELEMENTS_JS)
            artefacts = Path(os.environ.get("SKMCP_ARTEFACTS") or tmp_path) / "van-view"
            page.screenshot(artefacts / "sandbox-status-1280x900.png", 1280, 900)
            assert_clean(page, "status --html on the sandbox")
        finally:
            browser.close_page(page)
    drawn_sites = {s["key"]: s for s in seen["sites"]}
    assert set(drawn_sites) == {s.host for s in status.sites}
    assert all(s["seen"] for s in drawn_sites.values())
    # the view draws each site in the state the status it shows typed for it
    assert any(s.state == "up" for s in drawn_status.sites), drawn_status.summary
    assert {host: s["state"] for host, s in drawn_sites.items()} == {
        s.host: s.state for s in drawn_status.sites
    }
    drawn_links = {link["key"] for link in seen["links"]}
    assert drawn_links == {f"{link.from_site}->{link.to_site}" for link in status.links}
    drawn_ports = {int(listener["key"]) for listener in seen["listeners"]}
    assert drawn_ports >= {listener.port for listener in status.listeners}
    assert {listener["state"] for listener in seen["listeners"]} <= {
        "serving",
        "closing",
        "closed",
        "unknown",
    }
