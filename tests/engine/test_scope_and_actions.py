"""The scoping rules and the model actions each operation calls for, as pure functions."""

from __future__ import annotations

from pathlib import Path

import pytest

from result_parts import podman_result
from skupper_mcp.engine.model_actions import model_actions, status_actions
from skupper_mcp.engine.scope import local_stops, resolve_target, scope
from skupper_mcp.errors import ConfigError
from skupper_mcp.results import Outcome, SiteResult
from skupper_mcp.topology import Topology, load_topology
from skupper_mcp.vocabulary import Role

EXAMPLE = Path(__file__).resolve().parents[2] / "topology.env.example"


@pytest.fixture(scope="module")
def topo() -> Topology:
    return load_topology(EXAMPLE)


def site(host: str, outcome: Outcome, role: Role = "provider") -> SiteResult:
    return podman_result(host, outcome, site=f"s-{host}", role=role)


def test_targets_resolve_hosts_sites_profiles_and_consumers(topo: Topology) -> None:
    assert resolve_target(topo, "all").everything
    assert resolve_target(topo, "hub-rhel-ai").host == "rhel-ai"
    by_profile = resolve_target(topo, "g3b-16k")
    assert (by_profile.host, by_profile.profile) == ("rhtevan-work", "g3b-16k")
    assert resolve_target(topo, "localhost").host == "local"
    assert resolve_target(topo, "crc-ezhang").host == "crc"
    with pytest.raises(ConfigError, match=r"unknown target 'mars'.*rhel-ai"):
        resolve_target(topo, "mars")


def test_up_brings_the_local_site_with_a_host(topo: Topology) -> None:
    assert [r.host for r in scope(topo, resolve_target(topo, "rhel-ai"))] == ["rhel-ai", "local"]
    assert [r.host for r in scope(topo, resolve_target(topo, "crc"))] == ["local", "crc"]
    assert [r.host for r in scope(topo, resolve_target(topo, "local"))] == ["local"]
    assert len(scope(topo, resolve_target(topo, "all"))) == 4
    assert [r.host for r in scope(topo, resolve_target(topo, "g8b-32k"))] == [
        "rhel-ai",
        "local",
    ]


@pytest.mark.parametrize(
    ("target", "others", "stops"),
    [
        ("rhel-ai", {"rhtevan-work": True}, False),  # T3b: another provider still active
        ("rhel-ai", {"rhtevan-work": False}, True),  # T3e: the last active host
        ("rhel-ai", {"rhtevan-work": None}, False),  # unknown (unreachable): keep the route
        ("crc", {"rhel-ai": True, "rhtevan-work": False}, False),  # T10b
        ("crc", {"rhel-ai": False, "rhtevan-work": False}, True),  # T10c
        ("all", {"rhel-ai": None, "rhtevan-work": True}, True),  # T9c: down all stops local
    ],
)
def test_local_stops_only_with_the_last_active_provider(
    topo: Topology, target: str, others: dict[str, bool | None], stops: bool
) -> None:
    decided, why = local_stops(topo, resolve_target(topo, target), others)
    assert decided is stops and why


def test_model_actions_follow_the_signal_routing_table(topo: Topology) -> None:
    results = [
        site("rhel-ai", "up"),
        site("rhtevan-work", "skipped"),
        site("local", "up", "consumer"),
    ]
    served = {"rhel-ai": ["ibm-granite/granite-3.3-8b-instruct"]}  # g8b-32k is active
    up = model_actions("up", topo, results, served)
    assert [(a.host, a.profile, a.action) for a in up] == [("rhel-ai", "g8b-32k", "start")]
    wanted = model_actions("up", topo, results, served, requested_profile="g8b-fp8-spec-128k")
    assert [a.profile for a in wanted] == ["g8b-fp8-spec-128k"]
    setup = model_actions("setup", topo, results, {})
    assert [(a.profile, a.action) for a in setup] == [("g8b-fp8-spec-128k", "setup")]
    down = model_actions("down", topo, [site("rhel-ai", "down"), site("rhtevan-work", "down")], {})
    assert [(a.host, a.profile, a.action) for a in down] == [
        ("rhel-ai", "g8b-fp8-spec-128k", "stop"),
        ("rhtevan-work", "g3b-16k", "stop"),
    ]
    status = status_actions(topo, {"rhel-ai": True, "rhtevan-work": False}, served)
    assert [(a.host, a.profile, a.action) for a in status] == [("rhel-ai", "g8b-32k", "status")]
