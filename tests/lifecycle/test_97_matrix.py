"""Issue 30's scenario matrix, end to end on one world of its own, through the MCP client and
the CLI (``matrix.py`` drives it): in each scenario every consumer says the same thing about
every site, and what happened: a stop the user asked for is ``stopped`` (never stale, never
drift, never a problem whose next step starts it again), a router that died behind their back
is ``stale`` with diagnose's ``up``, and after teardown ``up`` refuses everywhere."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import pytest

from skupper_sandbox.testing import running_world

from .matrix import Observed, patient, run_matrix, world_spec

# matrix.py opens the MCP clients; the fixture bounds them for every test here
pytestmark = pytest.mark.usefixtures("bounded_mcp_clients")

RUN_STATE = {"start units", "create links", "restart router pod", "wait for links", "setup"}
ALL = ("rhel-ai", "rhtevan-work", "local", "crc")
NOTHING: dict[str, list[str]] = {h: [] for h in ALL}


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Observed]:
    """The scenarios' observations; with SKMCP_MATRIX_ROWS set, also written there, one JSON
    row each (the table of the closing note)."""
    rows = os.environ.get("SKMCP_MATRIX_ROWS")

    def keep(seen: Observed) -> None:
        if rows:
            with open(rows, "a") as out:
                out.write(json.dumps(seen.row()) + "\n")

    with running_world(tmp_path_factory.mktemp("matrix"), world_spec()) as world:
        patient(world)
        return {seen.name: seen for seen in asyncio.run(run_matrix(world, keep))}


def states(seen: Observed) -> dict[str, str | None]:
    return seen.state


def builds(seen: Observed) -> dict[str, list[str]]:
    """The steps setup's plan takes at each site that build it (not the ones that start it)."""
    plan = seen.plans["setup"]
    return {h: [s for s in steps if s not in RUN_STATE] for h, (_, steps, _) in plan.items()}


def starts_again(seen: Observed, host: str) -> list[str]:
    """The next steps of diagnose that would start ``host`` again: up on it or on all, or
    setup proposed for it."""
    starting = {f"up(target='{host}')", "up(target='all')", "up()"}
    return [
        step
        for h, _, steps in seen.findings
        for step in steps
        if step in starting or (step == "setup()" and h == host)
    ]


def agree(seen: Observed) -> None:
    """Status over the CLI and over MCP, and diagnose, say the same state of every site."""
    assert seen.mcp_state == seen.state, seen.name
    assert seen.diagnose_state == seen.state, seen.name
    assert set(seen.state) == set(ALL), seen.state


def test_fresh_is_not_set_up_everywhere_and_up_refuses(matrix: dict[str, Observed]) -> None:
    seen = matrix["fresh"]
    agree(seen)
    assert set(states(seen).values()) == {"not-set-up"}
    assert all(seen.drift[h] for h in ALL)
    assert {h: o for h, (o, _, _) in seen.plans["up"].items()} == dict.fromkeys(ALL, "failed")
    assert all("run setup first" in (r or "") for _, _, r in seen.plans["up"].values())
    assert all(builds(seen)[h] for h in ALL)
    assert seen.status_exit == 0 and seen.diagnose_exit == 1


def test_set_up_and_up_is_up_with_nothing_to_do(matrix: dict[str, Observed]) -> None:
    seen = matrix["set up and up"]
    agree(seen)
    assert set(states(seen).values()) == {"up"}, seen.state
    assert seen.summary.startswith("running: rhel-ai, rhtevan-work, local, crc;"), seen.summary
    assert not any(seen.drift.values()) and not seen.findings
    assert (seen.status_exit, seen.diagnose_exit) == (0, 0)
    assert builds(seen) == NOTHING
    assert all(steps in (["up"],) for _, steps, _ in seen.plans["up"].values())


def test_a_provider_stopped_by_down_is_stopped_and_no_problem(
    matrix: dict[str, Observed],
) -> None:
    seen = matrix["provider stopped by down"]
    agree(seen)
    assert states(seen) == {"rhel-ai": "stopped", "rhtevan-work": "up", "local": "up", "crc": "up"}
    assert "stale" not in seen.summary and "setup needed" not in seen.summary, seen.summary
    assert seen.diagnose_exit == 0 and not starts_again(seen, "rhel-ai"), seen.findings
    assert builds(seen) == NOTHING
    assert seen.plans["up"]["rhel-ai"][1] == ["start controller", "start router"]


def test_all_down_is_stopped_everywhere_with_no_drift(matrix: dict[str, Observed]) -> None:
    seen = matrix["all down"]
    agree(seen)
    assert set(states(seen).values()) == {"stopped"}, seen.state
    assert not any(seen.drift.values()), seen.drift  # crc's links removed by down included
    assert (seen.status_exit, seen.diagnose_exit, seen.findings) == (0, 0, [])
    assert builds(seen) == NOTHING
    assert seen.plans["up"]["crc"][0] == "up" and seen.plans["up"]["crc"][1][0] == "create links"


def test_a_router_killed_behind_the_users_back_is_stale_with_up_next(
    matrix: dict[str, Observed],
) -> None:
    seen = matrix["router killed (stale)"]
    agree(seen)
    assert states(seen)["rhel-ai"] == "stale"
    assert "stale status on rhel-ai" in seen.summary
    assert ("rhel-ai", "stale-status", ["up(target='rhel-ai')"]) in seen.findings
    assert seen.diagnose_exit == 1


def test_an_unreachable_host_is_skipped_by_every_plan(matrix: dict[str, Observed]) -> None:
    seen = matrix["host unreachable"]
    agree(seen)
    assert states(seen)["rhel-ai"] == "unreachable"
    assert "unreachable: rhel-ai" in seen.summary and seen.status_exit == 3
    assert seen.plans["up"]["rhel-ai"][0] == seen.plans["down"]["rhel-ai"][0] == "skipped"
    assert [f[:2] for f in seen.findings] == [("rhel-ai", "site-unreadable")]


def test_the_210_root_host_stopped_by_down_is_stopped_not_stale(
    matrix: dict[str, Observed],
) -> None:
    seen = matrix["2.1.0 root host stopped"]
    agree(seen)
    assert states(seen)["rhtevan-work"] == "stopped" and states(seen)["rhel-ai"] == "up"
    assert "stale" not in seen.summary, seen.summary
    assert seen.diagnose_exit == 0 and not starts_again(seen, "rhtevan-work"), seen.findings


def test_a_stopped_cluster_is_unreachable_and_skipped(matrix: dict[str, Observed]) -> None:
    seen = matrix["cluster skipped"]
    agree(seen)
    assert states(seen)["crc"] == "unreachable"
    assert {h: s for h, s in states(seen).items() if h != "crc"} == dict.fromkeys(ALL[:3], "up")
    assert seen.plans["up"]["crc"][0] == "skipped" and seen.status_exit == 3


def test_after_teardown_up_refuses_everywhere_the_cluster_included(
    matrix: dict[str, Observed],
) -> None:
    seen = matrix["after teardown"]
    agree(seen)
    assert set(states(seen).values()) == {"not-set-up"}
    up = seen.plans["up"]
    assert {h: o for h, (o, _, _) in up.items()} == dict.fromkeys(ALL, "failed"), up
    assert all(not steps for _, steps, _ in up.values()), up  # nothing half-built
    # torn down as asked: no problem, and no next step that would set it up again
    assert seen.diagnose_exit == 0 and not seen.findings, seen.findings


#: What the view says where the VAN is, for the scenarios where that is plain.
WHERE = {
    "fresh": "Now: not set up.",
    "set up and up": "Now: all up (4 of 4 sites).",
    "all down": "Now: stopped (no site up).",
    "after teardown": "Now: not set up.",
}


@pytest.mark.browser
def test_the_view_draws_what_each_scenarios_status_diagnose_and_plan_say(
    matrix: dict[str, Observed],
) -> None:
    """The page ``status --html`` writes, in headless Chromium, of each scenario's status,
    diagnose and up plan: each site drawn in the state status (or diagnose) typed for it; a
    plan draws what would change and no state; "Now:" never calls a VAN stopped while a site
    is up."""
    from browser import chromium
    from skupper_mcp.view import page_html
    from van_page import SITES_JS, assert_clean

    drawn: dict[tuple[str, str], dict[str, Any]] = {}
    with chromium() as browser:
        page = browser.new_page()
        try:
            for name, seen in matrix.items():
                for tool in ("status", "diagnose", "up"):
                    page.open(page_html({tool: seen.results[tool]}))
                    page.wait_for(
                        "document.querySelector('[data-site]:not([data-listener])') !== null",
                        what=f"{name}: a site of its {tool} drawn",
                    )
                    drawn[(name, tool)] = page.evaluate(SITES_JS)
                    assert_clean(page, f"{name}: {tool}")
        finally:
            browser.close_page(page)
    views = {}
    for name in matrix:
        status, diagnose, plan = (drawn[(name, tool)] for tool in ("status", "diagnose", "up"))
        views[name] = {
            "status": {h: s["state"] for h, s in status["sites"].items()},
            "where": status["where"],
            "diagnose": {h: s["state"] for h, s in diagnose["sites"].items()},
            "diagnose where": diagnose["where"],
            "up plan": {h: s["plan"] for h, s in plan["sites"].items()},
            "up plan states": sorted({s["state"] for s in plan["sites"].values()}),
            "up plan where": plan["where"],
        }
    rows = os.environ.get("SKMCP_MATRIX_ROWS")
    if rows:
        with open(rows, "a") as out:
            out.writelines(json.dumps({"scenario": n, "view": v}) + "\n" for n, v in views.items())
    for name, seen in matrix.items():
        view = views[name]
        assert view["status"] == seen.state, (name, view)
        assert view["diagnose"] == seen.diagnose_state, (name, view)
        assert view["up plan states"] == ["not-reported"], (name, view)
        # each site's plan mark is what its planned outcome says: a refusal is never drawn
        # as "no change"
        for planned in seen.results["up"].get("sites", []):
            refused = planned["outcome"] in ("failed", "skipped")
            mark = (
                "would-refuse" if refused else "would-change" if planned["changed"] else "no-change"
            )
            assert view["up plan"][planned["host"]] == mark, (name, planned, view)
        assert "stopped" not in view["up plan where"], (name, view)
        if "up" in seen.state.values():  # some site up: never "stopped (no site up)"
            assert "no site up" not in view["where"], (name, view)
            assert view["where"].startswith("Now: all up") or view["where"].startswith(
                "Now: some up"
            ), (name, view)
        if name in WHERE:
            assert view["where"] == WHERE[name], (name, view)
