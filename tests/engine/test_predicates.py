"""engine/predicates.py and the typed facts it reads: each predicate defined once, and a
cluster that refuses our credentials told from one that cannot be reached (issue 42)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skupper_mcp.engine.condition import unread_condition
from skupper_mcp.engine.findings import Network
from skupper_mcp.engine.findings.sites import unreadable
from skupper_mcp.engine.operations.diagnose import UNDOES
from skupper_mcp.engine.predicates import (
    RUNNING,
    STOPPED,
    UNREAD,
    condition_runs,
    stopped_as_asked,
)
from skupper_mcp.engine.readings import ASKED_VALUES, Unread
from skupper_mcp.engine.scope import SiteRef
from skupper_mcp.errors import ConnectError, KubeError
from skupper_mcp.facts.precheck import SiteFacts
from skupper_mcp.topology import Topology, load_topology

STATES = Path(__file__).resolve().parent / "site_states"
CLUSTER = SiteRef("crc", "crc-sandbox", "consumer", "kubernetes")


@pytest.fixture(scope="module")
def topology() -> Topology:
    return load_topology(STATES / "topology.env")


def test_the_stops_are_down_and_teardown_and_undo_what_starts() -> None:
    assert [a for a in ASKED_VALUES if stopped_as_asked(a)] == ["down", "teardown"]
    assert not stopped_as_asked(None)
    assert {
        "down": {"up", "setup"},
        "teardown": {"up", "setup"},
        "up": {"down", "teardown"},
        "setup": {"down", "teardown"},
    } == UNDOES


def test_every_condition_runs_or_not_or_is_unread_exactly_once() -> None:
    conditions = RUNNING + STOPPED + UNREAD
    assert len(set(conditions)) == len(conditions) == 7
    assert [c for c in conditions if condition_runs(c)] == ["up", "degraded"]


@pytest.mark.parametrize(
    ("said", "lingering"), [(None, None), ("Linger=yes", True), ("Linger=no", False)]
)
def test_linger_is_read_once_into_a_bool(said: str | None, lingering: bool | None) -> None:
    assert SiteFacts(linger=said).lingering is lingering


@pytest.mark.parametrize(
    ("error", "reach"),
    [
        (KubeError("crc", "Unauthorized", 401), "refused"),
        (KubeError("crc", "Forbidden", 403), "refused"),
        (ConnectError("crc", "connection refused"), "unreachable"),
        (KubeError("crc", "Internal Server Error", 500), "reached"),
    ],
)
def test_a_cluster_that_refuses_our_credentials_is_refused_not_unreachable(
    topology: Topology, error: Exception, reach: str
) -> None:
    view = Unread(CLUSTER, error)
    assert view.reach == reach
    assert view.reachable is (reach == "reached")
    state, why = unread_condition(view)
    assert state == ("unknown" if reach == "reached" else "unreachable")
    [found] = unreadable(Network(topology, {"crc": view}, []))
    if reach == "refused":
        assert "refused our credentials" in why
        assert "refuses our credentials" in found.symptom
        assert "refused the kubeconfig's credentials" in found.cause
        assert "oc login" in found.fix
    else:
        assert "refuse" not in found.symptom
