"""A write asked to stop (engine/stopping.py): the step in flight ends, no further step
starts, and the site and the operation say what ran and what did not."""

from __future__ import annotations

from skupper_mcp.engine.runner import Action, SiteRun, operation_result
from skupper_mcp.engine.scope import SiteRef
from skupper_mcp.engine.stopping import STOP, Stop
from skupper_mcp.vocabulary import CountedProgress

HUB = SiteRef("rhel-ai", "hub-rhel-ai", "provider", "podman")


def steps(stop: Stop, ran: list[str]) -> list[Action]:
    """Three steps; the user cancels while the second runs."""

    def step(name: str, cancel: bool = False) -> Action:
        async def run() -> str:
            if cancel:
                stop.requested = True  # tasks/cancel arrives while this step runs
            ran.append(name)
            return "done"

        return Action(name, (), run)

    return [step("install system controller"), step("apply resources", True), step("start units")]


async def test_a_stop_lets_the_step_in_flight_end_and_starts_no_other() -> None:
    stop, ran, lines = Stop(), list[str](), list[str]()

    async def send(done: int, total: int, line: str) -> None:
        lines.append(line)

    token = STOP.set(stop)
    try:
        run = SiteRun(HUB, plan=False, progress=CountedProgress(send))
        finished = await run.perform(steps(stop, ran))
        result = operation_result("setup", "all", [run.result("up")], [], plan=False)
    finally:
        STOP.reset(token)
    assert not finished
    assert ran == ["install system controller", "apply resources"]
    assert [s.name for s in run.steps] == ran and all(s.ok for s in run.steps)
    site = result.sites[0]
    assert site.outcome == "skipped" and site.changed
    assert site.reason == (
        "cancelled before start units; done: install system controller, apply resources; "
        "not done: start units"
    )
    assert stop.honoured and stop.left == [f"rhel-ai: {site.reason}"]
    assert not result.ok and result.summary.startswith("setup cancelled")
    assert lines[-1] == "rhel-ai: cancelled: not done: start units"


async def test_without_a_stop_every_step_runs_and_the_result_is_unchanged() -> None:
    ran: list[str] = []
    run = SiteRun(HUB, plan=False)
    assert await run.perform(steps(Stop(), ran))  # a Stop no call reads: nothing stops
    result = operation_result("setup", "all", [run.result("up")], [], plan=False)
    assert ran == ["install system controller", "apply resources", "start units"]
    assert result.ok and result.sites[0].outcome == "up"
    assert result.summary == "setup: rhel-ai (changed 1 of 1 site)"


async def test_a_stop_asked_after_the_last_step_leaves_the_operation_done() -> None:
    stop, ran = Stop(), list[str]()
    token = STOP.set(stop)
    try:
        run = SiteRun(HUB, plan=False)
        assert await run.perform(steps(Stop(), ran))
        stop.requested = True  # too late: nothing is left to stop
        result = operation_result("setup", "all", [run.result("up")], [], plan=False)
    finally:
        STOP.reset(token)
    assert not stop.honoured and result.ok and result.sites[0].outcome == "up"
