"""The product's podman parsers read what real podman printed (tests/podman_real/, recorded
from Debian 12's podman 4.3.1 by tests/podman_real/record.py), not only the emulation's
answers: a container that never exited has ``ExitedAt`` -62135596800 (Go's zero time), a
created one ``StartedAt`` the same, ``CreatedAt`` is a phrase ("2 seconds ago") and
``Created`` the number."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skupper_mcp.facts.private_keys import reads_as_owner
from skupper_mcp.facts.site_state import SiteState, parse_podman_ps, parse_router_inspect
from skupper_mcp.facts.userns import keeps_id
from skupper_mcp.sites.podman import _recreate_args

RECORDED = Path(__file__).parent / "podman_real" / "podman-4.3.1.json"
GO_ZERO_TIME = -62135596800


@pytest.fixture(scope="module")
def real() -> dict[str, dict[str, Any]]:
    cases: dict[str, dict[str, Any]] = json.loads(RECORDED.read_text())
    return cases


def _row(real: dict[str, dict[str, Any]], case: str) -> dict[str, Any]:
    [row] = json.loads(real[case]["stdout"])
    return dict(row)


def test_the_recording_holds_go_zero_times_the_parser_must_not_take_for_times(
    real: dict[str, dict[str, Any]],
) -> None:
    created = _row(real, "ps_created")
    assert (created["StartedAt"], created["ExitedAt"]) == (GO_ZERO_TIME, GO_ZERO_TIME)
    assert isinstance(created["CreatedAt"], str) and isinstance(created["Created"], int)
    assert _row(real, "ps_running")["ExitedAt"] == GO_ZERO_TIME


def test_a_created_container_has_neither_start_nor_exit(real: dict[str, dict[str, Any]]) -> None:
    found = parse_podman_ps(real["ps_created"]["stdout"])["router"]
    assert (found.state, found.running, found.started_at, found.exited_at) == (
        "created",
        False,
        None,
        None,
    )
    assert found.labels == {"application": "skupper-v2", "skupper.io/site-id": "abc"}
    state = SiteState(now=_row(real, "ps_created")["Created"] + 5, containers={"router": found})
    assert state.stopped_for("router") is None  # never ran: not "stopped for 2000 years"


def test_a_running_container_runs_since_its_start(real: dict[str, dict[str, Any]]) -> None:
    row = _row(real, "ps_running")
    found = parse_podman_ps(real["ps_running"]["stdout"])["router"]
    assert (found.running, found.started_at, found.exited_at) == (True, row["StartedAt"], None)
    state = SiteState(now=row["StartedAt"] + 7, containers={"router": found})
    assert state.running_for("router") == 7.0


@pytest.mark.parametrize(
    ("case", "name", "code"), [("ps_exited_killed", "router", 137), ("ps_exited_3", "three", 3)]
)
def test_an_exited_container_keeps_its_code_and_exit_time(
    real: dict[str, dict[str, Any]], case: str, name: str, code: int
) -> None:
    row = _row(real, case)
    found = parse_podman_ps(real[case]["stdout"])[name]
    assert (found.state, found.exit_code, found.exited_at) == ("exited", code, row["ExitedAt"])
    state = SiteState(now=row["ExitedAt"] + 3, containers={name: found})
    assert state.stopped_for(name) == 3.0


def test_no_container_is_an_empty_list(real: dict[str, dict[str, Any]]) -> None:
    assert parse_podman_ps(real["ps_empty"]["stdout"]) == {}
    assert parse_podman_ps(real["ps_after_rm"]["stdout"]) == {}


def test_the_router_inspect_reads_real_inspect_and_a_missing_container(
    real: dict[str, dict[str, Any]],
) -> None:
    router = parse_router_inspect(real["inspect_exited"]["stdout"])
    assert router is not None and not router.has_tmpfs and not router.has_ssl_base_path
    assert "FOO=bar" in router.inspect["Config"]["Env"]
    # a missing container: "[]" on stdout, the error on stderr, exit 125
    missing = real["inspect_missing"]
    assert (missing["rc"], missing["stdout"]) == (125, "[]\n")
    assert parse_router_inspect(missing["stdout"]) is None


def test_a_rootless_keep_id_router_reads_as_its_owner_though_inspect_says_private(
    real: dict[str, dict[str, Any]],
) -> None:
    """Real podman names no keep-id in inspect: ``UsernsMode`` is ``private`` and the
    mapping puts the user (id 0 of podman's namespace) at its own uid. The product read
    ``private`` as no keep-id, so a router Skupper made was taken for one that cannot read
    its keys, and setup rendered it again at every run."""
    recorded = real["rootless_inspect_keep_id"]
    [inspect] = json.loads(recorded["stdout"])
    uid = recorded["uid"]
    assert inspect["HostConfig"]["UsernsMode"] == "private"
    assert inspect["Config"]["User"] == f"{uid}:{uid}"
    assert reads_as_owner(inspect, uid)
    assert keeps_id(inspect)
    # in that mapping the container's root is a subordinate id, which owns nothing
    as_root = {**inspect, "Config": {**inspect["Config"], "User": "0:0"}}
    assert not reads_as_owner(as_root, uid)


def test_the_tmpfs_recreation_of_a_rootless_router_asks_for_keep_id_not_private(
    real: dict[str, dict[str, Any]],
) -> None:
    """``--userns private`` is what inspect shows, and what rootless podman refuses to
    create (recorded: 125, "must provide at least one UID or GID mapping")."""
    refused = real["rootless_create_private"]
    assert (
        refused["rc"] == 125
        and "must provide at least one UID or GID mapping" in (refused["stderr"])
    )
    [inspect] = json.loads(real["rootless_inspect_keep_id"]["stdout"])
    args = _recreate_args("default-skupper-router", inspect)
    assert args[args.index("--userns") + 1] == "keep-id"
    assert "private" not in args
    uid = real["rootless_inspect_keep_id"]["uid"]
    assert args[args.index("--user") + 1] == f"{uid}:{uid}"


def test_the_tmpfs_recreation_keeps_every_mount_option_of_the_recorded_router(
    real: dict[str, dict[str, Any]],
) -> None:
    """Recorded: ``-v /usr:/usr:ro`` reads back as ``RW: false``, ``Mode: ""``,
    ``Options: ["rbind"]``, ``Propagation: "rprivate"`` (libpod/container_inspect.go
    parseMountOptionsForInspect). The re-created router keeps it read-only and adds no
    relabel of its own; a ``Z`` (private relabel) or ``z`` stays what it was."""
    from skupper_sandbox.emulated.podman.report import inspect_mount

    [inspect] = json.loads(real["rootless_inspect_keep_id"]["stdout"])
    [usr] = inspect["Mounts"]
    assert (usr["RW"], usr["Mode"], usr["Options"]) == (False, "", ["rbind"])
    args = _recreate_args("default-skupper-router", inspect)
    assert args[args.index("-v") + 1] == "/usr:/usr:ro"
    for mode in ("Z", "z"):
        relabelled = {**inspect, "Mounts": [{**usr, "Mode": mode}]}
        args = _recreate_args("default-skupper-router", relabelled)
        assert args[args.index("-v") + 1] == f"/usr:/usr:ro,{mode}"
    writable = {**inspect, "Mounts": [{**usr, "RW": True, "Mode": "z"}]}
    args = _recreate_args("default-skupper-router", writable)
    assert args[args.index("-v") + 1] == "/usr:/usr:z"
    # the emulation reports a mount's options as the recording shows podman does
    assert inspect_mount("/usr", "/usr", "ro") == usr
    assert inspect_mount("/c", "/h", "ro,Z,nosuid")["Options"] == ["rbind", "nosuid"]
