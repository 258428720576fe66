"""The emulated podman answers as real podman did (tests/podman_real/, recorded from Debian
12's podman 4.3.1): the same exit status and error text for every verb on a missing
container, and every field of real ``podman ps -a --format json``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hostkit import HostKit, running_host

RECORDED = Path(__file__).parent.parent / "podman_real" / "podman-4.3.1.json"
REAL: dict[str, dict[str, Any]] = json.loads(RECORDED.read_text())


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HostKit]:
    with running_host(tmp_path_factory.mktemp("vs-real"), address="127.201.0.22") as kit:
        yield kit


@pytest.mark.parametrize(
    "case",
    [
        "logs_missing",
        "start_missing",
        "stop_missing",
        "wait_missing",
        "rm_missing",
        "rm_force_missing",
        "rename_missing",
        "container_exists_missing",
    ],
)
def test_a_missing_container_fails_as_in_real_podman(host: HostKit, case: str) -> None:
    real = REAL[case]
    done = host.sh(" ".join(real["argv"]))
    assert (done.returncode, done.stdout, done.stderr) == (
        real["rc"],
        real["stdout"],
        real["stderr"],
    )


def test_the_listing_has_every_field_of_real_podman_and_its_zero_times(host: HostKit) -> None:
    created = host.sh("podman create --name vs-real busybox sleep 60")
    assert created.returncode == 0, created.stderr
    try:
        [emulated] = json.loads(host.sh("podman ps -a --format json").stdout)
        [real] = json.loads(REAL["ps_created"]["stdout"])
        assert set(real) <= set(emulated)
        for field in ("StartedAt", "ExitedAt", "ExitCode", "Exited", "State", "Status"):
            assert emulated[field] == real[field], field
        assert isinstance(emulated["CreatedAt"], str) and isinstance(emulated["Created"], int)
    finally:
        assert host.sh("podman rm -f vs-real").returncode == 0
