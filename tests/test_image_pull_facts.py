"""Issue 46 item 3, the pure half: which images a release runs, and scripts/pull.sh's
answer read into each pull's layers, end and refusal (the lines podman pull prints)."""

from __future__ import annotations

from skupper_mcp.facts.images import (
    controller_drift,
    parse_pull,
    pull_refused,
    release_drift,
    release_images,
)
from skupper_mcp.facts.skupper_version import Version


def test_each_release_runs_its_controller_and_its_router() -> None:
    assert release_images(Version(2, 2, 1)) == (
        "system-controller=system-controller:2.2.1",
        "router=skupper-router:3.5.1",
    )
    assert release_images(Version(2, 1, 3))[1] == "router=skupper-router:3.4.2"
    assert release_images(Version(2, 3, 0)) == ()  # unknown: Skupper pulls them itself
    assert release_images(None) == ()


POLL = """@@pull 1 system-controller
|quay.io/skupper/system-controller:2.2.1
@@log 1
|Trying to pull quay.io/skupper/system-controller:2.2.1...
|Getting image source signatures
|Copying blob sha256:aa
|Copying blob sha256:bb
|Copying config sha256:cc
|Writing manifest to image destination
|0123abcd
@@done 1 0
@@pull 2 router
|mirror.example:5000/skupper/skupper-router:3.5.1
@@log 2
|Trying to pull mirror.example:5000/skupper/skupper-router:3.5.1...
|@@done 2 0
|Error: initializing source docker://mirror.example:5000/skupper/skupper-router:3.5.1: \
reading manifest 3.5.1 in mirror.example:5000/skupper/skupper-router: unauthorized: no
@@done 2 125
@@end
"""


def test_a_poll_is_read_into_each_pull_and_a_forged_marker_in_a_log_is_text() -> None:
    state = parse_pull(POLL)
    assert state.complete and state.done
    first, second = state.pulls
    assert (first.component, first.layers, first.status) == ("system-controller", 2, 0)
    assert first.progress() == "pulled (2 layers copied)"
    assert second.status == 125  # the log's own "@@done 2 0" line is the host's text
    assert state.failed is second and second.registry == "mirror.example:5000"
    said = pull_refused(second, "rhel-ai")
    assert "the router image mirror.example:5000/skupper/skupper-router:3.5.1" in said
    assert "from mirror.example:5000" in said and "unauthorized: no" in said
    assert "podman login mirror.example:5000" in said and "SKUPPER_IMAGE_REGISTRY" in said


def test_a_pull_still_running_is_not_done() -> None:
    state = parse_pull("@@pull 1 router\n|quay.io/skupper/skupper-router:3.5.1\n@@end\n")
    assert state.complete and not state.done and state.failed is None
    assert state.pulls[0].registry == "quay.io"


def test_a_cli_upgraded_under_its_router_is_a_drift_decided_once() -> None:
    drift = release_drift(Version(2, 2, 1), Version(3, 4, 2))
    assert drift is not None and drift.wanted == "3.5.1"
    line = drift.line("default-skupper-router")
    assert "skupper-router 3.4.2 runs" in line and "CLI is 2.2.1" in line and "#2390" in line
    assert release_drift(Version(2, 2, 1), Version(3, 5, 1)) is None
    assert release_drift(Version(2, 1, 3), Version(3, 4, 2)) is None
    assert release_drift(None, Version(3, 4, 2)) is None  # unknown: nothing said
    assert release_drift(Version(2, 3, 0), Version(3, 4, 2)) is None  # a release not known


def test_a_controller_of_an_earlier_release_is_a_drift_decided_once() -> None:
    old = "quay.io/skupper/system-controller:2.1.3"
    drift = controller_drift(Version(2, 2, 1), old)
    assert drift is not None
    line = drift.line("cloud-user-skupper-controller")
    assert old in line and "CLI is 2.2.1" in line and "system-controller:2.2.1" in line
    assert controller_drift(Version(2, 2, 1), "quay.io/skupper/system-controller:2.2.1") is None
    assert (
        controller_drift(Version(2, 2, 1), "mirror.example/skupper/system-controller:v2.2.1")
        is None
    )
    assert controller_drift(None, old) is None  # unknown: nothing said
    assert controller_drift(Version(2, 0, 1), old) is None  # a release not known
    assert controller_drift(Version(2, 2, 1), None) is None
    # an image the user named (SKUPPER_SYSTEM_CONTROLLER_IMAGE) whose tag is no release
    assert controller_drift(Version(2, 2, 1), "registry.example/my-controller:latest") is None
    assert controller_drift(Version(2, 2, 1), "quay.io/skupper/system-controller:main") is None
