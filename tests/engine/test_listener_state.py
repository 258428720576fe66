"""A consumer's listener for a provider: serving, closing (bound, no route), closed or
unknown, from the port probe and the provider's reading, never from a guess."""

from __future__ import annotations

import json

from fake_connector import FakeConnector
from skupper_mcp.engine.listeners import closing, listener_state
from skupper_mcp.engine.operations.status import summary
from skupper_mcp.engine.readings import PodmanReading, Unread
from skupper_mcp.engine.scope import SiteRef
from skupper_mcp.errors import ConnectError
from skupper_mcp.facts import names
from skupper_mcp.facts.router_release import image_release, route_hold
from skupper_mcp.facts.site_state import (
    ContainerState,
    RouterContainer,
    SiteState,
    parse_podman_ps,
)
from skupper_mcp.facts.skupper_version import SkupperVersion, Version
from skupper_mcp.results import ListenerStatus
from skupper_mcp.sites.podman import PodmanSite

NS = "models"
REF = SiteRef(host="rhel-ai", site="hub-rhel-ai", role="provider", platform="podman")


def provider(running: bool, exited_ago: int | None = None) -> PodmanReading:
    """rhel-ai's reading: its router container running, or exited ``exited_ago`` s ago."""
    name = names.router_container(NS)
    container = ContainerState(
        name=name,
        state="running" if running else "exited",
        exited_at=None if exited_ago is None else 1_000_000 - exited_ago,
    )
    state = SiteState(now=1_000_000, containers={name: container})
    return PodmanReading(REF, PodmanSite(FakeConnector("rhel-ai"), NS), state)


def test_bound_with_the_providers_router_running_is_serving() -> None:
    assert listener_state(True, "rhel-ai", provider(running=True), "local") == (
        "serving",
        None,
        None,
    )


def test_bound_with_the_providers_router_stopped_is_closing_with_how_long() -> None:
    state, detail, left = listener_state(True, "rhel-ai", provider(False, 15), "local")
    assert (state, left) == ("closing", 48.0)
    assert detail is not None
    assert "bound, but rhel-ai's router is stopped" in detail
    # a bound, not a time: the last router advertisement before the stop decides
    assert "within 48 s (it stopped 15 s ago" in detail
    assert "up to 63 s" in detail


def test_closing_without_a_stop_time_says_up_to_a_minute() -> None:
    state, detail, left = listener_state(True, "rhel-ai", provider(False), "local")
    assert (state, left) == ("closing", 63.0)
    assert "up to 63 s after the provider stopped" in (detail or "")
    state, detail, left = closing("rhel-ai", "local", 0.2, route_hold(None, None))
    assert left == 62.8 and "it stopped just now" in (detail or "")
    state, detail, left = closing("rhel-ai", "local", 90, route_hold(None, None))
    assert left == 0.0 and "any moment now" in (detail or "")


def consumer(skupper: str, image: str | None) -> PodmanReading:
    """The local site's reading: its Skupper version and its router container's image."""
    ref = SiteRef(host="local", site="local", role="consumer", platform="podman")
    state = SiteState(now=1_000_000, skupper=SkupperVersion(Version.parse(skupper)))
    if image is not None:
        state.router = RouterContainer(False, False, {"ImageName": image, "Config": {}})
    return PodmanReading(ref, PodmanSite(FakeConnector("local"), NS), state)


def test_a_3_5_consumer_drops_a_stopped_providers_route_within_a_second() -> None:
    """skupper-router 3.5.x (Skupper 2.2.x) unmaps a lost router's addresses after
    unreachableHoldoffSeconds, 1 s by default (skrouter.json@3.5.1): no 60 s countdown."""
    for local in (
        consumer("2.2.1", "quay.io/skupper/skupper-router:3.5.1"),
        consumer("2.2.1", None),  # no router container read: its Skupper's router
        consumer("2.1.3", "quay.io/skupper/skupper-router:3.5.0"),  # the image wins
    ):
        state, detail, left = listener_state(True, "rhel-ai", provider(False, 0), "local", local)
        assert (state, left) == ("closing", 1.0)
        assert "60" not in (detail or "") and "unreachableHoldoffSeconds" in (detail or "")
        state, detail, left = listener_state(True, "rhel-ai", provider(False, 5), "local", local)
        assert left == 0.0 and "any moment now" in (detail or "")
        state, detail, left = listener_state(True, "rhel-ai", provider(False), "local", local)
        assert left == 1.0 and "up to 1 s" in (detail or "")


def test_a_3_4_consumer_keeps_the_route_for_a_minute() -> None:
    for local in (
        consumer("2.1.3", "quay.io/skupper/skupper-router:3.4.2"),
        consumer("2.1.0", None),
        consumer("2.2.1", "quay.io/skupper/skupper-router:3.4.2"),
    ):
        state, detail, left = listener_state(True, "rhel-ai", provider(False, 15), "local", local)
        assert (state, left) == ("closing", 48.0)
        assert "remoteLsMaxAgeSeconds" in (detail or "")
        assert route_hold(None, Version.parse("2.1.3")).shortest == 30.0
    # an image by digest or of another name says nothing; nor does an unknown Skupper
    assert image_release({"ImageName": "quay.io/skupper/skupper-router@sha256:ab"}) is None
    assert image_release({"ImageName": "example/router:3.5.1"}) is None
    assert route_hold(None, Version.parse("2.3.0")).seconds == 63.0


def test_not_bound_is_closed_and_an_unread_provider_is_unknown() -> None:
    assert listener_state(False, "rhel-ai", provider(True), "local")[0] == "closed"
    assert listener_state(None, "rhel-ai", None, "local")[0] == "unknown"
    unread = Unread(REF, ConnectError("rhel-ai", "timed out"))
    state, detail, _ = listener_state(True, "rhel-ai", unread, "local")
    assert state == "unknown" and "could not be read" in (detail or "")


def test_podman_ps_exited_at_gives_how_long_a_container_is_stopped() -> None:
    rows = [
        {"Names": ["r"], "State": "exited", "StartedAt": 900, "ExitedAt": 950},
        {"Names": ["never"], "State": "created", "ExitedAt": 0},
    ]
    containers = parse_podman_ps(json.dumps(rows))
    state = SiteState(now=1000, containers=containers)
    assert state.stopped_for("r") == 50.0
    assert state.stopped_for("never") is None


def test_the_status_summary_names_closing_listeners() -> None:
    listeners = [
        ListenerStatus(
            site="local", port=9000, routing_key="k", bound=True, provider="a", state="closing"
        )
    ]
    assert summary([], listeners).endswith(
        "1/1 listeners bound; closing (bound, no route): :9000 (a)"
    )
