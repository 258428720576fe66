"""podman 5.1+'s refusal after a reboot it did not see (issue 46), on a host whose emulated
podman is that release (quirk ``podman-release=5.1.0``; ``emulated/podman/alive.py`` follows
``libpod/runtime_linux.go@v5.1.0`` ``checkBootID``): a user that does not linger has no
``/run/user/UID`` after a reboot, podman's alive file goes to ``/tmp`` (no tmpfs here), and
the next reboot leaves it holding the boot before. status and diagnose name it with the fix,
and the fix works. The emulated podman only: this machine's real podman is the release it is."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from polling import wait_for
from product import cli_json, reboot, status_sites
from skupper_sandbox import hostenv
from skupper_sandbox.layout import WorldSpec
from skupper_sandbox.testing import World, running_world

pytestmark = pytest.mark.sandbox
HOST = "rhel-ai"
#: podman's words (libpod/runtime_linux.go@v5.1.0:56)
REFUSAL = "current system boot ID differs from cached boot ID; an unhandled reboot has occurred"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    spec = WorldSpec(
        providers=1,
        kubernetes=False,
        podman="emulated",
        host_quirks={HOST: ("linger=no", "podman-release=5.1.0")},
    )
    with running_world(tmp_path_factory.mktemp("unhandled-reboot"), spec) as made:
        yield made


def answer(world: World, *args: str) -> tuple[int, dict[str, Any]]:
    return cli_json(world.topology, *args)


def site(world: World) -> dict[str, Any]:
    return status_sites(world.topology)[HOST]


def test_a_second_reboot_without_linger_is_refused_and_named_with_the_fix(world: World) -> None:
    code, result = answer(world, "setup")
    assert code == 0 and result["ok"], result["summary"]
    # the first reboot: no /run/user/UID, podman's alive file is written under /tmp
    reboot(world, HOST)
    first = site(world)
    # no user manager either: what runs is not known, and status says why
    assert first["state"] == "unknown" and "Linger=no" in first["state_reason"], first
    assert first["after_reboot"] == "not-back" and REFUSAL not in first["state_reason"], first
    # the second: the alive file holds the boot before, and podman refuses everything
    reboot(world, HOST)
    refused = site(world)
    assert refused["state"] == "unknown", refused
    assert REFUSAL in refused["state_reason"], refused
    assert "delete the two directories" in refused["state_reason"], refused
    assert "/tmp/storage-run-" in refused["state_reason"], refused
    assert refused["after_reboot"] == "not-back", refused
    _, found = answer(world, "diagnose")
    rows = [f for f in found["findings"] if f["id"] == "podman-unhandled-reboot"]
    assert rows and rows[0]["host"] == HOST, found["findings"]
    said = rows[0]["symptom"] + " ".join(rows[0]["evidence"])
    assert REFUSAL in said and "/tmp/storage-run-" in said, rows[0]
    assert "delete" in rows[0]["fix"] and "enable-linger" in rows[0]["fix"], rows[0]


def test_the_fix_brings_it_back(world: World) -> None:
    info = hostenv.load_host_info(world.host_dir(HOST))
    # what the refusal says: delete its run root and tmp dir (both under /tmp here)
    shutil.rmtree(hostenv.system_path(info, f"/tmp/storage-run-{info.uid}"))
    assert world.sandbox("linger", HOST, "yes").returncode == 0  # and linger, as status said
    code, result = answer(world, "up", HOST)
    assert code == 0 and result["ok"], result
    wait_for(
        lambda: site(world)["state"] == "up",
        timeout=60,
        every=1,
        what=f"{HOST} up after the fix",
    )
