"""A site's condition from its reading and what the user last asked of it
(engine/condition.py), over the recorded site states and the cluster's shapes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fake_connector import FakeConnector
from skupper_mcp.engine.condition import listener_condition, site_condition
from skupper_mcp.engine.operations.status import site_status
from skupper_mcp.engine.readings import Asked, ClusterReading, PodmanReading, Unread
from skupper_mcp.engine.scope import SiteRef
from skupper_mcp.errors import CommandTimeout, ConnectError, KubeError
from skupper_mcp.facts.site_state import SiteState, UnitState, parse_site_state, pod_running
from skupper_mcp.sites import resources as cr
from skupper_mcp.sites.kube import ClusterSite, KubeState
from skupper_mcp.sites.podman import PodmanSite

STATES = Path(__file__).resolve().parent / "site_states"
HUB = SiteRef("rhel-ai", "hub-rhel-ai", "provider", "podman")
CRC = SiteRef("crc", "crc-site", "consumer", "kubernetes")
LINKS = ("link-hub-rhel-ai", "link-local-sandbox")


def state(phase: str, host: str = "rhel-ai") -> SiteState:
    return parse_site_state((STATES / phase / f"{host}.txt").read_text())


def podman(found: SiteState, asked: Asked | None = None) -> PodmanReading:
    return PodmanReading(HUB, PodmanSite(FakeConnector("rhel-ai"), "default"), found, asked)


def cluster(found: KubeState, asked: Asked | None = None) -> ClusterReading:
    site = ClusterSite(api=None, namespace="skupper")  # type: ignore[arg-type]  # never called
    return ClusterReading(CRC, site, found, asked)


@pytest.mark.parametrize(
    ("phase", "asked", "expected"),
    [
        ("fresh", None, "not-set-up"),
        ("fresh", "teardown", "not-set-up"),
        ("up", None, "up"),
        ("up", "down", "up"),  # it runs, whatever was asked: up
        ("down", "down", "stopped"),
        ("down", "teardown", "stopped"),
        # the controller wrote the Site Pending as its router stopped: nothing claims Ready
        ("down", None, "stopped"),
        ("down", "up", "stopped"),
        ("rhel-ai-down", "down", "stopped"),
    ],
)
def test_a_podman_sites_condition(phase: str, asked: Asked | None, expected: str) -> None:
    condition, reason = site_condition(podman(state(phase), asked))
    assert condition == expected, reason
    assert reason


def test_a_stopped_router_whose_status_still_says_ready_is_stale() -> None:
    found = state("down")
    site = next(r for (k, _), r in found.runtime_resources.items() if k == "Site")
    site["status"] = {"status": "Ready", "message": "OK"}
    for asked in (None, "up"):
        condition, reason = site_condition(podman(found, asked))
        assert condition == "stale", reason  # nothing recorded explains it, or it died
    assert site_condition(podman(found, "down"))[0] == "stopped"


def test_a_router_outside_its_unit_or_without_its_controller_is_degraded() -> None:
    found = state("up")
    found.units["skupper-default.service"] = UnitState("skupper-default.service")
    condition, reason = site_condition(podman(found))
    assert (condition, "outside its unit" in reason) == ("degraded", True)
    found = state("up")
    found.units["skupper-controller.service"] = UnitState("skupper-controller.service")
    found.containers[f"{found.user}-skupper-controller"].state = "exited"
    condition, reason = site_condition(podman(found))
    assert (condition, "controller is not running" in reason) == ("degraded", True)


def test_a_stopped_router_whose_controller_runs_is_stopped_not_stale() -> None:
    found = state("down")
    found.containers[f"{found.user}-skupper-controller"].state = "running"
    assert site_condition(podman(found))[0] == "stopped"


def test_an_unread_site_is_unreachable_or_unknown() -> None:
    assert site_condition(Unread(HUB, ConnectError("rhel-ai", "refused")))[0] == "unreachable"
    refused = KubeError("crc", "forbidden", 403)
    assert site_condition(Unread(CRC, refused))[0] == "unreachable"
    timed_out = Unread(HUB, CommandTimeout("rhel-ai", "state read", 30))
    assert site_condition(timed_out)[0] == "unknown"


def site_resource(status: Any) -> dict[str, Any]:
    return {**cr.site("crc-site"), "status": status}


def pod(phase: str) -> dict[str, Any]:
    return {"metadata": {"name": "skupper-router-1"}, "status": {"phase": phase}}


def test_the_clusters_condition_follows_its_pods_links_and_what_was_asked() -> None:
    links = {n: {**cr.link(cr.LinkTarget(n, "h", 1, 2)), "metadata": {"name": n}} for n in LINKS}
    ready = {"status": "Ready"}
    assert site_condition(cluster(KubeState("v", None)), LINKS)[0] == "not-set-up"
    running = KubeState("v", site_resource(ready), links=links, router_pods=[pod("Running")])
    assert site_condition(cluster(running), LINKS)[0] == "up"
    # down deletes the cluster's links; its router pod keeps running
    taken_down = KubeState("v", site_resource(ready), router_pods=[pod("Running")])
    assert site_condition(cluster(taken_down, "down"), LINKS)[0] == "stopped"
    assert site_condition(cluster(taken_down, "up"), LINKS)[0] == "up"
    no_pod = KubeState("v", site_resource(ready))
    assert site_condition(cluster(no_pod), LINKS)[0] == "stale"
    assert site_condition(cluster(no_pod, "down"), LINKS)[0] == "stopped"


@pytest.mark.parametrize("odd", [None, "Ready", ["Ready"], 7, {"status": None}])
def test_an_odd_status_is_no_status_and_fails_nothing(odd: Any) -> None:
    found = state("up")
    key = next(k for k in found.runtime_resources if k[0] == "Site")
    found.runtime_resources[key] = {**found.runtime_resources[key], "status": odd}
    assert cr.resource_status(found.runtime_resources[key]) == cr.ResourceStatus(True)
    row = site_status(podman(found))
    assert (row.state, row.detail) == ("up", "Pending")
    kube = KubeState("v", site_resource(odd), router_pods=[pod("Running"), {"status": odd}])
    assert site_status(cluster(kube), LINKS).state == "up"


@pytest.mark.parametrize(
    "odd_pod",
    [None, "Running", {"status": "Running"}, {"status": {"phase": None}}, pod("Pending")],
)
def test_a_pod_runs_only_in_phase_running_and_an_odd_one_fails_nothing(odd_pod: Any) -> None:
    assert pod_running(pod("Running")) and not pod_running(odd_pod)
    kube = KubeState("v", site_resource({"status": "Ready"}), router_pods=[odd_pod])
    assert site_condition(cluster(kube), LINKS)[0] == "stale"


def test_a_listener_is_serving_only_with_its_providers_router_running() -> None:
    assert listener_condition(True, podman(state("up"))) == "serving"
    assert listener_condition(True, podman(state("down"), "down")) == "closing"
    assert listener_condition(False, podman(state("up"))) == "closed"
    assert listener_condition(True, Unread(HUB, ConnectError("rhel-ai", "refused"))) == "unknown"
    assert listener_condition(None, podman(state("up"))) == "unknown"


def test_a_podman_listing_that_cannot_be_read_decides_nothing() -> None:
    """A podman that printed something other than its JSON (a warning on stdout, a cut
    answer) leaves the containers unknown: the site is unknown, not stopped or stale, and
    setup-needed is not known either (never a router container called missing)."""
    from skupper_mcp.engine.desired.needs import setup_needed
    from skupper_mcp.topology import load_topology

    text = (STATES / "up" / "rhel-ai.txt").read_text()
    head, _, rest = text.partition("@@section containers\n")
    mangled = f"{head}@@section containers\n|WARN[0000] not what podman ps prints\n{rest}"
    found = parse_site_state(mangled)
    assert found.unparsed("containers") is not None
    condition, reason = site_condition(podman(found, "up"))
    assert condition == "unknown", reason
    assert "could not be read" in reason and "WARN" not in reason  # our words only
    topology = load_topology(STATES / "topology.env")
    assert setup_needed(topology, podman(found)) is None
