"""``up`` recovers a unit that hit systemd's start limit: a quick down/up cycle (more than
five starts in ten seconds) leaves a unit that refuses a plain ``systemctl start``. The
step resets it first and says so (systemd ``src/core/unit.c`` ``unit_reset_failed``:
``reset-failed`` flushes the start counter and clears ``start_limit_hit``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from fake_connector import FakeConnector
from hostkit import HostKit, running_host
from skupper_mcp.engine.operations.updown import podman_up_actions
from skupper_mcp.engine.readings import PodmanReading
from skupper_mcp.engine.scope import SiteRef
from skupper_mcp.facts import names
from skupper_mcp.facts.site_state import SiteState, UnitState
from skupper_mcp.sites.podman import PodmanSite
from skupper_mcp.sites.work import Script

ROUTER = names.router_unit("default")


def _reading(router: UnitState) -> PodmanReading:
    site = PodmanSite(FakeConnector("rhel-ai"), "default")
    state = SiteState(units={router.name: router})
    ref = SiteRef("rhel-ai", "hub-rhel-ai", "provider", "podman")
    return PodmanReading(ref, site, state)


def _router_step(reading: PodmanReading) -> tuple[str, Script]:
    (action,) = [a for a in podman_up_actions(reading) if "router" in a.name]
    (script,) = action.does
    assert isinstance(script, Script)
    return action.name, script


def test_a_unit_at_its_start_limit_is_reset_and_the_step_says_so() -> None:
    hit = UnitState(ROUTER, load_state="loaded", active_state="failed", result="start-limit-hit")
    name, script = _router_step(_reading(hit))
    assert name == "start router (start limit hit: reset-failed first)"
    assert "start-limit-hit" in script.done and "reset-failed" in script.done
    assert script.body == (
        f"$SKMCP_CTL reset-failed {ROUTER} 2>/dev/null || true; $SKMCP_CTL enable --now {ROUTER}",
    )


def test_a_unit_merely_stopped_is_started_with_the_plain_words() -> None:
    stopped = UnitState(ROUTER, load_state="loaded", active_state="inactive", result="success")
    name, script = _router_step(_reading(stopped))
    assert name == "start router"
    assert script.done == f"systemctl enable --now {ROUTER}"


@pytest.fixture
def host(tmp_path: Path) -> Iterator[HostKit]:
    with running_host(tmp_path, address="127.201.0.40") as kit, kit.manager():
        yield kit


@pytest.mark.spawns
def test_the_start_script_brings_back_a_unit_that_hit_its_limit(host: HostKit) -> None:
    """Five down/up cycles, as a user pressing down and up quickly: the sixth plain start is
    refused; the product's start script starts it."""
    host.write_unit("cycled.service", "[Service]\nExecStart=/bin/sleep 60\n")
    for _ in range(5):
        assert host.sh("systemctl --user start cycled").returncode == 0
        assert host.sh("systemctl --user stop cycled").returncode == 0
    refused = host.sh("systemctl --user start cycled")
    assert refused.returncode == 1 and "attempted too often" in refused.stderr
    result = host.sh("systemctl --user show -p Result --value cycled")
    assert result.stdout.strip() == "start-limit-hit"
    site = PodmanSite(FakeConnector("h"), "default")
    started = host.sh(site.start(["cycled.service"], limit_hit=True).text)
    assert started.returncode == 0, started.stderr
    assert host.sh("systemctl --user is-active cycled").stdout == "active\n"


@pytest.mark.parametrize("first_time", [True, False])
def test_skupper_system_start_and_reload_reset_the_namespace_unit_first(first_time: bool) -> None:
    """Both start ``skupper-<ns>.service``: after two quick reloads of our own (a pool's
    strategy changed twice) its start limit would refuse the third."""
    script = PodmanSite(FakeConnector("local"), "default").render(first_time)
    verb = "start" if first_time else "reload"
    assert script.body == (
        f"$SKMCP_CTL reset-failed {ROUTER} 2>/dev/null || true; skupper system {verb} -n default",
    )
    assert script.done == f"skupper system {verb}"


@pytest.mark.spawns
def test_the_reset_lets_a_unit_at_its_limit_start_again_as_a_reload_would(
    host: HostKit,
) -> None:
    """The reset the render script begins with, on a unit at its limit: the start that
    ``skupper system reload`` makes then succeeds."""
    host.write_unit(ROUTER, "[Service]\nExecStart=/bin/sleep 60\n")
    for _ in range(5):
        assert host.sh(f"systemctl --user restart {ROUTER}").returncode == 0
    assert host.sh(f"systemctl --user restart {ROUTER}").returncode == 1
    reset = PodmanSite(FakeConnector("h"), "default").render(False).body[0].split(";")[0]
    assert host.sh(reset.replace("$SKMCP_CTL", "systemctl --user")).returncode == 0
    assert host.sh(f"systemctl --user start {ROUTER}").returncode == 0
