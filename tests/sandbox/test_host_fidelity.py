"""Hosts as their sources behave: users, podman and systemd (docs/sandbox.md section 11).

Each test is a row of the "Hosts: users, podman and systemd" table: it fails on a sandbox
that is easier than the real thing and passes on one that does what the source does.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hostkit import HostKit, make_host, wait_for

from skupper_mcp.sites import units


@pytest.fixture
def host(tmp_path: Path) -> Iterator[HostKit]:
    kit = make_host(tmp_path, address="127.201.0.30")
    try:
        with kit.manager():
            yield kit
    finally:
        kit.cleanup()


def _show(kit: HostKit, unit: str, *props: str) -> dict[str, str]:
    out = kit.sh(f"systemctl --user show {unit} -p {','.join(props)}").stdout
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


# --------------------------------------------------------------------------- systemd (C3)


def test_the_products_watch_unit_stops_clean_when_the_container_dies_of_sigterm(
    host: HostKit,
) -> None:
    """start-watch.sh exits 143 when `podman stop` ends a container that does not handle
    SIGTERM; the product's unit must count that as a clean stop on real systemd."""
    assert host.sh("podman create --name box busybox sleep 600").returncode == 0
    script = host.home / units.WATCH_SCRIPT_PATH
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(units.watch_script("podman"))
    unit = units.watch_unit("box.service", "box", "podman", "test box")
    host.write_unit(unit.name, unit.content)
    assert host.sh("systemctl --user start box.service").returncode == 0
    assert wait_for(lambda: host.sh("podman ps -q --filter name=box").stdout.strip() != "", 5)

    assert host.sh("systemctl --user stop box.service").returncode == 0

    assert host.sh("podman inspect --format '{{.State.ExitCode}}' box").stdout.strip() == "143"
    state = _show(host, "box.service", "ActiveState", "Result", "ExecMainStatus")
    assert state == {"ActiveState": "inactive", "Result": "success", "ExecMainStatus": "143"}
