"""``logs`` on a host whose containers log to the journal (``--host-quirk local=journald``)
and whose podman warns on every command (``podman-warns``, libpod's cgroups-v1 warning on
stderr): ``podman logs`` prints nothing there but the warning, and the product reads the
container's lines from ``journalctl``, through the CLI as a person runs it, never the warning
as the log; where the journal has none either, the result says the log is unavailable, and
why."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from polling import wait_for
from skupper_mcp.results import LogsResult
from skupper_mcp.topology import load_topology
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import World, running_world

pytestmark = [pytest.mark.sandbox, pytest.mark.spawns]

LINES = ("router-line-one", "router-line-two")


@pytest.fixture(scope="module")
def journald(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    # the journald quirk is the emulation's: this machine has no systemd-journald for real
    # podman's journald log driver to write to (docs/sandbox.md 4a)
    spec = WorldSpec(
        providers=1,
        kubernetes=False,
        host_quirks={"local": ("journald", "podman-warns")},
        podman="emulated",
    )
    with running_world(tmp_path_factory.mktemp("journald"), spec) as world:
        yield world


def logs(world: World, *args: str) -> LogsResult:
    command = [sys.executable, "-m", "skupper_mcp", "--topology", str(world.topology)]
    done = subprocess.run(
        [*command, "--json", "logs", *args],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return LogsResult.model_validate(json.loads(done.stdout))


def test_logs_on_a_journald_host_come_from_the_journal(journald: World) -> None:
    ns = load_topology(Path(journald.topology)).local.namespace
    router = f"{ns}-skupper-router"
    said = "; ".join(f"echo {line}" for line in LINES)
    code, _, err = journald.ssh(
        "local", f"podman run -d --name {router} busybox sh -c '{said}; sleep 600'"
    )
    assert code == 0, err
    wait_for(
        lambda: (
            "router-line-two"
            in journald.ssh("local", f"journalctl --user -q -o cat CONTAINER_NAME={router}")[1]
        ),
        timeout=60,
        what="the router container's lines in the journal",
    )
    # podman itself shows nothing of the log, only its own warning: the quirks' point
    code, out, err = journald.ssh("local", f"podman logs {router}")
    assert (code, out) == (0, "") and "level=warning" in err and "cgroups-v1" in err

    result = logs(journald, "local", "--lines", "5")
    assert result.lines == list(LINES)
    assert (result.source, result.via, result.unavailable) == (router, "journal", None)
    assert "from the journal" in result.summary
    assert "cgroups-v1" in (result.detail or "")  # said, apart from the log


def test_a_container_with_no_line_anywhere_is_an_unavailable_log(journald: World) -> None:
    code, user, _ = journald.ssh("local", "id -un")
    controller = f"{user.strip()}-skupper-controller"
    code, _, err = journald.ssh("local", f"podman run -d --name {controller} busybox sleep 600")
    assert code == 0, err

    result = logs(journald, "local", "--component", "controller")
    assert result.found and result.lines == [] and result.via == "podman-logs"
    assert f"container {controller} logs to the journal" in (result.unavailable or "")
    assert "unavailable" in result.summary


def test_diagnose_reads_the_journal_and_says_which_log_it_could_not_read(
    journald: World,
) -> None:
    """After the two tests above: the router's lines are in the journal only, the
    controller has none anywhere. diagnose says the controller's log is unavailable (info),
    not the router's."""
    command = [sys.executable, "-m", "skupper_mcp", "--topology", str(journald.topology)]
    done = subprocess.run(
        [*command, "--json", "diagnose", "local"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    result = json.loads(done.stdout)
    unavailable = [f for f in result["findings"] if f["id"] == "log-unavailable"]
    assert [(f["host"], f["severity"]) for f in unavailable] == [("local", "info")], done.stdout
    assert "skupper-controller logs to the journal" in unavailable[0]["evidence"][0]


def test_a_renamed_containers_journal_lines_are_found_by_its_id_not_its_name(
    journald: World,
) -> None:
    """After the tests above. podman matches a container's journal lines by its full id and
    the user's uid, never the name (libpod/container_log_linux.go@v5.8.2:50-100): lines
    conmon wrote under the container's earlier name are its own, and an earlier container of
    the same name is not."""
    ns = load_topology(Path(journald.topology)).local.namespace
    router = f"{ns}-skupper-router"
    code, _, err = journald.ssh(
        "local",
        f"podman rm -f {router} && "
        "podman run -d --name before-rename busybox sh -c 'echo renamed-line; sleep 600'",
    )
    assert code == 0, err
    wait_for(
        lambda: (
            "renamed-line"
            in journald.ssh("local", "journalctl --user -q -o cat CONTAINER_NAME=before-rename")[1]
        ),
        timeout=60,
        what="the line under the name it had",
    )
    code, _, err = journald.ssh("local", f"podman rename before-rename {router}")
    assert code == 0, err

    result = logs(journald, "local", "--lines", "5")
    assert (result.lines, result.via) == (["renamed-line"], "journal")  # no router-line-*


def test_following_a_journald_log_without_the_journald_events_backend_is_refused(
    journald: World,
) -> None:
    """libpod/container_log_linux.go@v5.8.2:36-39: --follow on the journald log driver needs
    the container's events in the journal too."""
    ns = load_topology(Path(journald.topology)).local.namespace
    code, out, err = journald.ssh(
        "local", f"podman --events-backend file logs -f {ns}-skupper-router"
    )
    assert (code, out) == (125, "")
    assert (
        "Error: using --follow with the journald --log-driver but without the journald "
        "--events-backend (file) is not supported"
    ) in err
